// Package workflows holds the deterministic orchestration of training runs. Every side effect
// is an activity (package activities); the workflow only decides what runs when.
package workflows

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/model"
	"mlerl/model/ppo"
	"mlerl/reward"
	"mlerl/tasks"
)

// Protocols: where rewards come from and how the final program is chosen.
const (
	ProtocolLeakFree = "leak-free" // rewards from a validation split; test answers only for the report
	ProtocolPaper    = "paper"     // rewards and selection on the test split, as the paper did
)

// TrainInput configures a training run.
type TrainInput struct {
	Run                 string        `json:"run"` // the run id: names its artifact store
	Task                string        `json:"task"`
	Iterations          int           `json:"iterations"`
	Batch               int           `json:"batch"`      // B: samples per update
	Oversample          int           `json:"oversample"` // m: m*B executions in flight
	Protocol            string        `json:"protocol"`
	RewardFolds         int           `json:"reward_folds,omitempty"` // leak-free: validation folds whose mean score is the reward
	Reward              string        `json:"reward,omitempty"`       // reward scheme (reward.Schemes); "" is the paper's
	Seed                uint64        `json:"seed"`
	EvalSamples         int           `json:"eval_samples"` // K for best-of-K
	StalenessIterations int           `json:"staleness_iterations"`
	BufferCapacity      int           `json:"buffer_capacity"`
	ImproveFraction     float64       `json:"improve_fraction"`
	ImproveFrom         string        `json:"improve_from"`             // mixed, best, recent or failed-close
	RedrawRepeats       int           `json:"redraw_repeats,omitempty"` // redraws of a training program the run already sampled
	ExecTimeout         time.Duration `json:"exec_timeout"`             // the task's wall limit plus grading time
	ContinueEvery       int           `json:"continue_every"`           // iterations per history segment
	InstrumentTimeout   time.Duration `json:"instrument_timeout"`       // 0: 30 s (an LLM instrumenter needs minutes)
	// SampleAtIterationStart samples only when an iteration starts instead of replacing each
	// finished program at once; with Oversample 1 it is the synchronous wait-for-all baseline.
	SampleAtIterationStart bool         `json:"sample_at_iteration_start,omitempty"`
	Policy                 model.Config `json:"policy"`
	Init                   string       `json:"init,omitempty"` // initial policy: warm-start (default) or uniform
	// Backend is the policy: network (default, the code-action network) or llm (a model
	// server sampled with LLM, updated by a trainer service).
	Backend string               `json:"backend,omitempty"`
	LLM     activities.LLMPolicy `json:"llm,omitempty"`
	PPO     ppo.Config           `json:"ppo"`
	// SearchAttributes upserts MlerlTask, MlerlIteration and MlerlBestScore (the server must have
	// them registered: the embedded server does; see SearchAttributeKeys for a cluster).
	SearchAttributes bool `json:"search_attributes"`
	// StateKey is set by continue-as-new: the saved RunState to resume from.
	StateKey string `json:"state_key,omitempty"`
	// Recover starts from the run's stored artifacts (activities.RecoverState): set by `starter
	// resume` when the run's previous execution failed, so it continues from the last good
	// checkpoint instead of failing again or starting over.
	Recover bool `json:"recover,omitempty"`
	// Attempt counts those fresh executions; it names their samples (it0003-r1-s000), so a
	// recovered run never overwrites what the failed execution wrote.
	Attempt int `json:"attempt,omitempty"`
	// SandboxSeconds, when positive, ends training at the first iteration boundary where the
	// finished training programs have used this much execution time (Iterations is then a cap):
	// a baseline matched to another arm's sandbox time rather than its number of programs.
	SandboxSeconds float64 `json:"sandbox_seconds,omitempty"`
	// Instrumenter "none" runs programs without progress prints (the instrumentation ablation);
	// "" uses the worker's instrumenter.
	Instrumenter string `json:"instrumenter,omitempty"`
}

