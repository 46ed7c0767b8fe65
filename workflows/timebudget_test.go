package workflows

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// A wall-clock budget ends training at its training share (60%), whatever --iterations allows,
// and evaluation and the final answer still run. Here the share passes during updates, which
// are not cut, so training ends at the iteration boundary after it.
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
			if c.budget == 0 {
				in.FinalTuneBudget = 2 // without a time budget the tuning needs its own
			}
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

// Past the budget, best-of-K keeps its scratch draws and the answer cross-validates nothing:
// it is the best leader already refit on the full public train, so a slow task's run ends
// near its budget instead of an hour of folds later.
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
	if len(f.crossVal) != 0 {
		t.Fatalf("cross-validated %v after the budget was spent", f.crossVal)
	}
	a := res.Answer
	if a == nil || a.Test == nil || len(a.Members) != 1 || a.Members[0].Test == nil || !strings.Contains(a.Note, "time budget ended") {
		t.Fatalf("answer %+v: want the best leader refit, blended alone, and a note saying why", a)
	}
	refits := 0
	for _, id := range f.graded {
		if id == a.Members[0].SampleID {
			refits++
		}
	}
	if refits != 1 {
		t.Fatalf("the answer's member %s was refit again (graded %v)", a.Members[0].SampleID, f.graded)
	}
}

// A candidate's folds still running at the run's deadline are cancelled: the run ends at its
// budget with the best leader already refit as its answer. Without a budget the same folds
// are waited for.
func TestTimeBudgetCutsTheAnswersCrossValidation(t *testing.T) {
	for _, c := range []struct {
		name    string
		budget  float64
		cut     bool
		maxWall time.Duration
	}{
		{"a 1000 s budget", 1000, true, 1000 * time.Second},
		{"no budget", 0, false, 3 * time.Hour},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeRun{updateWall: time.Minute, cvWall: time.Hour}
			env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(id string) *float64 { return spread(id) })
			in := input()
			in.Iterations, in.TimeBudget = 2, c.budget
			in.FinalCandidates, in.FinalFolds, in.FinalTune = 2, 3, 0
			start := env.Now()
			res := trainResult(t, env, in)
			if d := env.Now().Sub(start); d > c.maxWall {
				t.Fatalf("the run took %v, want at most %v", d, c.maxWall)
			}
			a := res.Answer
			if a == nil || a.Test == nil || len(a.Candidates) == 0 {
				t.Fatalf("answer %+v: want candidates cross-validated or cut, and a graded answer", a)
			}
			for _, cv := range a.Candidates {
				if cut := cv.Reason == "cut at the run's time budget"; cut != c.cut || (cv.Score == nil) != c.cut {
					t.Fatalf("candidate %+v: want cut %v", cv, c.cut)
				}
			}
			if fellBack := strings.Contains(a.Note, "time budget ended"); fellBack != c.cut {
				t.Fatalf("note %q: want the fallback %v", a.Note, c.cut)
			}
		})
	}
}

// Under a time budget each candidate is costed by its own program's run time, not the run's
// slowest iteration: cheap candidates all fit the candidates' share of the time left, and a
// slow one is passed over (and recorded) for the cheaper ones after it.
func TestTimeBudgetCostsCandidatesByTheirOwnPrograms(t *testing.T) {
	// Training ends at about 120 s of 600, so the candidates' share is half of some 480 s:
	// 5 folds of a 3 s program fit, 5 folds of the second leader's 100 s do not.
	f := &fakeRun{updateWall: time.Minute, cvWall: 10 * time.Second}
	f.runSeconds = func(i int) float64 {
		if i == 1 {
			return 100
		}
		return 3
	}
	env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(id string) *float64 { return spread(id) })
	in := input()
	in.Iterations, in.TimeBudget = 2, 600
	in.FinalCandidates, in.FinalFolds, in.FinalTune = 4, 5, 0
	res := trainResult(t, env, in)
	a := res.Answer
	if a == nil || a.Test == nil {
		t.Fatalf("no answer: %+v", a)
	}
	picked := f.candidates[0]
	if want := []string{picked[1]}; !slices.Equal(a.PassedOver, want) {
		t.Fatalf("passed over %v, want %v (the slow second leader)", a.PassedOver, want)
	}
	got, want := slices.Sorted(slices.Values(f.crossVal)), []string{picked[0], picked[2], picked[3], picked[4]}
	if slices.Sort(want); !slices.Equal(got, want) {
		t.Fatalf("cross-validated %v, want the four cheap leaders %v", got, want)
	}
}

