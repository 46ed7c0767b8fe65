// Package workflows holds the deterministic orchestration of training runs. Every side effect
// is an activity (package activities); the workflow only decides what runs when.
package workflows

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
	"mlerl/settings"
	"mlerl/tasks"
	"mlerl/worker/queues"
)

// TrainInput configures a training run: its settings (package settings) and what the starter
// and the workflow itself add.
type TrainInput struct {
	Run  string `json:"run"` // the run id: names its artifact store
	Task string `json:"task"`
	// Settings are embedded so the input's JSON keeps one flat shape across versions.
	settings.Settings
	ExecTimeout       time.Duration        `json:"exec_timeout"`       // the task's wall limit plus grading time
	InstrumentTimeout time.Duration        `json:"instrument_timeout"` // 0: 30 s (an LLM instrumenter needs minutes)
	LLM               activities.LLMPolicy `json:"llm,omitempty"`      // an llm policy's sampling
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
	// Paused and Stopping carry a pause or stop that arrived while a segment was handing over
	// to the next (continue-as-new), so no signal is lost between segments.
	Paused   bool `json:"paused,omitempty"`
	Stopping bool `json:"stopping,omitempty"`
}

// Validate names the first bad setting.
func (in TrainInput) Validate() error {
	switch {
	case in.Run == "":
		return fmt.Errorf("run id is empty")
	case in.Task == "":
		return fmt.Errorf("task is empty")
	case in.ExecTimeout <= 0:
		return fmt.Errorf("exec timeout must be positive")
	case in.Attempt < 0:
		return fmt.Errorf("attempt must be 0 or more, got %d", in.Attempt)
	}
	return in.Settings.Validate()
}

// Split returns where rewards and selection are computed.
func (in TrainInput) Split() tasks.SplitName {
	if in.Protocol == settings.Paper {
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
	Completed      int     `json:"completed_iterations"`
	Programs       int     `json:"programs"`
	SandboxSeconds float64 `json:"sandbox_seconds"`
	// LeftOutSeconds ran but is not in SandboxSeconds: the program that crossed a
	// sandbox-seconds budget, left out because that landed nearer the budget.
	LeftOutSeconds float64                      `json:"left_out_seconds,omitempty"`
	WallSeconds    float64                      `json:"wall_seconds"`
	BestScore      *float64                     `json:"best_score,omitempty"`
	Improvements   []activities.Improvement     `json:"improvements,omitempty"`
	Best           *activities.FinalGradeResult `json:"best,omitempty"`
	// Answer is the run's final answer: the cross-validated ensemble of its best programs.
	Answer *activities.FinalAnswer `json:"answer,omitempty"`
	// TimeBudgetNotes say where the time budget stopped training and best-of-K.
	TimeBudgetNotes []string `json:"time_budget_notes,omitempty"`
}

// summarised returns ctx with options whose one-line summary the Web UI shows for the activity.
func summarised(ctx workflow.Context, opts workflow.ActivityOptions, format string, a ...any) workflow.Context {
	opts.Summary = fmt.Sprintf(format, a...)
	return workflow.WithActivityOptions(ctx, opts)
}

// All are the workflows a worker of the workflows queue registers.
var All = []any{Train, Experiment, FinalAnswer}

// recentKept bounds the iteration metrics carried in state and queries.
const recentKept = 20

// activityOptions are the activity options of a run (and its answer), one set per kind of work.
type activityOptions struct {
	// host: the execution hosts' steps that take no sandbox slot (ensemble selection, blending).
	gpu, instrument, execute, host, local workflow.ActivityOptions
}

// newActivityOptions sets them for programs that may run execTimeout and an instrumenter that
// may take instrumentTimeout (0: 30 s).
func newActivityOptions(execTimeout, instrumentTimeout time.Duration) activityOptions {
	infraRetry := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: time.Minute, MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrBadInput}}
	// Sampling, updates, the buffer, state and the report heartbeat while they work: a dead
	// worker is noticed in 30 s, not after the 30 minutes the slowest (LLM) update may take.
	keepAlive := 30 * time.Second
	// AST instrumenting takes well under a second: a short timeout retries a lost worker's
	// quickly. An LLM instrumenter gets what the starter sets.
	instrumentTimeout = cmp.Or(instrumentTimeout, 30*time.Second)
	// A program's own failure or timeout is a result; only a lost worker or a broken sandbox
	// retries, which the heartbeat timeout detects within seconds. Cancellation waits for the
	// activity so a stale program's partial result is stored before the update reads it.
	execute := workflow.ActivityOptions{TaskQueue: queues.Exec, StartToCloseTimeout: execTimeout,
		HeartbeatTimeout: 30 * time.Second, WaitForCancellation: true,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrBadInput}}}
	// Host steps are bounded and retried as executions are, on a queue of their own, so they
	// never wait behind other runs' executions for a sandbox slot. Replay does not compare an
	// activity's task queue, so recorded histories replay alike.
	host := execute
	host.TaskQueue = queues.ExecHost
	return activityOptions{
		gpu: workflow.ActivityOptions{TaskQueue: queues.GPU, StartToCloseTimeout: 30 * time.Minute,
			HeartbeatTimeout: keepAlive, RetryPolicy: infraRetry},
		instrument: workflow.ActivityOptions{TaskQueue: queues.ExecHost, StartToCloseTimeout: instrumentTimeout, RetryPolicy: infraRetry},
		execute:    execute,
		host:       host,
		local: workflow.ActivityOptions{TaskQueue: queues.Workflows, StartToCloseTimeout: 5 * time.Minute,
			HeartbeatTimeout: keepAlive, RetryPolicy: infraRetry},
	}
}

