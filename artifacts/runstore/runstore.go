// Package runstore is the layout of a run's artifact store (a run directory, or a run's prefix
// in S3) and of an experiment directory: every key and file name, in one place. The activities
// write by it; the starter, expreport and the benchmarks read by it.
//
// The layout is what existing run and experiment directories hold: a change here leaves them
// unreadable (runstore_test.go pins every name).
//
// A run's store:
//
//	checkpoints/iter-NNNN.json     CheckpointKey: a pointer to the checkpoint's content-addressed
//	                               blob (artifacts.PutContent, under artifacts.ContentPrefix)
//	samples/<id>/...               Sample(id): one sampled program's files
//	buffer.json                    BufferKey: the self-improve buffer
//	seen-programs.json             SeenKey: program hashes sampled so far (redraws)
//	metrics/iter-NNNN.json         IterationMetricsKey: one iteration's metrics line
//	metrics.jsonl                  MetricsKey: all of them
//	state/segment-NNNN.json        SegmentKey: the state a continue-as-new segment starts from
//	recovery.jsonl                 RecoveryKey: damaged checkpoints stepped over
//	final-answer/...               AnswerSubmissionKey, AnswerKey: the run's final answer (the
//	                               cross-validated ensemble of its best programs) and its grade
//	best-of-k.json                 ChoiceKey: the policy's best-of-K choice and its grade
//	report.md                      ReportKey: the run's report, written last
//
// An experiment directory:
//
//	experiment.json                LedgerFile
//	experiment-input.json          ExperimentInputFile
//	spec.yaml                      ExperimentSpecFile
//	runs/<run>/                    ExperimentRunDir: one run's store per cell
package runstore

import (
	"fmt"
	"path/filepath"
)

// Keys of a run's store.
const (
	// BufferKey is the self-improve buffer of a run.
	BufferKey = "buffer.json"
	// SeenKey maps the sha256 of every training program sampled in a run (with redraws on), in
	// the form of its submission key (codeactions.Library.SubmissionKey), to the sample that
	// first wrote it.
	SeenKey = "seen-programs.json"
	// MetricsKey holds every iteration's metrics line (IterationMetricsKey), in order.
	MetricsKey = "metrics.jsonl"
	// RecoveryKey is a JSON-lines log of every damaged checkpoint a run stepped over: which
	// one, why, and the earlier good one used instead.
	RecoveryKey = "recovery.jsonl"
	// ReportKey is the run's report: the training workflow's last step writes it, so its
	// presence means the run finished.
	ReportKey = "report.md"
	// CheckpointsDir holds the checkpoints' pointers (CheckpointKey): a run that has it has
	// started.
	CheckpointsDir = "checkpoints"
	// SamplesDir holds one folder per sample (Sample).
	SamplesDir = "samples"
	// AnswerSubmissionKey is the final answer's submission for the real test: its members'
	// test submissions blended with the chosen weights.
	AnswerSubmissionKey = "final-answer/submission.csv"
	// AnswerKey is the final answer: members, weights, cross-validation and test scores.
	AnswerKey = "final-answer/answer.json"
	// UntunedSubmissionKey is the answer chosen the same way from the candidates before
	// tuning, blended for the same test: a measurement of the tuning, not the run's answer.
	UntunedSubmissionKey = "final-answer/untuned/submission.csv"
	// ChoiceKey is the policy's best-of-K choice and its grade on the test answers
	// (activities.FinalGradeResult): which samples/<id>/final/ is the choice's, since the final
	// answer's members are refit there too.
	ChoiceKey = "best-of-k.json"
)

const checkpointFormat = CheckpointsDir + "/iter-%04d.json"

// CheckpointKey names the checkpoint written after an iteration (0 = the initial policy).
func CheckpointKey(iteration int) string { return fmt.Sprintf(checkpointFormat, iteration) }

// CheckpointIteration parses CheckpointKey's iteration; ok is false for another key.
func CheckpointIteration(key string) (iteration int, ok bool) {
	if n, err := fmt.Sscanf(key, checkpointFormat, &iteration); n != 1 || err != nil || CheckpointKey(iteration) != key {
		return 0, false
	}
	return iteration, true
}

// IterationMetricsKey is one iteration's metrics line (MetricsKey gathers them).
func IterationMetricsKey(iteration int) string {
	return fmt.Sprintf("metrics/iter-%04d.json", iteration)
}

// SegmentKey is the state a continue-as-new segment saved for the next one.
func SegmentKey(segment int) string { return fmt.Sprintf("state/segment-%04d.json", segment) }

// SampleDir is the folder of one sample's files, ending in "/"; its methods name the files.
// Fold and Final are the sub-folders of the runs on other splits.
type SampleDir string

// Sample is sample id's folder. Sample("*") gives glob patterns over every sample.
func Sample(id string) SampleDir { return SampleDir(SamplesDir + "/" + id + "/") }

// Fold is where the run on validation fold f is stored: fold 1 is the sample's own folder (the
// improve prompts read its output), fold f > 1 is fold-<f>/ in it.
func (d SampleDir) Fold(f int) SampleDir {
	if f <= 1 {
		return d
	}
	return d + SampleDir(fmt.Sprintf("fold-%d/", f))
}

// CV is where the run on cross-validation fold f (of the final answer's partition) is stored.
func (d SampleDir) CV(f int) SampleDir { return d + SampleDir(fmt.Sprintf("cv-%d/", f)) }

// OOF is the program's out-of-fold predictions: its cross-validation folds' submissions, joined.
func (d SampleDir) OOF() string { return string(d) + "oof-submission.csv" }

// Final is where the leak-free final grade's run on the test split is stored.
func (d SampleDir) Final() SampleDir { return d + "final/" }

// Files of a sample's folder, in the order they are written.
func (d SampleDir) Prompt() string       { return string(d) + "prompt.json" }    // llm policy: the messages as sent
func (d SampleDir) Completion() string   { return string(d) + "completion.txt" } // llm policy: the raw reply
func (d SampleDir) Plan() string         { return string(d) + "plan.md" }
func (d SampleDir) Program() string      { return string(d) + "program.py" }
func (d SampleDir) Record() string       { return string(d) + "sample.json" } // what PPO needs about the program
func (d SampleDir) Instrumented() string { return string(d) + "instrumented.py" }
func (d SampleDir) Submission() string   { return string(d) + "submission.csv" }
func (d SampleDir) Output() string       { return string(d) + "output.txt" }
func (d SampleDir) Result() string       { return string(d) + "result.json" }
func (d SampleDir) GradeReport() string  { return string(d) + "report.json" } // the final grade's MLE-bench report

// Files of an experiment directory.
const (
	// LedgerFile is the experiment's ledger (experiment.Ledger): status and reports read it.
	LedgerFile = "experiment.json"
	// ExperimentInputFile is the workflow's input: what a fresh execution restarts from.
	ExperimentInputFile = "experiment-input.json"
	// ExperimentSpecFile is the spec as given, byte for byte.
	ExperimentSpecFile = "spec.yaml"
	// ExperimentRunsDir holds one run directory per cell (ExperimentRunDir).
	ExperimentRunsDir = "runs"
)

// ExperimentRunDir is the run directory of a cell's run in experiment directory dir.
func ExperimentRunDir(dir, run string) string { return filepath.Join(dir, ExperimentRunsDir, run) }
