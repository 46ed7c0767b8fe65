// Package activities holds the side effects of a training run, as methods on a struct that
// carries their dependencies (artifact store, sandbox, instrumenter, task data). Inputs and
// results are small: samples travel as ids whose files live in the artifact store.
package activities

import (
	"time"

	"mlerl/ensemble"
	"mlerl/model"
	"mlerl/model/ppo"
	"mlerl/reward"
	"mlerl/runrecord"
	"mlerl/settings"
	"mlerl/tasks"
)

// ErrBadInput is the error type of non-retryable failures caused by bad input.
const ErrBadInput = "BadInput"

// LLMPolicy configures an LLM policy's sampling. The server and the trainer are the gpu
// worker's (Activities.PolicyLLM, Activities.Trainer); the run records what it samples with.
type LLMPolicy struct {
	Model       string  `json:"model"` // the initial model reference (default: the worker's --policy-model)
	Temperature float64 `json:"temperature"`
	TopP        float64 `json:"top_p"`
	MaxTokens   int     `json:"max_tokens"`
}

// PaperLLMPolicy is the paper's sampling: temperature 0.7, top-p 1, 1024 new tokens.
func PaperLLMPolicy() LLMPolicy { return LLMPolicy{Temperature: 0.7, TopP: 1, MaxTokens: 1024} }

// InitPolicyInput asks for the run's initial policy.
type InitPolicyInput struct {
	Run    string          `json:"run"` // the run id: its artifacts live in the run's store
	Task   string          `json:"task"`
	Seed   uint64          `json:"seed"`
	Policy settings.Policy `json:"policy"`
	PPO    ppo.Config      `json:"ppo"`
	Init   settings.Init   `json:"init,omitempty"` // "" is the warm start
	// Backend is the policy ("" is the network); LLM configures an llm policy.
	Backend settings.Backend `json:"backend,omitempty"`
	LLM     LLMPolicy        `json:"llm,omitempty"`
}

// InitPolicyResult is the initial checkpoint and the task as the network sees it.
type InitPolicyResult struct {
	Checkpoint string     `json:"checkpoint"`
	Task       model.Task `json:"task"`
}

// Sample purposes.
const (
	PurposeTrain       = "train"
	PurposeEvalScratch = "eval-scratch"
	PurposeEvalImprove = "eval-improve"
)

// SampleInput asks the policy to write len(IDs) programs.
type SampleInput struct {
	Run             string               `json:"run"` // the run id: its artifacts live in the run's store
	Task            string               `json:"task"`
	Descriptor      model.Task           `json:"descriptor"`
	Checkpoint      string               `json:"checkpoint"`
	Iteration       int                  `json:"iteration"`
	IDs             []string             `json:"ids"`
	Purpose         string               `json:"purpose"`
	ImproveFraction float64              `json:"improve_fraction"`       // train: share of improve prompts when the buffer has entries
	ImproveFrom     settings.ImproveFrom `json:"improve_from,omitempty"` // train: which buffer entry an improve prompt builds on
	Buffer          string               `json:"buffer,omitempty"`
	ImproveOf       []string             `json:"improve_of,omitempty"` // eval-improve: the sample each new one improves
	Seed            uint64               `json:"seed"`
	// RedrawRepeats (train, network policy; the workflow refuses it with the llm backend): a
	// program identical to one already sampled in this run is drawn again, up to this many
	// times, so the execution budget is not spent re-running a program whose result is known.
	// 0 keeps every draw.
	RedrawRepeats int `json:"redraw_repeats,omitempty"`
	// ImproveEdit (network policy): an improve prompt's program redraws this many slots of the
	// previous program and keeps the rest (model.Policy.Edit); 0 writes it anew.
	ImproveEdit int `json:"improve_edit,omitempty"`
}

