package activities

import (
	"context"
	"time"

	"mlerl/artifacts/runstore"
	"mlerl/grading"
	"mlerl/reward"
	"mlerl/settings"
	"mlerl/tasks"
)

// FinalGrade grades the chosen program on the private test answers. Leak-free: the program was
// chosen on the validation split, so it is re-run on the full public train to predict the real
// test. Paper protocol: it already ran on the test split; its submission is graded again.
func (a *Activities) FinalGrade(ctx context.Context, in FinalGradeInput) (FinalGradeResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return FinalGradeResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return FinalGradeResult{}, err
	}
	dir := runstore.Sample(in.SampleID)
	var res ExecuteResult
	if in.Protocol == settings.Paper {
		if err := getJSON(ctx, store, dir.Result(), &res); err != nil {
			return FinalGradeResult{}, err
		}
	} else {
		dir = dir.Final()
		// The report uses the score; the reward scheme does not matter here.
		res, err = a.execute(ctx, store, in.Task, in.SampleID, a.Layout.Dirs(spec.ID, tasks.SplitTest), dir, reward.Paper)
		if err != nil {
			return FinalGradeResult{}, err
		}
	}
	g := grading.Result{Score: res.Score, Valid: res.Valid, Exists: res.Submitted, Reason: res.Reason}
	rep := grading.NewReport(spec, g, store.Location(dir.Submission()), time.Now())
	out := FinalGradeResult{SampleID: in.SampleID, Report: rep, Reason: res.Reason, DurationS: res.DurationS}
	if err := putJSON(ctx, store, dir.GradeReport(), rep); err != nil {
		return FinalGradeResult{}, err
	}
	return out, nil
}