// InstrumenterNone turns instrumentation off for a run.
const InstrumenterNone = "none"

// Validate names the first bad setting.
func (in TrainInput) Validate() error {
	switch {
	case in.Run == "":
		return fmt.Errorf("run id is empty")
	case in.Task == "":
		return fmt.Errorf("task is empty")
	case in.Iterations < 1:
		return fmt.Errorf("iterations must be at least 1, got %d", in.Iterations)
	case in.Batch < 1:
		return fmt.Errorf("batch must be at least 1, got %d", in.Batch)
	case in.Oversample < 1:
		return fmt.Errorf("oversample must be at least 1, got %d", in.Oversample)
	case in.Protocol != ProtocolLeakFree && in.Protocol != ProtocolPaper:
		return fmt.Errorf("protocol must be %s or %s, got %q", ProtocolLeakFree, ProtocolPaper, in.Protocol)
	case in.RewardFolds < 0 || (in.RewardFolds > 1 && in.Protocol != ProtocolLeakFree):
		return fmt.Errorf("reward folds must be 0 or 1, or more with the %s protocol, got %d (%s)", ProtocolLeakFree, in.RewardFolds, in.Protocol)
	case in.EvalSamples < 1:
		return fmt.Errorf("eval samples must be at least 1, got %d", in.EvalSamples)
	case in.ImproveFraction < 0 || in.ImproveFraction > 1:
		return fmt.Errorf("improve fraction must be in [0, 1], got %v", in.ImproveFraction)
	case in.ImproveFrom != "" && !slices.Contains(activities.ImproveStrategies, in.ImproveFrom):
		return fmt.Errorf("improve-from must be one of %v, got %q", activities.ImproveStrategies, in.ImproveFrom)
	case in.ExecTimeout <= 0:
		return fmt.Errorf("exec timeout must be positive")
	case in.RedrawRepeats < 0:
		return fmt.Errorf("redraw repeats must be 0 or more, got %d", in.RedrawRepeats)
	case in.RedrawRepeats > 0 && in.Backend == activities.BackendLLM:
		return fmt.Errorf("redraw repeats apply to the %s policy only: set them to 0 with the %s backend", activities.BackendNetwork, activities.BackendLLM)
	case in.Attempt < 0:
		return fmt.Errorf("attempt must be 0 or more, got %d", in.Attempt)
	case in.ContinueEvery < 1:
		return fmt.Errorf("continue-every must be at least 1, got %d", in.ContinueEvery)
	case in.SandboxSeconds < 0:
		return fmt.Errorf("sandbox-seconds budget must be 0 (none) or positive, got %v", in.SandboxSeconds)
	case in.Instrumenter != "" && in.Instrumenter != InstrumenterNone:
		return fmt.Errorf("instrumenter must be empty (the worker's) or %s, got %q", InstrumenterNone, in.Instrumenter)
	case in.Backend != "" && in.Backend != activities.BackendNetwork && in.Backend != activities.BackendLLM:
		return fmt.Errorf("policy backend must be %s or %s, got %q", activities.BackendNetwork, activities.BackendLLM, in.Backend)
	}
	_, err := reward.Scheme(in.Reward)
	return err
}

// Split returns where rewards and selection are computed.
func (in TrainInput) Split() tasks.SplitName {
	if in.Protocol == ProtocolPaper {
		return tasks.SplitTest
	}
	return tasks.SplitValidation
}

// TrainResult is what a finished run returns.
type TrainResult struct {
	Final      *activities.FinalGradeResult  `json:"final"`
	Report     activities.ReportResult       `json:"report"`
	Iterations []activities.IterationMetrics `json:"iterations"` // the last few
	Stopped    bool                          `json:"stopped"`    // ended early by the stop signal
	// Budget used by training, and the best training program (by the selection split's
	// score), found after which programs, re-run and graded on the test answers.
	Completed      int                          `json:"completed_iterations"`
	Programs       int                          `json:"programs"`
	SandboxSeconds float64                      `json:"sandbox_seconds"`
	WallSeconds    float64                      `json:"wall_seconds"`
	BestScore      *float64                     `json:"best_score,omitempty"`
	Improvements   []activities.Improvement     `json:"improvements,omitempty"`
	Best           *activities.FinalGradeResult `json:"best,omitempty"`
}

