// Package workflows holds the deterministic orchestration of training runs. Every side effect
// is an activity (package activities); the workflow only decides what runs when.
package workflows

import (
	"fmt"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/model"
	"mlerl/model/ppo"
	"mlerl/tasks"
)

// Protocols: where rewards come from and how the final program is chosen.
const (
	ProtocolLeakFree = "leak-free" // rewards from a validation split; test answers only for the report
	ProtocolPaper    = "paper"     // rewards and selection on the test split, as the paper did
)

// TrainInput configures a training run.
type TrainInput struct {
	RunID               string        `json:"run_id"`
	Task                string        `json:"task"`
	Iterations          int           `json:"iterations"`
	Batch               int           `json:"batch"`      // B: samples per update
	Oversample          int           `json:"oversample"` // m: m*B executions in flight
	Protocol            string        `json:"protocol"`
	Seed                uint64        `json:"seed"`
	EvalSamples         int           `json:"eval_samples"` // K for best-of-K
	StalenessIterations int           `json:"staleness_iterations"`
	BufferCapacity      int           `json:"buffer_capacity"`
	ImproveFraction     float64       `json:"improve_fraction"`
	ExecTimeout         time.Duration `json:"exec_timeout"` // the task's wall limit plus grading time
	Policy              model.Config  `json:"policy"`
	PPO                 ppo.Config    `json:"ppo"`
}

// Validate names the first bad setting.
func (in TrainInput) Validate() error {
	switch {
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
	case in.EvalSamples < 1:
		return fmt.Errorf("eval samples must be at least 1, got %d", in.EvalSamples)
	case in.ImproveFraction < 0 || in.ImproveFraction > 1:
		return fmt.Errorf("improve fraction must be in [0, 1], got %v", in.ImproveFraction)
	case in.ExecTimeout <= 0:
		return fmt.Errorf("exec timeout must be positive")
	}
	return nil
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
	Iterations []activities.IterationMetrics `json:"iterations"`
}

// Progress is the "progress" query's answer.
type Progress struct {
	Phase       string                        `json:"phase"`
	Iteration   int                           `json:"iteration"`
	Iterations  int                           `json:"iterations"`
	SamplesDone int                           `json:"samples_done"`
	InFlight    int                           `json:"in_flight"`
	BestScore   *float64                      `json:"best_score"`
	History     []activities.IterationMetrics `json:"history"`
}

// ProgressQuery is the query name for Progress.
const ProgressQuery = "progress"

// outcome is one finished (or failed) execution.
type outcome struct {
	ID     string
	Result activities.ExecuteResult
	Err    string
}

// running is an execution in flight.
type running struct {
	id     string
	iter   int
	cancel workflow.CancelFunc
}

