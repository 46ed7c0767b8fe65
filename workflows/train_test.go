package workflows

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/log"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
	"mlerl/model"
	"mlerl/reward"
	"mlerl/settings"
)

func input() TrainInput {
	s := settings.Defaults()
	s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.StalenessIterations, s.BufferCapacity, s.ContinueEvery = 3, 4, 2, 2, 2, 8, 100
	return TrainInput{Run: "r", Task: "leaf-classification", Settings: s, ExecTimeout: time.Hour}
}

// fakeRun mocks every activity; executions take a duration that depends on the sample so that
// some straggle across iterations.
type fakeRun struct {
	mu       sync.Mutex
	sampled  [][]string     // ids per SamplePrograms call
	redraws  map[string]int // SampleInput.RedrawRepeats by purpose
	edits    map[string]int // SampleInput.ImproveEdit by purpose
	updates  []activities.UpdateInput
	executed []string
	folds    []int               // ExecuteInput.Folds per execution
	rewards  []reward.SchemeName // ExecuteInput.Reward per execution
	graded   []string            // every FinalGrade, in order
	// gradedAfterBlend are the FinalGrades made once the answer was blended.
	gradedAfterBlend []string
	// The final answer's activities: the candidate lists asked for, the cross-validations run
	// (and their timeout), the programs ensembled and the answer blended.
	candidates [][]string
	askedMax   []int    // CandidatesInput.Max of each candidates call
	guarded    []string // the task of each candidates call that asked for guarded programs
	crossVal   []string
	cvTimeout  time.Duration
	ensembled  []string   // the latest selection's candidates
	ensembles  [][]string // every selection's candidates, in order
	blended    *activities.FinalAnswer
	blends     []activities.BlendInput // every blend, in order
	cvErr      error                   // CrossValidate's error, when set
	// predictions is each program's out-of-fold predictions' digest, when set (else each
	// program's own).
	predictions func(id string) string
	states      map[string]activities.RunState // SaveState's store
	calls       int                            // activity executions
	maxCalls    int                            // the most activity executions in one segment
	// queues is the task queues each activity type was sent to.
	queues map[string][]string
	// noticeLost is, per activity type, the longest a dead worker's attempt could hold the run:
	// the heartbeat timeout when there is one, else the start-to-close timeout.
	noticeLost map[string]time.Duration
	fallback   func(activities.UpdateInput) string // UpdateResult.Fallback, when set
	onSave     func()                              // called as SaveState runs, when set
	// noSubmission says which programs write nothing when FinalGrade reruns them, when set.
	noSubmission func(id string) bool
	// tune answers TuneVariants, when set (else no program has variants); tunes records its
	// inputs.
	tune  func(in activities.TuneInput) activities.TuneResult
	tunes []activities.TuneInput
	// foldScores is each cross-validation's fold scores, when set (else none).
	foldScores func(id string) []float64
	// cvSeconds is each cross-validation's sandbox time, when set (else 2 s).
	cvSeconds func(id string) float64
	// cvWall is how long each cross-validation takes on the workflow's clock.
	cvWall time.Duration
	// runSeconds is the i-th picked candidate's run time on its validation split, when set
	// (else unknown).
	runSeconds func(i int) float64
	// updateWall is how long each policy update takes on the workflow's clock (the mocked
	// executions take real milliseconds, which that clock does not see).
	updateWall time.Duration
	// execWall, when set, is how long each execution takes on the workflow's clock; execWalls
	// lists the values it returns (a mock's delay is fixed, so each gets a mock of its own).
	execWall  func(id string) time.Duration
	execWalls []time.Duration

	// sampleFallback, when set, is the fallback SamplePrograms reports for a call.
	sampleFallback func(activities.SampleInput) string
}

