package workflows

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/answerplan"
	"mlerl/settings"
)

// FinalAnswerInput is what the final answer needs of its run: the run's best programs, the
// answer's settings and the run's time budget.
type FinalAnswerInput struct {
	Run           string            `json:"run"`
	Task          string            `json:"task"`
	Protocol      settings.Protocol `json:"protocol"`
	LowerIsBetter bool              `json:"lower_is_better"`
	// Leaders are the run's best programs, training and evaluation alike, best first.
	Leaders        []string      `json:"leaders"`
	Candidates     int           `json:"candidates"` // settings.FinalCandidates
	Folds          int           `json:"folds"`
	Tune           int           `json:"tune"`
	TuneBudget     float64       `json:"tune_budget"`
	EnsembleRounds int           `json:"ensemble_rounds"`
	ExecTimeout    time.Duration `json:"exec_timeout"`
	// Deadline is when the run's time budget ends (zero: no budget); ProgramSeconds the
	// longest mean program time of its recent iterations, to cost a candidate whose own run
	// time is unknown (every candidate, in answers begun before answer-costs-by-program).
	Deadline       time.Time `json:"deadline,omitzero"`
	ProgramSeconds float64   `json:"program_seconds,omitempty"`
	// Graded are the run's programs already refit and graded on the test answers (best-of-K's
	// choice, the best training program): a member among them is not refit again.
	Graded []activities.FinalGradeResult `json:"graded,omitempty"`
	// RefitAtDeadline: the run grades its report-only programs after the answer, so none is
	// graded when the time budget ends before a candidate was cross-validated; the answer then
	// refits its best leaders itself (two at most) for the one to fall back on.
	RefitAtDeadline bool `json:"refit_at_deadline,omitempty"`
}

// FinalAnswerResult is the run's answer.
type FinalAnswerResult struct {
	Answer activities.FinalAnswer `json:"answer"`
}

// AnswerProgress is the answer's "answer-progress" query: where it stands.
type AnswerProgress struct {
	Detail string `json:"detail,omitempty"`
}

// AnswerProgressQuery is FinalAnswer's progress query; the run's own Progress names the
// answer's workflow (Progress.AnswerWorkflow) while it runs.
const AnswerProgressQuery = "answer-progress"

// answerWorkflowID names a run's answer after the run: one answer per run, found from it.
func answerWorkflowID(trainID string) string { return trainID + "-final-answer" }

// answerRun is one final answer: its input, the activities it runs and what it has built.
type answerRun struct {
	in       FinalAnswerInput
	opts     activityOptions
	acts     *activities.Activities // nil: only its methods' names are used
	logger   log.Logger
	progress AnswerProgress
	ans      *activities.FinalAnswer
	graded   map[string]*activities.FinalGradeResult // sample -> its test grade, so no member is refit twice
	distinct answerplan.Distinct
	// stopAtDeadline: cross-validations still running at the run's deadline are cancelled and
	// none starts past it; an answer left without a scored candidate is the best leader already
	// refit (histories recorded before this version let the first candidate's folds run on
	// past it). cut: a cross-validation was cancelled so.
	stopAtDeadline, cut bool
	// costed: the time budget is spent by each program's own cost (answerplan.PickByTime,
	// RefitReserve, waves side by side on the slots); answers begun before costed every
	// candidate at the run's slowest iteration's mean and every wave at its sandbox-seconds.
	costed bool
}

