package codeactions_test

import (
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/tasks"
)

var updateGolden = flag.Bool("update", false, "rewrite codeactions/testdata/golden from today's renderers")

// goldenPrograms is the fixed sample the golden files hold for a library on one task: its strong
// default, randomly drawn ones from a seed of the library and task and, on the library's first
// task (sweep), every program one slot away from the strong one, so every option of every slot
// renders at least once.
func goldenPrograms(t *testing.T, lib *codeactions.Library, spec *tasks.Spec, sweep bool) [][]int {
	t.Helper()
	strong, err := lib.TokensFor(strongPrograms[lib.Modality]())
	if err != nil {
		t.Fatal(err)
	}
	out := [][]int{strong}
	for i := range lib.Slots {
		if !sweep {
			break
		}
		first, n := lib.SlotRange(i)
		for j := first; j < first+n; j++ {
			if j != strong[i] {
				toks := slices.Clone(strong)
				toks[i] = j
				out = append(out, toks)
			}
		}
	}
	h := fnv.New64a()
	h.Write([]byte(lib.Modality + "/" + spec.ID))
	rng := rand.New(rand.NewPCG(h.Sum64(), 1))
	for range 4 {
		out = append(out, randomChoices(lib, rng))
	}
	return out
}

// TestGolden renders the fixed sample of every library on every built-in task of its modality
// and compares it with testdata/golden/<modality>.txt, so a change to a library's Python shows
// as a diff of the programs it changes. After an intended change, rewrite the files with
// `go test ./codeactions -run TestGolden -update` and read the diff before committing it.
func TestGolden(t *testing.T) {
	reg := tasks.Builtin()
	for _, modality := range codeactions.Modalities() {
		t.Run(modality, func(t *testing.T) {
			lib, err := codeactions.For(modality)
			if err != nil {
				t.Fatal(err)
			}
			var b strings.Builder
			sweep := true
			for _, id := range reg.IDs() {
				spec, _ := reg.Get(id)
				if spec.Modality != modality {
					continue
				}
				schema := codeactions.SchemaOf(spec)
				progs := goldenPrograms(t, lib, spec, sweep)
				sweep = false
				for _, toks := range progs {
					p, err := lib.Render(toks, schema)
					if err != nil {
						t.Fatalf("%s %s: %v", id, lib.Describe(toks), err)
					}
					fmt.Fprintf(&b, "### %s %s\n# plan: %s\n%s\n", id, lib.Describe(toks), p.Plan, p.Code)
				}
			}
			file := filepath.Join("testdata", "golden", modality+".txt")
			got := b.String()
			if *updateGolden {
				if err := os.WriteFile(file, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v: write it with `go test ./codeactions -run TestGolden -update`", err)
			}
			if got != string(want) {
				t.Errorf("%s renders differently from %s:\n%s\nIf the change is intended, rewrite the file with `go test ./codeactions -run TestGolden -update` and review its git diff.",
					modality, file, firstDifference(string(want), got))
			}
		})
	}
}

// firstDifference shows the first program whose text differs, with the line where it does.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	header := ""
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if strings.HasPrefix(w, "### ") {
			header = w
		}
		if w != g {
			return fmt.Sprintf("program %q, line %d:\n  want: %s\n  got:  %s", header, i+1, w, g)
		}
	}
	return "(no line differs)"
}