func newEnv(_ *testing.T, f *fakeRun, duration func(id string) time.Duration, score func(id string) *float64) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var a *activities.Activities
	env.RegisterWorkflow(Train)
	env.RegisterWorkflow(FinalAnswer)
	env.SetOnActivityStartedListener(func(info *activity.Info, _ context.Context, _ converter.EncodedValues) {
		f.mu.Lock()
		defer f.mu.Unlock()
		f.calls++
		lost := info.HeartbeatTimeout
		if lost == 0 {
			lost = info.Deadline.Sub(info.StartedTime)
		}
		if f.noticeLost == nil {
			f.noticeLost = map[string]time.Duration{}
		}
		f.noticeLost[info.ActivityType.Name] = max(f.noticeLost[info.ActivityType.Name], lost)
		if f.queues == nil {
			f.queues = map[string][]string{}
		}
		if q := f.queues[info.ActivityType.Name]; !slices.Contains(q, info.TaskQueue) {
			f.queues[info.ActivityType.Name] = append(q, info.TaskQueue)
		}
	})
	env.OnActivity(a.InitPolicy, mock.Anything, mock.Anything).Return(activities.InitPolicyResult{
		Checkpoint: runstore.CheckpointKey(0), Task: model.Task{LowerIsBetter: true}}, nil)
	env.OnActivity(a.SamplePrograms, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SampleInput) ([]activities.SampleRef, error) {
			f.sampled = append(f.sampled, in.IDs)
			if f.redraws == nil {
				f.redraws = map[string]int{}
			}
			f.redraws[in.Purpose] = max(f.redraws[in.Purpose], in.RedrawRepeats)
			if f.edits == nil {
				f.edits = map[string]int{}
			}
			f.edits[in.Purpose] = max(f.edits[in.Purpose], in.ImproveEdit)
			var refs []activities.SampleRef
			for _, id := range in.IDs {
				refs = append(refs, activities.SampleRef{ID: id, Kind: model.KindScratch})
				if f.sampleFallback != nil {
					refs[len(refs)-1].Fallback = f.sampleFallback(in)
				}
			}
			return refs, nil
		})
	env.OnActivity(a.InstrumentPrograms, mock.Anything, mock.Anything).Return(activities.InstrumentResult{}, nil)
	execute := func(_ context.Context, in activities.ExecuteInput) (activities.ExecuteResult, error) {
		// Mocked activities run in real time in the test environment: a short real sleep
		// orders completions.
		time.Sleep(duration(in.SampleID))
		f.mu.Lock()
		defer f.mu.Unlock()
		f.executed = append(f.executed, in.SampleID)
		f.folds = append(f.folds, in.Folds)
		f.rewards = append(f.rewards, in.Reward)
		s := score(in.SampleID)
		r := activities.ExecuteResult{SampleID: in.SampleID, DurationS: duration(in.SampleID).Seconds(), Score: s, Valid: s != nil}
		if s != nil {
			r.Reward = -*s
		} else {
			r.Reward = -10
		}
		return r, nil
	}
	for _, d := range f.execWalls {
		env.OnActivity(a.ExecuteProgram, mock.Anything, mock.MatchedBy(func(in activities.ExecuteInput) bool { return f.execWall(in.SampleID) == d })).
			Return(execute).After(d)
	}
	env.OnActivity(a.ExecuteProgram, mock.Anything, mock.Anything).Return(execute)
	env.OnActivity(a.UpdatePolicy, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.UpdateInput) (activities.UpdateResult, error) {
			f.updates = append(f.updates, in)
			r := activities.UpdateResult{Checkpoint: runstore.CheckpointKey(in.Iteration)}
			if f.fallback != nil {
				r.Fallback = f.fallback(in)
			}
			return r, nil
		}).After(f.updateWall)
	env.OnActivity(a.RefreshBuffer, mock.Anything, mock.Anything).Return(activities.BufferResult{Size: 1}, nil)
	env.OnActivity(a.FinalGrade, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FinalGradeInput) (activities.FinalGradeResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.graded = append(f.graded, in.SampleID)
			if f.blended != nil {
				f.gradedAfterBlend = append(f.gradedAfterBlend, in.SampleID)
			}
			out := activities.FinalGradeResult{SampleID: in.SampleID, DurationS: 1}
			out.Report.SubmissionExist = f.noSubmission == nil || !f.noSubmission(in.SampleID)
			out.Report.ValidSubmission = out.Report.SubmissionExist
			if !out.Report.SubmissionExist {
				out.Reason = "exited with code 1"
			}
			return out, nil
		})
	env.OnActivity(a.CandidatePrograms, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.CandidatesInput) (activities.CandidatesResult, error) {
			f.candidates = append(f.candidates, in.IDs)
			f.askedMax = append(f.askedMax, in.Max)
			if in.Guard {
				f.guarded = append(f.guarded, in.Task)
			}
			out := activities.CandidatesResult{IDs: in.IDs[:min(in.Max, len(in.IDs))]}
			for i := range out.IDs {
				if f.runSeconds != nil {
					out.Seconds = append(out.Seconds, f.runSeconds(i))
				}
			}
			if in.Guard && len(out.IDs) > 0 {
				// The best and the worst program guarded: the answer cross-validates only the best.
				for _, id := range []string{out.IDs[0], out.IDs[len(out.IDs)-1]} {
					out.Guarded = append(out.Guarded, activities.Guard{From: id, To: id, Change: "postprocess=none -> clip0"})
				}
			}
			return out, nil
		})
	env.OnActivity(a.CrossValidate, mock.Anything, mock.Anything).Return(
		func(ctx context.Context, in activities.CrossValidateInput) (activities.CrossValidateResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.crossVal = append(f.crossVal, in.SampleID)
			if dl, ok := ctx.Deadline(); ok {
				f.cvTimeout = max(f.cvTimeout, time.Until(dl))
			}
			if f.cvErr != nil {
				return activities.CrossValidateResult{}, f.cvErr
			}
			digest := "oof-" + in.SampleID
			if f.predictions != nil {
				digest = f.predictions(in.SampleID)
			}
			d := 2.0
			if f.cvSeconds != nil {
				d = f.cvSeconds(in.SampleID)
			}
			res := activities.CrossValidateResult{SampleID: in.SampleID, Score: score(in.SampleID), DurationS: d, PredictionsSHA256: digest}
			if f.foldScores != nil {
				res.FoldScores = f.foldScores(in.SampleID)
			}
			return res, nil
		}).After(f.cvWall)
	env.OnActivity(a.TuneVariants, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.TuneInput) (activities.TuneResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.tunes = append(f.tunes, in)
			if f.tune == nil {
				return activities.TuneResult{Note: "not written as code actions: nothing to tune"}, nil
			}
			return f.tune(in), nil
		})
	env.OnActivity(a.SelectEnsemble, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.EnsembleInput) (activities.EnsembleResult, error) {
			f.ensembled = in.SampleIDs
			f.ensembles = append(f.ensembles, in.SampleIDs)
			// The two best, in thirds: enough to check the members flow on to refits and blend.
			out := activities.EnsembleResult{CVScore: 0.1}
			for i, id := range in.SampleIDs[:min(2, len(in.SampleIDs))] {
				out.Members = append(out.Members, activities.AnswerMember{SampleID: id, Weight: []float64{2. / 3, 1. / 3}[i]})
			}
			return out, nil
		})
	env.OnActivity(a.BlendAnswer, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.BlendInput) (activities.FinalGradeResult, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			f.blends = append(f.blends, in)
			if in.Untuned {
				return activities.FinalGradeResult{SampleID: "untuned-answer"}, nil
			}
			f.blended = &in.Answer
			return activities.FinalGradeResult{SampleID: "final-answer"}, nil
		})
	env.OnActivity(a.Report, mock.Anything, mock.Anything).Return(activities.ReportResult{Table: "t"}, nil)
	env.OnActivity(a.SaveState, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SaveStateInput) (string, error) {
			if f.onSave != nil {
				f.onSave()
			}
			f.mu.Lock()
			defer f.mu.Unlock()
			if f.states == nil {
				f.states = map[string]activities.RunState{}
			}
			key := fmt.Sprintf("state-%d", in.State.Segments)
			f.states[key] = in.State
			return key, nil
		})
	env.OnActivity(a.LoadState, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.LoadStateInput) (activities.RunState, error) {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.states[in.Key], nil
		})
	return env
}

