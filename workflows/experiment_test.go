package workflows

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/experiment"
	"mlerl/grading"
)

// fakeGrid mocks the Experiment's children and activities: each Train child takes a while (so
// cells overlap), reports a budget and improvements derived from its run name, and records
// what it was given.
type fakeGrid struct {
	mu         sync.Mutex
	inputs     map[string]TrainInput // Train input by run
	order      []string              // runs in the order they started
	running    int
	maxRunning int
	graded     []string // run/sample per FinalGrade
	saves      []experiment.Ledger
	fail       map[string]bool // runs whose Train fails
	gradeFails map[string]bool // samples whose grading fails
}

func gridSpec(t *testing.T, yamlText string) experiment.Spec {
	t.Helper()
	s, err := experiment.Parse([]byte(yamlText))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// gridInput is the input the starter would build: one Train input per cell.
func gridInput(spec experiment.Spec) ExperimentInput {
	in := ExperimentInput{Ledger: experiment.Ledger{Spec: spec}, Dir: "/exp", ChildPrefix: "exp-", MatchedIterationsCap: 5}
	for _, c := range spec.Cells() {
		in.Ledger.Cells = append(in.Ledger.Cells, experiment.CellRecord{Cell: c, Status: experiment.StatusPending})
		ti := input()
		ti.Run, ti.Task, ti.Seed, ti.Iterations = c.Run, c.Task, c.Seed, 2
		in.Inputs = append(in.Inputs, ti)
	}
	return in
}

func score(v float64) *float64 { return &v }

func newGridEnv(t *testing.T, f *fakeGrid) *testsuite.TestWorkflowEnvironment {
	t.Helper()
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var a *activities.Activities
	f.inputs = map[string]TrainInput{}
	env.RegisterWorkflow(Experiment)
	env.RegisterWorkflow(Train)
	env.OnWorkflow(Train, mock.Anything, mock.Anything).Return(func(ctx workflow.Context, in TrainInput) (TrainResult, error) {
		f.mu.Lock()
		f.inputs[in.Run] = in
		f.order = append(f.order, in.Run)
		f.running++
		f.maxRunning = max(f.maxRunning, f.running)
		f.mu.Unlock()
		// Cells of different lengths, so completions interleave.
		err := workflow.Sleep(ctx, time.Duration(10+len(in.Run)%7)*time.Minute)
		f.mu.Lock()
		f.running--
		f.mu.Unlock()
		if err != nil {
			return TrainResult{}, err
		}
		if f.fail[in.Run] {
			return TrainResult{}, temporal.NewNonRetryableApplicationError("the sandbox is gone", "Boom", nil)
		}
		// 8 programs; the best so far improves after programs 1, 2, 5 and 8.
		imps := []activities.Improvement{
			{Sample: "s1", Score: 0.9, Programs: 1, SandboxSeconds: 10},
			{Sample: "s2", Score: 0.8, Programs: 2, SandboxSeconds: 20},
			{Sample: "s5", Score: 0.5, Programs: 5, SandboxSeconds: 50},
			{Sample: "s8", Score: 0.4, Programs: 8, SandboxSeconds: 80},
		}
		test := 0.45
		return TrainResult{Completed: in.Iterations, Programs: 8, SandboxSeconds: 80 + float64(in.Seed), WallSeconds: 600,
			BestScore: score(0.4), Improvements: imps,
			Final: &activities.FinalGradeResult{SampleID: "eval-1", Report: grading.Report{Score: score(0.5), ValidSubmission: true}},
			Best:  &activities.FinalGradeResult{SampleID: "s8", Report: grading.Report{Score: &test, ValidSubmission: true, BronzeMedal: true}},
		}, nil
	})
	env.OnActivity(a.FinalGrade, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FinalGradeInput) (activities.FinalGradeResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.graded = append(f.graded, in.Run+"/"+in.SampleID)
			if f.gradeFails[in.SampleID] {
				return activities.FinalGradeResult{}, temporal.NewNonRetryableApplicationError("no such program", activities.ErrBadInput, nil)
			}
			s := map[string]float64{"s1": 0.95, "s2": 0.85, "s5": 0.55}[in.SampleID]
			return activities.FinalGradeResult{SampleID: in.SampleID, Report: grading.Report{Score: &s, ValidSubmission: true}}, nil
		})
	env.OnActivity(a.SaveLedger, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveLedgerInput) error {
			f.mu.Lock()
			defer f.mu.Unlock()
			if in.Dir != "/exp" {
				return fmt.Errorf("ledger saved to %q", in.Dir)
			}
			f.saves = append(f.saves, in.Ledger)
			return nil
		})
	return env
}

