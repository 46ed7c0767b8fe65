package workflows

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/answerplan"
)

// finalAnswerInline is the answer as runs recorded before version 1 of final-answer-child
// built it, in Train's own history (see FinalAnswer for what it does); ids are the leaders.
func (r *trainRun) finalAnswerInline(ctx workflow.Context, ids []string, graded map[string]*activities.FinalGradeResult) (*activities.FinalAnswer, error) {
	in := r.in
	ans := &activities.FinalAnswer{Folds: in.FinalFolds}
	// Programs that differ only where the model does not (a hold-out check before a refit on
	// everything) make the same predictions: a candidate whose out-of-fold predictions equal a
	// better one's is left out and the next distinct program cross-validated in its place, up
	// to DistinctTries times the candidates in all; CandidatePrograms is asked for no more, so
	// it guards and stores no program that is never cross-validated. Candidates are
	// cross-validated guarded (codeactions.Library.Guarded): on RMSLE tasks a program that
	// never predicts below 0 makes the same predictions clipped at 0, and one that does is
	// valid instead of lost.
	ask := answerplan.DistinctTries * in.FinalCandidates
	var cands activities.CandidatesResult
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.local, "pick %d distinct candidates", in.FinalCandidates), r.acts.CandidatePrograms,
		activities.CandidatesInput{Run: in.Run, IDs: ids, Max: ask, Guard: true, Task: in.Task}).Get(ctx, &cands); err != nil {
		return nil, err
	}
	ans.Duplicates = cands.Duplicates
	limit := min(len(cands.IDs), ask)
	scored := r.crossValidateCandidates(ctx, ans, cands.IDs[:limit])
	// The board's programs are guarded as far as they are picked; the answer lists those it ran.
	for _, g := range cands.Guarded {
		if slices.ContainsFunc(ans.Candidates, func(c activities.CrossValidateResult) bool { return c.SampleID == g.To }) {
			ans.Guarded = append(ans.Guarded, g)
		}
	}
	if ans.Note != "" {
		return ans, nil
	}
	if len(scored) == 0 {
		ans.Note = "no candidate made valid out-of-fold predictions"
		return ans, nil
	}
	sort.SliceStable(scored, func(i, j int) bool { return better(r.st.Task.LowerIsBetter, *scored[i].Score, scored[j].Score) })
	if in.FinalTune > 0 {
		scored = r.tuneCandidates(ctx, ans, scored)
	}
	// Best cross-validation score first: greedy selection's ties go to the earlier candidate.
	sort.SliceStable(scored, func(i, j int) bool { return better(r.st.Task.LowerIsBetter, *scored[i].Score, scored[j].Score) })
	scoredIDs := make([]string, len(scored))
	for i, cv := range scored {
		scoredIDs[i] = cv.SampleID
	}
	for {
		r.ctl.progress.Detail = fmt.Sprintf("choosing the ensemble from %d candidates and refitting its members", len(scoredIDs))
		if err := r.selectAndRefit(ctx, ans, scoredIDs, graded); err != nil {
			return nil, err
		}
		// A member whose refit on the full train wrote nothing (a crash the folds did not meet)
		// would leave the blend without its share: choose again without it. Whether a program
		// wrote a submission needs no test answers.
		var failed []string
		for _, m := range ans.Members {
			if !m.Test.Report.SubmissionExist {
				failed = append(failed, m.SampleID)
			}
		}
		if len(failed) == 0 {
			break
		}
		for _, id := range failed {
			ans.RefitFailed = append(ans.RefitFailed, *graded[id])
			scoredIDs = slices.DeleteFunc(scoredIDs, func(s string) bool { return s == id })
		}
		if len(scoredIDs) == 0 {
			ans.Members, ans.CVScore, ans.BlendCVScore, ans.Calibration = nil, nil, nil, nil
			ans.Note = "every member's refit on the full public train failed"
			return ans, nil
		}
	}
	// A run that tuned also chooses an answer without the tuned variants: the tuning's own
	// effect, measured in one run (two runs' training diverges through the duration-aware
	// update, so comparing runs with and without tuning mixes the two).
	if in.FinalTune > 0 {
		if err := r.untunedAnswer(ctx, ans, scored, graded); err != nil {
			return nil, err
		}
	}
	var test activities.FinalGradeResult
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.host, "blend %d members and grade the answer on the private test answers", len(ans.Members)), r.acts.BlendAnswer,
		activities.BlendInput{Run: in.Run, Task: in.Task, Protocol: in.Protocol, Answer: *ans}).Get(ctx, &test); err != nil {
		return nil, err
	}
	ans.Test = &test
	return ans, nil
}

