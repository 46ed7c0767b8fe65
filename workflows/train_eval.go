package workflows

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/answerplan"
	"mlerl/settings"
)

// better is the one rule for "s beats than" on the task's metric (answerplan.Better, which the
// final answer's decisions use too).
func better(lowerIsBetter bool, s float64, than *float64) bool {
	return answerplan.Better(lowerIsBetter, s, than)
}

// evalID names an evaluation program, after the attempt like sampleID.
func evalID(attempt int, purpose string, k int) string {
	if attempt > 0 {
		return fmt.Sprintf("eval-r%d-%s-%03d", attempt, purpose, k)
	}
	return fmt.Sprintf("eval-%s-%03d", purpose, k)
}

// evaluate is the end of a run: best-of-K from the final policy (K scratch programs, then one
// improve program for each), the chosen one and the run's best training program graded on the
// test answers, the final answer (finalAnswer), and the report.
func (r *trainRun) evaluate(ctx workflow.Context, trainingWall float64) (TrainResult, error) {
	r.publish(PhaseEvaluating, 0)
	var notes []string
	note := func(format string, a ...any) {
		n := fmt.Sprintf(format, a...)
		notes = append(notes, n)
		r.ctl.progress.Detail = n
		r.logger.Info(n)
	}
	var deadline workflow.Future // best-of-K's end (nil: none)
	var deadlineShare float64    // its share of the time budget, for the notes
	if r.in.TimeBudget > 0 {
		if r.trainingTimeUp(ctx) {
			n := fmt.Sprintf("training stopped at its %.0f%% share of the time budget after %d iterations", 100*settings.TrainShare, r.st.Iteration)
			if r.cancelledAtEnd > 0 {
				n += fmt.Sprintf(" (%d programs in flight cancelled)", r.cancelledAtEnd)
			}
			note("%s", n)
		}
		var cancel func()
		var end float64
		deadline, end, cancel = r.evalDeadline(ctx)
		deadlineShare = end / r.in.TimeBudget
		defer cancel()
	}
	if deadline != nil && deadline.IsReady() {
		note("best-of-K skipped: training ended after its deadline (%.0f%% of the time budget), so the answer is built from training's programs",
			100*deadlineShare)
	}
	scratchIDs := make([]string, r.in.EvalSamples)
	for k := range scratchIDs {
		scratchIDs[k] = evalID(r.in.Attempt, "scratch", k)
	}
	scratch, cut, err := r.evalBatch(ctx, activities.PurposeEvalScratch, scratchIDs, nil, deadline)
	if err != nil {
		return TrainResult{}, err
	}
	var improveIDs, improveOf []string
	// Past the run's time budget the improve draws are left out: the final answer still needs
	// its share; past best-of-K's deadline too.
	if r.timeLeft(ctx) > 0 && (deadline == nil || !deadline.IsReady()) {
		for k, s := range scratch {
			improveIDs = append(improveIDs, evalID(r.in.Attempt, "improve", k))
			improveOf = append(improveOf, s.SampleID)
		}
	} else {
		r.logger.Info("the run's time budget is used: best-of-K keeps its scratch draws only")
	}
	improved, cutImproved, err := r.evalBatch(ctx, activities.PurposeEvalImprove, improveIDs, improveOf, deadline)
	if err != nil {
		return TrainResult{}, err
	}
	if deadline != nil && deadline.IsReady() && len(scratch)+len(improved)+cut+cutImproved > 0 {
		n := fmt.Sprintf("best-of-K stopped at its deadline (%.0f%% of the time budget): %d of its programs finished, %d cancelled",
			100*deadlineShare, len(scratch)+len(improved), cut+cutImproved)
		if len(scratch)+len(improved) == 0 {
			n += "; none to choose from, so the answer is built from training's programs"
		}
		note("%s", n)
	}
	var chosen *activities.ExecuteResult
	for _, e := range append(scratch, improved...) {
		if !e.Valid || e.Score == nil {
			continue
		}
		var than *float64
		if chosen != nil {
			than = chosen.Score
		}
		if better(r.st.Task.LowerIsBetter, *e.Score, than) {
			chosen = &e
		}
	}

	st := &r.st
	result := TrainResult{Iterations: st.Recent, Stopped: r.ctl.stopping, Completed: st.Iteration, Programs: st.SamplesDone,
		SandboxSeconds: st.SandboxSeconds, LeftOutSeconds: st.LeftOutSandboxSeconds, WallSeconds: trainingWall, BestScore: st.Best, Improvements: st.Improvements,
		TimeBudgetNotes: notes}
	// Best-of-K's program and the best training program are graded for the report only. Graded
	// before the answer, their refits spent the answer's share of the time budget (a slow
	// program's refit took most of it), so they now follow the answer, which is the run's
	// product, and reuse the grades of its members.
	gradesFirst := workflow.GetVersion(ctx, "report-grades-after-answer", workflow.DefaultVersion, 1) == workflow.DefaultVersion
	graded := map[string]*activities.FinalGradeResult{}
	if gradesFirst {
		if err := r.reportGrades(ctx, chosen, &result, graded); err != nil {
			return TrainResult{}, err
		}
	}
	if r.in.FinalCandidates > 0 {
		if result.Answer, err = r.finalAnswer(ctx, append(scratch, improved...), graded, !gradesFirst); err != nil {
			return TrainResult{}, err
		}
	}
	if !gradesFirst {
		if result.Answer != nil {
			for _, m := range result.Answer.Members {
				if m.Test != nil {
					graded[m.SampleID] = m.Test
				}
			}
		}
		if err := r.reportGrades(ctx, chosen, &result, graded); err != nil {
			return TrainResult{}, err
		}
	}

	r.publish(PhaseReporting, 0)
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.local, "write report.md"), r.acts.Report, activities.ReportInput{
		Run: r.in.Run, Task: r.in.Task, Protocol: r.in.Protocol, Settings: r.settings(notes), Final: result.Final,
		Selection: chosen, EvalCount: len(scratch) + len(improved), Answer: result.Answer,
	}).Get(ctx, &result.Report); err != nil {
		return TrainResult{}, err
	}
	r.publish(PhaseDone, 0)
	return result, nil
}