// trainRun is one segment of a run: its input, its state (saved across segments) and the parts
// that act on them.
type trainRun struct {
	in     TrainInput
	opts   activityOptions
	acts   *activities.Activities // nil: only its methods' names are used
	logger log.Logger
	st     activities.RunState
	ctl    *control
	pool   *pool
	// segmentStart is the iteration this segment started after.
	segmentStart int
	// stopAtBudget: a sandbox-seconds budget ends collection the moment it is used up, not at
	// the end of the iteration (histories recorded before this version end at the boundary);
	// stopDrainAtBudget: and ends the drain before a continue-as-new too; nearestBudget: the
	// program that crosses the budget is left out when that lands nearer it.
	stopAtBudget, stopDrainAtBudget, nearestBudget bool
	// cancelledAtEnd is how many training programs were in flight when training ended.
	cancelledAtEnd int
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
	r := &trainRun{in: in, opts: newActivityOptions(in.ExecTimeout, in.InstrumentTimeout), logger: workflow.GetLogger(ctx)}
	// A sandbox-seconds budget matches an arm to another's execution time, so it must land on
	// it: version 1 stops collecting mid-iteration (an iteration boundary overshoots by a whole
	// iteration), version 2 stops the drain before a continue-as-new too, version 3 leaves out
	// the program that crosses the budget when that lands nearer it (one heavy-tailed program
	// otherwise overshoots by its whole run).
	if in.SandboxSeconds > 0 {
		v := workflow.GetVersion(ctx, "stop-at-sandbox-budget", workflow.DefaultVersion, 3)
		r.stopAtBudget, r.stopDrainAtBudget, r.nearestBudget = v >= 1, v >= 2, v >= 3
	}
	var err error
	if r.ctl, err = newControl(ctx, in); err != nil {
		return TrainResult{}, err
	}
	if err := r.start(ctx); err != nil {
		return TrainResult{}, err
	}
	r.pool = newPool(ctx, r)
	for r.trainMore(ctx) {
		r.ctl.awaitSignals(ctx, &r.st, in.Attempt)
		if r.ctl.stopping {
			break
		}
		if err := r.iterate(ctx); err != nil {
			return TrainResult{}, err
		}
		if r.budgetLeft() && !r.trainingTimeUp(ctx) && !r.ctl.stopping &&
			(r.st.Iteration-r.segmentStart >= in.ContinueEvery || workflow.GetInfo(ctx).GetContinueAsNewSuggested()) {
			return TrainResult{}, r.continueAsNew(ctx)
		}
	}
	if r.ctl.stopping {
		// A graceful stop finishes the work in flight (its results are stored) before evaluating.
		r.publish(PhaseStopping, len(r.pool.pending))
		r.pool.drain(ctx, func() bool { return false })
	}
	r.cancelledAtEnd = len(r.pool.pending)
	r.pool.cancelAll()
	return r.evaluate(ctx, r.elapsed(ctx))
}

