// Package runrecord holds what a training run records: the lines of metrics.jsonl, programs'
// outcomes, grades on the test answers, and the final answer. Reporters read these records
// without linking the platform's side effects (sandbox, Docker, object store); package
// activities produces them and aliases these types, so their JSON is the same in both.
package runrecord

import (
	"mlerl/ensemble"
	"mlerl/grading"
	"mlerl/model"
)

// IterationMetrics is one line of metrics.jsonl.
type IterationMetrics struct {
	Iteration    int         `json:"iteration"`
	Samples      int         `json:"samples"`
	ValidRate    float64     `json:"valid_rate"`
	MeanReward   float64     `json:"mean_reward"`
	BestScore    *float64    `json:"best_score"`
	MeanDuration float64     `json:"mean_duration_s"`
	InFlight     int         `json:"in_flight"`
	Stale        int         `json:"stale"`
	PPO          model.Stats `json:"ppo"`
	Used         []string    `json:"used,omitempty"` // the samples the update used (stored lines only)
	// CheckpointFallback says the update's checkpoint was damaged and an earlier good one was
	// updated instead (runstore.RecoveryKey has the details).
	CheckpointFallback string `json:"checkpoint_fallback,omitempty"`
	// MeanScore is the mean score of the iteration's valid programs on the selection split.
	MeanScore *float64 `json:"mean_score,omitempty"`
	// BestSample is the program behind BestScore.
	BestSample string `json:"best_sample,omitempty"`
	// Budget used so far, for curves against programs, sandbox time and wall time: training
	// programs executed, their summed execution seconds, and wall seconds since the run began.
	Programs       int     `json:"programs,omitempty"`
	SandboxSeconds float64 `json:"sandbox_seconds,omitempty"`
	ElapsedS       float64 `json:"elapsed_s,omitempty"`
}

// ExecuteResult is a program's outcome. Crashes and timeouts are results, not errors.
type ExecuteResult struct {
	SampleID   string   `json:"sample_id"`
	Reward     float64  `json:"reward"`
	Score      *float64 `json:"score"`
	Valid      bool     `json:"valid"`
	Submitted  bool     `json:"submitted"` // a submission.csv was written
	Markers    int      `json:"markers"`
	LastMarker string   `json:"last_marker"`
	DurationS  float64  `json:"duration_s"`
	TimedOut   bool     `json:"timed_out"`
	ExitCode   int      `json:"exit_code"`
	Reason     string   `json:"reason,omitempty"` // why the submission is invalid or missing
	Stale      bool     `json:"stale,omitempty"`  // ended by the staleness cap
	// FoldScores are the validation folds' scores when the reward averages folds (Score is
	// their mean); on a failed fold, the scores of the folds before it.
	FoldScores []float64 `json:"fold_scores,omitempty"`
}

// FinalGradeResult is MLE-bench's report for the chosen program.
type FinalGradeResult struct {
	SampleID  string         `json:"sample_id"`
	Report    grading.Report `json:"report"`
	Reason    string         `json:"reason,omitempty"`
	DurationS float64        `json:"duration_s"`
}

// CrossValidateResult is a program's cross-validation: Score grades its out-of-fold
// predictions (every train row predicted by the fold that held it out) when every fold
// produced a valid submission.
type CrossValidateResult struct {
	SampleID   string    `json:"sample_id"`
	Score      *float64  `json:"score"`
	FoldScores []float64 `json:"fold_scores,omitempty"`
	Reason     string    `json:"reason,omitempty"` // why there is no score
	DurationS  float64   `json:"duration_s"`
	// PredictionsSHA256 is the digest of the out-of-fold predictions, when scored: programs
	// that make the same predictions are one candidate.
	PredictionsSHA256 string `json:"predictions_sha256,omitempty"`
	// SameAs is the better candidate whose out-of-fold predictions this one repeats; set by
	// the workflow, which leaves such a candidate out of the ensemble.
	SameAs string `json:"same_as,omitempty"`
	// TunedFrom and Tuned: a variant the answer wrote (activities.TuneVariants), the
	// candidate it varies and its change ("transform=power"); set by the workflow.
	TunedFrom string `json:"tuned_from,omitempty"`
	Tuned     string `json:"tuned,omitempty"`
}

// Guard is a candidate the answer cross-validated guarded: From's program with Change.
type Guard struct {
	From   string `json:"from"`
	To     string `json:"to"`
	Change string `json:"change"` // the options changed, e.g. "postprocess=none -> clip0"
}