// FinalAnswer is the run's answer without the test answers: its best distinct programs
// cross-validated on the full public train, tuned, weighed by greedy ensemble selection on
// their out-of-fold predictions, refit and blended, then graded. It is a workflow of its own,
// a child of Train, so its many steps keep the run's history short and a worker restart
// resumes it where it stands; its decisions are package answerplan's. A task that cannot be
// cross-validated leaves a note, not a failed run.
func FinalAnswer(ctx workflow.Context, in FinalAnswerInput) (FinalAnswerResult, error) {
	a := &answerRun{in: in, opts: newActivityOptions(in.ExecTimeout, 0), logger: workflow.GetLogger(ctx),
		ans: &activities.FinalAnswer{Folds: in.Folds}, graded: map[string]*activities.FinalGradeResult{}}
	for _, g := range in.Graded {
		a.graded[g.SampleID] = &g
	}
	// A budget is the time a user reads as "the run ends here", and a slow task's folds on the
	// full train can take longer than the whole answer's share of it.
	if !in.Deadline.IsZero() {
		a.stopAtDeadline = workflow.GetVersion(ctx, "answer-stops-at-deadline", workflow.DefaultVersion, 1) >= 1
		a.costed = workflow.GetVersion(ctx, "answer-costs-by-program", workflow.DefaultVersion, 1) >= 1
	}
	if err := workflow.SetQueryHandler(ctx, AnswerProgressQuery, func() (AnswerProgress, error) { return a.progress, nil }); err != nil {
		return FinalAnswerResult{}, err
	}
	err := a.run(ctx)
	return FinalAnswerResult{Answer: *a.ans}, err
}

// run is the design: cross-validate candidates -> tune -> select the ensemble and refit its
// members -> measure the answer without the tuning -> blend and grade.
func (a *answerRun) run(ctx workflow.Context) error {
	ans := a.ans
	scored, err := a.crossValidateCandidates(ctx)
	if err != nil || ans.Note != "" {
		return err
	}
	if len(scored) == 0 {
		if a.pastDeadline(ctx) {
			return a.answerAtDeadline(ctx)
		}
		ans.Note = "no candidate made valid out-of-fold predictions"
		return nil
	}
	answerplan.SortBest(scored, a.in.LowerIsBetter)
	if a.in.Tune > 0 {
		scored = a.tune(ctx, scored)
		answerplan.SortBest(scored, a.in.LowerIsBetter)
	}
	// The members' refits still run past the deadline: at most one program run each, side by
	// side, where dropping the cross-validated candidates would lose the answer's point.
	ok, err := a.chooseEnsemble(ctx, scored)
	if err != nil || !ok {
		return err
	}
	// A run that tuned also chooses an answer without the tuned variants: the tuning's own
	// effect, measured in one run (two runs' training diverges through the duration-aware
	// update, so comparing runs with and without tuning mixes the two). Its refits are extra
	// program runs, so not past the deadline.
	if a.in.Tune > 0 && !a.pastDeadline(ctx) {
		if err := a.untunedAnswer(ctx, scored); err != nil {
			return err
		}
	}
	return a.blend(ctx)
}

// pastDeadline: the run's time budget is spent and this answer keeps to it.
func (a *answerRun) pastDeadline(ctx workflow.Context) bool {
	return a.stopAtDeadline && (a.cut || a.timeLeft(ctx) <= 0)
}

// answerAtDeadline is the answer when the time budget ended before a candidate was
// cross-validated: the best leader by validation whose refit on the full public train is
// graded (best-of-K's choice, usually), blended alone so that the answer's submission and
// record are where every answer's are.
func (a *answerRun) answerAtDeadline(ctx workflow.Context) error {
	ans := a.ans
	id := answerplan.BestRefitLeader(a.in.Leaders, a.graded)
	if id == "" && a.in.RefitAtDeadline {
		for _, l := range a.in.Leaders[:min(2, len(a.in.Leaders))] {
			seconds, err := a.refitMembers(ctx, []activities.AnswerMember{{SampleID: l}}, "leader")
			ans.SandboxSeconds += seconds
			if err != nil {
				return err
			}
			if g := a.graded[l]; g != nil && g.Report.ValidSubmission {
				id = l
				break
			}
		}
	}
	if id == "" {
		ans.Note = "the run's time budget ended before a candidate was cross-validated, and no leader had a valid refit to fall back on"
		return nil
	}
	ans.Note = fmt.Sprintf("the run's time budget ended before a candidate was cross-validated: the answer is %s, the best program by validation with a valid refit on the full public train", id)
	ans.Members = []activities.AnswerMember{{SampleID: id, Weight: 1, Test: a.graded[id]}}
	a.progress.Detail = "time budget spent: the answer is " + id
	return a.blend(ctx)
}

