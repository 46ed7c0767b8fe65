package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"strings"
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

func TestRegistryForReadsTheExperimentsTaskSpec(t *testing.T) {
	leaf, err := os.ReadFile(filepath.Join("..", "..", "..", "tasks", "specs", "leaf-classification.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "my-leaves.yaml")
	if err := os.WriteFile(spec, bytes.Replace(leaf, []byte("id: leaf-classification"), []byte("id: my-leaves"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRunJSON := func(specFile string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"task_spec": "`+specFile+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Without run.json (or with one naming no spec) the built-in tasks only.
	r, err := registryFor(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("my-leaves"); err == nil {
		t.Error("a task that is not built in was found without its spec")
	}
	writeRunJSON(spec)
	if r, err = registryFor(dir, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("my-leaves"); err != nil {
		t.Errorf("the task of run.json's spec: %v", err)
	}
	// A recorded path that does not resolve from here: the error says how to give it.
	writeRunJSON("specs/elsewhere.yaml")
	if _, err := registryFor(dir, ""); err == nil || !strings.Contains(err.Error(), "--task-spec") {
		t.Errorf("a missing spec file: %v, want an error naming --task-spec", err)
	}
	if r, err = registryFor(dir, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("my-leaves"); err != nil {
		t.Errorf("the task of --task-spec's spec: %v", err)
	}
}