// SampleRef is a written program, by id.
type SampleRef struct {
	ID      string `json:"id"`
	Kind    string `json:"kind"`
	Prev    string `json:"prev,omitempty"`
	Actions string `json:"actions"`
	Redraws int    `json:"redraws,omitempty"` // draws rejected as repeats of earlier programs
	// Fallback says the checkpoint asked for was damaged and an earlier good one wrote the
	// program (CheckpointFallback.String), so the workflow can show it, not only the worker's log.
	Fallback string `json:"fallback,omitempty"`
}

// InstrumentInput names the samples whose programs get progress prints (one call per batch of
// newly sampled programs, so a batch costs one activity round trip, not one per program).
type InstrumentInput struct {
	Run       string   `json:"run"`
	SampleIDs []string `json:"sample_ids"`
	// Off runs the programs as written, without progress prints (the instrumentation
	// ablation: a failure then earns the flat failure reward).
	Off bool `json:"off,omitempty"`
}

// InstrumentResult says which markers were inserted into each program.
type InstrumentResult struct {
	Samples []InstrumentedSample `json:"samples"`
}

// InstrumentedSample is one program's instrumentation.
type InstrumentedSample struct {
	ID       string   `json:"id"`
	Inserted []string `json:"inserted"`
	Note     string   `json:"note,omitempty"`
}

// ExecuteInput runs a sample's instrumented program on a split.
type ExecuteInput struct {
	Run      string          `json:"run"` // the run id: its artifacts live in the run's store
	Task     string          `json:"task"`
	SampleID string          `json:"sample_id"`
	Split    tasks.SplitName `json:"split"`
	// Folds > 1 runs the program on that many validation folds and rewards their mean score.
	Folds int `json:"folds,omitempty"`
	// Reward names the reward scheme (reward.Schemes); "" is the paper's.
	Reward reward.SchemeName `json:"reward,omitempty"`
}

// ExecuteResult is a run record (runrecord.ExecuteResult).
type ExecuteResult = runrecord.ExecuteResult

// IterationMetrics is a run record (runrecord.IterationMetrics).
type IterationMetrics = runrecord.IterationMetrics

// UpdateInput asks for a PPO update on completed samples.
type UpdateInput struct {
	Run        string           `json:"run"` // the run id: its artifacts live in the run's store
	Checkpoint string           `json:"checkpoint"`
	Iteration  int              `json:"iteration"`
	SampleIDs  []string         `json:"sample_ids"`
	Stale      []string         `json:"stale,omitempty"` // cancelled by the staleness cap: used when they ran
	PPO        ppo.Config       `json:"ppo"`
	Seed       uint64           `json:"seed"`
	Metrics    IterationMetrics `json:"metrics"`
}

// UpdateResult is the new checkpoint and PPO's diagnostics.
type UpdateResult struct {
	Checkpoint string      `json:"checkpoint"`
	Stats      model.Stats `json:"stats"`
	Fallback   string      `json:"fallback,omitempty"` // set when the input checkpoint was damaged
}

// BufferInput adds completed samples to the self-improve buffer.
type BufferInput struct {
	Run       string   `json:"run"` // the run id: its artifacts live in the run's store
	Buffer    string   `json:"buffer"`
	SampleIDs []string `json:"sample_ids"`
	Capacity  int      `json:"capacity"`
}

// BufferResult is the buffer's size after the refresh.
type BufferResult struct {
	Size int `json:"size"`
}

// FinalGradeInput grades the chosen program on the private test answers.
type FinalGradeInput struct {
	Run      string            `json:"run"` // the run id: its artifacts live in the run's store
	Task     string            `json:"task"`
	SampleID string            `json:"sample_id"`
	Protocol settings.Protocol `json:"protocol"`
}

// FinalGradeResult is a run record (runrecord.FinalGradeResult).
type FinalGradeResult = runrecord.FinalGradeResult

