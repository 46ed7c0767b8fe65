package codeactions_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// Every built-in task can be trained on: its modality has a library.
func TestEveryTaskHasALibrary(t *testing.T) {
	reg := tasks.Builtin()
	for _, id := range reg.IDs() {
		spec, _ := reg.Get(id)
		if _, err := codeactions.For(spec.Modality); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
}

func TestUnknownModalityNamesTheAvailableOnes(t *testing.T) {
	_, err := codeactions.For("audio")
	if err == nil || !strings.Contains(err.Error(), "tabular-classification") {
		t.Fatalf("want an error listing the libraries, got %v", err)
	}
}

// Every option of every library, for every task of its modality, renders a program Python
// compiles (each option at least once, in random company, plus random programs), with a plan.
func TestEveryOptionRendersCompilablePython(t *testing.T) {
	testenv.RequirePython(t)
	reg := tasks.Builtin()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	n := 0
	for _, id := range reg.IDs() {
		spec, _ := reg.Get(id)
		lib, err := codeactions.For(spec.Modality)
		if err != nil {
			continue // reported by TestEveryTaskHasALibrary
		}
		schema := codeactions.SchemaOf(spec)
		render := func(toks []int, what string) {
			p, err := lib.Render(toks, schema)
			if err != nil {
				t.Fatalf("%s %s: %v", id, what, err)
			}
			if strings.TrimSpace(p.Plan) == "" {
				t.Errorf("%s %s: empty plan", id, what)
			}
			name := fmt.Sprintf("p%05d.py", n)
			n++
			src := fmt.Sprintf("# %s %s\n%s", id, lib.Describe(toks), p.Code)
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		for i, s := range lib.Slots {
			first, _ := lib.SlotRange(i)
			for j, o := range s.Options {
				if o.Prior < 0 {
					t.Errorf("%s: option %s=%s has a negative prior", lib.Modality, s.Name, o.Name)
				}
				toks := randomChoices(lib, rng)
				toks[i] = first + j
				render(toks, s.Name+"="+o.Name)
			}
		}
		for k := 0; k < 30; k++ {
			render(randomChoices(lib, rng), "random")
		}
	}
	// One interpreter compiles them all: a syntax error names the file and its choices.
	check := `import sys, pathlib
bad = 0
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.py")):
    src = f.read_text()
    try:
        compile(src, f.name, "exec")
    except SyntaxError as e:
        bad += 1
        print(src.splitlines()[0], "->", e)
sys.exit(1 if bad else 0)
`
	if out, err := exec.Command(testenv.Python, "-c", check, dir).CombinedOutput(); err != nil {
		t.Fatalf("programs that do not compile:\n%s", out)
	}
	t.Logf("%d programs compiled", n)
}

// Programs that differ only in the validation they print before refitting on everything share
// a submission key; those whose submission depends on the validation (no refit, post-processing
// fitted on held-out predictions) or that may clash keep their own.
func TestSubmissionKey(t *testing.T) {
	reg := tasks.Builtin()
	taskOf := func(modality string) *tasks.Spec {
		for _, id := range reg.IDs() {
			if s, _ := reg.Get(id); s.Modality == modality {
				return s
			}
		}
		t.Fatalf("no built-in task of modality %s", modality)
		return nil
	}
	cases := []struct {
		name     string
		modality string
		a, b     map[string]string
		same     bool
	}{
		{"hold-out then refit is no validation", "tabular-classification", with("validation", "holdout"), with("validation", "none"), true},
		{"3-fold then refit is no validation", "tabular-classification", with("validation", "cv3"), with("validation", "holdout"), true},
		{"a hold-out without refit trains on less", "tabular-classification", with("validation", "holdout-no-refit"), with("validation", "none"), false},
		{"another model is another program", "tabular-classification", with("model", "lda"), with("validation", "none"), false},
		{"a program that clashes is its own key", "tabular-classification",
			with("validation", "holdout", "imports", "no-sklearn"), with("validation", "none", "imports", "no-sklearn"), false},
		{"cut points fitted on the validation", "ordinal", ordinalWith("validation", "oof5"), ordinalWith("validation", "none"), false},
		{"rounding ignores the validation", "ordinal",
			ordinalWith("validation", "oof5", "postprocess", "round-clip"), ordinalWith("validation", "none", "postprocess", "round-clip"), true},
		{"a temperature fitted on the validation", "preference",
			preferenceWith("postprocess", "temperature"), preferenceWith("validation", "none", "postprocess", "temperature"), false},
		{"no post-processing ignores the validation", "preference", preferenceWith(), preferenceWith("validation", "none"), true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lib, err := codeactions.For(c.modality)
			if err != nil {
				t.Fatal(err)
			}
			schema := codeactions.SchemaOf(taskOf(c.modality))
			key := func(names map[string]string) string {
				toks, err := lib.TokensFor(names)
				if err != nil {
					t.Fatal(err)
				}
				k, err := lib.SubmissionKey(toks, schema)
				if err != nil {
					t.Fatal(err)
				}
				return lib.Describe(k)
			}
			if ka, kb := key(c.a), key(c.b); (ka == kb) != c.same {
				t.Errorf("same key = %v, want %v:\n%s\n%s", ka == kb, c.same, ka, kb)
			}
		})
	}
	lib, _ := codeactions.For("tabular-classification")
	if _, err := lib.SubmissionKey([]int{0}, codeactions.SchemaOf(taskOf("tabular-classification"))); err == nil {
		t.Error("tokens that are not a program: no error")
	}
}