func runGrid(t *testing.T, f *fakeGrid, in ExperimentInput) (experiment.Ledger, error) {
	t.Helper()
	env := newGridEnv(t, f)
	env.ExecuteWorkflow(Experiment, in)
	if !env.IsWorkflowCompleted() {
		t.Fatal("the experiment did not complete")
	}
	var l experiment.Ledger
	err := env.GetWorkflowError()
	if err == nil {
		if gerr := env.GetWorkflowResult(&l); gerr != nil {
			t.Fatal(gerr)
		}
	}
	return l, err
}

func cellByRun(t *testing.T, l experiment.Ledger, run string) experiment.CellRecord {
	t.Helper()
	for _, c := range l.Cells {
		if c.Run == run {
			return c
		}
	}
	t.Fatalf("no cell %s", run)
	return experiment.CellRecord{}
}

// oneCell is an experiment of a single cell: leaf, rl, seed 7.
func oneCell(t *testing.T) ExperimentInput {
	in := gridInput(gridSpec(t, `
name: one
tasks: [leaf-classification]
arms: [rl, static]
seeds: [7]
pass_rule: {arm: rl, versus: [static], measure: best_test, min_seeds: 1}
`))
	in.Ledger.Cells, in.Inputs = in.Ledger.Cells[:1], in.Inputs[:1]
	return in
}

const twoTasks = `
name: grid
tasks: [leaf-classification, random-acts-of-pizza]
arms: [rl, static, static-matched]
seeds: [1, 2]
max_concurrent: 2
pass_rule: {arm: rl, versus: [static], measure: best_test, min_seeds: 1}
`

func TestExperimentRunsEveryCellWithBoundedConcurrency(t *testing.T) {
	for _, limit := range []int{1, 2, 3} {
		t.Run(fmt.Sprint("max_concurrent=", limit), func(t *testing.T) {
			spec := gridSpec(t, strings.Replace(twoTasks, "max_concurrent: 2", fmt.Sprint("max_concurrent: ", limit), 1))
			in := gridInput(spec)
			f := &fakeGrid{}
			l, err := runGrid(t, f, in)
			if err != nil {
				t.Fatal(err)
			}
			if f.maxRunning != limit {
				t.Errorf("at most %d Train children ran at once, want %d", f.maxRunning, limit)
			}
			if len(f.order) != len(in.Ledger.Cells) {
				t.Errorf("%d children started for %d cells", len(f.order), len(in.Ledger.Cells))
			}
			for _, c := range l.Cells {
				if c.Status != experiment.StatusDone {
					t.Errorf("%s: %s (%s)", c.Run, c.Status, c.Reason)
				}
			}
			// One save before anything runs, one after each cell.
			if len(f.saves) != len(in.Ledger.Cells)+1 {
				t.Errorf("%d ledger saves, want %d", len(f.saves), len(in.Ledger.Cells)+1)
			}
			if last := f.saves[len(f.saves)-1]; countStatuses(last) != fmt.Sprintf("%d done", len(in.Ledger.Cells)) {
				t.Errorf("last saved ledger: %s", countStatuses(last))
			}
		})
	}
}

func TestExperimentMatchedCellTrainsOnItsReferenceBudget(t *testing.T) {
	in := gridInput(gridSpec(t, twoTasks))
	f := &fakeGrid{}
	l, err := runGrid(t, f, in)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range l.Cells {
		if c.Match == "" {
			if got := f.inputs[c.Run]; got.SandboxSeconds != 0 || got.Iterations != 2 {
				t.Errorf("%s (unmatched) got a budget of %v s and %d iterations", c.Run, got.SandboxSeconds, got.Iterations)
			}
			continue
		}
		ref := cellByRun(t, l, c.Match)
		got := f.inputs[c.Run]
		if got.SandboxSeconds != ref.SandboxSeconds || c.MatchedSeconds != ref.SandboxSeconds || ref.SandboxSeconds == 0 {
			t.Errorf("%s trained on %v sandbox-seconds (ledger %v), its reference %s used %v", c.Run, got.SandboxSeconds, c.MatchedSeconds, c.Match, ref.SandboxSeconds)
		}
		if got.Iterations != 2*in.MatchedIterationsCap {
			t.Errorf("%s: iterations capped at %d, want %d", c.Run, got.Iterations, 2*in.MatchedIterationsCap)
		}
		if slices.Index(f.order, c.Run) < slices.Index(f.order, c.Match) {
			t.Errorf("%s started before %s, the cell it is matched to", c.Run, c.Match)
		}
	}
}