func TestTrainKeepsMBInFlightAndUpdatesAfterB(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return time.Second },
		func(id string) *float64 {
			if strings.HasSuffix(id, "1") {
				v := 0.5
				return &v
			}
			return nil
		})
	in := input()
	in.RewardFolds, in.Reward, in.RedrawRepeats, in.ImproveEdit = 3, "bounded", 5, 2
	env.ExecuteWorkflow(Train, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	// Edits apply to every improve prompt, the evaluation's included.
	if f.edits[activities.PurposeTrain] != 2 || f.edits[activities.PurposeEvalImprove] != 2 {
		t.Fatalf("improve edits by purpose %v, want 2 for training and evaluation", f.edits)
	}
	// Redraws spend training budget on new programs; evaluation samples the policy as it is.
	if f.redraws[activities.PurposeTrain] != 5 || f.redraws[activities.PurposeEvalScratch] != 0 || f.redraws[activities.PurposeEvalImprove] != 0 {
		t.Fatalf("redraw repeats by purpose %v, want 5 for training only", f.redraws)
	}
	for i, n := range f.folds {
		if n != 3 || f.rewards[i] != "bounded" {
			t.Fatalf("execution %d asked for %d reward folds and reward %q, want the run's 3 and bounded", i, n, f.rewards[i])
		}
	}
	if len(f.updates) != 3 {
		t.Fatalf("want one update per iteration, got %d", len(f.updates))
	}
	for _, u := range f.updates {
		if len(u.SampleIDs) != 4 {
			t.Fatalf("iteration %d updated on %d samples, want B=4", u.Iteration, len(u.SampleIDs))
		}
		if u.Checkpoint != runstore.CheckpointKey(u.Iteration-1) {
			t.Fatalf("iteration %d started from %s, want the previous checkpoint", u.Iteration, u.Checkpoint)
		}
	}
	// The first call fills m*B = 8; afterwards each finished program is replaced, so every
	// program but the first 8 replaces one that finished: sampled = executed + still in flight.
	if len(f.sampled[0]) != 8 {
		t.Fatalf("the first sampling asked for %d programs, want m*B = 8", len(f.sampled[0]))
	}
	total := 0
	for _, ids := range f.sampled {
		total += countPrefix(ids, "it")
	}
	if trainExecuted := countPrefix(f.executed, "it"); total < trainExecuted || total > trainExecuted+8 {
		t.Fatalf("%d programs sampled for training, %d executed: at most m*B = 8 may be left in flight", total, trainExecuted)
	}
	// No sample is used twice by the updates.
	seen := map[string]bool{}
	for _, u := range f.updates {
		for _, id := range u.SampleIDs {
			if seen[id] {
				t.Fatalf("sample %s counted twice", id)
			}
			seen[id] = true
		}
	}
	var res TrainResult
	env.GetWorkflowResult(&res)
	if res.Final == nil || !strings.HasSuffix(res.Final.SampleID, "1") {
		t.Fatalf("the final grade must go to a valid evaluation sample, got %+v", res.Final)
	}
}

