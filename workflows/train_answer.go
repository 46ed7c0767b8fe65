package workflows

import (
	"sort"
	"time"

	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
)

// leadersKept bounds the run's leader board: a few times the final answer's candidates, since
// copies of one program are dropped when the candidates are picked.
const leadersKept = 32

// addLeader puts l into the leader board (best first; a tie keeps the earlier program first)
// and keeps the best leadersKept.
func addLeader(board []activities.Leader, lowerIsBetter bool, l activities.Leader) []activities.Leader {
	i := sort.Search(len(board), func(i int) bool { return better(lowerIsBetter, l.Score, &board[i].Score) })
	if i >= leadersKept {
		return board
	}
	out := make([]activities.Leader, 0, min(len(board)+1, leadersKept))
	out = append(out, board[:i]...)
	out = append(out, l)
	out = append(out, board[i:]...)
	if len(out) > leadersKept {
		out = out[:leadersKept]
	}
	return out
}

// finalAnswer is the run's answer without the test answers, built from its leaders (training
// programs and the evaluation's evals) by the FinalAnswer child workflow. graded holds the test
// grades already made (sample -> grade), so a member is not refit twice; refitAtDeadline says
// none of the report-only programs was graded before it (FinalAnswerInput.RefitAtDeadline).
func (r *trainRun) finalAnswer(ctx workflow.Context, evals []activities.ExecuteResult, graded map[string]*activities.FinalGradeResult, refitAtDeadline bool) (*activities.FinalAnswer, error) {
	r.publish(PhaseFinalAnswer, 0)
	in := r.in
	board := r.st.Leaders
	for _, e := range evals {
		if e.Valid && e.Score != nil {
			board = addLeader(board, r.st.Task.LowerIsBetter, activities.Leader{Sample: e.SampleID, Score: *e.Score})
		}
	}
	if len(board) == 0 {
		return &activities.FinalAnswer{Folds: in.FinalFolds, Note: "no valid program to build an answer from"}, nil
	}
	ids := make([]string, len(board))
	for i, l := range board {
		ids[i] = l.Sample
	}
	child := FinalAnswerInput{Run: in.Run, Task: in.Task, Protocol: in.Protocol, LowerIsBetter: r.st.Task.LowerIsBetter, Leaders: ids,
		Candidates: in.FinalCandidates, Folds: in.FinalFolds, Tune: in.FinalTune, TuneBudget: in.FinalTuneBudget,
		EnsembleRounds: in.EnsembleRounds, ExecTimeout: in.ExecTimeout, RefitAtDeadline: refitAtDeadline}
	// The answer's time budget is the run's: its end, with the time paused so far added (no
	// pause is taken once training has ended).
	if in.TimeBudget > 0 {
		child.Deadline = r.st.StartedAt.Add(time.Duration((r.st.PausedS + in.TimeBudget) * float64(time.Second)))
	}
	for _, it := range r.st.Recent {
		child.ProgramSeconds = max(child.ProgramSeconds, it.MeanDuration)
	}
	for _, g := range graded {
		child.Graded = append(child.Graded, *g)
	}
	sort.Slice(child.Graded, func(i, j int) bool { return child.Graded[i].SampleID < child.Graded[j].SampleID }) // map order is random: the input must replay alike
	id := answerWorkflowID(workflow.GetInfo(ctx).WorkflowExecution.ID)
	r.ctl.progress.AnswerWorkflow = id
	cctx := workflow.WithChildOptions(ctx, workflow.ChildWorkflowOptions{WorkflowID: id,
		StaticSummary: "final answer of " + in.Run + ": cross-validate, tune, ensemble, refit, grade"})
	var res FinalAnswerResult
	if err := workflow.ExecuteChildWorkflow(cctx, FinalAnswer, child).Get(ctx, &res); err != nil {
		return nil, err
	}
	return &res.Answer, nil
}