func TestExperimentGradesEachCurveStepOnce(t *testing.T) {
	f := &fakeGrid{}
	l, err := runGrid(t, f, oneCell(t))
	if err != nil {
		t.Fatal(err)
	}
	c := l.Cells[0]
	// Quarters of 8 programs: 2, 4, 6, 8 → best so far s2, s2 (repeated: dropped), s5, s8.
	var samples []string
	for _, p := range c.Curve {
		samples = append(samples, p.Sample)
	}
	if want := []string{"s2", "s5", "s8"}; !slices.Equal(samples, want) {
		t.Fatalf("curve samples %v, want %v", samples, want)
	}
	// s8 is the best program, already graded by Train: not graded again.
	if want := []string{c.Run + "/s2", c.Run + "/s5"}; !slices.Equal(f.graded, want) {
		t.Errorf("graded %v, want %v", f.graded, want)
	}
	if *c.Curve[0].Test != 0.85 || *c.Curve[2].Test != 0.45 || *c.Curve[1].Validation != 0.5 || c.Curve[1].SandboxSeconds != 50 {
		t.Errorf("curve %+v", c.Curve)
	}
	if c.Best == nil || c.Best.Sample != "s8" || *c.Best.Test != 0.45 || *c.Best.Validation != 0.4 || c.Best.Medal() != "bronze" {
		t.Errorf("best %+v", c.Best)
	}
	if c.Chosen == nil || c.Chosen.Sample != "eval-1" || *c.Chosen.Test != 0.5 {
		t.Errorf("chosen %+v", c.Chosen)
	}
	if c.Programs != 8 || c.SandboxSeconds != 87 || c.Iterations != 2 || c.WallSeconds != 600 {
		t.Errorf("budget %+v", c)
	}
}

func TestExperimentCurvePointThatCannotBeGradedIsNamed(t *testing.T) {
	f := &fakeGrid{gradeFails: map[string]bool{"s5": true}}
	l, err := runGrid(t, f, oneCell(t))
	if err != nil {
		t.Fatal(err)
	}
	c := l.Cells[0]
	if c.Status != experiment.StatusDone || len(c.Curve) != 2 || !strings.Contains(c.Reason, "curve point s5 not graded") {
		t.Errorf("status %s, %d curve points, reason %q", c.Status, len(c.Curve), c.Reason)
	}
}

func TestExperimentFailedReferenceBlocksItsMatchedCell(t *testing.T) {
	in := gridInput(gridSpec(t, twoTasks))
	failed := experiment.RunName("leaf-classification", "rl", 1)
	f := &fakeGrid{fail: map[string]bool{failed: true}}
	l, err := runGrid(t, f, in)
	if err != nil {
		t.Fatalf("one failed cell failed the experiment: %v", err)
	}
	for _, c := range l.Cells {
		want := experiment.StatusDone
		switch c.Run {
		case failed:
			want = experiment.StatusFailed
			if !strings.Contains(c.Reason, "the sandbox is gone") {
				t.Errorf("%s: reason %q does not say why", c.Run, c.Reason)
			}
		case experiment.RunName("leaf-classification", "static-matched", 1):
			want = experiment.StatusBlocked
			if !strings.Contains(c.Reason, failed) {
				t.Errorf("%s: reason %q does not name %s", c.Run, c.Reason, failed)
			}
			if _, ran := f.inputs[c.Run]; ran {
				t.Errorf("%s ran without a budget", c.Run)
			}
		}
		if c.Status != want {
			t.Errorf("%s: %s, want %s", c.Run, c.Status, want)
		}
	}
}

