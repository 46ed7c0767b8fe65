package runstore

import (
	"path/filepath"
	"testing"
)

// Every name as run and experiment directories already hold it: a change here leaves them
// unreadable.
func TestLayoutIsUnchanged(t *testing.T) {
	s := Sample("it0001-s000")
	for _, c := range []struct{ got, want string }{
		{CheckpointKey(0), "checkpoints/iter-0000.json"},
		{CheckpointKey(12), "checkpoints/iter-0012.json"},
		{BufferKey, "buffer.json"},
		{SeenKey, "seen-programs.json"},
		{IterationMetricsKey(3), "metrics/iter-0003.json"},
		{MetricsKey, "metrics.jsonl"},
		{SegmentKey(2), "state/segment-0002.json"},
		{RecoveryKey, "recovery.jsonl"},
		{ReportKey, "report.md"},
		{s.Prompt(), "samples/it0001-s000/prompt.json"},
		{s.Completion(), "samples/it0001-s000/completion.txt"},
		{s.Plan(), "samples/it0001-s000/plan.md"},
		{s.Program(), "samples/it0001-s000/program.py"},
		{s.Record(), "samples/it0001-s000/sample.json"},
		{s.Instrumented(), "samples/it0001-s000/instrumented.py"},
		{s.Output(), "samples/it0001-s000/output.txt"},
		{s.Submission(), "samples/it0001-s000/submission.csv"},
		{s.Result(), "samples/it0001-s000/result.json"},
		{s.Fold(1).Result(), "samples/it0001-s000/result.json"},
		{s.Fold(3).Output(), "samples/it0001-s000/fold-3/output.txt"},
		{s.Final().Submission(), "samples/it0001-s000/final/submission.csv"},
		{s.Final().GradeReport(), "samples/it0001-s000/final/report.json"},
		{s.CV(2).Submission(), "samples/it0001-s000/cv-2/submission.csv"},
		{s.OOF(), "samples/it0001-s000/oof-submission.csv"},
		{AnswerSubmissionKey, "final-answer/submission.csv"},
		{AnswerKey, "final-answer/answer.json"},
		{ChoiceKey, "best-of-k.json"},
		{Sample("*").Result(), "samples/*/result.json"},
		{LedgerFile, "experiment.json"},
		{ExperimentInputFile, "experiment-input.json"},
		{ExperimentSpecFile, "spec.yaml"},
		{ExperimentRunDir("exp", "cell-rl-s1"), filepath.Join("exp", "runs", "cell-rl-s1")},
		{filepath.Join("exp", ExperimentRunsDir), filepath.Join("exp", "runs")},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}

func TestCheckpointIteration(t *testing.T) {
	for key, want := range map[string]int{"checkpoints/iter-0000.json": 0, "checkpoints/iter-0042.json": 42} {
		if it, ok := CheckpointIteration(key); !ok || it != want {
			t.Errorf("%s: %d %v, want %d", key, it, ok, want)
		}
	}
	for _, key := range []string{"checkpoints/iter-42.json", "checkpoints/iter-0001.json.bak", "buffer.json", ""} {
		if it, ok := CheckpointIteration(key); ok {
			t.Errorf("%s parsed as iteration %d", key, it)
		}
	}
}