// trainMore: another iteration runs, within the budgets, or to learn from programs a drain cut
// short by the time share carried over, sampling nothing.
func (r *trainRun) trainMore(ctx workflow.Context) bool {
	return r.budgetLeft() && (!r.trainingTimeUp(ctx) || r.carriedPastTimeShare(ctx))
}

// carriedPastTimeShare: training's share of the time budget passed in the drain before a
// continue-as-new; the programs that finished in it are learned from (one of them may be the
// run's best) by iterations that sample and wait for nothing.
func (r *trainRun) carriedPastTimeShare(ctx workflow.Context) bool {
	return len(r.st.Carry) > 0 && r.trainingTimeUp(ctx)
}

// start loads the state a continue-as-new saved, or rebuilds a failed run's from its
// artifacts, or warm-starts the policy.
func (r *trainRun) start(ctx workflow.Context) error {
	in := r.in
	switch {
	case in.StateKey != "":
		if err := workflow.ExecuteActivity(summarised(ctx, r.opts.local, "load run state %s", in.StateKey), r.acts.LoadState,
			activities.LoadStateInput{Run: in.Run, Key: in.StateKey}).Get(ctx, &r.st); err != nil {
			return err
		}
		r.st.Segments++
	case in.Recover:
		if err := workflow.ExecuteActivity(summarised(ctx, r.opts.gpu, "recover the run's state from its artifacts"), r.acts.RecoverState,
			activities.RecoverInput{Run: in.Run, Task: in.Task, Attempt: in.Attempt}).Get(ctx, &r.st); err != nil {
			return err
		}
		r.logger.Info("continuing a failed run from its last good checkpoint", "checkpoint", r.st.Checkpoint, "iteration", r.st.Iteration, "attempt", in.Attempt)
	default:
		var init activities.InitPolicyResult
		if err := workflow.ExecuteActivity(summarised(ctx, r.opts.gpu, "warm-start policy for %s", in.Task), r.acts.InitPolicy, activities.InitPolicyInput{
			Run: in.Run, Task: in.Task, Seed: in.Seed, Policy: in.Policy, PPO: in.PPO, Init: in.Init, Backend: in.Backend, LLM: in.LLM}).Get(ctx, &init); err != nil {
			return err
		}
		r.st.Checkpoint, r.st.Task = init.Checkpoint, init.Task
	}
	if r.st.StartedAt.IsZero() {
		r.st.StartedAt = workflow.Now(ctx)
	}
	r.segmentStart = r.st.Iteration
	r.ctl.progress.TimeBudgetS = in.TimeBudget
	r.publish(PhaseStarting, 0)
	r.ctl.upsert(ctx, in.Task, &r.st)
	return nil
}

func (r *trainRun) publish(phase Phase, inFlight int) {
	r.ctl.publish(&r.st, r.in.Attempt, phase, inFlight)
}

func (r *trainRun) elapsed(ctx workflow.Context) float64 {
	return workflow.Now(ctx).Sub(r.st.StartedAt).Seconds()
}