// Train runs Algorithm 1 asynchronously: keep m*B executions in flight, update after B complete,
// leave stragglers running into the next iteration (their sampling-time log-probs give PPO its
// ratio), cancel those older than the staleness cap, refresh the self-improve buffer; then
// evaluate best-of-K (scratch, then improve) and grade the chosen program.
func Train(ctx workflow.Context, in TrainInput) (TrainResult, error) {
	if err := in.Validate(); err != nil {
		return TrainResult{}, temporal.NewNonRetryableApplicationError(err.Error(), activities.ErrBadInput, nil)
	}
	infraRetry := &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2,
		MaximumInterval: time.Minute, MaximumAttempts: 5, NonRetryableErrorTypes: []string{activities.ErrBadInput}}
	gpuOpts := workflow.ActivityOptions{TaskQueue: activities.GPUQueue, StartToCloseTimeout: 30 * time.Minute, RetryPolicy: infraRetry}
	instrumentOpts := workflow.ActivityOptions{TaskQueue: activities.ExecQueue, StartToCloseTimeout: 2 * time.Minute, RetryPolicy: infraRetry}
	// A program's own failure or timeout is a result; only a lost worker or a broken sandbox
	// retries, which the heartbeat timeout detects within seconds.
	executeOpts := workflow.ActivityOptions{TaskQueue: activities.ExecQueue, StartToCloseTimeout: in.ExecTimeout,
		HeartbeatTimeout: 30 * time.Second, WaitForCancellation: false,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrBadInput}}}
	localOpts := workflow.ActivityOptions{TaskQueue: activities.WorkflowQueue, StartToCloseTimeout: 5 * time.Minute, RetryPolicy: infraRetry}

	gpuCtx := workflow.WithActivityOptions(ctx, gpuOpts)
	localCtx := workflow.WithActivityOptions(ctx, localOpts)
	var a *activities.Activities
	logger := workflow.GetLogger(ctx)

	progress := Progress{Phase: "initialising", Iterations: in.Iterations}
	if err := workflow.SetQueryHandler(ctx, ProgressQuery, func() (Progress, error) { return progress, nil }); err != nil {
		return TrainResult{}, err
	}

	var init activities.InitPolicyResult
	if err := workflow.ExecuteActivity(gpuCtx, a.InitPolicy, activities.InitPolicyInput{
		Task: in.Task, Seed: in.Seed, Policy: in.Policy, PPO: in.PPO}).Get(ctx, &init); err != nil {
		return TrainResult{}, err
	}
	checkpoint := init.Checkpoint

	// execute instruments then runs one sample; used by training coroutines and evaluation.
	execute := func(c workflow.Context, id string, split tasks.SplitName) (activities.ExecuteResult, error) {
		var ir activities.InstrumentResult
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(c, instrumentOpts), a.InstrumentProgram,
			activities.InstrumentInput{SampleID: id}).Get(c, &ir); err != nil {
			return activities.ExecuteResult{}, err
		}
		var res activities.ExecuteResult
		err := workflow.ExecuteActivity(workflow.WithActivityOptions(c, executeOpts), a.ExecuteProgram,
			activities.ExecuteInput{Task: in.Task, SampleID: id, Split: split}).Get(c, &res)
		return res, err
	}

	results := workflow.NewBufferedChannel(ctx, 4*in.Batch*in.Oversample+16)
	var pending []*running
	launch := func(id string, iter int) {
		cctx, cancel := workflow.WithCancel(ctx)
		pending = append(pending, &running{id: id, iter: iter, cancel: cancel})
		workflow.Go(cctx, func(gctx workflow.Context) {
			res, err := execute(gctx, id, in.Split())
			o := outcome{ID: id, Result: res}
			if err != nil {
				o.Err = err.Error()
			}
			results.Send(gctx, o)
		})
	}

	var history []activities.IterationMetrics
	var best *float64
	better := func(s float64) bool {
		if best == nil {
			return true
		}
		if init.Task.LowerIsBetter {
			return s < *best
		}
		return s > *best
	}
	for it := 1; it <= in.Iterations; it++ {
		progress.Phase, progress.Iteration = "sampling", it
		need := in.Batch*in.Oversample - len(pending)
		if need > 0 {
			ids := make([]string, need)
			for k := range ids {
				ids[k] = fmt.Sprintf("it%04d-s%03d", it, k)
			}
			var refs []activities.SampleRef
			if err := workflow.ExecuteActivity(gpuCtx, a.SamplePrograms, activities.SampleInput{
				Task: in.Task, Descriptor: init.Task, Checkpoint: checkpoint, Iteration: it, IDs: ids,
				Purpose: activities.PurposeTrain, ImproveFraction: in.ImproveFraction, Buffer: activities.BufferKey, Seed: in.Seed,
			}).Get(ctx, &refs); err != nil {
				return TrainResult{}, err
			}
			for _, r := range refs {
				launch(r.ID, it)
			}
		}
		for _, p := range pending {
			if in.StalenessIterations > 0 && it-p.iter > in.StalenessIterations {
				p.cancel() // reported below as a stale timeout
			}
		}
		progress.Phase, progress.InFlight = "executing", len(pending)

		var done []outcome
		for len(done) < in.Batch {
			var o outcome
			results.Receive(ctx, &o)
			for k, p := range pending {
				if p.id == o.ID {
					pending = append(pending[:k], pending[k+1:]...)
					break
				}
			}
			done = append(done, o)
			progress.SamplesDone++
			progress.InFlight = len(pending)
		}

		var ok []string
		m := activities.IterationMetrics{Iteration: it, Samples: len(done), InFlight: len(pending)}
		var firstErr string
		for _, o := range done {
			if o.Err != "" {
				if firstErr == "" {
					firstErr = o.Err
				}
				logger.Warn("execution did not complete", "sample", o.ID, "error", o.Err)
				continue
			}
			ok = append(ok, o.ID)
			m.MeanReward += o.Result.Reward
			m.MeanDuration += o.Result.DurationS
			if o.Result.Valid {
				m.ValidRate++
				if o.Result.Score != nil && better(*o.Result.Score) {
					s := *o.Result.Score
					best = &s
				}
			}
		}
		if len(ok) == 0 {
			return TrainResult{}, fmt.Errorf("iteration %d: no execution completed (first error: %s)", it, firstErr)
		}
		n := float64(len(ok))
		m.MeanReward /= n
		m.MeanDuration /= n
		m.ValidRate /= n
		m.BestScore = best

		progress.Phase = "updating"
		var up activities.UpdateResult
		if err := workflow.ExecuteActivity(gpuCtx, a.UpdatePolicy, activities.UpdateInput{
			Checkpoint: checkpoint, Iteration: it, SampleIDs: ok, PPO: in.PPO, Seed: in.Seed, Metrics: m,
		}).Get(ctx, &up); err != nil {
			return TrainResult{}, err
		}
		checkpoint = up.Checkpoint
		m.PPO = up.Stats
		if err := workflow.ExecuteActivity(gpuCtx, a.RefreshBuffer, activities.BufferInput{
			Buffer: activities.BufferKey, SampleIDs: ok, Capacity: in.BufferCapacity,
		}).Get(ctx, nil); err != nil {
			return TrainResult{}, err
		}
		history = append(history, m)
		progress.History, progress.BestScore = history, best
	}
	for _, p := range pending {
		p.cancel() // stragglers of the last iteration are not needed any more
	}
	pending = nil
	progress.InFlight = 0

	// Best of K: scratch samples, then one improve sample for each, keep the best valid one by
	// the selection split's score.
	progress.Phase = "evaluating"
	evalRun := func(purpose string, ids, improveOf []string) ([]activities.ExecuteResult, error) {
		var refs []activities.SampleRef
		if err := workflow.ExecuteActivity(gpuCtx, a.SamplePrograms, activities.SampleInput{
			Task: in.Task, Descriptor: init.Task, Checkpoint: checkpoint, Iteration: in.Iterations, IDs: ids,
			Purpose: purpose, ImproveOf: improveOf, Seed: in.Seed,
		}).Get(ctx, &refs); err != nil {
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
		scratchIDs[k] = fmt.Sprintf("eval-scratch-%03d", k)
	}
	scratch, err := evalRun(activities.PurposeEvalScratch, scratchIDs, nil)
	if err != nil {
		return TrainResult{}, err
	}
	var improveIDs, improveOf []string
	for k, r := range scratch {
		improveIDs = append(improveIDs, fmt.Sprintf("eval-improve-%03d", k))
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
		if chosen == nil || (init.Task.LowerIsBetter && *r.Score < *chosen.Score) || (!init.Task.LowerIsBetter && *r.Score > *chosen.Score) {
			r := r
			chosen = &r
		}
	}
	result := TrainResult{Iterations: history}
	if chosen != nil {
		progress.Phase = "final grading"
		var fg activities.FinalGradeResult
		if err := workflow.ExecuteActivity(workflow.WithActivityOptions(ctx, executeOpts), a.FinalGrade, activities.FinalGradeInput{
			Task: in.Task, SampleID: chosen.SampleID, Protocol: in.Protocol}).Get(ctx, &fg); err != nil {
			return TrainResult{}, err
		}
		result.Final = &fg
	}
	progress.Phase = "reporting"
	settings := fmt.Sprintf("iterations=%d B=%d m=%d K=%d seed=%d duration-weight=%v", in.Iterations, in.Batch, in.Oversample, in.EvalSamples, in.Seed, in.PPO.DurationWeight)
	if err := workflow.ExecuteActivity(localCtx, a.Report, activities.ReportInput{
		RunID: in.RunID, Task: in.Task, Protocol: in.Protocol, Settings: settings, Final: result.Final,
		Selection: chosen, Iterations: history, EvalCount: len(scratch) + len(improved),
	}).Get(ctx, &result.Report); err != nil {
		return TrainResult{}, err
	}
	progress.Phase = "done"
	return result, nil
}