// Under a time budget with no tuning budget of its own (the default), the tuning is not capped
// at a multiple of the candidates' time: variants costing far more than the candidates still
// run while the time lasts, and the noise rule ends each candidate's tuning.
func TestTimeBudgetAloneBoundsTheTuning(t *testing.T) {
	_, res, _ := runTuningWith(t, []tunableSlot{{"transform", []string{"power", "standard"}}, {"strength", []string{"s4"}}},
		func(id string) float64 {
			if strings.HasPrefix(id, "tune-") {
				return 1000 // a thousand times the candidates' 1 s
			}
			return 1
		},
		func(f *fakeRun, in *TrainInput) { in.TimeBudget, in.FinalTuneBudget = 1e6, 0 })
	a := res.Answer
	if a == nil || len(a.Tuning) == 0 {
		t.Fatalf("no tuning recorded: %+v", a)
	}
	for _, s := range a.Tuning {
		if s.Skipped != "" || s.Tried == 0 {
			t.Fatalf("tuning step %+v: want it run, no cap in the way", s)
		}
	}
	for _, s := range a.TuneStops {
		if strings.Contains(s.Why, "caps") {
			t.Fatalf("tuning of %s stopped at a cap: %s", s.From, s.Why)
		}
	}
}

// slowRun is a run whose programs take long on the workflow's clock: the first iteration's
// 100 s, it0002-s000 400 s, every other training program and evalWall's evaluation programs
// 5000 s (five times a 1000 s budget). B = 4, m = 2, K = 2, updates take 10 s; programs are
// sampled when an iteration starts only, so each iteration's names are known in advance.
func slowRun(t *testing.T, budget float64, evalWall func(id string) time.Duration) (*fakeRun, *testsuite.TestWorkflowEnvironment, TrainInput) {
	f := &fakeRun{updateWall: 10 * time.Second, execWalls: []time.Duration{100 * time.Second, 400 * time.Second, 5000 * time.Second}}
	f.execWall = func(id string) time.Duration {
		switch {
		case strings.HasPrefix(id, "eval-"):
			return evalWall(id)
		case strings.HasPrefix(id, "it0001-"):
			return 100 * time.Second
		case id == "it0002-s000":
			return 400 * time.Second
		}
		return 5000 * time.Second
	}
	in := input()
	in.Iterations, in.TimeBudget, in.SampleAtIterationStart = 50, budget, true
	return f, slowEnv(t, f), in
}

func slowEnv(t *testing.T, f *fakeRun) *testsuite.TestWorkflowEnvironment {
	return newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { v := 0.5; return &v })
}

// The drain before a continue-as-new stops at training's share too; the next segment learns
// from the program that finished in it (sampling nothing) and evaluates. With a segment every
// 2 iterations, the drain after iteration 2 (at 120 s) gets it0002-s000 at 510 s and is cut at
// 600 s.
func TestTimeBudgetStopsTheDrainBeforeContinueAsNew(t *testing.T) {
	f, env, in := slowRun(t, 1000, func(string) time.Duration { return 100 * time.Second })
	in.ContinueEvery = 2
	start := env.Now()
	env.ExecuteWorkflow(Train, in)
	var can *workflow.ContinueAsNewError
	if err := env.GetWorkflowError(); !errors.As(err, &can) {
		t.Fatalf("want a continue-as-new after 2 iterations, got %v", err)
	}
	if d := env.Now().Sub(start); d < 600*time.Second || d > 601*time.Second {
		t.Fatalf("the drain ended after %v, want at the share (600 s)", d)
	}
	var next TrainInput
	if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
		t.Fatal(err)
	}
	if carry := f.states[next.StateKey].Carry; len(carry) != 1 || carry[0].SampleID != "it0002-s000" {
		t.Fatalf("carried %+v, want it0002-s000, the one program that finished in the drain", carry)
	}
	sampled := len(f.sampled)
	env = slowEnv(t, f)
	env.SetStartTime(start.Add(600 * time.Second))
	res := trainResult(t, env, next)
	if res.Completed != 3 || len(f.updates) != 3 || !slices.Equal(f.updates[2].SampleIDs, []string{"it0002-s000"}) {
		t.Fatalf("%d iterations, updates %d: want a third that learns from the carried program", res.Completed, len(f.updates))
	}
	for _, ids := range f.sampled[sampled:] {
		if countPrefix(ids, "it") > 0 {
			t.Fatalf("training programs %v sampled after the share", ids)
		}
	}
	if res.Final == nil || !strings.HasPrefix(res.Final.SampleID, "eval-") {
		t.Fatalf("want best-of-K's choice graded, got %+v", res.Final)
	}
}

