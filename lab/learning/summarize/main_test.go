package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/artifacts/runstore"
	"mlerl/runrecord"
)

// writeRun lays out a run directory as the starter does: samples/<id>/result.json and
// program.py (the program is code[id], or one of its own).
func writeRun(t *testing.T, results []runrecord.ExecuteResult, code map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, r := range results {
		s := runstore.Sample(r.SampleID)
		if err := os.MkdirAll(filepath.Join(dir, string(s)), 0o755); err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(r)
		if err := os.WriteFile(filepath.Join(dir, s.Result()), b, 0o644); err != nil {
			t.Fatal(err)
		}
		program, ok := code[r.SampleID]
		if !ok {
			program = "print('" + r.SampleID + "')\n"
		}
		if err := os.WriteFile(filepath.Join(dir, s.Program()), []byte(program), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func score(v float64) *float64 { return &v }

func TestReadSeparatesTrainingAndEvaluationBests(t *testing.T) {
	dir := writeRun(t, []runrecord.ExecuteResult{
		{SampleID: "it0001-s000", Score: score(0.9), Valid: true, Reward: -0.9},
		{SampleID: "it0001-s001", Reward: -10},
		{SampleID: "it0003-s010", Score: score(0.2), Valid: true, Reward: -0.2},
		{SampleID: "it0005-s020", Score: score(0.5), Valid: true, Reward: -0.5},
		{SampleID: "eval-scratch-000", Score: score(0.3), Valid: true, Reward: -0.3},
		{SampleID: "eval-improve-000", Score: score(0.1), Valid: true, Reward: -0.1},
	}, map[string]string{"it0005-s020": "print('it0001-s000')\n"}) // a repeat of the first program
	st, err := read(dir)
	if err != nil {
		t.Fatal(err)
	}
	if st.best != 0.1 || st.evalBest != 0.1 || st.executed != 4 || st.distinct != 3 {
		t.Fatalf("best %v, evaluation best %v, executed %d, distinct %d; want 0.1, 0.1, 4, 3", st.best, st.evalBest, st.executed, st.distinct)
	}
	for _, c := range []struct {
		it   int
		want float64 // NaN: nothing valid sampled yet
	}{
		{0, math.NaN()},
		{1, 0.9},
		{2, 0.9},
		{3, 0.2},
		{5, 0.2}, // a worse later program does not raise the best so far
	} {
		got := st.bestBy(c.it)
		if got != c.want && !(math.IsNaN(got) && math.IsNaN(c.want)) {
			t.Errorf("bestBy(%d) = %v, want %v", c.it, got, c.want)
		}
	}
}

func TestReadRejectsAnUnknownTrainingID(t *testing.T) {
	dir := writeRun(t, []runrecord.ExecuteResult{{SampleID: "itx-s000", Reward: -10}}, nil)
	if _, err := read(dir); err == nil || !strings.Contains(err.Error(), "not it<iteration>-s<n>") {
		t.Fatalf("err = %v, want one naming the expected id form", err)
	}
}