// trainingTimeUp: the run has a wall-clock budget and training's share of it has passed, so
// training ends (mid-iteration, see pool.armTimeShare: waiting for B slow programs would overrun
// it by most of an iteration) and evaluation and the final answer get the rest.
func (r *trainRun) trainingTimeUp(ctx workflow.Context) bool {
	return r.in.TimeBudget > 0 && r.budgetElapsed(ctx) >= settings.TrainShare*r.in.TimeBudget
}

// timeLeft is the run's wall-clock budget left, +Inf without one.
func (r *trainRun) timeLeft(ctx workflow.Context) float64 {
	if r.in.TimeBudget <= 0 {
		return math.Inf(1)
	}
	return r.in.TimeBudget - r.budgetElapsed(ctx)
}

// budgetElapsed is the run's time so far less the time it spent paused: a pause holds the
// budget where it was.
func (r *trainRun) budgetElapsed(ctx workflow.Context) float64 {
	return r.elapsed(ctx) - r.st.PausedS
}

// budgetLeft: iterations remain, and the sandbox-seconds budget (if any) is not used up or
// (from version 3) programs it paid for wait, carried over a continue-as-new, to be learned from.
func (r *trainRun) budgetLeft() bool {
	return r.st.Iteration < r.in.Iterations && (r.in.SandboxSeconds <= 0 || !r.budgetSpent() || r.carriedPastBudget())
}

// carriedPastBudget: the drain before a continue-as-new counted these programs in the budget,
// so one more iteration learns from them (and may find the best program among them), and
// samples nothing. Before version 3 they were counted and never looked at.
func (r *trainRun) carriedPastBudget() bool {
	return r.nearestBudget && r.in.SandboxSeconds > 0 && r.budgetSpent() && len(r.st.Carry) > 0
}

// budgetSpent: the sandbox-seconds budget is used up, or a program crossed it.
func (r *trainRun) budgetSpent() bool {
	return r.st.SandboxSeconds >= r.in.SandboxSeconds || r.st.BudgetClosed
}

// budgetSpentInDrain: the drain before a continue-as-new stops waiting for programs in flight.
func (r *trainRun) budgetSpentInDrain() bool {
	return r.stopDrainAtBudget && r.budgetSpent()
}

// budgetSpentMidIteration: the iteration stops collecting now, with the counted programs it
// has (at least one, so the update and the metrics have something to work on), because the
// sandbox-seconds budget is used up. The error is then half a program's run at most (one
// program's before version 3).
func (r *trainRun) budgetSpentMidIteration(counted int) bool {
	return r.stopAtBudget && counted > 0 && r.budgetSpent()
}

// crossesBudget decides for a finished program of d sandbox-seconds: true leaves it out. A
// program's seconds are known only when it ends, so the one that crosses the budget would
// overshoot it by up to its whole run; counted or left out, whichever lands nearer the budget
// (ties counted), the arm's total is within half a program of it, over or under, instead of
// always over. The budget then closes either way. mayLeaveOut false (nothing else to learn
// from) always counts it.
func (r *trainRun) crossesBudget(d float64, mayLeaveOut bool) bool {
	if !r.nearestBudget || r.in.SandboxSeconds <= 0 || r.st.BudgetClosed {
		return false
	}
	before, after := r.st.SandboxSeconds, r.st.SandboxSeconds+d
	if after < r.in.SandboxSeconds {
		return false
	}
	r.st.BudgetClosed = true
	if mayLeaveOut && after-r.in.SandboxSeconds > r.in.SandboxSeconds-before {
		r.st.LeftOutSandboxSeconds += d
		r.logger.Info("left out the program that crossed the sandbox-seconds budget: counting it would overshoot more than leaving it out undershoots",
			"budget", r.in.SandboxSeconds, "used", before, "program_seconds", d)
		return true
	}
	return false
}