// evalDeadline starts the timer that ends best-of-K at end, in budget seconds (a ready future
// if that has passed already); cancel stops it. Training has ended, so no pause moves it.
// Version 1 of eval-share-from-its-start ends it at settings.EvalDeadline, EvalShare of the
// budget after training's end; before it, best-of-K ran to TrainShare+EvalShare of the budget
// however early training ended, and its slowest program could take the answer's time.
func (r *trainRun) evalDeadline(ctx workflow.Context) (deadline workflow.Future, end float64, cancel func()) {
	elapsed := r.budgetElapsed(ctx)
	end = (settings.TrainShare + settings.EvalShare) * r.in.TimeBudget
	if workflow.GetVersion(ctx, "eval-share-from-its-start", workflow.DefaultVersion, 1) >= 1 {
		end = settings.EvalDeadline(r.in.TimeBudget, elapsed)
	}
	deadline, cancel = deadlineTimer(ctx, end-elapsed)
	return deadline, end, cancel
}

// deadlineTimer fires after left seconds of the workflow's clock, rounded up to whole seconds
// (budgets are stated in them, and a deadline fires at or after its time); a ready future
// when left has passed already. stop cancels it: a stopped timer's Get returns an error.
func deadlineTimer(ctx workflow.Context, left float64) (timer workflow.Future, stop func()) {
	if left <= 0 {
		f, set := workflow.NewFuture(ctx)
		set.Set(nil, nil)
		return f, func() {}
	}
	tctx, stop := workflow.WithCancel(ctx)
	return workflow.NewTimer(tctx, time.Duration(math.Ceil(left))*time.Second), stop
}

// evalBatch samples the programs ids from the final policy (improving improveOf's, when given),
// runs them at once and returns those whose execution completed. A deadline (nil: none) that
// fires first cancels those still running (cut counts them) and keeps the finished ones; one
// already past samples nothing.
func (r *trainRun) evalBatch(ctx workflow.Context, purpose string, ids, improveOf []string, deadline workflow.Future) (kept []activities.ExecuteResult, cut int, err error) {
	if deadline != nil && (deadline.IsReady() || len(ids) == 0) {
		return nil, 0, nil
	}
	refs, err := r.sample(ctx, fmt.Sprintf("sample %d %s programs", len(ids), purpose), activities.SampleInput{
		Iteration: r.st.Iteration, IDs: ids, Purpose: purpose, ImproveOf: improveOf, ImproveEdit: r.in.ImproveEdit})
	if err != nil {
		return nil, 0, err
	}
	if deadline != nil {
		return r.runUntil(ctx, refs, deadline)
	}
	futures := make([]workflow.Future, len(refs))
	out := make([]activities.ExecuteResult, len(refs))
	errs := make([]error, len(refs))
	for k, ref := range refs {
		f, set := workflow.NewFuture(ctx)
		futures[k] = f
		workflow.Go(ctx, func(gctx workflow.Context) {
			out[k], errs[k] = r.execute(gctx, ref.ID)
			set.Set(nil, nil)
		})
	}
	for k, f := range futures {
		f.Get(ctx, nil)
		if errs[k] != nil {
			r.logger.Warn("evaluation execution did not complete", "sample", refs[k].ID, "error", errs[k])
			continue
		}
		kept = append(kept, out[k])
	}
	return kept, 0, nil
}

