package workflows

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
)

// Histories recorded from real runs on the dev server (`temporal workflow show -o json`, then
// gzip): workflow code that no longer replays them would break every run in flight when a
// worker is upgraded. A change that must alter the commands goes behind workflow.GetVersion,
// and a history of the new shape is recorded beside these.
//
//	train-rl-s21: an rl cell of the paper experiment (insults, 4 iterations, best program graded)
//	train-static-matched-s21: a static cell trained to a sandbox-seconds budget
//	train-static-matched-stops-at-budget: the last segment of a static-matched leaf cell of
//	experiment leafmatched, stopped mid-iteration by its budget (version stop-at-sandbox-budget)
//	train-pause-then-continue-as-new: a pause arriving while a segment hands over
//	train-resumed-segment-stopped: the last segment of a paused, resumed and stopped run
//	train-answer-tuning-waves: an rl cell of experiment tuneablate (nomad, seed 241, the
//	defaults) whose answer tuned in waves within its budget (version 2 of answer-tuning-budget)
//	train-answer-guarded: an rl cell of experiment nomadguard (nomad, seed 421) whose answer
//	cross-validated guarded candidates (version 1 of answer-guards-candidates)
//	experiment-small: an Experiment of 2 tasks with data and 1 without × rl, static and
//	static-matched (children, matched budgets, curve grading, ledger saves)
func TestRecordedHistoriesReplay(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "*.history.json.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no recorded histories in testdata (%v)", err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			fh, err := os.Open(f)
			if err != nil {
				t.Fatal(err)
			}
			defer fh.Close()
			zr, err := gzip.NewReader(fh)
			if err != nil {
				t.Fatal(err)
			}
			hist, err := client.HistoryFromJSON(zr, client.HistoryJSONOptions{})
			if err != nil {
				t.Fatal(err)
			}
			r := worker.NewWorkflowReplayer()
			r.RegisterWorkflow(Train)
			r.RegisterWorkflow(Experiment)
			if err := r.ReplayWorkflowHistory(nil, hist); err != nil {
				t.Fatalf("%s no longer replays: %v", f, err)
			}
		})
	}
}