// A worker that dies mid-activity (a crash, or `starter run` interrupted and resumed) must not
// hold the run for a long start-to-close timeout: every activity either heartbeats or is short.
func TestALostWorkerIsNoticedWithinAMinute(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { v := 0.5; return &v })
	in := input()
	in.ContinueEvery = 2 // SaveState and LoadState run too
	env.ExecuteWorkflow(Train, in)
	if err := env.GetWorkflowError(); err != nil && !workflow.IsContinueAsNewError(err) {
		t.Fatal(err)
	}
	for _, name := range []string{"InitPolicy", "SamplePrograms", "InstrumentPrograms", "ExecuteProgram", "UpdatePolicy", "RefreshBuffer", "SaveState"} {
		lost, ok := f.noticeLost[name]
		if !ok {
			t.Fatalf("%s never ran (ran: %v)", name, f.noticeLost)
		}
		if lost <= 0 || lost > time.Minute {
			t.Errorf("a worker lost during %s holds the run for %v: give it a heartbeat timeout", name, lost)
		}
	}
}

func TestStragglersCarryOverInsteadOfBlocking(t *testing.T) {
	f := &fakeRun{}
	// Iteration 1's even samples are slow; the first update must not wait for them.
	slow := func(id string) bool {
		var it, k int
		fmt.Sscanf(id, "it%04d-s%03d", &it, &k)
		return it == 1 && k%2 == 0
	}
	env := newEnv(t, f, func(id string) time.Duration {
		switch {
		case slow(id):
			return 300 * time.Millisecond
		case strings.HasPrefix(id, "it0001"):
			return time.Millisecond
		}
		return 900 * time.Millisecond // later samples finish after iteration 1's stragglers
	}, func(string) *float64 { return nil })
	in := input()
	in.StalenessIterations = 0
	env.ExecuteWorkflow(Train, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(f.updates) != 3 {
		t.Fatalf("want 3 updates, got %d", len(f.updates))
	}
	for _, id := range f.updates[0].SampleIDs {
		if slow(id) {
			t.Fatalf("the first update waited for the straggler %s", id)
		}
	}
	carried := 0
	for _, u := range f.updates[1:] {
		for _, id := range u.SampleIDs {
			if slow(id) {
				carried++
			}
		}
	}
	if carried == 0 {
		t.Fatal("stragglers of iteration 1 must be used by a later update")
	}
}

// A matched arm's budget (sandbox-seconds) ends training as soon as it is used up, mid-iteration,
// and the program that crosses it is counted or left out, whichever lands nearer the budget: the
// arm uses within half a program of its budget, not up to a whole program over.
func TestSandboxBudgetStopsMidIteration(t *testing.T) {
	const each = 10 * time.Millisecond // every program reports 0.01 sandbox-seconds
	for _, c := range []struct {
		name            string
		budget          float64
		used, leftOut   float64
		lastIterLearned int
	}{
		// Iteration 1 learns from 4 programs (0.04); the 6th program crosses the budget.
		{"the crossing program lands nearer: counted", 0.057, 0.06, 0, 2},
		{"leaving it out lands nearer: left out", 0.053, 0.05, 0.01, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeRun{}
			env := newEnv(t, f, func(string) time.Duration { return each }, func(string) *float64 { v := 0.5; return &v })
			in := input()
			in.Iterations, in.SandboxSeconds = 10, c.budget
			res := trainResult(t, env, in)
			if math.Abs(res.SandboxSeconds-c.used) > 1e-9 || math.Abs(res.LeftOutSeconds-c.leftOut) > 1e-9 {
				t.Fatalf("used %.3f sandbox-seconds and left out %.3f of a %.3f budget: want %.3f used, %.3f left out",
					res.SandboxSeconds, res.LeftOutSeconds, c.budget, c.used, c.leftOut)
			}
			if len(f.updates) != 2 || res.Completed != 2 {
				t.Fatalf("%d updates, %d iterations completed: want 2 (the budget runs out in iteration 2)", len(f.updates), res.Completed)
			}
			if n := len(f.updates[1].SampleIDs); n != c.lastIterLearned {
				t.Fatalf("the last iteration learned from %d programs: want the %d counted before the budget closed", n, c.lastIterLearned)
			}
			if res.Programs != len(f.updates[0].SampleIDs)+len(f.updates[1].SampleIDs) {
				t.Fatalf("%d programs counted in the budget, %d learned from: every counted program is learned from, no other",
					res.Programs, len(f.updates[0].SampleIDs)+len(f.updates[1].SampleIDs))
			}
		})
	}
}