// blend blends the answer's members' test submissions and grades the blend.
func (a *answerRun) blend(ctx workflow.Context) error {
	ans := a.ans
	var test activities.FinalGradeResult
	if err := workflow.ExecuteActivity(summarised(ctx, a.opts.host, "blend %d members and grade the answer on the private test answers", len(ans.Members)), a.acts.BlendAnswer,
		activities.BlendInput{Run: a.in.Run, Task: a.in.Task, Protocol: a.in.Protocol, Answer: *ans}).Get(ctx, &test); err != nil {
		return err
	}
	ans.Test = &test
	return nil
}

// timeLeft is the run's wall-clock budget left, +Inf without one.
func (a *answerRun) timeLeft(ctx workflow.Context) float64 {
	if a.in.Deadline.IsZero() {
		return math.Inf(1)
	}
	return a.in.Deadline.Sub(workflow.Now(ctx)).Seconds()
}

// crossValidateCandidates picks the distinct candidates from the leaders and cross-validates
// them in order, a batch at a time, until Candidates programs (or as many as the time left
// holds) are kept or the leaders run out, adding every result to the answer's candidates and
// its sandbox time to the answer's. It returns the kept programs that have a score; a task
// that cannot be cross-validated sets the answer's Note instead.
//
// Programs that differ only where the model does not (a hold-out check before a refit on
// everything) make the same predictions: a candidate whose out-of-fold predictions equal a
// better one's is left out and the next distinct program cross-validated in its place, up to
// DistinctTries times the candidates in all; CandidatePrograms is asked for no more, so it
// guards and stores no program that is never cross-validated. Candidates are cross-validated
// guarded (codeactions.Library.Guarded): on RMSLE tasks a program that never predicts below 0
// makes the same predictions clipped at 0, and one that does is valid instead of lost.
func (a *answerRun) crossValidateCandidates(ctx workflow.Context) ([]activities.CrossValidateResult, error) {
	in, ans := a.in, a.ans
	ask := answerplan.DistinctTries * in.Candidates
	var cands activities.CandidatesResult
	if err := workflow.ExecuteActivity(summarised(ctx, a.opts.local, "pick %d distinct candidates", in.Candidates), a.acts.CandidatePrograms,
		activities.CandidatesInput{Run: in.Run, IDs: in.Leaders, Max: ask, Guard: true, Task: in.Task}).Get(ctx, &cands); err != nil {
		return nil, err
	}
	ans.Duplicates = cands.Duplicates
	ids := cands.IDs[:min(len(cands.IDs), ask)]
	a.distinct = answerplan.Distinct{}
	next := a.candidateBatches(ctx, ids, cands.Seconds)
	var scored []activities.CrossValidateResult
	kept, tried := 0, 0
	for !a.pastDeadline(ctx) {
		batch := next(kept)
		if len(batch) == 0 {
			break
		}
		// Said before the batch runs, so the counts are "so far": the poller may see no later line.
		a.progress.Detail = fmt.Sprintf("cross-validating %s on %d folds (%d tried so far, %d of %d kept)", answerplan.Plural(len(batch), "candidate"), in.Folds, tried, kept, in.Candidates)
		tried += len(batch)
		results, badInput := a.crossValidate(ctx, batch)
		if badInput != "" {
			ans.Note = "no cross-validation: " + badInput
			break
		}
		for _, cv := range results {
			ans.SandboxSeconds += cv.DurationS
			repeat := a.distinct.LeftOutAsRepeat(&cv)
			ans.Candidates = append(ans.Candidates, cv)
			if repeat {
				continue
			}
			kept++
			if cv.Score != nil {
				scored = append(scored, cv)
			}
		}
	}
	// The leaders are guarded as far as they are picked; the answer lists those it ran.
	for _, g := range cands.Guarded {
		if slices.ContainsFunc(ans.Candidates, func(c activities.CrossValidateResult) bool { return c.SampleID == g.To }) {
			ans.Guarded = append(ans.Guarded, g)
		}
	}
	if ans.Note != "" {
		return nil, nil
	}
	return scored, nil
}

