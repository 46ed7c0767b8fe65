package workflows

import (
	"fmt"

	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
	"mlerl/settings"
)

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

// pool keeps m*B training programs in flight across iterations: programs are sampled as slots
// free up, run as coroutines, and their outcomes arrive on one channel.
type pool struct {
	run     *trainRun
	results workflow.Channel
	pending []*running
	// it is the iteration sampling is for and sampled how many programs it has sampled.
	it, sampled int
	// timeUp: training's share of the run's time budget passed while collect or drain waited,
	// so they stopped waiting.
	timeUp bool
}

func newPool(ctx workflow.Context, r *trainRun) *pool {
	return &pool{run: r, results: workflow.NewBufferedChannel(ctx, 4*r.in.Batch*r.in.Oversample+16)}
}

// sampleID names a training program; a fresh execution after a failure (Attempt > 0) uses its
// own names, so nothing the failed one wrote is overwritten.
func sampleID(attempt, it, k int) string {
	if attempt > 0 {
		return fmt.Sprintf("it%04d-r%d-s%03d", it, attempt, k)
	}
	return fmt.Sprintf("it%04d-s%03d", it, k)
}

// launch starts executing one instrumented program.
func (p *pool) launch(ctx workflow.Context, id string, iter int) {
	cctx, cancel := workflow.WithCancel(ctx)
	r := &running{id: id, iter: iter, cancel: cancel}
	p.pending = append(p.pending, r)
	workflow.Go(cctx, func(gctx workflow.Context) {
		res, err := p.run.execute(gctx, id)
		o := outcome{ID: id, Result: res, Stale: r.stale}
		if err != nil {
			o.Err = err.Error()
		}
		p.results.Send(gctx, o)
	})
}

// settle removes a finished execution from the in-flight list and counts its budget. It
// reports false for the program that crossed a sandbox-seconds budget when leaving it out lands
// nearer the budget (see trainRun.crossesBudget): that program is not counted or used.
// mayLeaveOut is false when the caller has nothing else to learn from.
func (p *pool) settle(o outcome, mayLeaveOut bool) (outcome, bool) {
	for k, r := range p.pending {
		if r.id == o.ID {
			p.pending = append(p.pending[:k], p.pending[k+1:]...)
			break
		}
	}
	if p.run.crossesBudget(o.Result.DurationS, mayLeaveOut) {
		return o, false
	}
	p.run.st.SamplesDone++
	p.run.st.SandboxSeconds += o.Result.DurationS
	return o, true
}

// receive waits for the next outcome; false as settle says.
func (p *pool) receive(ctx workflow.Context, mayLeaveOut bool) (outcome, bool) {
	var o outcome
	p.results.Receive(ctx, &o)
	return p.settle(o, mayLeaveOut)
}

// armTimeShare starts the timer that ends waiting at training's share of the run's time budget
// (nil: no such stop, or the share has passed already, which sets timeUp); stop cancels it.
// An iteration waits for B programs, and slow programs would otherwise carry training far
// past its share. Pauses are taken between iterations only, so the deadline holds while the
// timer runs.
func (p *pool) armTimeShare(ctx workflow.Context) (timer workflow.Future, stop func()) {
	r := p.run
	if r.in.TimeBudget <= 0 || p.timeUp {
		return nil, func() {}
	}
	left := settings.TrainShare*r.in.TimeBudget - r.budgetElapsed(ctx)
	if left <= 0 {
		p.timeUp = true
		return nil, func() {}
	}
	return deadlineTimer(ctx, left)
}

// await waits for the next outcome (use as settle says), or for timer (nil: none) to fire:
// got is false then, and timeUp is set.
func (p *pool) await(ctx workflow.Context, timer workflow.Future, mayLeaveOut bool) (o outcome, use, got bool) {
	if timer == nil {
		o, use = p.receive(ctx, mayLeaveOut)
		return o, use, true
	}
	sel := workflow.NewSelector(ctx)
	sel.AddReceive(p.results, func(c workflow.ReceiveChannel, _ bool) { c.Receive(ctx, &o); got = true })
	sel.AddFuture(timer, func(workflow.Future) {})
	sel.Select(ctx)
	// A result that arrived with the timer is still taken; the next wait stops.
	p.timeUp = timer.IsReady()
	if !got {
		return o, false, false
	}
	o, use = p.settle(o, mayLeaveOut)
	return o, use, true
}

// startIteration makes sampling name programs after iteration it.
func (p *pool) startIteration(it int) { p.it, p.sampled = it, 0 }