// The drain before a continue-as-new stops at the budget too (counting every program in flight
// there overshot a leafmatched cell by 9%), with the same rule for the program that crosses it.
// What the drain counted is learned from: the next segment runs one more iteration on the
// carried programs and samples nothing (before, they were counted and never looked at); a
// left-out program is not carried.
func TestSandboxBudgetStopsTheDrainBeforeContinueAsNew(t *testing.T) {
	const each = 10 * time.Millisecond
	for _, c := range []struct {
		name          string
		budget        float64
		used, leftOut float64
		updates       int
	}{
		// Iteration 1 learns from B = 4 of the 8 in flight (0.04 s) and hands over; the 5th
		// program, the first of the drain, crosses the budget with 3 still in flight.
		{"counted, and learned from after the continue-as-new", 0.047, 0.05, 0, 2},
		{"left out", 0.043, 0.04, 0.01, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeRun{}
			in := input()
			in.Iterations, in.ContinueEvery, in.SandboxSeconds = 10, 1, c.budget
			res, segments := runSegments(t, f, in, func(string) time.Duration { return each })
			if math.Abs(res.SandboxSeconds-c.used) > 1e-9 || math.Abs(res.LeftOutSeconds-c.leftOut) > 1e-9 {
				t.Fatalf("used %.3f sandbox-seconds and left out %.3f of a %.3f budget: want %.3f used, %.3f left out",
					res.SandboxSeconds, res.LeftOutSeconds, c.budget, c.used, c.leftOut)
			}
			if len(f.updates) != c.updates {
				t.Fatalf("%d segments, %d updates: want %d", segments, len(f.updates), c.updates)
			}
			learned := 0
			for _, u := range f.updates {
				learned += len(u.SampleIDs)
			}
			if res.Programs != learned {
				t.Fatalf("%d programs counted in the budget, %d learned from: every counted program is learned from", res.Programs, learned)
			}
			for _, ids := range f.sampled {
				for _, id := range ids {
					if strings.HasPrefix(id, "it0002") {
						t.Fatalf("sampled %s: the drained programs' iteration samples nothing", id)
					}
				}
			}
		})
	}
}

