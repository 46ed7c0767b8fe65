package workflows

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"testing"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// Histories recorded from real runs on the dev server (`temporal workflow show -o json`, then
// gzip): workflow code that no longer replays them would break every run in flight when a
// worker is upgraded. A change that must alter the commands goes behind workflow.GetVersion,
// and a history of the new shape is recorded beside these.
//
// Retiring a gate: the histories here are the supported ones. A gate's old branches, and its
// GetVersion call with them (the SDK skips a version marker no code asks for), are deleted once
// a history of its newest branch is recorded here; every history that took an older branch of
// it is retired with it (deleted, and named below). Runs started by workers older than the
// retiring release must be finished or stopped before upgrading. A gate whose newest branch no
// history holds stays.
//
//	train-rl-s21: an rl cell of the paper experiment (insults, 4 iterations, best program graded)
//	train-static-matched-s21: a static cell trained to a sandbox-seconds budget
//	train-pause-then-continue-as-new: a pause arriving while a segment hands over
//	train-resumed-segment-stopped: the last segment of a paused, resumed and stopped run
//	train-answer-child: a random-acts-of-pizza run (1 iteration, 3 candidates on 3 folds, 1
//	tuned) whose answer ran as the FinalAnswer child workflow (version 1 of
//	final-answer-child)
//	final-answer-tuned: that run's FinalAnswer (candidates, a tuning round cut by the tuning
//	budget, ensemble, refits, the untuned answer, blend)
//	experiment-small: an Experiment of 2 tasks with data and 1 without × rl, static and
//	static-matched (children, matched budgets, curve grading, ledger saves)
//	final-answer-cut-at-deadline: a random-acts-of-pizza answer with about a minute of a
//	6-minute budget left (version 1 of answer-stops-at-deadline: its first candidate's folds
//	cancelled at the deadline, the answer the best leader already refit)
//	train-stops-at-time-budget: a movie-review-sentiment run at the default 40-minute time
//	budget (version 1 of stop-at-time-budget: training stopped at its share mid-iteration with
//	16 programs in flight cancelled, best-of-K cut at its deadline), its answer a child
//	final-answer-costed: a detecting-insults answer at the default 40-minute budget (version 1
//	of answer-costs-by-program: 8 candidates costed by their own programs, 3 tuned until the
//	noise rule or no slot was left, no sandbox multiple; ensemble of 7, refits, untuned answer)
//
// Retired on 6 December 2026 with the gates grade-best-training-program, final-answer,
// answer-distinct-predictions, answer-guards-candidates, answer-drops-failed-refits,
// answer-untuned-baseline and answer-tuning-budget: train-answer-tuning-waves (no untuned
// answer) and train-answer-untuned (unguarded candidates). Kept: stop-at-sandbox-budget, whose
// newest version (3) no history holds yet, and answer-stops-at-deadline, whose version 1
// final-answer-cut-at-deadline holds (its default branch too is held by none, but runs in
// flight with a deadline may have taken it).
//
// Retired on 6 December 2026 with the gate final-answer-child (the answer moved from Train's
// own commands to the FinalAnswer child workflow): train-answer-guarded and
// train-static-matched-stops-at-budget, whose answers ran inline. The latter was the only
// history of version 1 of stop-at-sandbox-budget, which stays as the note above says.
//
// eval-share-from-its-start (7 December 2026): no history holds its version 1 yet;
// train-stops-at-time-budget took its default branch (best-of-K until 80% of the budget).
//
// Retired on 6 December 2026 (third session) with the gate stop-at-time-budget, once
// train-stops-at-time-budget held its version 1: no history took its default branch (none
// before it had a time budget).
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
			r.RegisterWorkflow(FinalAnswer)
			// Replay as the recorded workflow's own id: Train names its answer's child after it,
			// and the replayer's stand-in id would start a child the history does not hold.
			var opts worker.ReplayWorkflowHistoryOptions
			if a := hist.GetEvents()[0].GetWorkflowExecutionStartedEventAttributes(); a.GetWorkflowId() != "" {
				opts.OriginalExecution = workflow.Execution{ID: a.GetWorkflowId(), RunID: a.GetOriginalExecutionRunId()}
			}
			if err := r.ReplayWorkflowHistoryWithOptions(nil, hist, opts); err != nil {
				t.Fatalf("%s no longer replays: %v", f, err)
			}
		})
	}
}
