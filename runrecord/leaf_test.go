package runrecord_test

import (
	"os/exec"
	"strings"
	"testing"

	"mlerl/internal/testenv"
)

// reporters read run records only; they must build without the platform's side effects.
var reporters = []string{
	"mlerl/runrecord",
	"mlerl/expreport",
	"mlerl/lab/tools/runread",
	"mlerl/lab/tools/blendspace",
	"mlerl/lab/tools/provenance",
	"mlerl/lab/learning/summarize",
}

// sideEffects are the packages (or module prefixes) that run programs or reach storage.
var sideEffects = []string{
	"mlerl/activities",
	"mlerl/sandbox",
	"github.com/docker/",
	"github.com/minio/",
}

// linked returns, for each package, the side-effect packages among its transitive imports.
func linked(t *testing.T, pkgs []string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", `{{.ImportPath}}{{range .Deps}} {{.}}{{end}}`}, pkgs...)
	cmd := exec.Command("go", args...)
	cmd.Dir = testenv.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		stderr := ""
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list %v: %v\n%s", pkgs, err, stderr)
	}
	found := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		found[fields[0]] = nil
		for _, bad := range sideEffects {
			for _, dep := range fields[1:] {
				if dep == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(dep, bad)) {
					found[fields[0]] = append(found[fields[0]], dep)
					break // one package per entry keeps the message short
				}
			}
		}
	}
	return found
}

func TestReportersDoNotLinkSideEffects(t *testing.T) {
	found := linked(t, append([]string{"mlerl/activities"}, reporters...))
	// The check must see what activities links, or a change in go list's output would make
	// this test pass vacuously.
	if len(found["mlerl/activities"]) == 0 {
		t.Fatalf("go list shows no sandbox, Docker or MinIO under mlerl/activities; the dependency check is broken")
	}
	for _, p := range reporters {
		deps, ok := found[p]
		if !ok {
			t.Errorf("go list did not report %s", p)
			continue
		}
		if len(deps) > 0 {
			t.Errorf("%s links %v: import mlerl/runrecord for run records instead of the package that produces them", p, deps)
		}
	}
}
