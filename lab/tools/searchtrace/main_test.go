package main

import (
	"math"
	"testing"
)

func TestModelOf(t *testing.T) {
	for _, c := range []struct{ actions, want string }{
		{"features=raw transform=standard model=logreg strength=c1", "logreg"},
		{"model=random-forest", "random-forest"},
		{"features=raw", ""},
		{"", ""},
	} {
		if got := modelOf(c.actions); got != c.want {
			t.Errorf("modelOf(%q) = %q, want %q", c.actions, got, c.want)
		}
	}
}

func TestTraceOf(t *testing.T) {
	// Four iterations; the best (reward -0.05, score 0.05) first appears in iteration 3 after
	// 6 of the 10 sandbox-seconds; an invalid program with a higher reward never counts.
	progs := []program{
		{Iteration: 1, Model: "rf", Valid: true, Reward: -0.5, Score: 0.5, Seconds: 2, Key: "a"},
		{Iteration: 1, Model: "logreg", Valid: false, Reward: 0.3, Seconds: 1, Key: "b"},
		{Iteration: 2, Model: "logreg", Valid: true, Reward: -0.1, Score: 0.1, Seconds: 1, Key: "c"},
		{Iteration: 2, Model: "svm", Valid: false, Reward: -9.7, Seconds: 1, Key: "d"},
		{Iteration: 3, Model: "logreg", Valid: true, Reward: -0.05, Score: 0.05, Seconds: 1, Edit: true, Key: "e"},
		{Iteration: 3, Model: "logreg", Valid: true, Reward: -0.05, Score: 0.05, Seconds: 2, Key: "e"},
		{Iteration: 4, Model: "rf", Valid: false, Reward: -10, Seconds: 1, Edit: true, Key: "f"},
		{Iteration: 4, Model: "rf", Valid: true, Reward: -0.4, Score: 0.4, Seconds: 1, Key: "a"},
	}
	got := traceOf(progs)
	// Edits: 2 (one valid, and it first reached the best); the other 6 programs: 4 valid.
	// Repeats: the second "e" (2 s) and the second "a" (1 s), 3 of the 10 sandbox-seconds.
	want := trace{Programs: 8, ValidEarly: 0.5, ValidLate: 0.75, BestScore: 0.05, BestIteration: 3,
		BestAtSeconds: 0.6, Families: 2, LateFamily: "logreg", LateFamilyRate: 0.5, BestFamily: "logreg",
		Edits: 2, ValidEdits: 0.5, ValidRest: 4.0 / 6, BestFromEdit: true, Repeats: 2, RepeatSeconds: 0.3}
	if math.Abs(got.BestAtSeconds-want.BestAtSeconds) > 1e-12 || math.Abs(got.LateFamilyRate-want.LateFamilyRate) > 1e-12 ||
		math.Abs(got.ValidRest-want.ValidRest) > 1e-12 || math.Abs(got.RepeatSeconds-want.RepeatSeconds) > 1e-12 {
		t.Fatalf("traceOf = %+v, want %+v", got, want)
	}
	got.BestAtSeconds, got.LateFamilyRate, got.ValidRest, got.RepeatSeconds = want.BestAtSeconds, want.LateFamilyRate, want.ValidRest, want.RepeatSeconds
	if got != want {
		t.Errorf("traceOf = %+v, want %+v", got, want)
	}

	empty := traceOf(nil)
	if empty.Programs != 0 || !math.IsNaN(empty.BestScore) {
		t.Errorf("traceOf(nil) = %+v, want no programs and a NaN best", empty)
	}
	none := traceOf([]program{{Iteration: 1, Valid: false, Reward: -10, Seconds: 1}})
	if !math.IsNaN(none.BestScore) || none.BestIteration != 0 || none.Families != 0 {
		t.Errorf("traceOf(all invalid) = %+v, want no best", none)
	}
}