// The budget rule as a pure decision: the crossing program is left out only when that lands
// nearer the budget and the caller has something else to learn from; the budget closes either
// way, and nothing is decided twice or without a budget.
func TestCrossesBudget(t *testing.T) {
	for _, c := range []struct {
		name                   string
		nearest                bool
		budget, used, d        float64
		mayLeaveOut, closed    bool
		wantLeftOut, wantClose bool
	}{
		{"under the budget after it", true, 10, 5, 4, true, false, false, false},
		{"nearer counted", true, 10, 8, 3, true, false, false, true},
		{"tie counted", true, 10, 8, 4, true, false, false, true},
		{"nearer left out", true, 10, 9, 7, true, false, true, true},
		{"nothing else to learn from: counted", true, 10, 9, 7, false, false, false, true},
		{"already closed", true, 10, 9, 7, true, true, false, true},
		{"no budget", true, 0, 9, 7, true, false, false, false},
		{"histories before version 3", false, 10, 9, 7, true, false, false, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &trainRun{in: input(), nearestBudget: c.nearest, logger: log.NewStructuredLogger(slog.New(slog.DiscardHandler))}
			r.in.SandboxSeconds = c.budget
			r.st.SandboxSeconds, r.st.BudgetClosed = c.used, c.closed
			if got := r.crossesBudget(c.d, c.mayLeaveOut); got != c.wantLeftOut {
				t.Fatalf("left out: got %v, want %v", got, c.wantLeftOut)
			}
			if r.st.BudgetClosed != c.wantClose {
				t.Fatalf("budget closed: got %v, want %v", r.st.BudgetClosed, c.wantClose)
			}
			if want := map[bool]float64{true: c.d}[c.wantLeftOut]; r.st.LeftOutSandboxSeconds != want {
				t.Fatalf("left-out seconds %.1f, want %.1f", r.st.LeftOutSandboxSeconds, want)
			}
		})
	}
}