// topUp keeps m*B programs in flight (completed-but-unused carry counts as in flight), sampling
// from the current policy, so no slot idles until the update.
func (p *pool) topUp(ctx workflow.Context) error {
	r := p.run
	need := r.in.Batch*r.in.Oversample - len(p.pending) - len(r.st.Carry)
	if need <= 0 || r.carriedPastBudget() || r.carriedPastTimeShare(ctx) {
		return nil
	}
	ids := make([]string, need)
	for k := range ids {
		ids[k] = sampleID(r.in.Attempt, p.it, p.sampled+k)
	}
	p.sampled += need
	r.publish(PhaseSampling, len(p.pending))
	refs, err := r.sample(ctx, fmt.Sprintf("sample %d programs for iteration %d", len(ids), p.it), activities.SampleInput{
		Iteration: p.it, IDs: ids, Purpose: activities.PurposeTrain, ImproveFraction: r.in.ImproveFraction,
		ImproveFrom: r.in.ImproveFrom, Buffer: runstore.BufferKey, RedrawRepeats: r.in.RedrawRepeats,
		ImproveEdit: r.in.ImproveEdit})
	if err != nil {
		return err
	}
	for _, ref := range refs {
		p.launch(ctx, ref.ID, p.it)
	}
	return nil
}

// cancelStale ends programs older than the staleness cap: each arrives as a stale outcome with
// its partial result.
func (p *pool) cancelStale(it, cap int) {
	for _, r := range p.pending {
		if cap > 0 && it-r.iter > cap && !r.stale {
			r.stale = true
			r.cancel()
		}
	}
}

// collect returns the iteration's outcomes: results carried from the previous segment first,
// then B programs that finish (stale outcomes join with their partial credit but do not count
// toward B, so an iteration always learns from B programs that finished), or fewer when a
// sandbox-seconds budget runs out first or training's share of the time budget passes (then
// possibly none: see trainRun.iterate).
func (p *pool) collect(ctx workflow.Context) ([]outcome, error) {
	r := p.run
	var done []outcome
	for len(r.st.Carry) > 0 && len(done) < r.in.Batch {
		done = append(done, outcome{ID: r.st.Carry[0].SampleID, Result: r.st.Carry[0]})
		r.st.Carry = r.st.Carry[1:]
	}
	if r.nearestBudget && r.budgetSpentMidIteration(len(done)) {
		return done, nil // the budget was spent in the drain: learn from what it paid for
	}
	timer, stopTimer := p.armTimeShare(ctx)
	defer stopTimer()
	if p.timeUp {
		return done, nil // the share passed in a drain or while sampling: learn from what finished
	}
	for counted := len(done); counted < r.in.Batch; {
		o, use, got := p.await(ctx, timer, counted > 0)
		if !got {
			// Training's share of the time budget passed: the programs in flight are cancelled
			// with the run's, counted neither as failures nor as rewards.
			return done, nil
		}
		for {
			if use {
				done = append(done, o)
				if !o.Stale {
					counted++
				}
			}
			// Take every result already waiting, so one top-up replaces them all.
			if counted >= r.in.Batch || r.budgetSpentMidIteration(counted) || !p.results.ReceiveAsync(&o) {
				break
			}
			o, use = p.settle(o, counted > 0)
		}
		if r.budgetSpentMidIteration(counted) || p.timeUp {
			// Nothing more is sampled; the programs still in flight are cancelled with the run's.
			return done, nil
		}
		if counted < r.in.Batch && !r.in.SampleAtIterationStart {
			if err := p.topUp(ctx); err != nil {
				return nil, err
			}
		}
		r.publish(PhaseExecuting, len(p.pending))
	}
	return done, nil
}

// drain waits for every program in flight, or until stop says so or training's share of the
// time budget passes, and returns the outcomes.
func (p *pool) drain(ctx workflow.Context, stop func() bool) []outcome {
	timer, stopTimer := p.armTimeShare(ctx)
	defer stopTimer()
	var out []outcome
	for len(p.pending) > 0 && !stop() && !p.timeUp {
		if o, use, got := p.await(ctx, timer, true); got && use {
			out = append(out, o)
		}
	}
	return out
}

// cancelAll ends the programs still in flight: stragglers nobody will learn from.
func (p *pool) cancelAll() {
	for _, r := range p.pending {
		r.stale = true
		r.cancel()
	}
	p.pending = nil
}