// ReportInput is everything the final report shows.
type ReportInput struct {
	Run       string            `json:"run"`
	Task      string            `json:"task"`
	Protocol  settings.Protocol `json:"protocol"`
	Settings  string            `json:"settings"`
	Final     *FinalGradeResult `json:"final"`
	Selection *ExecuteResult    `json:"selection"`
	EvalCount int               `json:"eval_count"`
	Answer    *FinalAnswer      `json:"answer,omitempty"`
}

// ReportResult is the rendered report.
type ReportResult struct {
	Table    string `json:"table"`
	Location string `json:"location"`
}

// RunState is what a training run carries across continue-as-new: references into the artifact
// store, counters and the completed results not yet used by an update. It is saved in the
// run's store, and the next run receives only its key.
type RunState struct {
	Iteration   int                `json:"iteration"` // iterations completed
	Checkpoint  string             `json:"checkpoint"`
	Task        model.Task         `json:"task"`
	Carry       []ExecuteResult    `json:"carry"` // completed executions not yet used by an update
	Best        *float64           `json:"best_score"`
	SamplesDone int                `json:"samples_done"`
	Stale       int                `json:"stale"`
	Recent      []IterationMetrics `json:"recent"` // the last few iterations, for status
	Segments    int                `json:"segments"`
	MaxHistory  int                `json:"max_history_events"`  // largest history a segment reached
	Fallbacks   []string           `json:"fallbacks,omitempty"` // damaged checkpoints stepped over
	// NewFallback is a fallback RecoverState made: the next iteration's metrics line notes it.
	NewFallback string `json:"new_fallback,omitempty"`
	// BestSample is the program behind Best; Improvements is every new best, in order.
	BestSample   string        `json:"best_sample,omitempty"`
	Improvements []Improvement `json:"improvements,omitempty"`
	// SandboxSeconds sums the execution time of every finished training program.
	SandboxSeconds float64 `json:"sandbox_seconds,omitempty"`
	// BudgetClosed: a program crossed the run's sandbox-seconds budget; LeftOutSandboxSeconds
	// is that program's run when it was left out (nearer the budget), not in SandboxSeconds.
	BudgetClosed          bool    `json:"budget_closed,omitempty"`
	LeftOutSandboxSeconds float64 `json:"left_out_sandbox_seconds,omitempty"`
	// StartedAt is when training began (workflow time), for wall-time curves.
	StartedAt time.Time `json:"started_at"`
	// PausedS is the time the run spent paused, which its time budget does not count.
	PausedS float64 `json:"paused_s,omitempty"`
	// Leaders are the best valid programs so far, best first: the final answer's candidates.
	Leaders []Leader `json:"leaders,omitempty"`
}

// Leader is one of a run's best programs by its selection-split score.
type Leader struct {
	Sample string  `json:"sample"`
	Score  float64 `json:"score"`
}

// Improvement is a new best training program and the budget used when it was found.
type Improvement struct {
	Sample         string  `json:"sample"`
	Score          float64 `json:"score"`
	Programs       int     `json:"programs"`
	SandboxSeconds float64 `json:"sandbox_seconds"`
	ElapsedS       float64 `json:"elapsed_s"`
}

// SaveStateInput stores a run's state.
type SaveStateInput struct {
	Run   string   `json:"run"`
	State RunState `json:"state"`
}

// LoadStateInput names a stored state.
type LoadStateInput struct {
	Run string `json:"run"`
	Key string `json:"key"`
}

// CandidatesInput names the run's best programs, best first, to pick the final answer's
// candidates from.
type CandidatesInput struct {
	Run string   `json:"run"`
	IDs []string `json:"ids"`
	Max int      `json:"max"`
	// Guard replaces a program written as code actions by its guarded one where they differ
	// (codeactions.Library.Guarded); Task names its library.
	Guard bool   `json:"guard,omitempty"`
	Task  string `json:"task,omitempty"`
}

