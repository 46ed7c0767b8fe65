package workflows

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"
	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/model"
	"mlerl/model/ppo"
)

func input() TrainInput {
	return TrainInput{RunID: "r", Task: "leaf-classification", Iterations: 3, Batch: 4, Oversample: 2,
		Protocol: ProtocolLeakFree, Seed: 1, EvalSamples: 2, StalenessIterations: 2, BufferCapacity: 8,
		ImproveFraction: 0.5, ExecTimeout: time.Hour, Policy: model.DefaultConfig(), PPO: ppo.Paper()}
}

// fakeRun mocks every activity; executions take a duration that depends on the sample so that
// some straggle across iterations.
type fakeRun struct {
	mu       sync.Mutex
	sampled  [][]string // ids per SamplePrograms call
	updates  []activities.UpdateInput
	executed []string
	final    string
}

func newEnv(_ *testing.T, f *fakeRun, duration func(id string) time.Duration, score func(id string) *float64) *testsuite.TestWorkflowEnvironment {
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestWorkflowEnvironment()
	var a *activities.Activities
	env.RegisterWorkflow(Train)
	env.OnActivity(a.InitPolicy, mock.Anything, mock.Anything).Return(activities.InitPolicyResult{
		Checkpoint: activities.CheckpointKey(0), Task: model.Task{LowerIsBetter: true}}, nil)
	env.OnActivity(a.SamplePrograms, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.SampleInput) ([]activities.SampleRef, error) {
			f.sampled = append(f.sampled, in.IDs)
			var refs []activities.SampleRef
			for _, id := range in.IDs {
				refs = append(refs, activities.SampleRef{ID: id, Kind: model.KindScratch})
			}
			return refs, nil
		})
	env.OnActivity(a.InstrumentProgram, mock.Anything, mock.Anything).Return(activities.InstrumentResult{}, nil)
	env.OnActivity(a.ExecuteProgram, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.ExecuteInput) (activities.ExecuteResult, error) {
			// Mocked activities run in real time in the test environment: a short real sleep
			// orders completions.
			time.Sleep(duration(in.SampleID))
			f.mu.Lock()
			defer f.mu.Unlock()
			f.executed = append(f.executed, in.SampleID)
			s := score(in.SampleID)
			r := activities.ExecuteResult{SampleID: in.SampleID, DurationS: duration(in.SampleID).Seconds(), Score: s, Valid: s != nil}
			if s != nil {
				r.Reward = -*s
			} else {
				r.Reward = -10
			}
			return r, nil
		})
	env.OnActivity(a.UpdatePolicy, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.UpdateInput) (activities.UpdateResult, error) {
			f.updates = append(f.updates, in)
			return activities.UpdateResult{Checkpoint: activities.CheckpointKey(in.Iteration)}, nil
		})
	env.OnActivity(a.RefreshBuffer, mock.Anything, mock.Anything).Return(activities.BufferResult{Size: 1}, nil)
	env.OnActivity(a.FinalGrade, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.FinalGradeInput) (activities.FinalGradeResult, error) {
			f.final = in.SampleID
			return activities.FinalGradeResult{SampleID: in.SampleID}, nil
		})
	env.OnActivity(a.Report, mock.Anything, mock.Anything).Return(activities.ReportResult{Table: "t"}, nil)
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
	env.ExecuteWorkflow(Train, input())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	if len(f.updates) != 3 {
		t.Fatalf("want one update per iteration, got %d", len(f.updates))
	}
	for _, u := range f.updates {
		if len(u.SampleIDs) != 4 {
			t.Fatalf("iteration %d updated on %d samples, want B=4", u.Iteration, len(u.SampleIDs))
		}
		if u.Checkpoint != activities.CheckpointKey(u.Iteration-1) {
			t.Fatalf("iteration %d started from %s, want the previous checkpoint", u.Iteration, u.Checkpoint)
		}
	}
	// First iteration fills m*B = 8; later ones only top up what the update consumed.
	if len(f.sampled[0]) != 8 || len(f.sampled[1]) != 4 || len(f.sampled[2]) != 4 {
		t.Fatalf("samples per iteration %d %d %d, want 8 4 4", len(f.sampled[0]), len(f.sampled[1]), len(f.sampled[2]))
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
	if res.Final == nil || !strings.HasSuffix(f.final, "1") {
		t.Fatalf("the final grade must go to a valid evaluation sample, got %q", f.final)
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

func TestTrainRejectsBadInput(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return time.Second }, func(string) *float64 { return nil })
	in := input()
	in.Batch = 0
	env.ExecuteWorkflow(Train, in)
	err := env.GetWorkflowError()
	if err == nil || !strings.Contains(err.Error(), "batch must be at least 1") {
		t.Fatalf("want a clear bad-input error, got %v", err)
	}
}
