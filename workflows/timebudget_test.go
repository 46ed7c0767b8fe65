package workflows

import (
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"
)

// A wall-clock budget ends training at the first iteration boundary after its training share
// (60%), whatever --iterations allows, and evaluation and the final answer still run.
func TestTimeBudgetEndsTrainingAtItsShare(t *testing.T) {
	for _, c := range []struct {
		name       string
		budget     float64
		iterations int
		want       int
	}{
		{"the share passes after the 6th update (360 s of 600)", 600, 50, 6},
		{"the share passes mid-iteration: training ends after it (7 x 60 s >= 0.6 x 650)", 650, 50, 7},
		{"iterations stay a cap", 600, 4, 4},
		{"no budget", 0, 9, 9},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeRun{updateWall: time.Minute}
			env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { v := 0.5; return &v })
			in := input()
			in.Iterations, in.TimeBudget = c.iterations, c.budget
			res := trainResult(t, env, in)
			if res.Completed != c.want || len(f.updates) != c.want {
				t.Fatalf("%d iterations completed (%d updates), want %d", res.Completed, len(f.updates), c.want)
			}
			if res.Final == nil {
				t.Fatalf("training ended by the budget, but nothing was evaluated: %+v", res)
			}
		})
	}
}

// A pause holds the budget: an hour paused before the first iteration leaves training its
// whole share of a 10-minute budget.
func TestTimeBudgetDoesNotCountPauses(t *testing.T) {
	f := &fakeRun{updateWall: time.Minute}
	env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { v := 0.5; return &v })
	in := input()
	in.Iterations, in.TimeBudget, in.Paused = 50, 600, true
	env.RegisterDelayedCallback(func() { env.SignalWorkflow(ResumeSignal, nil) }, time.Hour)
	res := trainResult(t, env, in)
	if res.Completed != 6 {
		t.Fatalf("%d iterations after an hour's pause, want the 6 that 60%% of 600 s holds", res.Completed)
	}
}

// The answer's tuning starts no wave of variants whose sandbox-seconds would end after the
// run's time budget, and says so; the answer is still blended from what was cross-validated.
func TestTimeBudgetStopsTheAnswersTuning(t *testing.T) {
	// 3 updates of a minute use 180 s of a 400 s budget (training's share is 240 s); a wave of
	// two variants, costed at the 1000 s their program's cross-validation took, does not fit
	// the 220 s left, while the tuning's own budget (once the candidates' 3000 s) would allow it.
	_, res, _ := runTuningWith(t, []tunableSlot{{"transform", []string{"power", "standard"}}, {"strength", []string{"s4"}}},
		func(string) float64 { return 1000 },
		func(f *fakeRun, in *TrainInput) { f.updateWall, in.TimeBudget = time.Minute, 400 })
	a := res.Answer
	if a == nil || a.Test == nil {
		t.Fatalf("no answer blended: %+v", a)
	}
	if len(a.Tuning) == 0 {
		t.Fatal("no tuning step recorded")
	}
	for _, s := range a.Tuning {
		if s.Tried != 0 || !strings.Contains(s.Skipped, "the run's time budget") {
			t.Fatalf("tuning step %+v: want it skipped for the run's time budget", s)
		}
	}
	for _, c := range a.Candidates {
		if c.TunedFrom != "" {
			t.Fatalf("variant %s was cross-validated after the time budget", c.SampleID)
		}
	}
}

// Past the budget, best-of-K keeps its scratch draws and the answer cross-validates one
// candidate, so a slow task's run ends near its budget instead of an hour of folds later.
func TestTimeBudgetSpentBeforeTheAnswer(t *testing.T) {
	f := &fakeRun{updateWall: 200 * time.Second}
	env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(id string) *float64 { return spread(id) })
	in := input()
	in.Iterations, in.TimeBudget = 50, 100
	in.FinalCandidates, in.FinalFolds, in.FinalTune = 3, 4, 0
	res := trainResult(t, env, in)
	if res.Completed != 1 {
		t.Fatalf("%d iterations, want 1: the first update alone passes the budget", res.Completed)
	}
	for _, id := range f.executed {
		if strings.HasPrefix(id, "eval-improve") {
			t.Fatalf("improve draw %s ran after the budget was spent", id)
		}
	}
	if res.Answer == nil || len(res.Answer.Candidates) != 1 || res.Answer.Test == nil {
		t.Fatalf("answer %+v: want one candidate cross-validated, refit and graded", res.Answer)
	}
}

// trainResult runs Train on env and returns its result, failing the test on a workflow error.
func trainResult(t *testing.T, env *testsuite.TestWorkflowEnvironment, in TrainInput) TrainResult {
	t.Helper()
	env.ExecuteWorkflow(Train, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var res TrainResult
	if err := env.GetWorkflowResult(&res); err != nil {
		t.Fatal(err)
	}
	return res
}