// runSegments runs Train to the end, following continue-as-new, and returns the result and the
// number of segments.
func runSegments(t *testing.T, f *fakeRun, in TrainInput, duration func(string) time.Duration) (TrainResult, int) {
	t.Helper()
	f.maxCalls = 0
	for segments := 1; segments < 1000; segments++ {
		before := f.calls
		env := newEnv(t, f, duration, func(string) *float64 { return nil })
		env.ExecuteWorkflow(Train, in)
		f.maxCalls = max(f.maxCalls, f.calls-before)
		err := env.GetWorkflowError()
		var can *workflow.ContinueAsNewError
		if errors.As(err, &can) {
			var next TrainInput
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
				t.Fatal(err)
			}
			in = next
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		var res TrainResult
		env.GetWorkflowResult(&res)
		return res, segments
	}
	t.Fatal("too many segments")
	return TrainResult{}, 0
}

func TestContinueAsNewLosesAndRepeatsNothing(t *testing.T) {
	f := &fakeRun{}
	in := input()
	in.Iterations, in.ContinueEvery, in.StalenessIterations = 7, 3, 0
	// Some samples straggle, so the drain before each continue-as-new has work to hand over.
	_, segments := runSegments(t, f, in, func(id string) time.Duration {
		if strings.HasSuffix(id, "0") {
			return 50 * time.Millisecond
		}
		return time.Millisecond
	})
	if segments != 3 {
		t.Fatalf("7 iterations, 3 per segment: want 3 segments, got %d", segments)
	}
	if len(f.updates) != 7 {
		t.Fatalf("want 7 updates, got %d", len(f.updates))
	}
	used := map[string]int{}
	for i, u := range f.updates {
		if u.Iteration != i+1 || len(u.SampleIDs) != 4 {
			t.Fatalf("update %d: iteration %d with %d samples", i, u.Iteration, len(u.SampleIDs))
		}
		if i > 0 && u.Checkpoint != runstore.CheckpointKey(i) {
			t.Fatalf("iteration %d started from %s after a continue-as-new", u.Iteration, u.Checkpoint)
		}
		for _, id := range u.SampleIDs {
			used[id]++
		}
	}
	for id, n := range used {
		if n != 1 {
			t.Fatalf("sample %s used by %d updates", id, n)
		}
	}
	// Everything executed before the last segment was either used or is still carried.
	executed := map[string]bool{}
	for _, id := range f.executed {
		executed[id] = true
	}
	for _, st := range f.states {
		for _, c := range st.Carry {
			if !executed[c.SampleID] {
				t.Fatalf("carried sample %s never executed", c.SampleID)
			}
		}
	}
}

func TestTwoHundredIterationsKeepHistoriesSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: 200 iterations in -short mode")
	}
	f := &fakeRun{}
	in := input()
	in.Iterations, in.ContinueEvery, in.Batch, in.Oversample = 200, 10, 2, 2
	_, segments := runSegments(t, f, in, func(string) time.Duration { return 0 })
	if segments != 20 || len(f.updates) != 200 {
		t.Fatalf("%d segments, %d updates", segments, len(f.updates))
	}
	// The test environment keeps no event history, so bound it: each activity adds at most three
	// events (scheduled, started, closed) plus a workflow task's three, and a segment has a few
	// more of its own. Temporal suggests continuing as new at 4,096 events (and stops at 51,200).
	bound := 6*f.maxCalls + 20
	if bound > 1000 {
		t.Fatalf("a segment ran %d activities: up to %d history events, not well under 4,096", f.maxCalls, bound)
	}
	t.Logf("at most %d activities per segment, so at most %d history events", f.maxCalls, bound)
}