// candidateBatches returns the answer's next batch of candidates to cross-validate at once,
// given how many are kept so far; none when the candidates are done. A costed answer takes, in
// order, those whose folds end within the candidates' share of the time left at its start
// (answerplan.PickByTime), passing over the slow ones (the answer's PassedOver) and always
// trying the best one; an older answer took as many as CandidatesThatFit held, in order.
func (a *answerRun) candidateBatches(ctx workflow.Context, ids []string, seconds []float64) func(kept int) []string {
	in, ans := a.in, a.ans
	if !a.costed {
		want := answerplan.CandidatesThatFit(in.Candidates, in.Folds, in.ProgramSeconds, a.timeLeft(ctx))
		if want < in.Candidates {
			a.logger.Info("the run's time budget leaves room for fewer candidates", "candidates", want, "asked", in.Candidates)
		}
		tried := 0
		return func(kept int) []string {
			if kept >= want || tried >= len(ids) {
				return nil
			}
			batch := ids[tried:min(tried+want-kept, len(ids))]
			tried += len(batch)
			return batch
		}
	}
	end := answerplan.CandidateShare * a.timeLeft(ctx) // seconds from now
	start := workflow.Now(ctx)
	secs := make([]float64, len(ids)) // an activity worker older than Seconds leaves them unknown
	copy(secs, seconds)
	return func(kept int) []string {
		if kept >= in.Candidates || len(ids) == 0 {
			return nil
		}
		take, passed := answerplan.PickByTime(secs, in.ProgramSeconds, in.Folds, in.Candidates-kept, end-workflow.Now(ctx).Sub(start).Seconds())
		if len(take) == 0 && kept == 0 {
			take, passed = []int{0}, nil // the best leader, even if its folds may be cut at the deadline
		}
		var batch []string
		for _, i := range take {
			batch = append(batch, ids[i])
		}
		for _, i := range passed {
			ans.PassedOver = append(ans.PassedOver, ids[i])
		}
		drop := slices.Concat(take, passed)
		var restIDs []string
		var restSecs []float64
		for i := range ids {
			if !slices.Contains(drop, i) {
				restIDs, restSecs = append(restIDs, ids[i]), append(restSecs, secs[i])
			}
		}
		ids, secs = restIDs, restSecs
		if len(batch) == 0 {
			a.logger.Info("no further candidate's folds fit the candidates' share of the time budget", "kept", kept, "passed_over", len(ans.PassedOver))
		}
		return batch
	}
}

// crossValidate cross-validates ids at once, each candidate's folds one after another in one
// activity, and returns their results in order; a cross-validation that did not complete is a
// result without a score. A task that cannot be cross-validated stops it: badInput says why.
// An answer that keeps to the deadline cancels those still running at it (a.cut).
func (a *answerRun) crossValidate(ctx workflow.Context, ids []string) (results []activities.CrossValidateResult, badInput string) {
	in := a.in
	cvOpts := a.opts.execute
	cvOpts.StartToCloseTimeout = time.Duration(in.Folds) * in.ExecTimeout
	actx := ctx
	if a.stopAtDeadline {
		var cancel workflow.CancelFunc
		actx, cancel = workflow.WithCancel(ctx)
		defer cancel()
		deadline, stopTimer := deadlineTimer(ctx, a.timeLeft(ctx))
		defer stopTimer() // runs first: a timer stopped, not fired, cuts nothing
		workflow.Go(ctx, func(ctx workflow.Context) {
			if deadline.Get(ctx, nil) == nil { // fired, not stopped
				a.cut = true
				cancel()
			}
		})
	}
	futures := make([]workflow.Future, len(ids))
	for i, id := range ids {
		futures[i] = workflow.ExecuteActivity(summarised(actx, cvOpts, "%d-fold cross-validation of %s", in.Folds, id), a.acts.CrossValidate,
			activities.CrossValidateInput{Run: in.Run, Task: in.Task, SampleID: id, Folds: in.Folds})
	}
	for i, f := range futures {
		var cv activities.CrossValidateResult
		if err := f.Get(ctx, &cv); a.cut && temporal.IsCanceledError(err) {
			cv = activities.CrossValidateResult{SampleID: ids[i], Reason: "cut at the run's time budget"}
		} else if err != nil {
			var app *temporal.ApplicationError
			if errors.As(err, &app) && app.Type() == activities.ErrBadInput {
				return nil, app.Message()
			}
			a.logger.Warn("cross-validation did not complete", "sample", ids[i], "error", err)
			cv = activities.CrossValidateResult{SampleID: ids[i], Reason: "cross-validation did not complete: " + err.Error()}
		}
		results = append(results, cv)
	}
	return results, ""
}