// Training stops at its share of the time budget in the middle of an iteration that waits for
// slow programs: the update learns from the one program that finished, those in flight are
// cancelled and counted nowhere, best-of-K stops at its deadline with the program that
// finished by then, and the whole run ends within its budget.
//
// Timeline (workflow seconds): iteration 1's eight programs finish at 100, iteration 2 updates
// on four of them at once, iteration 3 has it0002-s000 at 510 and nothing else before the
// share (600); evaluation starts at 610, eval-scratch-000 finishes at 710, eval-scratch-001
// runs until best-of-K's deadline (800).
func TestTimeBudgetStopsASlowIterationAtTheShare(t *testing.T) {
	f, env, in := slowRun(t, 1000, func(id string) time.Duration {
		if id == "eval-scratch-000" {
			return 100 * time.Second
		}
		return 5000 * time.Second
	})
	start := env.Now()
	res := trainResult(t, env, in)
	took := env.Now().Sub(start)

	if res.Completed != 3 || len(f.updates) != 3 {
		t.Fatalf("%d iterations completed (%d updates), want 3: the third cut at the share", res.Completed, len(f.updates))
	}
	last := f.updates[2]
	if !slices.Equal(last.SampleIDs, []string{"it0002-s000"}) || len(last.Stale) != 0 {
		t.Fatalf("the cut iteration updated on %v (stale %v), want the one program that finished", last.SampleIDs, last.Stale)
	}
	if e := last.Metrics.ElapsedS; e < 600 || e > 601 {
		t.Fatalf("the cut iteration was scored at %.0f s, want at the share (600 s of 1000)", e)
	}
	// 8 + 1 finished: the seven cancelled programs are neither failures nor rewards.
	if res.Programs != 9 || last.Metrics.Samples != 1 {
		t.Fatalf("%d training programs counted (%d in the last update), want the 9 that finished", res.Programs, last.Metrics.Samples)
	}
	if res.Final == nil || res.Final.SampleID != "eval-scratch-000" {
		t.Fatalf("best-of-K chose %+v, want eval-scratch-000, the one evaluation program finished by its deadline", res.Final)
	}
	if n := countPrefix(f.executed, "eval-improve"); n != 0 {
		t.Fatalf("%d improve draws ran after best-of-K's deadline", n)
	}
	notes := strings.Join(res.TimeBudgetNotes, "\n")
	for _, want := range []string{"training stopped at its 60% share of the time budget after 3 iterations (7 programs in flight cancelled)",
		"best-of-K stopped at its deadline (80% of the time budget): 1 of its programs finished, 1 cancelled"} {
		if !strings.Contains(notes, want) {
			t.Fatalf("notes %q, want %q", notes, want)
		}
	}
	if res.Answer == nil || res.Answer.Test == nil {
		t.Fatalf("no answer after the time stops: %+v", res.Answer)
	}
	// The mocked answer takes no workflow time; the stops are timers, so nothing waits past
	// best-of-K's deadline (a real program's cancel waits a heartbeat, under 30 s).
	if took > 1000*time.Second {
		t.Fatalf("the run took %v of workflow time, want within its 1000 s budget", took)
	}
}

// Training that ends early (at its iterations, not its share) gives best-of-K EvalShare of the
// budget from its end, not until 80%: the time left goes to the final answer. Iteration 1's
// programs finish at 100 s and its update at 110 s; best-of-K stops at 310 s, with the one
// program that finished, instead of waiting for the slow one until 800 s.
func TestTimeBudgetBestOfKShareStartsWhenTrainingEnds(t *testing.T) {
	_, env, in := slowRun(t, 1000, func(id string) time.Duration {
		if id == "eval-scratch-000" {
			return 100 * time.Second
		}
		return 5000 * time.Second
	})
	in.Iterations = 1
	start := env.Now()
	res := trainResult(t, env, in)
	if took := env.Now().Sub(start); took < 310*time.Second || took > 320*time.Second {
		t.Fatalf("the run took %v of workflow time, want best-of-K to stop at 310 s (the mocked answer takes none)", took)
	}
	if res.Final == nil || res.Final.SampleID != "eval-scratch-000" {
		t.Fatalf("best-of-K chose %+v, want eval-scratch-000, the one evaluation program finished by its deadline", res.Final)
	}
	if notes := strings.Join(res.TimeBudgetNotes, "\n"); !strings.Contains(notes, "best-of-K stopped at its deadline (31% of the time budget): 1 of its programs finished, 1 cancelled") {
		t.Fatalf("notes %q do not say best-of-K stopped at 31%% of the budget", notes)
	}
	if res.Answer == nil || res.Answer.Test == nil {
		t.Fatalf("no answer after best-of-K: %+v", res.Answer)
	}
}