func TestPauseResumeAndStopSignals(t *testing.T) {
	t.Run("pause until resumed", func(t *testing.T) {
		f := &fakeRun{}
		env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { return nil })
		start := env.Now()
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(PauseSignal, nil) }, 0)
		env.RegisterDelayedCallback(func() {
			v, err := env.QueryWorkflow(ProgressQuery)
			if err != nil {
				t.Error(err)
				return
			}
			var p Progress
			v.Get(&p)
			if !p.Paused || p.Phase != "paused" {
				t.Errorf("an hour after pausing: %+v", p)
			}
			env.SignalWorkflow(ResumeSignal, nil)
		}, time.Hour)
		env.ExecuteWorkflow(Train, input())
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if len(f.updates) != 3 || env.Now().Sub(start) < time.Hour {
			t.Fatalf("%d updates after %v: the run must wait for resume, then finish", len(f.updates), env.Now().Sub(start))
		}
	})
	t.Run("stop evaluates and reports early", func(t *testing.T) {
		f := &fakeRun{}
		env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { return nil })
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(StopSignal, nil) }, 0)
		res := trainResult(t, env, input())
		if !res.Stopped || len(f.updates) != 0 || res.Report.Table == "" {
			t.Fatalf("stopped %v after %d updates, report %q", res.Stopped, len(f.updates), res.Report.Table)
		}
	})
}

func countPrefix(ids []string, prefix string) int {
	n := 0
	for _, id := range ids {
		if strings.HasPrefix(id, prefix) {
			n++
		}
	}
	return n
}

// A pause or stop that arrives while a segment hands over to the next (draining, saving the
// state) is carried by the continue-as-new input, not lost with the old history.
func TestSignalsDuringContinueAsNewCarryOver(t *testing.T) {
	for _, tc := range []struct {
		signal string
		want   func(TrainInput) bool
	}{
		{PauseSignal, func(in TrainInput) bool { return in.Paused && !in.Stopping }},
		{StopSignal, func(in TrainInput) bool { return in.Stopping && !in.Paused }},
	} {
		t.Run(tc.signal, func(t *testing.T) {
			f := &fakeRun{}
			in := input()
			in.ContinueEvery = 1
			env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { return nil })
			f.onSave = func() { env.SignalWorkflow(tc.signal, nil) }
			env.ExecuteWorkflow(Train, in)
			var can *workflow.ContinueAsNewError
			if err := env.GetWorkflowError(); !errors.As(err, &can) {
				t.Fatalf("want a continue-as-new after one iteration, got %v", err)
			}
			var next TrainInput
			if err := converter.GetDefaultDataConverter().FromPayloads(can.Input, &next); err != nil {
				t.Fatal(err)
			}
			if !tc.want(next) {
				t.Fatalf("%s during the hand-over: next segment's input has paused=%v stopping=%v", tc.signal, next.Paused, next.Stopping)
			}
		})
	}
	t.Run("the next segment honours them", func(t *testing.T) {
		f := &fakeRun{}
		in := input()
		in.Stopping = true
		env := newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { return nil })
		env.ExecuteWorkflow(Train, in)
		var res TrainResult
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		env.GetWorkflowResult(&res)
		if !res.Stopped || len(f.updates) != 0 {
			t.Fatalf("a segment started stopping: stopped %v after %d updates", res.Stopped, len(f.updates))
		}

		f = &fakeRun{}
		in = input()
		in.Paused = true
		env = newEnv(t, f, func(string) time.Duration { return time.Millisecond }, func(string) *float64 { return nil })
		start := env.Now()
		env.RegisterDelayedCallback(func() { env.SignalWorkflow(ResumeSignal, nil) }, time.Hour)
		env.ExecuteWorkflow(Train, in)
		if err := env.GetWorkflowError(); err != nil {
			t.Fatal(err)
		}
		if len(f.updates) != 3 || env.Now().Sub(start) < time.Hour {
			t.Fatalf("a segment started paused ran %d updates by %v: it must wait for resume", len(f.updates), env.Now().Sub(start))
		}
	})
}