// tune tunes the best Tune scored candidates (best first) that are different programs apart
// from their library's tunable slots, by rounds of coordinate descent over the slots (on
// tabular classification the model family first, then the family's settings): a sampled
// program is rarely at its best settings, and tuning the best programs' settings is what an
// engineer does next. Each slot is a pass (answerplan.Pass); the next slot varies what the
// pass kept; answerplan.Descent decides which slot comes next and when the candidate's tuning
// stops, which the answer records. Every scored variant whose predictions are new joins the
// candidates the ensemble chooses from. A step that fails ends that candidate's tuning with a
// warning: tuning only adds candidates.
//
// The budgets: the run's time budget, less what the ensemble's refits will need when the
// answer is costed (answerplan.RefitReserve); and TuneBudget times the sandbox time the
// candidates' own cross-validation took, so that one slow candidate (a stacking whose folds
// take minutes) cannot cost several times all the candidates; 0 (the default) leaves the
// tuning to the time budget and the noise rule.
func (a *answerRun) tune(ctx workflow.Context, scored []activities.CrossValidateResult) []activities.CrossValidateResult {
	in, ans := a.in, a.ans
	budget, spent := in.TuneBudget*ans.SandboxSeconds, 0.0
	if in.TuneBudget == 0 {
		budget = math.Inf(1)
	}
	slots := 1 // a wave's sandbox-seconds bound its wall time
	if a.costed {
		slots = answerplan.Slots
	}
	timeLeft := func() float64 {
		if a.costed {
			return a.timeLeft(ctx) - answerplan.RefitReserve(scored, in.Folds)
		}
		return a.timeLeft(ctx)
	}
	bases := map[string]bool{}
	tuned := 0
	for _, cand := range slices.Clone(scored) {
		if tuned >= in.Tune {
			break
		}
		var kind activities.TuneResult
		if err := workflow.ExecuteActivity(summarised(ctx, a.opts.local, "what %s is apart from its tunable slots", cand.SampleID), a.acts.TuneVariants,
			activities.TuneInput{Run: in.Run, Task: in.Task, Of: cand.SampleID, Slot: -1}).Get(ctx, &kind); err != nil {
			a.logger.Warn("tuning skipped a candidate", "sample", cand.SampleID, "error", err)
			continue
		}
		if kind.Note != "" || kind.Slots == 0 || bases[kind.Base] {
			continue
		}
		bases[kind.Base] = true
		tuned++
		d := answerplan.NewDescent(cand, kind.Slots, in.LowerIsBetter)
		for slot, ok := d.Next(); ok; slot, ok = d.Next() {
			cur := d.Program()
			var vs activities.TuneResult
			if err := workflow.ExecuteActivity(summarised(ctx, a.opts.local, "variants of %s along tunable slot %d", cur.SampleID, slot), a.acts.TuneVariants,
				activities.TuneInput{Run: in.Run, Task: in.Task, Of: cur.SampleID, Slot: slot}).Get(ctx, &vs); err != nil {
				a.logger.Warn("tuning stopped for a candidate", "sample", cur.SampleID, "slot", slot, "error", err)
				d.End(fmt.Sprintf("the variants along slot %d failed: %v", slot, err))
				break
			}
			pass := answerplan.NewPass(cur, vs.Slot, vs.IDs, vs.Options, in.LowerIsBetter)
			badInput := ""
			for ids := pass.NextWave(spent, budget, timeLeft(), slots); len(ids) > 0; ids = pass.NextWave(spent, budget, timeLeft(), slots) {
				done, all := pass.Progress()
				a.progress.Detail = fmt.Sprintf("tuning candidate %d of %d (%s), round %d, slot %s: cross-validating %s (%d of %d done so far)",
					tuned, in.Tune, cand.SampleID, d.Round(), vs.Slot, answerplan.Plural(len(ids), "variant"), done, all)
				var results []activities.CrossValidateResult
				if results, badInput = a.crossValidate(ctx, ids); badInput != "" {
					break
				}
				for _, cv := range pass.Record(results) {
					ans.SandboxSeconds += cv.DurationS
					spent += cv.DurationS
					repeat := a.distinct.LeftOutAsRepeat(&cv)
					ans.Candidates = append(ans.Candidates, cv)
					if !repeat && cv.Score != nil {
						scored = append(scored, cv)
					}
				}
			}
			if badInput != "" {
				a.logger.Warn("tuning stopped for a candidate", "sample", cur.SampleID, "slot", slot, "error", badInput)
				if pass.Step().Tried > 0 {
					ans.Tuning = append(ans.Tuning, d.Passed(slot, pass))
				}
				d.End(fmt.Sprintf("slot %s: %s", vs.Slot, badInput))
				break
			}
			ans.Tuning = append(ans.Tuning, d.Passed(slot, pass))
		}
		why := d.Stopped()
		ans.TuneStops = append(ans.TuneStops, activities.TuneStop{From: cand.SampleID, Kept: d.Program().SampleID, Why: why})
		a.progress.Detail = fmt.Sprintf("tuning candidate %d of %d (%s) stopped: %s", tuned, in.Tune, cand.SampleID, why)
		a.logger.Info("tuning stopped for a candidate", "sample", cand.SampleID, "kept", d.Program().SampleID, "why", why)
	}
	return scored
}

