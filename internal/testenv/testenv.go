// Package testenv finds what the tests use for real: the repository's Temporal CLI, Debian's
// Python, and the raw Kaggle files in ../shared. Missing pieces fail with the command that
// installs them, rather than skipping silently; what only some machines have (../shared, the
// Docker engine) skips loudly, and fails under CI=true (SkipOrFail).
package testenv

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"mlerl/tasks"
)

// Python is the interpreter agents' programs and the preparer use.
const Python = "/usr/bin/python3"

// RepoRoot is the module's root folder.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// TemporalCLI returns bin/temporal or fails the test saying how to install it.
func TemporalCLI(t testing.TB) string {
	t.Helper()
	p := filepath.Join(RepoRoot(), "bin", "temporal")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("bin/temporal is missing: run `go tool task setup` (%v)", err)
	}
	return p
}

// RequirePython fails unless Debian's python3 with pandas and scikit-learn is installed.
func RequirePython(t testing.TB) {
	t.Helper()
	if out, err := exec.Command(Python, "-c", "import pandas, sklearn, scipy").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3 with pandas, scikit-learn and scipy is required: run `go tool task setup` (%v: %s)", err, out)
	}
}

// RawDir is ../shared/data/kaggle/<task>; the test is skipped, loudly, when shared/ is absent
// (and fails under CI=true).
func RawDir(t testing.TB, task string) string {
	t.Helper()
	d := filepath.Join(RepoRoot(), "..", "shared", "data", "kaggle", task)
	if _, err := os.Stat(d); err != nil {
		SkipOrFail(t, "raw data %s is not beside the repository (CI has it): %v", d, err)
	}
	return d
}

// SharedDir is ../shared/data/<sub>, skipping loudly when absent (failing under CI=true).
func SharedDir(t testing.TB, sub string) string {
	t.Helper()
	d := filepath.Join(RepoRoot(), "..", "shared", "data", sub)
	if _, err := os.Stat(d); err != nil {
		SkipOrFail(t, "%s is not beside the repository (CI has it): %v", d, err)
	}
	return d
}

// PreparedData prepares a task from ../shared into a temporary data dir and returns the dir.
func PreparedData(t testing.TB, task string) string {
	t.Helper()
	RequirePython(t)
	raw := RawDir(t, task)
	dir := t.TempDir()
	spec, err := tasks.Builtin().Get(task)
	if err != nil {
		t.Fatal(err)
	}
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: dir}, Python: Python}
	if err := p.Prepare(context.Background(), spec, raw); err != nil {
		t.Fatalf("preparing %s: %v", task, err)
	}
	return dir
}

// BuildStarter builds the starter binary into a temporary folder, for tests that run it as a user
// would (exit status, stderr, signals).
func BuildStarter(t testing.TB) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "starter")
	cmd := exec.Command("go", "build", "-o", bin, "./starter")
	cmd.Dir = RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building starter: %v\n%s", err, out)
	}
	return bin
}
