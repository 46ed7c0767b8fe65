package tasks_test

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

func TestBuiltinSpecsLoad(t *testing.T) {
	r := tasks.Builtin()
	s, err := r.Get("leaf-classification")
	if err != nil {
		t.Fatal(err)
	}
	if !s.LowerIsBetter() || s.Metric != "multi-class-log-loss" || s.IDColumn != "id" {
		t.Fatalf("leaf spec: %+v", s)
	}
	if len(r.IDs()) != 15 {
		t.Fatalf("want the paper's 12 MLE-bench tasks, aerial cactus, movie reviews and dirty documents, have %v", r.IDs())
	}
	if _, err := r.Get("leaf"); err == nil || !strings.Contains(err.Error(), "leaf-classification, learning-agency") {
		t.Fatalf("unknown task error must list the known ones: %v", err)
	}
}

func TestBadSpecsNameTheField(t *testing.T) {
	good, _ := os.ReadFile("specs/leaf-classification.yaml")
	cases := []struct{ name, from, to, want string }{
		{"typo in a key", "direction: min", "directon: min", "field directon not found"},
		{"bad direction", "direction: min", "direction: lower", "field direction"},
		{"unknown metric", "metric: multi-class-log-loss", "metric: logloss", "field metric"},
		{"bad fraction", "fraction: 0.1", "fraction: 1.5", "field validation.fraction"},
		{"folds that do not fit", "folds: 3 ", "folds: 11 ", "field validation.folds"},
		{"negative folds", "folds: 3 ", "folds: -1 ", "field validation.folds"},
		{"zero limit", "wall_seconds: 300", "wall_seconds: 0", "field limits"},
		{"a run setting that is not one", "final_tune_budget: 8", "final_tune_budgett: 8", "run.final_tune_budgett (line %d): not a run setting"},
		{"a run setting out of range", "final_tune_budget: 8", "final_tune_budget: -1", "run: --final-tune-budget must be 0"},
	}
	// No built-in spec carries a run: section (settings chosen for one task's test answers are
	// not the platform's); a user's spec may, and it is checked as a preset's is.
	withRun := string(good) + "run:\n  final_tune_budget: 8\n"
	runLine := strings.Count(withRun, "\n")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if strings.Contains(c.want, "%d") {
				c.want = fmt.Sprintf(c.want, runLine)
			}
			bad := strings.Replace(withRun, c.from, c.to, 1)
			if bad == withRun {
				t.Fatalf("the fixture no longer contains %q", c.from)
			}
			_, err := tasks.Parse([]byte(bad), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}

func TestUserSpecOverridesBuiltin(t *testing.T) {
	good, _ := os.ReadFile("specs/leaf-classification.yaml")
	f := filepath.Join(t.TempDir(), "leaf.yaml")
	os.WriteFile(f, []byte(strings.Replace(string(good), "wall_seconds: 300", "wall_seconds: 42", 1)), 0o644)
	r := tasks.Builtin()
	if _, err := r.AddFile(f); err != nil {
		t.Fatal(err)
	}
	s, _ := r.Get("leaf-classification")
	if s.Limits.WallSeconds != 42 {
		t.Fatalf("the user's spec must override the built-in one")
	}
}

// The prepared files must be byte-identical to MLE-bench's: their md5s are in shared/.
func TestPrepareMatchesMLEBenchChecksums(t *testing.T) {
	checkMLEBenchChecksums(t, testenv.PreparedData(t, "leaf-classification"), "leaf-classification")
}

func TestValidationSplitIsACarveOutOfTheTrain(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	l := tasks.Layout{DataDir: dataDir}
	lines := func(f string) []string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	full := l.Dirs("leaf-classification", tasks.SplitTest)
	val := l.Dirs("leaf-classification", tasks.SplitValidation)
	train, vtrain, vtest, vans := lines(full.Public+"/train.csv"), lines(val.Public+"/train.csv"), lines(val.Public+"/test.csv"), lines(val.Private+"/test.csv")
	if len(vtrain)-1+len(vtest)-1 != len(train)-1 || len(vtest) != len(vans) {
		t.Fatalf("rows: train %d = validation train %d + validation test %d? answers %d", len(train)-1, len(vtrain)-1, len(vtest)-1, len(vans)-1)
	}
	if lines(full.Public + "/test.csv")[0] != vtest[0] || lines(full.Private + "/test.csv")[0] != vans[0] {
		t.Fatal("the validation test and answers must have the real test's schema")
	}
	// The other folds: disjoint held-out shares of the same size, each with the rest as train.
	spec, _ := tasks.Builtin().Get("leaf-classification")
	if spec.Validation.FoldCount() < 2 {
		t.Fatal("leaf-classification's spec should carve several validation folds")
	}
	seen := map[string]int{}
	for f := 1; f <= spec.Validation.FoldCount(); f++ {
		d := l.FoldDirs("leaf-classification", f)
		ftrain, ftest := lines(d.Public+"/train.csv"), lines(d.Public+"/test.csv")
		if len(ftest) != len(vtest) || len(ftrain) != len(vtrain) || ftest[0] != vtest[0] {
			t.Fatalf("fold %d: %d train and %d test rows (header %q), want %d and %d", f, len(ftrain)-1, len(ftest)-1, ftest[0], len(vtrain)-1, len(vtest)-1)
		}
		for _, row := range ftest[1:] {
			if g, ok := seen[row]; ok {
				t.Fatalf("row %.20s... is held out by folds %d and %d", row, g, f)
			}
			seen[row] = f
		}
		if strings.Join(ftrain, "\n") == strings.Join(vtrain, "\n") && f > 1 {
			t.Fatalf("fold %d has fold 1's train", f)
		}
	}
	// Deterministic: preparing again gives the same carve-out.
	again := testenv.PreparedData(t, "leaf-classification")
	if strings.Join(lines(tasks.Layout{DataDir: again}.Dirs("leaf-classification", tasks.SplitValidation).Private+"/test.csv"), "\n") != strings.Join(vans, "\n") {
		t.Fatal("the validation split must be deterministic")
	}
}

func TestPrepareRejectsBadRaw(t *testing.T) {
	testenv.RequirePython(t)
	spec, _ := tasks.Builtin().Get("leaf-classification")
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
	empty := t.TempDir()
	if err := p.Prepare(context.Background(), spec, empty); err == nil || !strings.Contains(err.Error(), "lacks train.csv") {
		t.Fatalf("a folder without train.csv: %v", err)
	}
	wrong := t.TempDir()
	os.WriteFile(filepath.Join(wrong, "train.csv"), []byte("a,b\n1,2\n"), 0o644)
	if err := p.Prepare(context.Background(), spec, wrong); err == nil || !strings.Contains(err.Error(), "no 'id' column") {
		t.Fatalf("a train.csv of another competition: %v", err)
	}
	notZip := filepath.Join(t.TempDir(), "raw.zip")
	os.WriteFile(notZip, []byte("not a zip"), 0o644)
	if err := p.Prepare(context.Background(), spec, notZip); err == nil || !strings.Contains(err.Error(), "neither a folder nor a readable zip") {
		t.Fatalf("a broken zip: %v", err)
	}
}

func TestPrepareFromAZipKeepsFoldersAndRejectsEscapes(t *testing.T) {
	testenv.RequirePython(t)
	raw := testenv.RawDir(t, "leaf-classification")
	spec, _ := tasks.Builtin().Get("leaf-classification")
	train, _ := os.ReadFile(filepath.Join(raw, "train.csv"))
	write := func(entries map[string][]byte) string {
		f := filepath.Join(t.TempDir(), "leaf.zip")
		out, _ := os.Create(f)
		w := zip.NewWriter(out)
		for name, data := range entries {
			e, _ := w.Create(name)
			e.Write(data)
		}
		w.Close()
		out.Close()
		return f
	}
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
	// Wrapped in one folder, with a nested folder beside: prepared as from the plain folder.
	if err := p.Prepare(context.Background(), spec, write(map[string][]byte{"leaf/train.csv": train, "leaf/images/1.jpg": []byte("x")})); err != nil {
		t.Fatalf("a zip wrapping its files in one folder: %v", err)
	}
	if err := p.Prepare(context.Background(), spec, write(map[string][]byte{"test.csv": []byte("id\n")})); err == nil || !strings.Contains(err.Error(), "lacks train.csv") {
		t.Fatalf("a zip without train.csv: %v", err)
	}
	if err := p.Prepare(context.Background(), spec, write(map[string][]byte{"../evil.csv": []byte("x"), "train.csv": train})); err == nil || !strings.Contains(err.Error(), "leaves the extraction folder") {
		t.Fatalf("a zip entry escaping the folder: %v", err)
	}
}

// map@K grades with any cutoff of 1 or more; a K that is not one is refused naming the field.
func TestMAPAtAnyCutoff(t *testing.T) {
	good, err := os.ReadFile("specs/leaf-classification.yaml")
	if err != nil {
		t.Fatal(err)
	}
	spec := func(metric string) (*tasks.Spec, error) {
		text := strings.Replace(string(good), "metric: multi-class-log-loss", "metric: "+metric, 1)
		return tasks.Parse([]byte(text), "test.yaml")
	}
	for _, k := range []int{1, 2, 3, 12, 25, 1000} {
		s, err := spec(fmt.Sprintf("map@%d", k))
		if err != nil {
			t.Fatalf("map@%d: %v", k, err)
		}
		if got, isMAP, err := tasks.MAPCutoff(s.Metric); !isMAP || err != nil || got != k {
			t.Fatalf("MAPCutoff(%q) = %d, %v, %v", s.Metric, got, isMAP, err)
		}
	}
	for metric, want := range map[string]string{
		"map@0":                    `field metric: "map@0": K in map@K is how many predictions of a row count and must be 1 or more, e.g. map@5`,
		"map@-3":                   `"map@-3": K in map@K is how many predictions of a row count and must be 1 or more`,
		"map@":                     `field metric: "map@": K in map@K must be a whole number written in plain digits, e.g. map@5`,
		"map@k":                    `"map@k": K in map@K must be a whole number`,
		"map@2.5":                  `"map@2.5": K in map@K must be a whole number`,
		"map@05":                   `"map@05": K in map@K must be a whole number written in plain digits`,
		"map@+5":                   `"map@+5": K in map@K must be a whole number written in plain digits`,
		"map@99999999999999999999": `K in map@K must be a whole number`,
		"mapk":                     `field metric: "mapk" is not one of`,
	} {
		if _, err := spec(metric); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("metric %s: got %v, want an error containing %q", metric, err, want)
		}
	}
	if _, isMAP, _ := tasks.MAPCutoff("accuracy"); isMAP {
		t.Fatal("accuracy is not a map@K metric")
	}
}