// crossValidateCandidates cross-validates ids in order, a batch at a time, until
// FinalCandidates programs are kept or ids run out, adding every result to ans.Candidates and
// its sandbox time to ans's. A program whose out-of-fold predictions repeat an earlier one's is
// recorded but not kept. It returns the kept programs that have a score; a
// task that cannot be cross-validated sets ans.Note instead.
func (r *trainRun) crossValidateCandidates(ctx workflow.Context, ans *activities.FinalAnswer, ids []string) []activities.CrossValidateResult {
	in := r.in
	var scored []activities.CrossValidateResult
	samePredictions := map[string]string{} // out-of-fold predictions' digest -> the first program making them
	kept, tried := 0, 0
	want := r.candidatesThatFit(ctx)
	if want < in.FinalCandidates {
		r.logger.Info("the run's time budget leaves room for fewer candidates", "candidates", want, "asked", in.FinalCandidates)
	}
	for kept < want && tried < len(ids) {
		batch := ids[tried:min(tried+want-kept, len(ids))]
		r.ctl.progress.Detail = fmt.Sprintf("cross-validating candidates on %d folds: %d of %d kept, %d tried", in.FinalFolds, kept, want, tried)
		tried += len(batch)
		results, badInput := r.crossValidate(ctx, batch)
		if badInput != "" {
			ans.Note = "no cross-validation: " + badInput
			return nil
		}
		for _, cv := range results {
			ans.SandboxSeconds += cv.DurationS
			repeat := leftOutAsRepeat(samePredictions, &cv)
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
	return scored
}

// candidatesThatFit is how many candidates the answer cross-validates: FinalCandidates, or
// under a time budget as many as its time left holds, at least one, each costed at its folds
// run one after another at the longest mean program time of the run's recent iterations (an
// estimate: a fold of the full train is larger than a validation fold, and folds run side by
// side on the worker's slots).
func (r *trainRun) candidatesThatFit(ctx workflow.Context) int {
	n := r.in.FinalCandidates
	left := r.timeLeft(ctx)
	if math.IsInf(left, 1) {
		return n
	}
	program := 0.0
	for _, it := range r.st.Recent {
		program = max(program, it.MeanDuration)
	}
	each := float64(r.in.FinalFolds) * program
	if each <= 0 {
		return n
	}
	return max(1, min(n, int(left/each)))
}

// leftOutAsRepeat marks cv left out when its out-of-fold predictions repeat those of the
// program first holds for their digest, and otherwise records cv as the first to make them.
func leftOutAsRepeat(first map[string]string, cv *activities.CrossValidateResult) bool {
	if cv.Score == nil || cv.PredictionsSHA256 == "" {
		return false
	}
	if f, ok := first[cv.PredictionsSHA256]; ok {
		cv.SameAs, cv.Reason = f, fmt.Sprintf("the same out-of-fold predictions as `%s`: left out", f)
		return true
	}
	first[cv.PredictionsSHA256] = cv.SampleID
	return false
}

// crossValidate cross-validates ids at once, each candidate's folds one after another in one
// activity, and returns their results in order; a cross-validation that did not complete is a
// result without a score. A task that cannot be cross-validated stops it: badInput says why.
func (r *trainRun) crossValidate(ctx workflow.Context, ids []string) (results []activities.CrossValidateResult, badInput string) {
	in := r.in
	cvOpts := r.opts.execute
	cvOpts.StartToCloseTimeout = time.Duration(in.FinalFolds) * in.ExecTimeout
	futures := make([]workflow.Future, len(ids))
	for i, id := range ids {
		futures[i] = workflow.ExecuteActivity(summarised(ctx, cvOpts, "%d-fold cross-validation of %s", in.FinalFolds, id), r.acts.CrossValidate,
			activities.CrossValidateInput{Run: in.Run, Task: in.Task, SampleID: id, Folds: in.FinalFolds})
	}
	for i, f := range futures {
		var cv activities.CrossValidateResult
		if err := f.Get(ctx, &cv); err != nil {
			var app *temporal.ApplicationError
			if errors.As(err, &app) && app.Type() == activities.ErrBadInput {
				return nil, app.Message()
			}
			r.logger.Warn("cross-validation did not complete", "sample", ids[i], "error", err)
			cv = activities.CrossValidateResult{SampleID: ids[i], Reason: "cross-validation did not complete: " + err.Error()}
		}
		results = append(results, cv)
	}
	return results, ""
}

// tuneCandidates tunes the best in.FinalTune scored candidates (best first) that are different
// programs apart from their library's tunable slots: slot by slot (on tabular classification
// the model family first, then the family's settings), every variant of the current program
// along the slot is cross-validated and the best kept when it beats the current one.
// A sampled program is rarely at its best settings, and tuning the best programs' settings is
// what an engineer does next. Every scored variant whose predictions are new joins the
// candidates the ensemble chooses from. The variants may cost FinalTuneBudget times the
// sandbox time the candidates did; a step that fails ends that candidate's tuning with a
// warning: tuning only adds candidates.
func (r *trainRun) tuneCandidates(ctx workflow.Context, ans *activities.FinalAnswer, scored []activities.CrossValidateResult) []activities.CrossValidateResult {
	in := r.in
	same := map[string]string{}
	for _, c := range ans.Candidates {
		if c.Score != nil && c.SameAs == "" && c.PredictionsSHA256 != "" {
			same[c.PredictionsSHA256] = c.SampleID
		}
	}
	// The budget: FinalTuneBudget times the sandbox time the candidates' own cross-validation
	// took, so one slow candidate (a stacking whose folds take minutes) cannot cost several
	// times all the candidates. A pass runs in waves, cheapest options first, and stops when
	// the next wave's cost extrapolated from the costs seen does not fit: variants' costs grow
	// with their strength, which the program's own cost times their count misses.
	budget, spent := in.FinalTuneBudget*ans.SandboxSeconds, 0.0
	bases := map[string]bool{}
	tuned := 0
	for _, cand := range slices.Clone(scored) {
		if tuned >= in.FinalTune {
			break
		}
		var kind activities.TuneResult
		if err := workflow.ExecuteActivity(summarised(ctx, r.opts.local, "what %s is apart from its tunable slots", cand.SampleID), r.acts.TuneVariants,
			activities.TuneInput{Run: in.Run, Task: in.Task, Of: cand.SampleID, Slot: -1}).Get(ctx, &kind); err != nil {
			// Tuning only adds candidates: the answer goes on without it.
			r.logger.Warn("tuning skipped a candidate", "sample", cand.SampleID, "error", err)
			continue
		}
		if kind.Note != "" || kind.Slots == 0 || bases[kind.Base] {
			continue
		}
		bases[kind.Base] = true
		tuned++
		cur := cand
		for slot := 0; slot < kind.Slots; slot++ {
			var vs activities.TuneResult
			if err := workflow.ExecuteActivity(summarised(ctx, r.opts.local, "variants of %s along tunable slot %d", cur.SampleID, slot), r.acts.TuneVariants,
				activities.TuneInput{Run: in.Run, Task: in.Task, Of: cur.SampleID, Slot: slot}).Get(ctx, &vs); err != nil {
				r.logger.Warn("tuning stopped for a candidate", "sample", cur.SampleID, "slot", slot, "error", err)
				break
			}
			step := activities.TuneStep{From: cur.SampleID, Slot: vs.Slot, Kept: cur.SampleID, Score: cur.Score}
			next := cur
			var seen []float64 // the pass's variants' costs, in the order run
			stopped := false
			for start := 0; start < len(vs.IDs); {
				wave := min(len(vs.IDs)-start, tuneWave)
				cost := nextCosts(cur.DurationS, seen, wave)
				if spent+cost > budget {
					left := len(vs.IDs) - start
					if left > wave {
						cost = nextCosts(cur.DurationS, seen, left)
					}
					step.Skipped = fmt.Sprintf("%d variants would take about %.0f sandbox-seconds, and the tuning had spent %.0f of its %.0f", left, cost, spent, budget)
					break
				}
				// The wave's sandbox-seconds bound its wall time (its programs run at once or
				// one after another), so a wave that fits never ends past the run's budget.
				if left := r.timeLeft(ctx); cost > left {
					step.Skipped = fmt.Sprintf("%d variants would take up to %.0f s, and the run's time budget has %.0f s left", len(vs.IDs)-start, cost, max(left, 0))
					break
				}
				r.ctl.progress.Detail = fmt.Sprintf("tuning candidate %d of %d (%s), slot %s: %d of %d variants cross-validated",
					tuned, in.FinalTune, cand.SampleID, vs.Slot, start, len(vs.IDs))
				ids := vs.IDs[start : start+wave]
				results, badInput := r.crossValidate(ctx, ids)
				if badInput != "" {
					r.logger.Warn("tuning stopped for a candidate", "sample", cur.SampleID, "slot", slot, "error", badInput)
					stopped = true
					break
				}
				for i, cv := range results {
					cv.TunedFrom, cv.Tuned = cur.SampleID, vs.Slot+"="+vs.Options[start+i]
					ans.SandboxSeconds += cv.DurationS
					spent += cv.DurationS
					seen = append(seen, cv.DurationS)
					// A variant that is another candidate's program may still be the one to tune on.
					if cv.Score != nil && better(r.st.Task.LowerIsBetter, *cv.Score, step.Score) {
						step.Kept, step.Score, next = cv.SampleID, cv.Score, cv
					}
					repeat := leftOutAsRepeat(same, &cv)
					ans.Candidates = append(ans.Candidates, cv)
					if !repeat && cv.Score != nil {
						scored = append(scored, cv)
					}
				}
				step.Tried += wave
				start += wave
			}
			if stopped {
				if step.Tried > 0 {
					ans.Tuning = append(ans.Tuning, step)
				}
				break
			}
			ans.Tuning = append(ans.Tuning, step)
			cur = next
		}
	}
	return scored
}

// tuneWave is how many of a pass's variants are cross-validated at once: the default worker
// runs two sandboxes, and each wave's costs refine the estimate for the next.
const tuneWave = 2

// nextCosts estimates what the next n variants of a tuning pass cost, given the program's own
// cost and the costs of the pass's variants run so far, cheapest options first. Costs grow
// with the option (strength s0..s5 adds rounds and trees), so the estimate extrapolates the
// last step's growth geometrically from the larger of the program's cost and the last one
// seen; it never assumes a variant cheaper than the program it varies.
func nextCosts(parent float64, seen []float64, n int) float64 {
	base, growth := parent, 1.0
	if k := len(seen); k > 0 {
		base = max(parent, seen[k-1])
		if k > 1 && seen[k-2] > 0 && seen[k-1] > seen[k-2] {
			growth = seen[k-1] / seen[k-2]
		}
	}
	total, c := 0.0, base
	for range n {
		c *= growth
		total += c
	}
	return total
}

// untunedAnswer sets ans.Untuned to the answer greedy selection, refits and blend make from
// scored (best first) without its tuned variants and without members whose refit failed. A
// run whose tuning kept no variant has nothing to measure. The refits it adds are its own
// sandbox time, not the answer's.
func (r *trainRun) untunedAnswer(ctx workflow.Context, ans *activities.FinalAnswer, scored []activities.CrossValidateResult, graded map[string]*activities.FinalGradeResult) error {
	in := r.in
	var ids []string
	tuned := false
	for _, cv := range scored {
		switch {
		case cv.TunedFrom != "":
			tuned = true
		case !slices.ContainsFunc(ans.RefitFailed, func(f activities.FinalGradeResult) bool { return f.SampleID == cv.SampleID }):
			ids = append(ids, cv.SampleID)
		}
	}
	if !tuned {
		return nil
	}
	u := &activities.UntunedAnswer{}
	ans.Untuned = u
	if len(ids) == 0 {
		u.Note = "no untuned candidate made valid out-of-fold predictions and a refit"
		return nil
	}
	var ens activities.EnsembleResult
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.host, "greedy ensemble selection over the %d untuned programs", len(ids)), r.acts.SelectEnsemble,
		activities.EnsembleInput{Run: in.Run, Task: in.Task, Folds: in.FinalFolds, SampleIDs: ids, Rounds: in.EnsembleRounds}).Get(ctx, &ens); err != nil {
		return err
	}
	u.Members, u.CVScore = ens.Members, &ens.CVScore
	if !ens.Calibration.IsIdentity() {
		u.BlendCVScore, u.Calibration = &ens.BlendCVScore, &ens.Calibration
	}
	u.BlendLog1p = ens.BlendLog1p
	u.SameAsAnswer = slices.EqualFunc(u.Members, ans.Members, func(a, b activities.AnswerMember) bool {
		return a.SampleID == b.SampleID && a.Weight == b.Weight
	})
	seconds, err := r.refitMembers(ctx, u.Members, graded, "untuned member")
	if err != nil {
		return err
	}
	u.SandboxSeconds = seconds
	for _, m := range u.Members {
		if !m.Test.Report.SubmissionExist {
			u.Note = fmt.Sprintf("member %s's refit on the full public train wrote no submission", m.SampleID)
			return nil
		}
	}
	var test activities.FinalGradeResult
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.host, "blend the %d untuned members and grade them on the private test answers", len(u.Members)), r.acts.BlendAnswer,
		activities.BlendInput{Run: in.Run, Task: in.Task, Protocol: in.Protocol, Answer: *ans, Untuned: true}).Get(ctx, &test); err != nil {
		return err
	}
	u.Test = &test
	return nil
}