// TuneStep is one pass of the answer's tuning: candidate From tuned along Slot, the variants
// cross-validated, and the program kept (From itself when no variant cross-validated better)
// with its out-of-fold score.
type TuneStep struct {
	From  string   `json:"from"`
	Slot  string   `json:"slot"`
	Tried int      `json:"tried"`
	Kept  string   `json:"kept"`
	Score *float64 `json:"score"`
	// Skipped says why the pass ran no variant, or no more than Tried of them (the expected
	// cost of the rest was over the budget left).
	Skipped string `json:"skipped,omitempty"`
	// Round is the round of coordinate descent over the slots the pass belongs to, from 1
	// (0 in runs recorded before the tuning went in rounds).
	Round int `json:"round,omitempty"`
}

// TuneStop is why the tuning of candidate From stopped, with Kept, the program it ended on:
// Why names the round and the reason ("round 2: gain 0.0012 within fold noise 0.003").
type TuneStop struct {
	From string `json:"from"`
	Kept string `json:"kept"`
	Why  string `json:"why"`
}

// FinalAnswer is a run's answer: the cross-validated ensemble of its best programs, refit on
// the full public train. Everything but Test is chosen without the test answers.
type FinalAnswer struct {
	Folds      int                   `json:"folds"`
	Candidates []CrossValidateResult `json:"candidates"`
	Duplicates int                   `json:"duplicates,omitempty"`
	Guarded    []Guard               `json:"guarded,omitempty"` // candidates replaced by their guarded programs
	// PassedOver are leaders not cross-validated because their folds would not have ended
	// within the candidates' share of the time budget (answerplan.PickByTime).
	PassedOver []string       `json:"passed_over,omitempty"`
	Members    []AnswerMember `json:"members,omitempty"`
	CVScore    *float64       `json:"cv_score,omitempty"` // the blend's out-of-fold score
	// BlendCVScore and Calibration: see activities.EnsembleResult (nil in runs recorded
	// before calibration).
	BlendCVScore *float64              `json:"blend_cv_score,omitempty"`
	Calibration  *ensemble.Calibration `json:"calibration,omitempty"`
	BlendLog1p   bool                  `json:"blend_log1p,omitempty"` // see activities.EnsembleResult
	Test         *FinalGradeResult     `json:"test,omitempty"`        // the blend graded on the test answers
	// SandboxSeconds is what cross-validation and the refits cost, on top of training.
	SandboxSeconds float64 `json:"sandbox_seconds"`
	Note           string  `json:"note,omitempty"` // why there is no answer, or what was left out
	// Tuning is what tuning the best candidates along their tunable slots kept, pass by pass.
	Tuning []TuneStep `json:"tuning,omitempty"`
	// TuneStops says, per tuned candidate, why its tuning stopped.
	TuneStops []TuneStop `json:"tune_stops,omitempty"`
	// RefitFailed are members chosen by the ensemble whose refit on the full public train wrote
	// no submission (a crash the folds did not meet); the ensemble was chosen again without them.
	RefitFailed []FinalGradeResult `json:"refit_failed,omitempty"`
	// Untuned is the answer the same selection, refits and blend make from the candidates
	// before tuning: beside Test, what the tuning added in this run. Nil when the tuning kept
	// no variant, and in runs recorded before it was measured.
	Untuned *UntunedAnswer `json:"untuned,omitempty"`
}

// AnswerMember is one program of the final answer.
type AnswerMember struct {
	SampleID string            `json:"sample_id"`
	Weight   float64           `json:"weight"`
	CVScore  *float64          `json:"cv_score"`
	Test     *FinalGradeResult `json:"test,omitempty"` // the program alone, refit and graded on the test answers
}

// UntunedAnswer is a final answer chosen without the tuned variants (FinalAnswer.Untuned).
type UntunedAnswer struct {
	// SameAsAnswer: selection over the untuned candidates chose the answer's own members and
	// weights (the answer kept no tuned variant), so the tuning changed nothing.
	SameAsAnswer bool                  `json:"same_as_answer,omitempty"`
	Members      []AnswerMember        `json:"members,omitempty"`
	CVScore      *float64              `json:"cv_score,omitempty"`
	BlendCVScore *float64              `json:"blend_cv_score,omitempty"`
	Calibration  *ensemble.Calibration `json:"calibration,omitempty"`
	BlendLog1p   bool                  `json:"blend_log1p,omitempty"`
	Test         *FinalGradeResult     `json:"test,omitempty"`
	// SandboxSeconds is what the refits only this measurement needed cost, beyond the answer's.
	SandboxSeconds float64 `json:"sandbox_seconds"`
	Note           string  `json:"note,omitempty"` // why there is no test score
}
