package grading

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// sklearnLogLoss asks Debian's scikit-learn for the reference value.
func sklearnLogLoss(t *testing.T, truth []int, probs [][]float64) float64 {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"y": truth, "p": probs})
	script := `import json, sys
from sklearn.metrics import log_loss
d = json.load(sys.stdin)
print(repr(log_loss(d["y"], d["p"], labels=list(range(len(d["p"][0]))))))`
	cmd := exec.Command(testenv.Python, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("scikit-learn: %v: %s", err, out)
	}
	var v float64
	fmt.Sscan(string(out), &v)
	return v
}

func TestLogLossMatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(1, 2))
	random := func(n, k int) ([]int, [][]float64) {
		y := make([]int, n)
		p := make([][]float64, n)
		for i := range p {
			y[i] = rng.IntN(k)
			p[i] = make([]float64, k)
			s := 0.0
			for j := range p[i] {
				p[i][j] = rng.Float64()
				s += p[i][j]
			}
			for j := range p[i] {
				p[i][j] /= s
			}
		}
		return y, p
	}
	y1, p1 := random(50, 5)
	y2, p2 := random(99, 99)
	cases := []struct {
		name  string
		truth []int
		probs [][]float64
	}{
		{"random 5 classes", y1, p1},
		{"random 99 classes", y2, p2},
		{"zero on the true class is clipped at machine epsilon", []int{0, 1}, [][]float64{{0, 1}, {0.5, 0.5}}},
		{"certain and right", []int{1, 0}, [][]float64{{0, 1}, {1, 0}}},
		{"a single class in the answers", []int{2, 2, 2}, [][]float64{{0.1, 0.2, 0.7}, {0.3, 0.3, 0.4}, {0, 0, 1}}},
		{"ties: uniform rows", []int{0, 1, 2}, [][]float64{{1. / 3, 1. / 3, 1. / 3}, {1. / 3, 1. / 3, 1. / 3}, {1. / 3, 1. / 3, 1. / 3}}},
	}
	for _, c := range cases {
		got, want := LogLoss(c.truth, c.probs), sklearnLogLoss(t, c.truth, c.probs)
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: ours %.12g, scikit-learn %.12g", c.name, got, want)
		}
	}
}

// writeCase writes answers (3 ids, classes a b c) and a submission body, and grades it.
func gradeCSV(t *testing.T, name, submission string) Result {
	t.Helper()
	dir := t.TempDir()
	ans := filepath.Join(dir, "answers.csv")
	os.WriteFile(ans, []byte("id,a,b,c\n1,1,0,0\n2,0,1,0\n3,0,0,1\n"), 0o644)
	sub := filepath.Join(dir, name)
	if submission != "" {
		os.WriteFile(sub, []byte(submission), 0o644)
	}
	spec := &tasks.Spec{ID: "toy", Metric: "multi-class-log-loss", Direction: "min", IDColumn: "id",
		Answers: tasks.Answers{Format: "one-hot", MatchBy: "id", ExactColumns: true}}
	r, err := Grade(spec, sub, ans)
	if err != nil {
		t.Fatalf("an invalid submission must be a result, not an error: %v", err)
	}
	return r
}

func TestGradeValidityRules(t *testing.T) {
	cases := []struct {
		name, file, body, reason string
	}{
		{"missing file", "submission.csv", "", "no submission file"},
		{"not a csv name", "submission.txt", "id,a,b,c\n", "must be a .csv file"},
		{"empty", "submission.csv", "\n", "not a readable CSV"},
		{"missing class column", "submission.csv", "id,a,b\n1,1,0\n2,0,1\n3,.5,.5\n", "missing c"},
		{"extra column", "submission.csv", "id,a,b,c,d\n1,1,0,0,0\n2,0,1,0,0\n3,0,0,1,0\n", "unexpected d"},
		{"wrong row count", "submission.csv", "id,a,b,c\n1,1,0,0\n2,0,1,0\n", "2 rows, the answers have 3"},
		{"ids do not match", "submission.csv", "id,a,b,c\n1,1,0,0\n2,0,1,0\n4,0,0,1\n", "id \"3\" is missing"},
		{"an id repeated more often than in the answers", "submission.csv", "id,a,b,c\n1,1,0,0\n1,0,1,0\n3,0,0,1\n", "id \"2\" is missing"},
		{"probability above 1", "submission.csv", "id,a,b,c\n1,1.5,-0.5,0\n2,0,1,0\n3,0,0,1\n", "outside [0, 1]"},
		{"rows must sum to 1", "submission.csv", "id,a,b,c\n1,0.5,0,0\n2,0,1,0\n3,0,0,1\n", "sum to 0.5"},
		{"NaN", "submission.csv", "id,a,b,c\n1,nan,0,1\n2,0,1,0\n3,0,0,1\n", "not a probability"},
		{"text", "submission.csv", "id,a,b,c\n1,x,0,1\n2,0,1,0\n3,0,0,1\n", "not a probability"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := gradeCSV(t, c.file, c.body)
			if r.Valid || r.Score != nil || !strings.Contains(r.Reason, c.reason) {
				t.Fatalf("got %+v, want invalid with a reason containing %q", r, c.reason)
			}
		})
	}
	r := gradeCSV(t, "submission.csv", "c,id,b,a\n0,3,0,1\n0,2,1,0\n0.2,1,0,0.8\n")
	want := math.Round(LogLoss([]int{0, 1, 2}, [][]float64{{0.8, 0, 0.2}, {0, 1, 0}, {1, 0, 0}})*1e5) / 1e5
	if !r.Valid || math.Abs(*r.Score-want) > 1e-12 {
		t.Fatalf("rows and columns in any order, matched by id: got %+v, want %v", r, want)
	}
}

func TestMedals(t *testing.T) {
	spec := &tasks.Spec{ID: "leaf-classification", Direction: "min",
		Thresholds: tasks.Thresholds{Gold: 0.0, Silver: 0.00791, Bronze: 0.01526, Median: 0.108345}}
	max := &tasks.Spec{ID: "x", Direction: "max", Thresholds: tasks.Thresholds{Gold: 0.9, Silver: 0.8, Bronze: 0.7, Median: 0.6}}
	f := func(v float64) *float64 { return &v }
	cases := []struct {
		name                              string
		spec                              *tasks.Spec
		score                             *float64
		gold, silver, bronze, any, median bool
	}{
		{"gold at the threshold", spec, f(0), true, false, false, true, true},
		{"silver at the threshold", spec, f(0.00791), false, true, false, true, true},
		{"bronze", spec, f(0.01), false, false, true, true, true},
		{"above median only", spec, f(0.05), false, false, false, false, true},
		{"median is strict", spec, f(0.108345), false, false, false, false, false},
		{"invalid", spec, nil, false, false, false, false, false},
		{"higher is better", max, f(0.85), false, true, false, true, true},
	}
	for _, c := range cases {
		r := NewReport(c.spec, Result{Score: c.score, Valid: c.score != nil, Exists: true}, "s.csv", time.Unix(0, 0))
		if r.GoldMedal != c.gold || r.SilverMedal != c.silver || r.BronzeMedal != c.bronze || r.AnyMedal != c.any || r.AboveMedian != c.median {
			t.Errorf("%s: %+v", c.name, r)
		}
	}
}