// chooseEnsemble weighs the scored candidates (best first) by greedy ensemble selection and
// refits the members; a member whose refit on the full train wrote nothing (a crash the folds
// did not meet) would leave the blend without its share, so the ensemble is chosen again
// without it. false: every member's refit failed, and the answer's Note says so.
func (a *answerRun) chooseEnsemble(ctx workflow.Context, scored []activities.CrossValidateResult) (bool, error) {
	ans := a.ans
	ids := make([]string, len(scored))
	for i, cv := range scored {
		ids[i] = cv.SampleID
	}
	for {
		a.progress.Detail = fmt.Sprintf("choosing the ensemble from %s and refitting its members", answerplan.Plural(len(ids), "candidate"))
		if err := a.selectAndRefit(ctx, ids); err != nil {
			return false, err
		}
		failed := answerplan.FailedRefits(ans.Members)
		if len(failed) == 0 {
			return true, nil
		}
		for _, id := range failed {
			ans.RefitFailed = append(ans.RefitFailed, *a.graded[id])
			ids = slices.DeleteFunc(ids, func(s string) bool { return s == id })
		}
		if len(ids) == 0 {
			ans.Members, ans.CVScore, ans.BlendCVScore, ans.Calibration = nil, nil, nil, nil
			ans.Note = "every member's refit on the full public train failed"
			return false, nil
		}
	}
}

// selectAndRefit weighs the candidates ids by greedy ensemble selection and refits each
// member not graded before on the full public train (leak-free), grading it alone on the test.
func (a *answerRun) selectAndRefit(ctx workflow.Context, ids []string) error {
	ans := a.ans
	ens, err := a.selectEnsemble(ctx, "greedy ensemble selection over %d programs", ids)
	if err != nil {
		return err
	}
	ans.Members, ans.CVScore = ens.Members, &ens.CVScore
	ans.BlendCVScore, ans.Calibration = nil, nil
	if !ens.Calibration.IsIdentity() {
		ans.BlendCVScore, ans.Calibration = &ens.BlendCVScore, &ens.Calibration
	}
	ans.BlendLog1p = ens.BlendLog1p
	seconds, err := a.refitMembers(ctx, ans.Members, "ensemble member")
	ans.SandboxSeconds += seconds
	return err
}