// runUntil runs refs at once until they finish or deadline fires, cancels those still running
// (their sandboxes end as the staleness cap's do) and returns the finished ones in refs' order.
func (r *trainRun) runUntil(ctx workflow.Context, refs []activities.SampleRef, deadline workflow.Future) (kept []activities.ExecuteResult, cut int, err error) {
	out := make([]activities.ExecuteResult, len(refs))
	errs := make([]error, len(refs))
	finished := make([]bool, len(refs))
	cancels := make([]workflow.CancelFunc, len(refs))
	sel := workflow.NewSelector(ctx)
	for k, ref := range refs {
		cctx, cancel := workflow.WithCancel(ctx)
		cancels[k] = cancel
		f, set := workflow.NewFuture(ctx)
		workflow.Go(cctx, func(gctx workflow.Context) {
			out[k], errs[k] = r.execute(gctx, ref.ID)
			set.Set(nil, nil)
		})
		sel.AddFuture(f, func(workflow.Future) { finished[k] = true })
	}
	timeUp := false
	sel.AddFuture(deadline, func(workflow.Future) { timeUp = true })
	for left := len(refs); left > 0 && !timeUp; {
		sel.Select(ctx)
		if !timeUp {
			left--
		}
	}
	for k := range refs {
		switch {
		case !finished[k]:
			cancels[k]()
			cut++
		case errs[k] != nil:
			r.logger.Warn("evaluation execution did not complete", "sample", refs[k].ID, "error", errs[k])
		default:
			kept = append(kept, out[k])
		}
	}
	return kept, cut, nil
}

// reportGrades grades best-of-K's chosen program (result.Final) and the run's best training
// program (result.Best) on the test answers, taking a grade from graded where one was made
// and adding those it makes. The best training program is graded so that a comparison of arms
// can use the best program each found, not only what its final policy chose.
func (r *trainRun) reportGrades(ctx workflow.Context, chosen *activities.ExecuteResult, result *TrainResult, graded map[string]*activities.FinalGradeResult) error {
	grade := func(summary, sample string) (*activities.FinalGradeResult, error) {
		if g := graded[sample]; g != nil {
			return g, nil
		}
		r.publish(PhaseFinalGrading, 0)
		g, err := r.finalGrade(ctx, summary, sample)
		if err == nil {
			graded[sample] = g
		}
		return g, err
	}
	var err error
	if chosen != nil {
		if result.Final, err = grade("grade %s on the private test answers", chosen.SampleID); err != nil {
			return err
		}
	}
	if best := r.st.BestSample; best != "" {
		if result.Best, err = grade("grade the best training program %s on the private test answers", best); err != nil {
			return err
		}
	}
	return nil
}

// finalGrade re-runs a program on the full public train and grades it on the test answers.
func (r *trainRun) finalGrade(ctx workflow.Context, summary, sample string) (*activities.FinalGradeResult, error) {
	var fg activities.FinalGradeResult
	err := workflow.ExecuteActivity(summarised(ctx, r.opts.execute, summary, sample), r.acts.FinalGrade, activities.FinalGradeInput{
		Run: r.in.Run, Task: r.in.Task, SampleID: sample, Protocol: r.in.Protocol}).Get(ctx, &fg)
	if err != nil {
		return nil, err
	}
	return &fg, nil
}

// settings is the report's one line on how the run was configured.
func (r *trainRun) settings(notes []string) string {
	in := r.in
	s := fmt.Sprintf("iterations=%d (completed %d) B=%d m=%d K=%d seed=%d duration-weight=%v reward=%s reward-folds=%d", in.Iterations, r.st.Iteration,
		in.Batch, in.Oversample, in.EvalSamples, in.Seed, in.PPO.DurationWeight, cmp.Or(in.Reward, "paper"), max(in.RewardFolds, 1))
	if in.SandboxSeconds > 0 {
		s += fmt.Sprintf(" sandbox-seconds-budget=%.0f (used %.0f)", in.SandboxSeconds, r.st.SandboxSeconds)
		if r.st.LeftOutSandboxSeconds > 0 {
			s += fmt.Sprintf(" (left out %.0f: the program that crossed the budget)", r.st.LeftOutSandboxSeconds)
		}
	}
	if in.Instrumenter == settings.InstrumenterNone {
		s += " instrumentation=off"
	}
	s += fmt.Sprintf(" improve-from=%s redraw-repeats=%d reward-shaping=%s", in.ImproveFrom, in.RedrawRepeats, cmp.Or(in.PPO.RewardShaping, "none"))
	if in.ImproveEdit > 0 {
		s += fmt.Sprintf(" improve-edit=%d", in.ImproveEdit)
	}
	if in.FinalCandidates > 0 {
		s += fmt.Sprintf(" final-answer=%d candidates on %d folds", in.FinalCandidates, in.FinalFolds)
	}
	for _, n := range notes {
		s += "; " + n
	}
	return s
}