// selectAndRefit weighs the scored candidates by greedy ensemble selection and refits each
// member not graded before on the full public train (leak-free), grading it alone on the test.
func (r *trainRun) selectAndRefit(ctx workflow.Context, ans *activities.FinalAnswer, scoredIDs []string, graded map[string]*activities.FinalGradeResult) error {
	in := r.in
	var ens activities.EnsembleResult
	if err := workflow.ExecuteActivity(summarised(ctx, r.opts.host, "greedy ensemble selection over %d programs", len(scoredIDs)), r.acts.SelectEnsemble,
		activities.EnsembleInput{Run: in.Run, Task: in.Task, Folds: in.FinalFolds, SampleIDs: scoredIDs, Rounds: in.EnsembleRounds}).Get(ctx, &ens); err != nil {
		return err
	}
	ans.Members, ans.CVScore = ens.Members, &ens.CVScore
	ans.BlendCVScore, ans.Calibration = nil, nil
	if !ens.Calibration.IsIdentity() {
		ans.BlendCVScore, ans.Calibration = &ens.BlendCVScore, &ens.Calibration
	}
	ans.BlendLog1p = ens.BlendLog1p
	seconds, err := r.refitMembers(ctx, ans.Members, graded, "ensemble member")
	ans.SandboxSeconds += seconds
	return err
}

// refitMembers refits each member not graded before on the full public train (leak-free) and
// grades it alone on the test answers, at once; it sets every member's Test, adds the new
// grades to graded and returns their sandbox time. what names the members in summaries.
func (r *trainRun) refitMembers(ctx workflow.Context, members []activities.AnswerMember, graded map[string]*activities.FinalGradeResult, what string) (float64, error) {
	in := r.in
	futures := make([]workflow.Future, len(members))
	for i, m := range members {
		if graded[m.SampleID] == nil {
			futures[i] = workflow.ExecuteActivity(summarised(ctx, r.opts.execute, "refit %s %s and grade it on the private test answers", what, m.SampleID), r.acts.FinalGrade,
				activities.FinalGradeInput{Run: in.Run, Task: in.Task, SampleID: m.SampleID, Protocol: in.Protocol})
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
			graded[m.SampleID] = &fg
			seconds += fg.DurationS
		}
		m.Test = graded[m.SampleID]
	}
	return seconds, nil
}