func TestExperimentResumedLedgerRunsOnlyWhatIsLeft(t *testing.T) {
	in := gridInput(gridSpec(t, twoTasks))
	// As the starter restarts a closed experiment: done and no-data cells stay, the rest are pending.
	keep := map[int]string{0: experiment.StatusDone, 1: experiment.StatusDone, 4: experiment.StatusNoData}
	for i, st := range keep {
		in.Ledger.Cells[i].Status = st
		in.Ledger.Cells[i].SandboxSeconds = 123
	}
	f := &fakeGrid{}
	l, err := runGrid(t, f, in)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range keep {
		if _, ran := f.inputs[in.Ledger.Cells[i].Run]; ran {
			t.Errorf("%s (%s) was run again", in.Ledger.Cells[i].Run, st)
		}
		if l.Cells[i].Status != st {
			t.Errorf("%s: %s, want %s", l.Cells[i].Run, l.Cells[i].Status, st)
		}
	}
	if len(f.order) != len(in.Ledger.Cells)-len(keep) {
		t.Errorf("%d children ran, want %d", len(f.order), len(in.Ledger.Cells)-len(keep))
	}
	// Cell 2 is leaf's static-matched for seed 1: its reference (cell 0) finished before.
	if m := l.Cells[2]; m.Match != in.Ledger.Cells[0].Run || f.inputs[m.Run].SandboxSeconds != 123 {
		t.Errorf("matched cell %s after a resume: budget %v, want 123", m.Run, f.inputs[m.Run].SandboxSeconds)
	}
}

func TestExperimentRefusesInputsThatDoNotMatchTheCells(t *testing.T) {
	in := gridInput(gridSpec(t, twoTasks))
	in.Inputs = in.Inputs[1:]
	f := &fakeGrid{}
	_, err := runGrid(t, f, in)
	var appErr *temporal.ApplicationError
	if !errors.As(err, &appErr) || appErr.Type() != activities.ErrBadInput || !strings.Contains(err.Error(), "11 train inputs for 12 cells") {
		t.Fatalf("got %v, want a bad-input error naming the counts", err)
	}
	if len(f.order) != 0 || len(f.saves) != 0 {
		t.Errorf("a refused experiment started %d cells and saved %d ledgers", len(f.order), len(f.saves))
	}
}

func TestExperimentProgressQueryShowsTheGrid(t *testing.T) {
	in := gridInput(gridSpec(t, twoTasks))
	f := &fakeGrid{}
	env := newGridEnv(t, f)
	var mid experiment.Ledger
	env.RegisterDelayedCallback(func() {
		v, err := env.QueryWorkflow(ExperimentProgressQuery)
		if err != nil {
			t.Error(err)
			return
		}
		if err := v.Get(&mid); err != nil {
			t.Error(err)
		}
	}, 5*time.Minute)
	env.ExecuteWorkflow(Experiment, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	// Five minutes in, the first two cells are running and nothing has finished.
	if got := countStatuses(mid); got != "10 pending, 2 running" {
		t.Errorf("progress at 5 minutes: %q", got)
	}
}

func TestCurvePoints(t *testing.T) {
	imps := []activities.Improvement{{Sample: "a", Programs: 1}, {Sample: "b", Programs: 3}, {Sample: "c", Programs: 9}}
	for _, tc := range []struct {
		name     string
		imps     []activities.Improvement
		programs int
		want     []string
	}{
		{"no improvements", nil, 10, nil},
		{"no programs", imps, 0, nil},
		{"steps at quarters", imps, 12, []string{"b", "c"}},      // 3: b, 6: b, 9: c, 12: c
		{"first found late", imps[2:], 12, []string{"c"}},        // nothing before 9
		{"every quarter a step", imps, 4, []string{"a", "b"}},    // 1: a, 2: a, 3: b, 4: b
		{"improvements past the budget", imps, 2, []string{"a"}}, // c after 9 of 2: never
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, p := range curvePoints(tc.imps, tc.programs) {
				got = append(got, p.Sample)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestCountStatuses(t *testing.T) {
	for _, tc := range []struct {
		statuses []string
		want     string
	}{
		{nil, ""},
		{[]string{"done"}, "1 done"},
		{[]string{"running", "done", "no-data", "done", "pending"}, "2 done, 1 no-data, 1 pending, 1 running"},
	} {
		var l experiment.Ledger
		for _, s := range tc.statuses {
			l.Cells = append(l.Cells, experiment.CellRecord{Status: s})
		}
		if got := countStatuses(l); got != tc.want {
			t.Errorf("%v: %q, want %q", tc.statuses, got, tc.want)
		}
	}
}
