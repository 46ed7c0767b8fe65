package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

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

// A FIFO (or a symlink to one) as the submission or the JSONL list is refused at once, naming
// what it is; opening it would block for good.
func TestGradeRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "submission.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	os.Symlink(fifo, link)
	for _, args := range [][]string{
		{"--task", "leaf-classification", "--submission", fifo},
		{"--task", "leaf-classification", "--submission", link},
		{"--task", "leaf-classification", "--submission", "/dev/null"},
		{"--jsonl", fifo},
	} {
		done := make(chan error, 1)
		go func() { done <- gradeCommand(args, io.Discard) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%v: %v, want a refusal naming a special file", args, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: grade blocked", args)
		}
	}
}
