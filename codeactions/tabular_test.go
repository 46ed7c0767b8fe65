package codeactions_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"mlerl/codeactions"
	"mlerl/grading"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/reward"
	"mlerl/sandbox"
	"mlerl/tasks"
)

var leafSchema = codeactions.Schema{IDColumn: "id", TargetColumn: "species"}

func base() map[string]string {
	return map[string]string{"imports": "full", "load": "input", "target": "label-encoder", "features": "all",
		"transform": "standard", "model": "logreg", "strength": "s5", "validation": "holdout",
		"postprocess": "none", "submission": "aligned"}
}

func with(kv ...string) map[string]string {
	m := base()
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// Every option of every slot renders a program Python can compile.
func TestEveryOptionCompiles(t *testing.T) {
	testenv.RequirePython(t)
	lib := codeactions.TabularClassification
	dir := t.TempDir()
	n := 0
	for _, slot := range lib.Slots {
		for _, o := range slot.Options {
			toks, err := lib.TokensFor(with(slot.Name, o.Name))
			if err != nil {
				t.Fatal(err)
			}
			p, err := lib.Render(toks, leafSchema)
			if err != nil {
				t.Fatal(err)
			}
			f := filepath.Join(dir, slot.Name+"-"+o.Name+".py")
			os.WriteFile(f, []byte(p.Code), 0o644)
			if out, err := exec.Command(testenv.Python, "-m", "py_compile", f).CombinedOutput(); err != nil {
				t.Errorf("%s=%s does not compile: %s", slot.Name, o.Name, out)
			}
			if p.Plan == "" {
				t.Errorf("%s=%s has an empty plan", slot.Name, o.Name)
			}
			n++
		}
	}
	if n != lib.VocabSize() {
		t.Fatalf("rendered %d options, vocabulary has %d", n, lib.VocabSize())
	}
}

func TestChoicesRejectTokensOfAnotherSlot(t *testing.T) {
	lib := codeactions.TabularClassification
	toks, _ := lib.TokensFor(base())
	toks[0], toks[1] = toks[1], toks[0]
	if _, err := lib.Choices(toks); err == nil {
		t.Fatal("a token in the wrong slot must be rejected")
	}
}

// Run real programs from the library on the real leaf validation split: a strong program scores
// well, and the library's failure modes fail where they should, earning partial credit.
func TestProgramsOnRealData(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := tasks.Builtin().Get("leaf-classification")
	dirs := tasks.Layout{DataDir: dataDir}.Dirs(spec.ID, tasks.SplitValidation)
	lib := codeactions.TabularClassification
	cases := []struct {
		name     string
		choices  map[string]string
		valid    bool
		maxScore float64
		markers  int
	}{
		{"strong: scaled logistic regression, C=1000", base(), true, 0.05, 7},
		{"wrong data path fails while loading", with("load", "cwd"), false, 0, 1},
		{"no predict_proba fails after training", with("model", "linear-svc", "validation", "none"), false, 0, 4},
		{"encoded labels as columns make an invalid submission", with("submission", "model-classes"), false, 0, 7},
		{"hard labels are valid but score badly", with("submission", "hard-labels"), true, 100, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, err := lib.TokensFor(c.choices)
			if err != nil {
				t.Fatal(err)
			}
			p, _ := lib.Render(toks, leafSchema)
			ins, err := instrument.AST{Python: testenv.Python}.Instrument(context.Background(), p.Code)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			prog := filepath.Join(dir, "solution.py")
			os.WriteFile(prog, []byte(ins.Program), 0o644)
			work := filepath.Join(dir, "work")
			res, err := sb.Run(context.Background(), sandbox.Spec{Program: prog, DataDir: dirs.Public, WorkDir: work,
				Limits: sandbox.Limits{Wall: 5 * time.Minute, MemoryBytes: 4 << 30, Processes: 64, OutputBytes: 1 << 16}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			markers := reward.FoundMarkers(res.Output)
			if len(markers) != c.markers {
				t.Errorf("reached %d markers %v, want %d; output:\n%s", len(markers), markers, c.markers, res.Output)
			}
			if res.ExitCode != 0 {
				if c.valid {
					t.Fatalf("exit %d:\n%s", res.ExitCode, res.Output)
				}
				return
			}
			g, err := grading.Grade(spec, filepath.Join(work, "submission.csv"), filepath.Join(dirs.Private, spec.Files.Answers))
			if err != nil {
				t.Fatal(err)
			}
			if g.Valid != c.valid || (g.Valid && *g.Score > c.maxScore) {
				t.Fatalf("graded %+v, want valid=%v with score under %v", g, c.valid, c.maxScore)
			}
			if g.Valid {
				t.Logf("validation log loss %.5f in %.1fs", *g.Score, res.Duration.Seconds())
			}
		})
	}
}