// Progress is the "progress" query's answer.
type Progress struct {
	Phase       string                        `json:"phase"`
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
}

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

// summarised returns ctx with options whose one-line summary the Web UI shows for the activity.
func summarised(ctx workflow.Context, opts workflow.ActivityOptions, format string, a ...any) workflow.Context {
	opts.Summary = fmt.Sprintf(format, a...)
	return workflow.WithActivityOptions(ctx, opts)
}

// recentKept bounds the iteration metrics carried in state and queries.
const recentKept = 20

// outcome is one finished (or failed) execution.
type outcome struct {
	ID     string
	Result activities.ExecuteResult
	Err    string
	Stale  bool // cancelled by the staleness cap
}

// running is an execution in flight.
type running struct {
	id     string
	iter   int
	cancel workflow.CancelFunc
	stale  bool
}

// Train runs Algorithm 1 asynchronously: keep m*B executions in flight, update after B complete,
// leave stragglers running into the next iteration (their sampling-time log-probs give PPO its
// ratio), end those older than the staleness cap as timeouts with their partial credit, refresh
// the self-improve buffer; every ContinueEvery iterations (or when Temporal suggests it) drain
// in-flight work and continue as new with the state in the artifact store; finally evaluate
// best-of-K (scratch, then improve) and grade the chosen program.
func Train(ctx workflow.Context, in TrainInput) (TrainResult, error) {
	if err := in.Validate(); err != nil {
		return TrainResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrBadInput, nil)
	}
	infraRetry := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: time.Minute, MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrBadInput}}
	// Sampling, updates, the buffer, state and the report heartbeat while they work: a dead
	// worker is noticed in 30 s, not after the 30 minutes the slowest (LLM) update may take.
	keepAlive := 30 * time.Second
	gpuOpts := workflow.ActivityOptions{TaskQueue: activities.GPUQueue, StartToCloseTimeout: 30 * time.Minute,
		HeartbeatTimeout: keepAlive, RetryPolicy: infraRetry}
	// AST instrumenting takes well under a second: a short timeout retries a lost worker's
	// quickly. An LLM instrumenter gets what the starter sets.
	instrumentTimeout := in.InstrumentTimeout
	if instrumentTimeout <= 0 {
		instrumentTimeout = 30 * time.Second
	}
	instrumentOpts := workflow.ActivityOptions{TaskQueue: activities.ExecQueue, StartToCloseTimeout: instrumentTimeout, RetryPolicy: infraRetry}
	// A program's own failure or timeout is a result; only a lost worker or a broken sandbox
	// retries, which the heartbeat timeout detects within seconds. Cancellation waits for the
	// activity so a stale program's partial result is stored before the update reads it.
	executeOpts := workflow.ActivityOptions{TaskQueue: activities.ExecQueue, StartToCloseTimeout: in.ExecTimeout,
		HeartbeatTimeout: 30 * time.Second, WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrBadInput}}}
	localOpts := workflow.ActivityOptions{TaskQueue: activities.WorkflowQueue, StartToCloseTimeout: 5 * time.Minute,
		HeartbeatTimeout: keepAlive, RetryPolicy: infraRetry}

	var a *activities.Activities
	logger := workflow.GetLogger(ctx)

	var st activities.RunState
	progress := Progress{Phase: "initialising", Iterations: in.Iterations}
	publish := func(phase string, inFlight int) {
		progress.Phase, progress.InFlight = phase, inFlight
		progress.Iteration, progress.SamplesDone, progress.Stale = st.Iteration, st.SamplesDone, st.Stale
		progress.BestScore, progress.History, progress.Segment = st.Best, st.Recent, st.Segments
		progress.Attempt, progress.Fallbacks = in.Attempt, st.Fallbacks
		if n := len(st.Recent); n > 0 {
			progress.MeanReward, progress.MeanSeconds = st.Recent[n-1].MeanReward, st.Recent[n-1].MeanDuration
		}
	}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return progress, nil }); err != nil {
		return TrainResult{}, err
	}
	pauseCh := workflow.GetSignalChannel(ctx, PauseSignal)
	resumeCh := workflow.GetSignalChannel(ctx, ResumeSignal)
	stopCh := workflow.GetSignalChannel(ctx, StopSignal)
	stopping := false
	// drainSignals applies pause and stop without blocking; while paused it blocks until resume
	// or stop arrives.
	drainSignals := func() {
		for pauseCh.ReceiveAsync(nil) {
			progress.Paused = true
		}
		for stopCh.ReceiveAsync(nil) {
			stopping = true
		}
		for resumeCh.ReceiveAsync(nil) {
			progress.Paused = false
		}
		for progress.Paused && !stopping {
			publish("paused", 0)
			sel := workflow.NewSelector(ctx)
			sel.AddReceive(resumeCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); progress.Paused = false })
			sel.AddReceive(stopCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil); stopping = true })
			sel.AddReceive(pauseCh, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, nil) })
			sel.Select(ctx)
		}
	}

	if in.StateKey != "" {
		if err := workflow.ExecuteActivity(summarised(ctx, localOpts, "load run state %s", in.StateKey), a.LoadState, activities.LoadStateInput{Run: in.Run, Key: in.StateKey}).Get(ctx, &st); err != nil {
			return TrainResult{}, err
		}
		st.Segments++
	} else if in.Recover {
		if err := workflow.ExecuteActivity(summarised(ctx, gpuOpts, "recover the run's state from its artifacts"), a.RecoverState, activities.RecoverInput{Run: in.Run, Task: in.Task, Attempt: in.Attempt}).Get(ctx, &st); err != nil {
			return TrainResult{}, err
		}
		logger.Info("continuing a failed run from its last good checkpoint", "checkpoint", st.Checkpoint, "iteration", st.Iteration, "attempt", in.Attempt)
	} else {
		var init activities.InitPolicyResult
		if err := workflow.ExecuteActivity(summarised(ctx, gpuOpts, "warm-start policy for %s", in.Task), a.InitPolicy, activities.InitPolicyInput{
			Run: in.Run, Task: in.Task, Seed: in.Seed, Policy: in.Policy, PPO: in.PPO, Init: in.Init, Backend: in.Backend, LLM: in.LLM}).Get(ctx, &init); err != nil {
			return TrainResult{}, err
		}
		st.Checkpoint, st.Task = init.Checkpoint, init.Task
	}
	if st.StartedAt.IsZero() {
		st.StartedAt = workflow.Now(ctx)
	}
	publish("starting", 0)
	upsert := func() {
		if !in.SearchAttributes {
			return
		}
		u := []temporal.SearchAttributeUpdate{TaskAttribute.ValueSet(in.Task), IterationAttribute.ValueSet(int64(st.Iteration))}
		if st.Best != nil {
			u = append(u, BestScoreAttribute.ValueSet(*st.Best))
		}
		if err := workflow.UpsertTypedSearchAttributes(ctx, u...); err != nil {
			logger.Warn("search attributes not updated", "error", err)
		}
	}
	upsert()

	// instrument adds the progress prints to a batch of newly sampled programs in one activity.
	instrument := func(ids []string) error {
		if len(ids) == 0 {
			return nil
		}
		return workflow.ExecuteActivity(summarised(ctx, instrumentOpts, "instrument %d programs (%s...)", len(ids), ids[0]), a.InstrumentPrograms,
			activities.InstrumentInput{Run: in.Run, SampleIDs: ids, Off: in.Instrumenter == InstrumenterNone}).Get(ctx, nil)
	}
	// execute runs one instrumented sample; used by training coroutines and evaluation.
	execute := func(c workflow.Context, id string, split tasks.SplitName) (activities.ExecuteResult, error) {
		var res activities.ExecuteResult
		err := workflow.ExecuteActivity(summarised(c, executeOpts, "run %s on the %s split", id, split), a.ExecuteProgram,
			activities.ExecuteInput{Run: in.Run, Task: in.Task, SampleID: id, Split: split, Folds: in.RewardFolds, Reward: in.Reward}).Get(c, &res)
		return res, err
	}

	// Sample ids; a fresh execution after a failure (Attempt > 0) uses its own, so nothing the
	// failed one wrote is overwritten.
	sampleID := func(it, k int) string {
		if in.Attempt > 0 {
			return fmt.Sprintf("it%04d-r%d-s%03d", it, in.Attempt, k)
		}
		return fmt.Sprintf("it%04d-s%03d", it, k)
	}
	evalID := func(purpose string, k int) string {
		if in.Attempt > 0 {
			return fmt.Sprintf("eval-r%d-%s-%03d", in.Attempt, purpose, k)
		}
		return fmt.Sprintf("eval-%s-%03d", purpose, k)
	}
	results := workflow.NewBufferedChannel(ctx, 4*in.Batch*in.Oversample+16)
	var pending []*running
	launch := func(id string, iter int) {
		cctx, cancel := workflow.WithCancel(ctx)
		r := &running{id: id, iter: iter, cancel: cancel}
		pending = append(pending, r)
		workflow.Go(cctx, func(gctx workflow.Context) {
			res, err := execute(gctx, id, in.Split())
			o := outcome{ID: id, Result: res, Stale: r.stale}
			if err != nil {
				o.Err = err.Error()
			}
			results.Send(gctx, o)
		})
	}
	// settle removes a finished execution from the in-flight list.
	settle := func(o outcome) outcome {
		for k, p := range pending {
			if p.id == o.ID {
				pending = append(pending[:k], pending[k+1:]...)
				break
			}
		}
		st.SamplesDone++
		st.SandboxSeconds += o.Result.DurationS
		return o
	}
	receive := func() outcome {
		var o outcome
		results.Receive(ctx, &o)
		return settle(o)
	}
	better := func(s float64) bool {
		if st.Best == nil {
			return true
		}
		if st.Task.LowerIsBetter {
			return s < *st.Best
		}
		return s > *st.Best
	}

	elapsed := func() float64 { return workflow.Now(ctx).Sub(st.StartedAt).Seconds() }
	// budgetLeft: iterations remain, and the sandbox-seconds budget (if any) is not used up.
	budgetLeft := func() bool {
		return st.Iteration < in.Iterations && (in.SandboxSeconds <= 0 || st.SandboxSeconds < in.SandboxSeconds)
	}
	segmentStart := st.Iteration
	for budgetLeft() {
		drainSignals()
		if stopping {
			break
		}
		it := st.Iteration + 1
		// topUp keeps m*B programs in flight (completed-but-unused carry counts as in flight),
		// sampling from the current policy whenever programs finish, so no slot idles until the
		// update.
		sampled := 0
		topUp := func() error {
			need := in.Batch*in.Oversample - len(pending) - len(st.Carry)
			if need <= 0 {
				return nil
			}
			ids := make([]string, need)
			for k := range ids {
				ids[k] = sampleID(it, sampled+k)
			}
			sampled += need
			publish("sampling", len(pending))
			var refs []activities.SampleRef
			if err := workflow.ExecuteActivity(summarised(ctx, gpuOpts, "sample %d programs for iteration %d", len(ids), it), a.SamplePrograms, activities.SampleInput{
				Run: in.Run, Task: in.Task, Descriptor: st.Task, Checkpoint: st.Checkpoint, Iteration: it, IDs: ids,
				Purpose: activities.PurposeTrain, ImproveFraction: in.ImproveFraction, ImproveFrom: in.ImproveFrom,
				Buffer: activities.BufferKey, Seed: in.Seed, RedrawRepeats: in.RedrawRepeats,
			}).Get(ctx, &refs); err != nil {
				return err
			}
			if err := instrument(ids); err != nil {
				return err
			}
			for _, r := range refs {
				launch(r.ID, it)
			}
			return nil
		}
		if err := topUp(); err != nil {
			return TrainResult{}, err
		}
		for _, p := range pending {
			if in.StalenessIterations > 0 && it-p.iter > in.StalenessIterations && !p.stale {
				p.stale = true
				p.cancel() // its partial result arrives as a stale outcome
			}
		}
		publish("executing", len(pending))

		// Completed results carried over from the previous segment count first.
		var done []outcome
		for len(st.Carry) > 0 && len(done) < in.Batch {
			done = append(done, outcome{ID: st.Carry[0].SampleID, Result: st.Carry[0]})
			st.Carry = st.Carry[1:]
		}
		// Stale outcomes join the update (with their partial credit) but do not count toward B,
		// so an iteration always learns from B programs that finished.
		for counted := len(done); counted < in.Batch; {
			o := receive()
			for {
				done = append(done, o)
				if !o.Stale {
					counted++
				}
				// Take every result already waiting, so one top-up replaces them all.
				if counted >= in.Batch || !results.ReceiveAsync(&o) {
					break
				}
				o = settle(o)
			}
			if counted < in.Batch && !in.SampleAtIterationStart {
				if err := topUp(); err != nil {
					return TrainResult{}, err
				}
			}
			publish("executing", len(pending))
		}

		var ok, stale []string
		m := activities.IterationMetrics{Iteration: it, InFlight: len(pending)}
		var firstErr string
		var scored int
		var scoreSum float64
		for _, o := range done {
			switch {
			case o.Stale:
				stale = append(stale, o.ID)
				m.Stale++
				st.Stale++
			case o.Err != "":
				if firstErr == "" {
					firstErr = o.Err
				}
				logger.Warn("execution did not complete", "sample", o.ID, "error", o.Err)
			default:
				ok = append(ok, o.ID)
				m.MeanReward += o.Result.Reward
				m.MeanDuration += o.Result.DurationS
				if o.Result.Valid {
					m.ValidRate++
					if o.Result.Score != nil {
						scored++
						scoreSum += *o.Result.Score
					}
					if o.Result.Score != nil && better(*o.Result.Score) {
						s := *o.Result.Score
						st.Best, st.BestSample = &s, o.ID
						st.Improvements = append(st.Improvements, activities.Improvement{Sample: o.ID, Score: s,
							Programs: st.SamplesDone, SandboxSeconds: st.SandboxSeconds, ElapsedS: elapsed()})
					}
				}
			}
		}
		if len(ok) == 0 {
			return TrainResult{}, fmt.Errorf("iteration %d: no execution completed (first error: %s)", it, firstErr)
		}
		n := float64(len(ok))
		m.Samples = len(ok)
		m.MeanReward /= n
		m.MeanDuration /= n
		m.ValidRate /= n
		m.BestScore, m.BestSample = st.Best, st.BestSample
		if scored > 0 {
			mean := scoreSum / float64(scored)
			m.MeanScore = &mean
		}
		m.Programs, m.SandboxSeconds, m.ElapsedS = st.SamplesDone, st.SandboxSeconds, elapsed()
		m.CheckpointFallback, st.NewFallback = st.NewFallback, "" // one RecoverState stepped over

		publish("updating", len(pending))
		var up activities.UpdateResult
		if err := workflow.ExecuteActivity(summarised(ctx, gpuOpts, "PPO update %d on %d samples (%d stale)", it, len(ok), len(stale)), a.UpdatePolicy, activities.UpdateInput{
			Run: in.Run, Checkpoint: st.Checkpoint, Iteration: it, SampleIDs: ok, Stale: stale, PPO: in.PPO, Seed: in.Seed, Metrics: m,
		}).Get(ctx, &up); err != nil {
			return TrainResult{}, err
		}
		st.Checkpoint = up.Checkpoint
		m.PPO = up.Stats
		if up.Fallback != "" {
			m.CheckpointFallback = up.Fallback
			st.Fallbacks = append(st.Fallbacks, up.Fallback)
			logger.Warn("damaged checkpoint stepped over", "detail", up.Fallback)
		}
		if err := workflow.ExecuteActivity(summarised(ctx, gpuOpts, "refresh the self-improve buffer"), a.RefreshBuffer, activities.BufferInput{
			Run: in.Run, Buffer: activities.BufferKey, SampleIDs: ok, Capacity: in.BufferCapacity,
		}).Get(ctx, nil); err != nil {
			return TrainResult{}, err
		}
		st.Iteration = it
		st.Recent = append(st.Recent, m)
		if len(st.Recent) > recentKept {
			st.Recent = st.Recent[len(st.Recent)-recentKept:]
		}
		st.MaxHistory = max(st.MaxHistory, workflow.GetInfo(ctx).GetCurrentHistoryLength())
		publish("iteration done", len(pending))
		upsert()

		if budgetLeft() && !stopping &&
			(st.Iteration-segmentStart >= in.ContinueEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			// Hand over: wait for in-flight work, carry its results (none is lost or counted
			// twice), store the state and start a fresh history.
			publish("draining for continue-as-new", len(pending))
			for len(pending) > 0 {
				o := receive()
				if o.Err == "" && !o.Stale {
					st.Carry = append(st.Carry, o.Result)
				}
			}
			var key string
			if err := workflow.ExecuteActivity(summarised(ctx, localOpts, "save run state after iteration %d", st.Iteration), a.SaveState, activities.SaveStateInput{Run: in.Run, State: st}).Get(ctx, &key); err != nil {
				return TrainResult{}, err
			}
			next := in
			next.StateKey, next.Recover = key, false
			return TrainResult{}, workflow.NewContinueAsNewError(ctx, Train, next)
		}
	}
	if stopping {
		// A graceful stop finishes the work in flight (its results are stored) before evaluating.
		publish("stopping: finishing in-flight work", len(pending))
		for len(pending) > 0 {
			receive()
		}
	}
	for _, p := range pending {
		p.stale = true
		p.cancel() // stragglers of the last iteration are not needed any more
	}
	pending = nil

	trainingWall := elapsed()

	// Best of K: scratch samples, then one improve sample for each, keep the best valid one by
	// the selection split's score.
	publish("evaluating", 0)
	evalRun := func(purpose string, ids, improveOf []string) ([]activities.ExecuteResult, error) {
		var refs []activities.SampleRef
		if err := workflow.ExecuteActivity(summarised(ctx, gpuOpts, "sample %d %s programs", len(ids), purpose), a.SamplePrograms, activities.SampleInput{
			Run: in.Run, Task: in.Task, Descriptor: st.Task, Checkpoint: st.Checkpoint, Iteration: st.Iteration, IDs: ids,
			Purpose: purpose, ImproveOf: improveOf, Seed: in.Seed,
		}).Get(ctx, &refs); err != nil {
			return nil, err
		}
		if err := instrument(ids); err != nil {
			return nil, err
		}
		futures := make([]workflow.Future, len(refs))
		out := make([]activities.ExecuteResult, len(refs))
		errs := make([]error, len(refs))
		for k, r := range refs {
			f, set := workflow.NewFuture(ctx)
			futures[k] = f
			k, id := k, r.ID
			workflow.Go(ctx, func(gctx workflow.Context) {
				res, err := execute(gctx, id, in.Split())
				out[k], errs[k] = res, err
				set.Set(nil, nil)
			})
		}
		var kept []activities.ExecuteResult
		for k, f := range futures {
			f.Get(ctx, nil)
			if errs[k] != nil {
				logger.Warn("evaluation execution did not complete", "sample", refs[k].ID, "error", errs[k])
				continue
			}
			kept = append(kept, out[k])
		}
		return kept, nil
	}
	scratchIDs := make([]string, in.EvalSamples)
	for k := range scratchIDs {
		scratchIDs[k] = evalID("scratch", k)
	}
	scratch, err := evalRun(activities.PurposeEvalScratch, scratchIDs, nil)
	if err != nil {
		return TrainResult{}, err
	}
	var improveIDs, improveOf []string
	for k, r := range scratch {
		improveIDs = append(improveIDs, evalID("improve", k))
		improveOf = append(improveOf, r.SampleID)
	}
	improved, err := evalRun(activities.PurposeEvalImprove, improveIDs, improveOf)
	if err != nil {
		return TrainResult{}, err
	}
	var chosen *activities.ExecuteResult
	for _, r := range append(scratch, improved...) {
		if !r.Valid || r.Score == nil {
			continue
		}
		if chosen == nil || (st.Task.LowerIsBetter && *r.Score < *chosen.Score) || (!st.Task.LowerIsBetter && *r.Score > *chosen.Score) {
			r := r
			chosen = &r
		}
	}
	result := TrainResult{Iterations: st.Recent, Stopped: stopping, Completed: st.Iteration, Programs: st.SamplesDone,
		SandboxSeconds: st.SandboxSeconds, WallSeconds: trainingWall, BestScore: st.Best, Improvements: st.Improvements}
	if chosen != nil {
		publish("final grading", 0)
		var fg activities.FinalGradeResult
		if err := workflow.ExecuteActivity(summarised(ctx, executeOpts, "grade %s on the private test answers", chosen.SampleID), a.FinalGrade, activities.FinalGradeInput{
			Run: in.Run, Task: in.Task, SampleID: chosen.SampleID, Protocol: in.Protocol}).Get(ctx, &fg); err != nil {
			return TrainResult{}, err
		}
		result.Final = &fg
	}
	// The run's best training program is graded on the test answers too, so a comparison of
	// arms can use the best program each found, not only what its final policy chose.
	if v := workflow.GetVersion(ctx, "grade-best-training-program", workflow.DefaultVersion, 1); v >= 1 && st.BestSample != "" {
		if chosen != nil && chosen.SampleID == st.BestSample {
			result.Best = result.Final
		} else {
			publish("final grading", 0)
			var fg activities.FinalGradeResult
			if err := workflow.ExecuteActivity(summarised(ctx, executeOpts, "grade the best training program %s on the private test answers", st.BestSample), a.FinalGrade, activities.FinalGradeInput{
				Run: in.Run, Task: in.Task, SampleID: st.BestSample, Protocol: in.Protocol}).Get(ctx, &fg); err != nil {
				return TrainResult{}, err
			}
			result.Best = &fg
		}
	}
	publish("reporting", 0)
	settings := fmt.Sprintf("iterations=%d (completed %d) B=%d m=%d K=%d seed=%d duration-weight=%v reward=%s reward-folds=%d", in.Iterations, st.Iteration,
		in.Batch, in.Oversample, in.EvalSamples, in.Seed, in.PPO.DurationWeight, cmp.Or(in.Reward, "paper"), max(in.RewardFolds, 1))
	if in.SandboxSeconds > 0 {
		settings += fmt.Sprintf(" sandbox-seconds-budget=%.0f (used %.0f)", in.SandboxSeconds, st.SandboxSeconds)
	}
	if in.Instrumenter == InstrumenterNone {
		settings += " instrumentation=off"
	}
	if err := workflow.ExecuteActivity(summarised(ctx, localOpts, "write report.md"), a.Report, activities.ReportInput{
		Run: in.Run, Task: in.Task, Protocol: in.Protocol, Settings: settings, Final: result.Final,
		Selection: chosen, EvalCount: len(scratch) + len(improved),
	}).Get(ctx, &result.Report); err != nil {
		return TrainResult{}, err
	}
	publish("done", 0)
	return result, nil
}
