package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

func TestGradeJSONHasExactlyMLEBenchsKeys(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sample := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs("leaf-classification", tasks.SplitTest).Public, "sample_submission.csv")
	var out bytes.Buffer
	if err := gradeCommand([]string{"--task", "leaf-classification", "--data-dir", dataDir, "--submission", sample, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range rep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := "above_median any_medal bronze_medal bronze_threshold competition_id created_at gold_medal gold_threshold is_lower_better median_threshold score silver_medal silver_threshold submission_exists submission_path valid_submission"
	if strings.Join(keys, " ") != want {
		t.Fatalf("keys %v\nwant %s", keys, want)
	}
	if rep["score"].(float64) != 4.59512 { // log(99): the uniform sample submission
		t.Fatalf("score %v", rep["score"])
	}
}

func TestGradeJSONLAggregates(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sample := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs("leaf-classification", tasks.SplitTest).Public, "sample_submission.csv")
	answers := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs("leaf-classification", tasks.SplitTest).Private, "test.csv")
	dir := t.TempDir()
	perfect := filepath.Join(dir, "perfect.csv")
	b, _ := os.ReadFile(answers)
	os.WriteFile(perfect, b, 0o644)
	lines := fmt.Sprintf(`{"competition_id": "leaf-classification", "submission_path": %q}
{"competition_id": "leaf-classification", "submission_path": %q}
{"competition_id": "leaf-classification", "submission_path": "/nonexistent.csv"}
`, sample, perfect)
	jsonl := filepath.Join(dir, "subs.jsonl")
	os.WriteFile(jsonl, []byte(lines), 0o644)
	var out bytes.Buffer
	if err := gradeCommand([]string{"--jsonl", jsonl, "--data-dir", dataDir}, &out); err != nil {
		t.Fatal(err)
	}
	var agg aggregate
	if err := json.Unmarshal(out.Bytes(), &agg); err != nil {
		t.Fatal(err)
	}
	if agg.TotalRuns != 3 || agg.TotalRunsWithSubmissions != 2 || agg.TotalValidSubmissions != 2 ||
		agg.TotalGoldMedals != 1 || agg.TotalMedals != 1 || agg.TotalAboveMedian != 1 {
		t.Fatalf("aggregate %+v", agg)
	}
	os.WriteFile(jsonl, []byte(`{"competition": "leaf"}`+"\n"), 0o644)
	if err := gradeCommand([]string{"--jsonl", jsonl, "--data-dir", dataDir}, &out); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a malformed line must be named: %v", err)
	}
}

// A competition the platform does not ship, as a user brings it: a spec file and raw files
// outside the repository. `tasks prepare --task-spec FILE` prepares it by the generic split
// (no --task: the spec names it); `grade` needs the test split alone, and `tasks prepare`
// without --raw carves the validation folds again.
func TestUserSpecPreparesAndGradesOutsideTheRepository(t *testing.T) {
	testenv.RequirePython(t)
	dir := t.TempDir()
	spec := filepath.Join(dir, "toy.yaml")
	if err := os.WriteFile(spec, []byte(`id: toy-flags
name: Toy Flags
modality: tabular-classification
metric: accuracy
direction: max
id_column: id
target_columns: [flag]
files: {train: train.csv, test: test.csv, sample_submission: sample_submission.csv, answers: test.csv}
answers: {format: columns, columns: [flag], match_by: id}
raw_files: [train.csv]
split: {raw: train.csv, test_size: 0.2, random_state: 0, sample_submission: {flag: 0}}
validation: {fraction: 0.1, seed: 1}
limits: {wall_seconds: 60, memory_mb: 1024, processes: 16, output_kb: 64}
prompt: {summary: "Predict the flag.", snippet_rows: 2}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	raw := filepath.Join(dir, "raw")
	var rows strings.Builder
	rows.WriteString("id,x,flag\n")
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&rows, "r%d,%d,%d\n", i, i, i%2)
	}
	if err := os.MkdirAll(raw, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(raw, "train.csv"), []byte(rows.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	common := []string{"--task-spec", spec, "--data-dir", data, "--python", testenv.Python}
	if err := tasksPrepare(t.Context(), append([]string{"--raw", raw}, common...)); err != nil {
		t.Fatal(err)
	}
	l := tasks.Layout{DataDir: data}
	if err := os.RemoveAll(filepath.Dir(l.Dirs("toy-flags", tasks.SplitValidation).Public)); err != nil {
		t.Fatal(err)
	}
	// The all-zero sample submission is right on the test rows whose flag is 0.
	sample := filepath.Join(l.Dirs("toy-flags", tasks.SplitTest).Public, "sample_submission.csv")
	var out bytes.Buffer
	if err := gradeCommand(append([]string{"--submission", sample}, common...), &out); err != nil {
		t.Fatalf("grading without the validation folds: %v", err)
	}
	if !strings.HasPrefix(out.String(), "toy-flags: score 0.") || !strings.Contains(out.String(), "valid true") {
		t.Fatalf("grade: %s", out.String())
	}
	s, err := tasks.Builtin().AddFile(spec)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.CheckPrepared(s); err == nil {
		t.Fatal("the folds were removed, yet the task counts as prepared")
	}
	if err := tasksPrepare(t.Context(), common); err != nil {
		t.Fatalf("carving the folds without --raw: %v", err)
	}
	if err := l.CheckPrepared(s); err != nil {
		t.Fatal(err)
	}
}