// noteFallback shows a damaged checkpoint that sampling stepped over where the user looks: the
// progress query (`starter status`, the console's notes) and the next iteration's metrics line.
// Sampling meets it again on each call until an update replaces it: it is noted once.
func (r *trainRun) noteFallback(fb string) {
	if slices.Contains(r.st.Fallbacks, fb) {
		return
	}
	r.st.Fallbacks = append(r.st.Fallbacks, fb)
	if r.st.NewFallback == "" {
		r.st.NewFallback = fb
	}
	r.logger.Warn("damaged checkpoint stepped over while sampling", "detail", fb)
}

// sample draws programs from the current policy and instruments them (progress prints) in one
// activity each.
func (r *trainRun) sample(ctx workflow.Context, summary string, in activities.SampleInput) ([]activities.SampleRef, error) {
	in.Run, in.Task, in.Descriptor, in.Checkpoint, in.Seed = r.in.Run, r.in.Task, r.st.Task, r.st.Checkpoint, r.in.Seed
	var refs []activities.SampleRef
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.gpu, "%s", summary), r.acts.SamplePrograms, in).Get(ctx, &refs); err != nil {
		return nil, err
	}
	if len(refs) > 0 && refs[0].Fallback != "" {
		r.noteFallback(refs[0].Fallback)
	}
	if len(in.IDs) == 0 {
		return refs, nil
	}
	err := workflow.ExecuteActivity(summarised(ctx, r.opts.instrument, "instrument %d programs (%s...)", len(in.IDs), in.IDs[0]), r.acts.InstrumentPrograms,
		activities.InstrumentInput{Run: r.in.Run, SampleIDs: in.IDs, Off: r.in.Instrumenter == settings.InstrumenterNone}).Get(ctx, nil)
	return refs, err
}

// execute runs one instrumented program on the selection split.
func (r *trainRun) execute(ctx workflow.Context, id string) (activities.ExecuteResult, error) {
	var res activities.ExecuteResult
	err := workflow.ExecuteActivity(summarised(ctx, r.opts.execute, "run %s on the %s split", id, r.in.Split()), r.acts.ExecuteProgram,
		activities.ExecuteInput{Run: r.in.Run, Task: r.in.Task, SampleID: id, Split: r.in.Split(), Folds: r.in.RewardFolds, Reward: r.in.Reward}).Get(ctx, &res)
	return res, err
}

// iterate is one iteration: top up the programs in flight, wait for B of them, update the
// policy on them and refresh the self-improve buffer.
func (r *trainRun) iterate(ctx workflow.Context) error {
	it := r.st.Iteration + 1
	r.pool.startIteration(it)
	if err := r.pool.topUp(ctx); err != nil {
		return err
	}
	r.pool.cancelStale(it, r.in.StalenessIterations)
	r.publish(PhaseExecuting, len(r.pool.pending))
	done, err := r.pool.collect(ctx)
	if err != nil {
		return err
	}
	if r.pool.timeUp && !slices.ContainsFunc(done, func(o outcome) bool { return o.Err == "" && !o.Stale }) {
		// Nothing to update on: the iteration is abandoned, and evaluation starts on time.
		r.logger.Info("training's share of the time budget passed before a program of the iteration finished: no update",
			"iteration", it, "in_flight", len(r.pool.pending))
		return nil
	}
	m, ok, stale, err := r.score(ctx, it, done)
	if err != nil {
		return err
	}

	r.publish(PhaseUpdating, len(r.pool.pending))
	var up activities.UpdateResult
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.gpu, "PPO update %d on %d samples (%d stale)", it, len(ok), len(stale)), r.acts.UpdatePolicy, activities.UpdateInput{
		Run: r.in.Run, Checkpoint: r.st.Checkpoint, Iteration: it, SampleIDs: ok, Stale: stale, PPO: r.in.PPO, Seed: r.in.Seed, Metrics: m,
	}).Get(ctx, &up); err != nil {
		return err
	}
	r.st.Checkpoint = up.Checkpoint
	m.PPO = up.Stats
	if up.Fallback != "" {
		m.CheckpointFallback = up.Fallback
		if !slices.Contains(r.st.Fallbacks, up.Fallback) {
			r.st.Fallbacks = append(r.st.Fallbacks, up.Fallback)
		}
		r.logger.Warn("damaged checkpoint stepped over", "detail", up.Fallback)
	}
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.gpu, "refresh the self-improve buffer"), r.acts.RefreshBuffer, activities.BufferInput{
		Run: r.in.Run, Buffer: runstore.BufferKey, SampleIDs: ok, Capacity: r.in.BufferCapacity,
	}).Get(ctx, nil); err != nil {
		return err
	}
	r.st.Iteration = it
	r.st.Recent = append(r.st.Recent, m)
	if len(r.st.Recent) > recentKept {
		r.st.Recent = r.st.Recent[len(r.st.Recent)-recentKept:]
	}
	r.st.MaxHistory = max(r.st.MaxHistory, workflow.GetInfo(ctx).GetCurrentHistoryLength())
	r.publish(PhaseIterationEnd, len(r.pool.pending))
	r.ctl.upsert(ctx, r.in.Task, &r.st)
	return nil
}

