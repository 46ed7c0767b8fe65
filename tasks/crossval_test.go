package tasks_test

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// The final answer's cross-validation: k folds that partition the public train, each training
// on the rest, and the folds' answers joined in fold order.
func TestCrossValidationFoldsPartitionTheTrain(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	spec, _ := tasks.Builtin().Get("leaf-classification")
	l := tasks.Layout{DataDir: dataDir}
	lines := func(f string) []string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Split(strings.TrimSpace(string(b)), "\n")
	}
	if _, err := tasks.CarveCrossValidation(context.Background(), spec, l, testenv.Python, 1); err == nil || !strings.Contains(err.Error(), "at least 2 folds") {
		t.Fatalf("one fold must be refused, got %v", err)
	}
	cv, err := tasks.CarveCrossValidation(context.Background(), spec, l, testenv.Python, 4)
	if err != nil {
		t.Fatal(err)
	}
	train := lines(l.Dirs(spec.ID, tasks.SplitTest).Public + "/train.csv")
	id := func(row string) string { return row[:strings.IndexByte(row, ',')] }
	held := map[string]int{}
	var joined []string
	for f, d := range cv.Folds {
		ftrain, ftest, fans := lines(d.Public+"/train.csv"), lines(d.Public+"/test.csv"), lines(d.Private+"/"+spec.Files.Answers)
		if len(ftrain)-1+len(ftest)-1 != len(train)-1 || len(fans) != len(ftest) {
			t.Fatalf("fold %d: %d train + %d test rows, %d answers; the train has %d", f+1, len(ftrain)-1, len(ftest)-1, len(fans)-1, len(train)-1)
		}
		if n := len(ftest) - 1; n < (len(train)-1)/4 || n > (len(train)-1)/4+1 {
			t.Fatalf("fold %d holds out %d rows, want a quarter of %d", f+1, n, len(train)-1)
		}
		for _, row := range ftest[1:] {
			if g, ok := held[id(row)]; ok {
				t.Fatalf("id %s is held out by folds %d and %d", id(row), g, f+1)
			}
			held[id(row)] = f + 1
		}
		for k, row := range fans[1:] {
			if id(row) != id(ftest[k+1]) {
				t.Fatalf("fold %d: answer row %d is id %s, its test row is %s", f+1, k, id(row), id(ftest[k+1]))
			}
		}
		joined = append(joined, fans[1:]...)
	}
	if len(held) != len(train)-1 {
		t.Fatalf("the folds hold out %d of %d train rows: they must cover all", len(held), len(train)-1)
	}
	// Leaf's classes are dealt evenly: each fold holds floor or ceil of a quarter of every
	// species' rows (a random partition of 6-10 rows per species would not).
	header := strings.Split(train[0], ",")
	col := slices.Index(header, "species")
	perFold := map[string][]int{}
	for _, row := range train[1:] {
		cells := strings.Split(row, ",")
		sp := cells[col]
		if perFold[sp] == nil {
			perFold[sp] = make([]int, 4)
		}
		perFold[sp][held[cells[0]]-1]++
	}
	for sp, counts := range perFold {
		n := 0
		for _, c := range counts {
			n += c
		}
		for f, c := range counts {
			if c != n/4 && c != (n+3)/4 {
				t.Fatalf("fold %d holds %d of species %s's %d rows, want %d or %d: the folds must be stratified", f+1, c, sp, n, n/4, (n+3)/4)
			}
		}
	}
	oof := lines(cv.Answers)
	if strings.Join(oof[1:], "\n") != strings.Join(joined, "\n") {
		t.Fatal("the out-of-fold answers must be the folds' answers in fold order")
	}
	// Carved once: a second call finds it and writes nothing.
	st, _ := os.Stat(cv.Answers)
	if _, err := tasks.CarveCrossValidation(context.Background(), spec, l, testenv.Python, 4); err != nil {
		t.Fatal(err)
	}
	if again, _ := os.Stat(cv.Answers); !again.ModTime().Equal(st.ModTime()) {
		t.Fatal("the partition was carved again")
	}
	// Unprepared data is refused with the command that prepares it.
	if _, err := tasks.CarveCrossValidation(context.Background(), spec, tasks.Layout{DataDir: t.TempDir()}, testenv.Python, 4); err == nil || !strings.Contains(err.Error(), "starter tasks prepare") {
		t.Fatalf("want the prepare command named, got %v", err)
	}
}

// Which built-in tasks get stratified cross-validation folds: those graded on classes.
func TestClassLabelledTasks(t *testing.T) {
	for _, tc := range []struct {
		id   string
		want bool
	}{
		{"leaf-classification", true},
		{"random-acts-of-pizza", true},
		{"detecting-insults-in-social-commentary", true},
		{"spooky-author-identification", true},
		{"plant-pathology-2020-fgvc7", true},
		{"tabular-playground-series-dec-2021", true},
		{"nomad2018-predict-transparent-conductors", false},
		{"learning-agency-lab-automated-essay-scoring-2", false},
		{"us-patent-phrase-to-phrase-matching", false},
		{"tweet-sentiment-extraction", false},
	} {
		spec, err := tasks.Builtin().Get(tc.id)
		if err != nil {
			t.Fatal(err)
		}
		if got := spec.ClassLabelled(); got != tc.want {
			t.Errorf("%s: ClassLabelled() = %v, want %v", tc.id, got, tc.want)
		}
	}
}

// The validation folds of a class-labelled task are stratified shares: each species is held out
// in proportion to its rows (within one row either way), where leaf's old random shares held
// up to 4 rows of a species with a share of 0.9 and left 40 of the 99 out. Data carved by the
// old rule is refused as unprepared, with the command that carves it again.
func TestValidationFoldsAreStratifiedOnClassLabelledTasks(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	spec, _ := tasks.Builtin().Get("leaf-classification")
	l := tasks.Layout{DataDir: dataDir}
	read := func(f string) [][]string {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]string
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n")[1:] {
			rows = append(rows, strings.SplitN(line, ",", 3))
		}
		return rows
	}
	train := read(l.Dirs(spec.ID, tasks.SplitTest).Public + "/train.csv")
	species, rows := map[string]string{}, map[string]int{}
	for _, r := range train {
		species[r[0]] = r[1]
		rows[r[1]]++
	}
	for f := 1; f <= spec.Validation.FoldCount(); f++ {
		held := map[string]int{}
		test := read(l.FoldDirs(spec.ID, f).Public + "/test.csv")
		for _, r := range test {
			held[species[r[0]]]++
		}
		for sp, n := range rows {
			share := float64(n) * float64(len(test)) / float64(len(train))
			if d := float64(held[sp]) - share; d > 1.5 || d < -1.5 {
				t.Fatalf("validation fold %d holds %d rows of %s, its share is %.2f: the folds must be stratified", f, held[sp], sp, share)
			}
		}
	}
	if err := l.CheckPrepared(spec); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(dataDir + "/leaf-classification/prepared/validation-carving.txt"); err != nil {
		t.Fatal(err)
	}
	err := l.CheckPrepared(spec)
	if err == nil || !strings.Contains(err.Error(), `carved "random"`) || !strings.Contains(err.Error(), "starter tasks prepare --task leaf-classification") {
		t.Fatalf("folds carved by the old rule must be refused with the command that carves them again, got %v", err)
	}
	// A task graded on values keeps random shares, so its folds from before the record stand.
	values := *spec
	values.Metric = "mean-column-rmsle"
	if err := l.CheckPrepared(&values); err != nil {
		t.Fatalf("random folds of a task graded on values must still count as prepared: %v", err)
	}
}
