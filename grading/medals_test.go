package grading

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// Every competition's thresholds, computed from its leaderboard, equal MLE-bench's; and every
// embedded spec carries those figures.
func TestThresholdsFromLeaderboardsMatchMLEBench(t *testing.T) {
	dir := testenv.SharedDir(t, "mlebench")
	f, err := os.Open(filepath.Join(dir, "thresholds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := csv.NewReader(f).ReadAll()
	f.Close()
	if len(rows) != 13 {
		t.Fatalf("thresholds.csv has %d competitions, want 12", len(rows)-1)
	}
	reg := tasks.Builtin()
	for _, r := range rows[1:] {
		id := r[0]
		t.Run(id, func(t *testing.T) {
			lb, err := os.Open(filepath.Join(dir, id, "leaderboard.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer lb.Close()
			scores, err := ReadLeaderboard(lb)
			if err != nil {
				t.Fatal(err)
			}
			th, lower, err := LeaderboardThresholds(scores)
			if err != nil {
				t.Fatal(err)
			}
			num := func(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }
			teams, _ := strconv.Atoi(r[2])
			if len(scores) != teams || lower != (r[1] == "min") {
				t.Fatalf("%d teams (want %d), lower-is-better %v (want %s)", len(scores), teams, lower, r[1])
			}
			want := tasks.Thresholds{Gold: num(r[3]), Silver: num(r[4]), Bronze: num(r[5]), Median: num(r[6])}
			if !close(th, want) {
				t.Fatalf("computed %+v, MLE-bench %+v", th, want)
			}
			if spec, err := reg.Get(id); err == nil {
				if !close(spec.Thresholds, want) || spec.LowerIsBetter() != lower {
					t.Fatalf("the embedded spec has %+v (direction %s), want %+v", spec.Thresholds, spec.Direction, want)
				}
			}
		})
	}
}

func close(a, b tasks.Thresholds) bool {
	eq := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	return eq(a.Gold, b.Gold) && eq(a.Silver, b.Silver) && eq(a.Bronze, b.Bronze) && eq(a.Median, b.Median)
}

func TestThresholdRuleByLeaderboardSize(t *testing.T) {
	board := func(n int) []float64 { // n teams, higher is better, team k scores n-k+1
		s := make([]float64, n)
		for i := range s {
			s[i] = float64(n - i)
		}
		return s
	}
	cases := []struct {
		n                    int
		gold, silver, bronze int // positions
	}{
		{5, 1, 1, 2}, {50, 5, 10, 20}, {120, 10, 24, 48}, {500, 11, 50, 100}, {2000, 14, 100, 200},
	}
	for _, c := range cases {
		th, lower, _ := LeaderboardThresholds(board(c.n))
		pos := func(v float64) int { return c.n - int(v) + 1 }
		if lower || pos(th.Gold) != c.gold || pos(th.Silver) != c.silver || pos(th.Bronze) != c.bronze {
			t.Errorf("N=%d: positions %d %d %d, want %d %d %d", c.n, pos(th.Gold), pos(th.Silver), pos(th.Bronze), c.gold, c.silver, c.bronze)
		}
	}
}

func TestNoThresholdsMeansMedalsUnknown(t *testing.T) {
	zero, score := 0.0, 0.0
	spec := &tasks.Spec{ID: "x", Direction: "max"} // no thresholds: all zero
	rep := NewReport(spec, Result{Score: &score, Valid: true, Exists: true}, "s.csv", time.Now())
	if !rep.MedalsUnknown || rep.AnyMedal || rep.GoldMedal || rep.AboveMedian || rep.GoldThreshold != nil || rep.Medal() != "unknown" {
		t.Fatalf("%+v (medal %q)", rep, rep.Medal())
	}
	if !strings.Contains(rep.MedalsText(), "medals: unknown") || !strings.Contains(rep.ThresholdsText(), "unknown") {
		t.Fatalf("%s / %s", rep.MedalsText(), rep.ThresholdsText())
	}
	// Leaf's gold threshold is 0 (lower is better): known thresholds may hold a zero.
	spec = &tasks.Spec{ID: "leaf", Direction: "min", Thresholds: tasks.Thresholds{Gold: 0, Silver: 0.00791, Bronze: 0.01526, Median: 0.108345}}
	rep = NewReport(spec, Result{Score: &zero, Valid: true, Exists: true}, "s.csv", time.Now())
	if rep.MedalsUnknown || !rep.GoldMedal || rep.Medal() != "gold" || *rep.GoldThreshold != 0 {
		t.Fatalf("%+v", rep)
	}
	rep = NewReport(spec, Result{Exists: true}, "s.csv", time.Now())
	if rep.Medal() != "" {
		t.Fatalf("an invalid submission has no medal: %q", rep.Medal())
	}
}

func TestThresholdsForDirectionAndOrder(t *testing.T) {
	board := []float64{0.9, 0.8, 0.85, 0.7, 0.6} // row 3 out of order
	th, lower, note, err := ThresholdsFor(board, "max")
	if err != nil || lower || !strings.Contains(note, "not in rank order") || th.Gold != 0.9 || th.Silver != 0.9 || th.Bronze != 0.85 || th.Median != 0.8 {
		t.Fatalf("%+v %v %q %v", th, lower, note, err)
	}
	if _, _, _, err := ThresholdsFor(board, "min"); err == nil || !strings.Contains(err.Error(), "direction is min") {
		t.Fatalf("a contradicting direction must be refused: %v", err)
	}
	if _, _, _, err := ThresholdsFor(board, "up"); err == nil {
		t.Fatal("a bad direction must be refused")
	}
	if _, lower, _, _ := ThresholdsFor([]float64{0.1, 0.2, 0.3}, ""); !lower {
		t.Fatal("lower-is-better must be read off the leaderboard")
	}
	for _, bad := range []string{"teamName,score\na,NaN\n", "teamName,score\na,\n", "teamName,points\na,1\n", "teamName,score\n", ""} {
		if _, err := ReadLeaderboard(strings.NewReader(bad)); err == nil {
			t.Errorf("%q must be refused", bad)
		}
	}
}