// score sorts an iteration's outcomes into those the update learns from (ok) and stale ones,
// records the best program so far, and computes the iteration's metrics.
func (r *trainRun) score(ctx workflow.Context, it int, done []outcome) (m activities.IterationMetrics, ok, stale []string, err error) {
	st := &r.st
	m = activities.IterationMetrics{Iteration: it, InFlight: len(r.pool.pending)}
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
			r.logger.Warn("execution did not complete", "sample", o.ID, "error", o.Err)
		default:
			ok = append(ok, o.ID)
			m.MeanReward += o.Result.Reward
			m.MeanDuration += o.Result.DurationS
			if !o.Result.Valid {
				continue
			}
			m.ValidRate++
			if o.Result.Score == nil {
				continue
			}
			s := *o.Result.Score
			scored++
			scoreSum += s
			st.Leaders = addLeader(st.Leaders, st.Task.LowerIsBetter, activities.Leader{Sample: o.ID, Score: s})
			if better(st.Task.LowerIsBetter, s, st.Best) {
				st.Best, st.BestSample = &s, o.ID
				st.Improvements = append(st.Improvements, activities.Improvement{Sample: o.ID, Score: s,
					Programs: st.SamplesDone, SandboxSeconds: st.SandboxSeconds, ElapsedS: r.elapsed(ctx)})
			}
		}
	}
	if len(ok) == 0 {
		return m, nil, nil, fmt.Errorf("iteration %d: no execution completed (first error: %s)", it, firstErr)
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
	m.Programs, m.SandboxSeconds, m.ElapsedS = st.SamplesDone, st.SandboxSeconds, r.elapsed(ctx)
	m.CheckpointFallback, st.NewFallback = st.NewFallback, "" // one RecoverState stepped over
	return m, ok, stale, nil
}

// continueAsNew hands the run to a fresh history: it waits for in-flight work and carries its
// results (none is lost or counted twice), stores the state, and passes on any pause or stop
// that arrived meanwhile.
func (r *trainRun) continueAsNew(ctx workflow.Context) error {
	r.publish(PhaseDraining, len(r.pool.pending))
	for _, o := range r.pool.drain(ctx, r.budgetSpentInDrain) {
		if o.Err == "" && !o.Stale {
			r.st.Carry = append(r.st.Carry, o.Result)
		}
	}
	// Programs a spent budget left in flight are cancelled, as at a run's end: the next
	// segment finds no budget left and evaluates.
	r.pool.cancelAll()
	var key string
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.local, "save run state after iteration %d", r.st.Iteration), r.acts.SaveState,
		activities.SaveStateInput{Run: r.in.Run, State: r.st}).Get(ctx, &key); err != nil {
		return err
	}
	r.ctl.takeSignals()
	next := r.in
	next.StateKey, next.Recover = key, false
	next.Paused, next.Stopping = r.ctl.progress.Paused, r.ctl.stopping
	return workflow.NewContinueAsNewError(ctx, Train, next)
}
