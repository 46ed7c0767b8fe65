package main

import (
	"math"
	"testing"
)

func TestAudit(t *testing.T) {
	nan := math.NaN()
	// Lower is better. Validation orders a < b < c < d < e < f; on test the picked program (a)
	// is the fourth of five valid ones (one confident miss), c holds the best test score, and
	// d is invalid on the test answers.
	progs := []graded{
		{ID: "a", Validation: 0.01, Test: 0.36},
		{ID: "b", Validation: 0.02, Test: 0.07},
		{ID: "c", Validation: 0.03, Test: 0.03},
		{ID: "d", Validation: 0.04, Test: nan},
		{ID: "e", Validation: 0.05, Test: 0.06},
		{ID: "f", Validation: 0.06, Test: 0.40},
	}
	a := audit(progs, "", true)
	if a.Programs != 6 || a.TestInvalid != 1 || a.Picked.ID != "a" || a.PickedRank != 4 || a.Oracle.ID != "c" {
		t.Errorf("audit = %+v, want 6 programs, 1 invalid on test, a picked and 4th on test, c the best held", a)
	}
	// Top five by validation, valid on test: a, b, c, e, f.
	if want := (0.36 + 0.07 + 0.03 + 0.06 + 0.40) / 5; math.Abs(a.TopFiveTest-want) > 1e-12 {
		t.Errorf("top five's mean test %v, want %v", a.TopFiveTest, want)
	}
	// Test ranks of a, b, c, e, f: 4, 3, 1, 2, 5 against validation 1..5: rho = 1 - 6*(9+1+4+4+0)/120.
	if want := 1 - 6*18.0/120; math.Abs(a.Spearman-want) > 1e-12 {
		t.Errorf("rank correlation %v, want %v", a.Spearman, want)
	}
	// The experiment's own pick wins over best validation (it may have kept an earlier tie).
	if b := audit(progs, "e", true); b.Picked.ID != "e" || b.PickedRank != 2 {
		t.Errorf("audit with the ledger's pick e = %+v, want e, second on test", b.Picked)
	}
	// Higher is better: the pick and the oracle turn around.
	h := audit([]graded{{ID: "x", Validation: 0.7, Test: 0.6}, {ID: "y", Validation: 0.9, Test: 0.5}}, "", false)
	if h.Picked.ID != "y" || h.PickedRank != 2 || h.Oracle.ID != "x" || h.Spearman != -1 {
		t.Errorf("higher is better: %+v", h)
	}
	if e := audit(nil, "", true); e.Programs != 0 || !math.IsNaN(e.Oracle.Test) || e.PickedRank != 0 {
		t.Errorf("no programs: %+v", e)
	}
}

func TestWinner(t *testing.T) {
	cells := map[string]cellAudit{
		"rl":     {lowerIsBetter: true, Oracle: graded{Test: 0.02}, TopFiveTest: 0.05},
		"static": {lowerIsBetter: true, Oracle: graded{Test: 0.03}, TopFiveTest: 0.05},
		"random": {lowerIsBetter: true, Oracle: graded{Test: math.NaN()}, TopFiveTest: math.NaN()},
	}
	arms := []string{"rl", "static", "random", "missing"}
	if w := winner(cells, arms, func(a cellAudit) float64 { return a.Oracle.Test }); w != "rl" {
		t.Errorf("best held: %s, want rl", w)
	}
	if w := winner(cells, arms, func(a cellAudit) float64 { return a.TopFiveTest }); w != "tie" {
		t.Errorf("equal top fives: %s, want tie", w)
	}
}

func TestTopByValidation(t *testing.T) {
	progs := []graded{{ID: "a", Validation: 0.5}, {ID: "b", Validation: 0.1}, {ID: "c", Validation: 0.3}, {ID: "d", Validation: 0.1}, {ID: "e", Validation: 0.2}}
	ids := func(gs []graded) string {
		s := ""
		for _, g := range gs {
			s += g.ID
		}
		return s
	}
	for _, tc := range []struct {
		n     int
		lower bool
		want  string
	}{
		{0, true, "abcde"}, // all
		{9, true, "abcde"}, // more than there are
		{2, true, "bd"},    // the tied best two, in sampling order
		{3, true, "bde"},   // kept in sampling order, not by score
		{1, true, "b"},     // of tied bests the earliest, the run's own pick
		{2, false, "ac"},   // higher is better
	} {
		if got := ids(topByValidation(progs, tc.n, tc.lower)); got != tc.want {
			t.Errorf("top %d (lower %v) = %s, want %s", tc.n, tc.lower, got, tc.want)
		}
	}
}