// When no evaluation program finishes by best-of-K's deadline the run says so, grades nothing
// as best-of-K's choice, and builds the answer from training's programs.
func TestTimeBudgetEvaluationFinishesNothing(t *testing.T) {
	f, env, in := slowRun(t, 1000, func(string) time.Duration { return 5000 * time.Second })
	start := env.Now()
	res := trainResult(t, env, in)
	if took := env.Now().Sub(start); took > 1000*time.Second {
		t.Fatalf("the run took %v of workflow time, want within its 1000 s budget", took)
	}
	if res.Final != nil {
		t.Fatalf("best-of-K graded %s, though none of its programs finished", res.Final.SampleID)
	}
	if n := countPrefix(f.executed, "eval-"); n != 0 {
		t.Fatalf("%d evaluation programs reported after being cancelled", n)
	}
	if notes := strings.Join(res.TimeBudgetNotes, "\n"); !strings.Contains(notes, "0 of its programs finished, 2 cancelled; none to choose from, so the answer is built from training's programs") {
		t.Fatalf("notes %q do not say best-of-K had nothing to choose from", notes)
	}
	if res.Best == nil || res.Answer == nil || res.Answer.Test == nil || len(f.candidates) == 0 || countPrefix(f.candidates[0], "it") == 0 {
		t.Fatalf("want the best training program graded and the answer built from training's programs: best %+v, answer %+v, candidates %v",
			res.Best, res.Answer, f.candidates)
	}
}

// Training that ends after best-of-K's deadline (an update running past it) leaves best-of-K
// out: nothing is sampled for it, and the run says so.
func TestTimeBudgetSkipsBestOfKPastItsDeadline(t *testing.T) {
	f, _, in := slowRun(t, 1000, func(string) time.Duration { return 100 * time.Second })
	f.updateWall = 450 * time.Second // the second update runs from 550 s to 1000 s
	res := trainResult(t, slowEnv(t, f), in)
	if res.Completed != 2 || res.Final != nil {
		t.Fatalf("%d iterations, best-of-K's choice %+v: want 2 and none", res.Completed, res.Final)
	}
	for _, ids := range f.sampled {
		if countPrefix(ids, "eval-") > 0 {
			t.Fatalf("evaluation programs %v sampled after best-of-K's deadline", ids)
		}
	}
	if notes := strings.Join(res.TimeBudgetNotes, "\n"); !strings.Contains(notes, "best-of-K skipped: training ended after its deadline (80% of the time budget)") {
		t.Fatalf("notes %q do not say best-of-K was skipped", notes)
	}
	if res.Answer == nil || res.Answer.Test == nil {
		t.Fatalf("no answer from training's programs: %+v", res.Answer)
	}
}

// With no time budget the same slow programs are waited for: every iteration learns from B,
// best-of-K waits for all its programs, and nothing is noted.
func TestNoTimeBudgetWaitsForSlowPrograms(t *testing.T) {
	f, env, in := slowRun(t, 0, func(string) time.Duration { return 5000 * time.Second })
	in.Iterations, in.FinalTuneBudget = 3, 2 // without a time budget the tuning needs its own
	res := trainResult(t, env, in)
	if res.Completed != 3 || len(f.updates) != 3 {
		t.Fatalf("%d iterations completed (%d updates), want all 3", res.Completed, len(f.updates))
	}
	for _, u := range f.updates {
		if len(u.SampleIDs) != in.Batch {
			t.Fatalf("iteration %d updated on %d programs, want B = %d", u.Iteration, len(u.SampleIDs), in.Batch)
		}
	}
	if n := countPrefix(f.executed, "eval-"); n != 2*in.EvalSamples {
		t.Fatalf("%d evaluation programs finished, want every scratch and improve draw (%d)", n, 2*in.EvalSamples)
	}
	if len(res.TimeBudgetNotes) != 0 || res.Final == nil {
		t.Fatalf("notes %q, final %+v: want none and a chosen program", res.TimeBudgetNotes, res.Final)
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