// selectEnsemble runs greedy ensemble selection over ids; summary names them, with %d for
// their number.
func (a *answerRun) selectEnsemble(ctx workflow.Context, summary string, ids []string) (activities.EnsembleResult, error) {
	var ens activities.EnsembleResult
	err := workflow.ExecuteActivity(summarised(ctx, a.opts.host, summary, len(ids)), a.acts.SelectEnsemble,
		activities.EnsembleInput{Run: a.in.Run, Task: a.in.Task, Folds: a.in.Folds, SampleIDs: ids, Rounds: a.in.EnsembleRounds}).Get(ctx, &ens)
	return ens, err
}

// untunedAnswer sets the answer's Untuned to what greedy selection, refits and blend make from
// scored (best first) without its tuned variants and without members whose refit failed. A
// run whose tuning kept no variant has nothing to measure. The refits it adds are its own
// sandbox time, not the answer's.
func (a *answerRun) untunedAnswer(ctx workflow.Context, scored []activities.CrossValidateResult) error {
	ans := a.ans
	ids, tuned := answerplan.Untuned(scored, ans.RefitFailed)
	if !tuned {
		return nil
	}
	u := &activities.UntunedAnswer{}
	ans.Untuned = u
	if len(ids) == 0 {
		u.Note = "no untuned candidate made valid out-of-fold predictions and a refit"
		return nil
	}
	ens, err := a.selectEnsemble(ctx, "greedy ensemble selection over the %d untuned programs", ids)
	if err != nil {
		return err
	}
	u.Members, u.CVScore = ens.Members, &ens.CVScore
	if !ens.Calibration.IsIdentity() {
		u.BlendCVScore, u.Calibration = &ens.BlendCVScore, &ens.Calibration
	}
	u.BlendLog1p = ens.BlendLog1p
	u.SameAsAnswer = slices.EqualFunc(u.Members, ans.Members, func(x, y activities.AnswerMember) bool {
		return x.SampleID == y.SampleID && x.Weight == y.Weight
	})
	seconds, err := a.refitMembers(ctx, u.Members, "untuned member")
	if err != nil {
		return err
	}
	u.SandboxSeconds = seconds
	if failed := answerplan.FailedRefits(u.Members); len(failed) > 0 {
		u.Note = fmt.Sprintf("member %s's refit on the full public train wrote no submission", failed[0])
		return nil
	}
	var test activities.FinalGradeResult
	if err := workflow.ExecuteActivity(summarised(ctx, a.opts.host, "blend the %d untuned members and grade them on the private test answers", len(u.Members)), a.acts.BlendAnswer,
		activities.BlendInput{Run: a.in.Run, Task: a.in.Task, Protocol: a.in.Protocol, Answer: *ans, Untuned: true}).Get(ctx, &test); err != nil {
		return err
	}
	u.Test = &test
	return nil
}

// refitMembers refits each member not graded before on the full public train (leak-free) and
// grades it alone on the test answers, at once; it sets every member's Test, remembers the new
// grades and returns their sandbox time. what names the members in summaries.
func (a *answerRun) refitMembers(ctx workflow.Context, members []activities.AnswerMember, what string) (float64, error) {
	futures := make([]workflow.Future, len(members))
	for i, m := range members {
		if a.graded[m.SampleID] == nil {
			futures[i] = workflow.ExecuteActivity(summarised(ctx, a.opts.execute, "refit %s %s and grade it on the private test answers", what, m.SampleID), a.acts.FinalGrade,
				activities.FinalGradeInput{Run: a.in.Run, Task: a.in.Task, SampleID: m.SampleID, Protocol: a.in.Protocol})
		}
	}
	seconds := 0.0
	for i := range members {
		m := &members[i]
		if futures[i] != nil {
			var fg activities.FinalGradeResult
			if err := futures[i].Get(ctx, &fg); err != nil {
				return seconds, fmt.Errorf("refitting %s %s: %w", what, m.SampleID, err)
			}
			a.graded[m.SampleID] = &fg
			seconds += fg.DurationS
		}
		m.Test = a.graded[m.SampleID]
	}
	return seconds, nil
}
