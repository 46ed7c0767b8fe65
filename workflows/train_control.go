package workflows

import (
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
)

// Progress is the "progress" query's answer.
type Progress struct {
	Phase       Phase                         `json:"phase"`
	Paused      bool                          `json:"paused"`
	Iteration   int                           `json:"iteration"`
	Iterations  int                           `json:"iterations"`
	SamplesDone int                           `json:"samples_done"`
	InFlight    int                           `json:"in_flight"`
	Stale       int                           `json:"stale"`
	BestScore   *float64                      `json:"best_score"`
	MeanReward  float64                       `json:"mean_reward"`
	MeanSeconds float64                       `json:"mean_duration_s"`
	History     []activities.IterationMetrics `json:"history"`             // the last few iterations
	Segment     int                           `json:"segment"`             // continue-as-new segments so far
	Attempt     int                           `json:"attempt,omitempty"`   // fresh executions after a failure
	Fallbacks   []string                      `json:"fallbacks,omitempty"` // damaged checkpoints stepped over
	// ElapsedS and TimeBudgetS are the run's wall-clock time so far and its budget (0: none).
	ElapsedS    float64 `json:"elapsed_s,omitempty"`
	TimeBudgetS float64 `json:"time_budget_s,omitempty"`
	// Detail is where the current phase stands when it is long (the final answer's
	// cross-validation, tuning and ensemble), "" otherwise.
	Detail string `json:"detail,omitempty"`
	// AnswerWorkflow is the final answer's workflow once it has started: during the answer's
	// phase, its AnswerProgressQuery says where it stands (Detail here does not).
	AnswerWorkflow string `json:"answer_workflow,omitempty"`
}

// Phase is what a run is doing, as its progress query reports it.
type Phase string

// Phases a run reports in Progress.Phase, in the order a run passes through them.
const (
	PhaseInitialising Phase = "initialising"
	PhaseStarting           = "starting"
	PhaseSampling           = "sampling"
	PhaseExecuting          = "executing"
	PhaseUpdating           = "updating"
	PhaseIterationEnd       = "iteration done"
	PhaseDraining           = "draining for continue-as-new"
	PhasePaused             = "paused"
	PhaseStopping           = "stopping: finishing in-flight work"
	PhaseEvaluating         = "evaluating"
	PhaseFinalGrading       = "final grading"
	PhaseFinalAnswer        = "final answer: cross-validating the best programs"
	PhaseReporting          = "reporting"
	PhaseDone               = "done"
)

// Query and signal names.
const (
	ProgressQuery = "progress"
	PauseSignal   = "pause"  // finish the current iteration, then sample nothing new until resumed
	ResumeSignal  = "resume" // continue after a pause
	StopSignal    = "stop"   // finish in-flight work, then evaluate and report
)

// Search attributes that make runs findable in the Web UI (e.g. MlerlTask="leaf-classification").
var (
	TaskAttribute      = temporal.NewSearchAttributeKeyKeyword("MlerlTask")
	IterationAttribute = temporal.NewSearchAttributeKeyInt64("MlerlIteration")
	BestScoreAttribute = temporal.NewSearchAttributeKeyFloat64("MlerlBestScore")
)

// SearchAttributeKeys maps each attribute to its type, as `temporal server start-dev
// --search-attribute` and `temporal operator search-attribute create` take them.
var SearchAttributeKeys = map[string]string{"MlerlTask": "Keyword", "MlerlIteration": "Int", "MlerlBestScore": "Double"}

// control is what the outside sees of a run and says to it: the progress query, the pause,
// resume and stop signals, and the search attributes.
type control struct {
	progress                  Progress
	pause, resume, stop       workflow.ReceiveChannel
	stopping, searchAttribute bool
}

func newControl(ctx workflow.Context, in TrainInput) (*control, error) {
	c := &control{progress: Progress{Phase: PhaseInitialising, Iterations: in.Iterations, Paused: in.Paused},
		pause: workflow.GetSignalChannel(ctx, PauseSignal), resume: workflow.GetSignalChannel(ctx, ResumeSignal),
		stop: workflow.GetSignalChannel(ctx, StopSignal), stopping: in.Stopping, searchAttribute: in.SearchAttributes}
	err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return c.progress, nil })
	return c, err
}

// publish sets what the progress query answers.
func (c *control) publish(st *activities.RunState, attempt int, phase Phase, inFlight int) {
	p := &c.progress
	if p.Phase != phase {
		p.Detail = ""
	}
	p.Phase, p.InFlight = phase, inFlight
	p.Iteration, p.SamplesDone, p.Stale = st.Iteration, st.SamplesDone, st.Stale
	p.BestScore, p.History, p.Segment = st.Best, st.Recent, st.Segments
	p.Attempt, p.Fallbacks = attempt, st.Fallbacks
	if n := len(st.Recent); n > 0 {
		p.MeanReward, p.MeanSeconds = st.Recent[n-1].MeanReward, st.Recent[n-1].MeanDuration
	}
}

// takeSignals applies the pause, stop and resume signals that have arrived, without blocking.
func (c *control) takeSignals() {
	for c.pause.ReceiveAsync(nil) {
		c.progress.Paused = true
	}
	for c.stop.ReceiveAsync(nil) {
		c.stopping = true
	}
	for c.resume.ReceiveAsync(nil) {
		c.progress.Paused = false
	}
}

// awaitSignals applies the signals that have arrived; while paused it blocks until resume or
// stop arrives.
func (c *control) awaitSignals(ctx workflow.Context, st *activities.RunState, attempt int) {
	c.takeSignals()
	if c.progress.Paused && !c.stopping {
		since := workflow.Now(ctx)
		defer func() { st.PausedS += workflow.Now(ctx).Sub(since).Seconds() }()
	}
	for c.progress.Paused && !c.stopping {
		c.publish(st, attempt, PhasePaused, 0)
		sel := workflow.NewSelector(ctx)
		sel.AddReceive(c.resume, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil); c.progress.Paused = false })
		sel.AddReceive(c.stop, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil); c.stopping = true })
		sel.AddReceive(c.pause, func(ch workflow.ReceiveChannel, _ bool) { ch.Receive(ctx, nil) })
		sel.Select(ctx)
	}
}

// upsert shows the task, the iteration and the best score as search attributes.
func (c *control) upsert(ctx workflow.Context, task string, st *activities.RunState) {
	if !c.searchAttribute {
		return
	}
	u := []temporal.SearchAttributeUpdate{TaskAttribute.ValueSet(task), IterationAttribute.ValueSet(int64(st.Iteration))}
	if st.Best != nil {
		u = append(u, BestScoreAttribute.ValueSet(*st.Best))
	}
	if err := workflow.UpsertTypedSearchAttributes(ctx, u...); err != nil {
		workflow.GetLogger(ctx).Warn("search attributes not updated", "error", err)
	}
}
