package workflows

import (
	"fmt"
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/experiment"
	"mlerl/settings"
	"mlerl/worker/queues"
)

// ExperimentInput is the grid to run: the ledger (spec and cells, with cells that cannot run
// already marked no-data or invalid) and, for each runnable cell, its Train input.
type ExperimentInput struct {
	Ledger experiment.Ledger `json:"ledger"`
	Inputs []TrainInput      `json:"inputs"` // Inputs[i] is Cells[i]'s; Run "" for a cell that does not run
	// Dir is the experiment directory on the workflows worker's host: the ledger is saved there.
	Dir string `json:"dir"`
	// ChildPrefix makes the children's workflow ids unique to this experiment: <prefix><run>.
	ChildPrefix string `json:"child_prefix"`
	// MatchedIterationsCap bounds a matched cell's iterations, as a multiple of its own
	// iterations: its sandbox-seconds budget ends it, this only stops a runaway.
	MatchedIterationsCap int `json:"matched_iterations_cap"`
}

// ExperimentProgressQuery answers with the ledger as it stands.
const ExperimentProgressQuery = "experiment-progress"

// curveFractions are the points of the training budget (in programs) where the best-so-far
// program is graded on the test answers for the curves of Figure 7.
var curveFractions = []float64{0.25, 0.5, 0.75, 1}

// cellDone carries a finished cell's record from its coroutine to the scheduler.
type cellDone struct {
	Index  int
	Record experiment.CellRecord
}

// Experiment runs an experiment's grid as child Train workflows, at most Spec.MaxConcurrent at
// once, on the same task queues as single runs. A matched cell waits for the cell it is matched
// to and trains on that cell's sandbox-seconds. After each cell the ledger is saved; cells that
// finished are never rerun (a resumed experiment replays them from history). Each finished
// cell's best-so-far programs are graded on test at quarters of its budget.
func Experiment(ctx workflow.Context, in ExperimentInput) (experiment.Ledger, error) {
	localOpts := workflow.ActivityOptions{TaskQueue: queues.Workflows, StartToCloseTimeout: time.Minute,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: time.Minute,
			NonRetryableErrorTypes: []string{activities.ErrBadInput}}}
	// Grading re-runs a program on the full train: as long as an execution may take.
	gradeOpts := workflow.ActivityOptions{TaskQueue: queues.Exec, HeartbeatTimeout: 30 * time.Second,
		RetryPolicy: &temporal.RetryPolicy{InitialInterval: time.Second, BackoffCoefficient: 2, MaximumInterval: 30 * time.Second,
			MaximumAttempts: 3, NonRetryableErrorTypes: []string{activities.ErrBadInput}}}
	childOpts := workflow.ChildWorkflowOptions{TaskQueue: queues.Workflows,
		// A child outlives nothing: terminating the experiment terminates its runs.
		ParentClosePolicy:     enumspb.PARENT_CLOSE_POLICY_TERMINATE,
		WorkflowIDReusePolicy: enumspb.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY}

	var a *activities.Activities
	ledger := in.Ledger
	if len(in.Inputs) != len(ledger.Cells) {
		return ledger, temporal.NewNonRetryableApplicationError(fmt.Sprintf("experiment input has %d train inputs for %d cells", len(in.Inputs), len(ledger.Cells)), activities.ErrBadInput, nil)
	}
	limit := max(ledger.Spec.MaxConcurrent, 1)
	capFactor := max(in.MatchedIterationsCap, 1)
	if err := workflow.SetQueryHandler(ctx, ExperimentProgressQuery, func() (experiment.Ledger, error) { return ledger, nil }); err != nil {
		return ledger, err
	}
	save := func() error {
		return workflow.ExecuteActivity(summarised(ctx, localOpts, "save the ledger (%s)", countStatuses(ledger)), a.SaveLedger,
			activities.SaveLedgerInput{Dir: in.Dir, Ledger: ledger}).Get(ctx, nil)
	}
	byRun := map[string]int{}
	for i, c := range ledger.Cells {
		byRun[c.Run] = i
	}

	// grade re-runs one program on the full train and grades it on the test answers.
	grade := func(c workflow.Context, run, task string, protocol settings.Protocol, sample string) (*activities.FinalGradeResult, error) {
		var fg activities.FinalGradeResult
		opts := gradeOpts
		opts.StartToCloseTimeout = in.Inputs[byRun[run]].ExecTimeout
		err := workflow.ExecuteActivity(summarised(c, opts, "grade %s of %s on the private test answers", sample, run), a.FinalGrade,
			activities.FinalGradeInput{Run: run, Task: task, SampleID: sample, Protocol: protocol}).Get(c, &fg)
		return &fg, err
	}
	// runCell runs one cell's Train workflow and grades its curve.
	runCell := func(c workflow.Context, i int, input TrainInput) experiment.CellRecord {
		rec := ledger.Cells[i]
		opts := childOpts
		opts.WorkflowID = in.ChildPrefix + input.Run
		var res TrainResult
		if err := workflow.ExecuteChildWorkflow(workflow.WithChildOptions(c, opts), Train, input).Get(c, &res); err != nil {
			rec.Status, rec.Reason = experiment.StatusFailed, err.Error()
			return rec
		}
		rec.Status = experiment.StatusDone
		rec.Programs, rec.SandboxSeconds, rec.WallSeconds, rec.Iterations = res.Programs, res.SandboxSeconds, res.WallSeconds, res.Completed
		rec.LeftOutSeconds = res.LeftOutSeconds
		rec.BestValidation = res.BestScore
		rec.Chosen = graded(res.Final, nil)
		rec.Best = graded(res.Best, res.BestScore)
		if res.Answer != nil && res.Answer.Test != nil {
			rec.Answer = graded(res.Answer.Test, res.Answer.CVScore)
		}
		if res.Answer != nil && res.Answer.Untuned != nil && res.Answer.Untuned.Test != nil {
			rec.Untuned = graded(res.Answer.Untuned.Test, res.Answer.Untuned.CVScore)
		}
		tested := map[string]*float64{}
		if rec.Best != nil {
			tested[rec.Best.Sample] = rec.Best.Test
		}
		for _, imp := range curvePoints(res.Improvements, res.Programs) {
			score := imp.Score
			p := experiment.CurvePoint{Programs: imp.Programs, SandboxSeconds: imp.SandboxSeconds, WallSeconds: imp.ElapsedS,
				Sample: imp.Sample, Validation: &score}
			t, ok := tested[imp.Sample]
			if !ok {
				fg, err := grade(c, input.Run, input.Task, input.Protocol, imp.Sample)
				if err != nil {
					rec.Reason = fmt.Sprintf("curve point %s not graded: %v", imp.Sample, err)
					continue
				}
				t = graded(fg, nil).Test
				tested[imp.Sample] = t
			}
			p.Test = t
			rec.Curve = append(rec.Curve, p)
		}
		return rec
	}

	done := workflow.NewChannel(ctx)
	running := 0
	// startable marks matched cells blocked or gives them their budget, and says whether cell i
	// can start now.
	startable := func(i int) bool {
		c := &ledger.Cells[i]
		if c.Status != experiment.StatusPending {
			return false
		}
		if c.Match == "" {
			return true
		}
		ref := ledger.Cells[byRun[c.Match]]
		switch ref.Status {
		case experiment.StatusDone:
			return true
		case experiment.StatusPending, experiment.StatusRunning:
			return false
		}
		c.Status, c.Reason = experiment.StatusBlocked, fmt.Sprintf("the cell it is matched to (%s) is %s", c.Match, ref.Status)
		return false
	}
	launch := func(i int) {
		input := in.Inputs[i]
		c := &ledger.Cells[i]
		if c.Match != "" {
			ref := ledger.Cells[byRun[c.Match]]
			input.SandboxSeconds = ref.SandboxSeconds
			input.Iterations *= capFactor
			c.MatchedSeconds = ref.SandboxSeconds
		}
		c.Status = experiment.StatusRunning
		running++
		workflow.Go(ctx, func(gctx workflow.Context) {
			done.Send(gctx, cellDone{Index: i, Record: runCell(gctx, i, input)})
		})
	}
	if err := save(); err != nil {
		return ledger, err
	}
	for {
		// Cells marked running by an earlier start are restarted by replay, not here: this
		// loop is the workflow's only scheduler, and history replays it exactly.
		for i := range ledger.Cells {
			if running < limit && startable(i) {
				launch(i)
			}
		}
		if running == 0 {
			break
		}
		var d cellDone
		done.Receive(ctx, &d)
		running--
		ledger.Cells[d.Index] = d.Record
		if err := save(); err != nil {
			return ledger, err
		}
	}
	return ledger, nil
}