// CandidatesResult are the first Max programs of IDs that differ in their code, guarded ones
// in their programs' place.
type CandidatesResult struct {
	IDs []string `json:"ids"`
	// Seconds are the programs' run times on their validation split, by IDs (one fold's run
	// where the reward averaged folds; a guarded program's, its original's); 0: unknown.
	Seconds    []float64 `json:"seconds,omitempty"`
	Duplicates int       `json:"duplicates"` // programs skipped as copies of a better one
	Guarded    []Guard   `json:"guarded,omitempty"`
}

// Guard is a run record (runrecord.Guard).
type Guard = runrecord.Guard

// CrossValidateInput runs a program on each fold of a k-fold partition of the public train.
type CrossValidateInput struct {
	Run      string `json:"run"`
	Task     string `json:"task"`
	SampleID string `json:"sample_id"`
	Folds    int    `json:"folds"`
}

// CrossValidateResult is a run record (runrecord.CrossValidateResult).
type CrossValidateResult = runrecord.CrossValidateResult

// TuneStep is a run record (runrecord.TuneStep).
type TuneStep = runrecord.TuneStep

// TuneStop is a run record (runrecord.TuneStop).
type TuneStop = runrecord.TuneStop

// TuneInput asks for the variants of candidate Of along its library's tunable slot number
// Slot; a negative Slot asks only what Of is apart from its tunable slots.
type TuneInput struct {
	Run  string `json:"run"`
	Task string `json:"task"`
	Of   string `json:"of"`
	Slot int    `json:"slot"`
}

// TuneResult is the variants written (their sample ids and the slot's option in each), the
// slot's name, how many slots the library tunes, and Base: the candidate's options outside the
// tunable slots. Note says why there are none.
type TuneResult struct {
	Base    string   `json:"base"`
	Slots   int      `json:"slots"`
	Slot    string   `json:"slot,omitempty"`
	IDs     []string `json:"ids,omitempty"`
	Options []string `json:"options,omitempty"`
	Note    string   `json:"note,omitempty"`
}

// EnsembleInput asks for greedy ensemble selection over cross-validated programs.
type EnsembleInput struct {
	Run       string   `json:"run"`
	Task      string   `json:"task"`
	Folds     int      `json:"folds"`
	SampleIDs []string `json:"sample_ids"` // programs with a cross-validation score
	Rounds    int      `json:"rounds"`
}

// AnswerMember is a run record (runrecord.AnswerMember).
type AnswerMember = runrecord.AnswerMember

// EnsembleResult is the chosen blend and its out-of-fold score.
type EnsembleResult struct {
	Members []AnswerMember `json:"members"`
	CVScore float64        `json:"cv_score"` // after calibration
	Rounds  int            `json:"rounds"`   // rounds run; the blend is the best round's
	// BlendCVScore is the blend's out-of-fold score before Calibration, which is fitted on the
	// same out-of-fold predictions (log-loss tasks; the identity elsewhere).
	BlendCVScore float64              `json:"blend_cv_score"`
	Calibration  ensemble.Calibration `json:"calibration"`
	// BlendLog1p: the members were blended as the mean of log(1+x) (ensemble.Align.Log1p),
	// and their test submissions must be blended the same way. False in runs recorded before.
	BlendLog1p bool `json:"blend_log1p,omitempty"`
}

// BlendInput blends the members' test submissions (refit on the full public train) into the
// final answer and grades it.
type BlendInput struct {
	Run      string            `json:"run"`
	Task     string            `json:"task"`
	Protocol settings.Protocol `json:"protocol"`
	Answer   FinalAnswer       `json:"answer"`
	// Untuned blends Answer.Untuned's members to UntunedSubmissionKey instead, and leaves the
	// stored answer alone.
	Untuned bool `json:"untuned,omitempty"`
}

// FinalAnswer is a run record (runrecord.FinalAnswer).
type FinalAnswer = runrecord.FinalAnswer

// UntunedAnswer is a run record (runrecord.UntunedAnswer).
type UntunedAnswer = runrecord.UntunedAnswer