// graded turns a final grade into the ledger's form; validation is the program's
// selection-split score when known.
func graded(fg *activities.FinalGradeResult, validation *float64) *experiment.Graded {
	if fg == nil {
		return nil
	}
	g := &experiment.Graded{Sample: fg.SampleID, Validation: validation, Report: fg.Report, Reason: fg.Reason}
	if fg.Report.ValidSubmission && fg.Report.Score != nil {
		s := *fg.Report.Score
		g.Test = &s
	}
	return g
}

// curvePoints picks, for each quarter of the training budget (in programs), the best program
// found by then: the improvement curve as a few points worth grading on test.
func curvePoints(imps []activities.Improvement, programs int) []activities.Improvement {
	var out []activities.Improvement
	for _, f := range curveFractions {
		upTo := int(f * float64(programs))
		var last *activities.Improvement
		for k := range imps {
			if imps[k].Programs <= upTo {
				last = &imps[k]
			}
		}
		if last == nil {
			continue
		}
		// Points keep where the program was found: each is a step of the best-so-far curve.
		if n := len(out); n > 0 && out[n-1].Sample == last.Sample {
			continue
		}
		out = append(out, *last)
	}
	return out
}

// countStatuses summarises a ledger for an activity's one-line summary.
func countStatuses(l experiment.Ledger) string {
	counts := map[string]int{}
	var order []string
	for _, c := range l.Cells {
		if counts[c.Status] == 0 {
			order = append(order, c.Status)
		}
		counts[c.Status]++
	}
	slices.Sort(order)
	s := ""
	for k, st := range order {
		if k > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%d %s", counts[st], st)
	}
	return s
}
