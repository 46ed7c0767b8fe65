package workflows

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/mock"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
)

// A fresh execution after a failure (Recover, Attempt 1) starts from the state RecoverState
// rebuilt, never from the warm start: it does only the iterations not yet done, from the last
// good checkpoint, under sample ids of its own so nothing the failed execution wrote is
// overwritten; and it shows the fallbacks in its progress.
func TestRecoveredRunContinuesFromTheLastGoodState(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, func(string) *float64 { return nil })
	var a *activities.Activities
	best := 0.7
	recovered := activities.RunState{Iteration: 2, Checkpoint: runstore.CheckpointKey(2), Best: &best,
		Recent: []activities.IterationMetrics{{Iteration: 1}, {Iteration: 2}}, SamplesDone: 8,
		Fallbacks:   []string{"checkpoint checkpoints/iter-0003.json is damaged (truncated); continued from checkpoints/iter-0002.json"},
		Carry:       []activities.ExecuteResult{{SampleID: "it0003-s000", Reward: -1}}, // completed, never used
		NewFallback: "checkpoint checkpoints/iter-0003.json is damaged (truncated); continued from checkpoints/iter-0002.json"}
	env.OnActivity(a.RecoverState, mock.Anything, mock.Anything).Return(
		func(_ context.Context, in activities.RecoverInput) (activities.RunState, error) {
			if in.Run != "r" || in.Task != "leaf-classification" {
				t.Errorf("RecoverState(%+v)", in)
			}
			return recovered, nil
		})
	initCalled := false
	env.OnActivity(a.InitPolicy, mock.Anything, mock.Anything).Return(
		func(context.Context, activities.InitPolicyInput) (activities.InitPolicyResult, error) {
			initCalled = true
			return activities.InitPolicyResult{}, nil
		}).Maybe()
	in := input()
	in.Iterations, in.Recover, in.Attempt = 4, true, 1
	env.ExecuteWorkflow(Train, in)
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var progress Progress
	if v, err := env.QueryWorkflow(ProgressQuery); err != nil {
		t.Fatal(err)
	} else {
		v.Get(&progress)
	}
	var res TrainResult
	env.GetWorkflowResult(&res)
	if len(res.Iterations) != 4 || res.Iterations[0].Iteration != 1 || res.Iterations[3].Iteration != 4 {
		t.Errorf("result iterations %+v: want the recovered 1-2 kept and 3-4 added", res.Iterations)
	}
	if initCalled {
		t.Error("a recovered run must not start over from the warm start")
	}
	if len(f.updates) != 2 || f.updates[0].Iteration != 3 || f.updates[0].Checkpoint != runstore.CheckpointKey(2) || f.updates[1].Iteration != 4 {
		t.Fatalf("updates %+v: want iterations 3 (from checkpoint 2) and 4 only", f.updates)
	}
	if f.updates[0].Metrics.CheckpointFallback != recovered.NewFallback || f.updates[1].Metrics.CheckpointFallback != "" {
		t.Errorf("the recovery's fallback must be noted on the first redone iteration's metrics only: %q, %q",
			f.updates[0].Metrics.CheckpointFallback, f.updates[1].Metrics.CheckpointFallback)
	}
	if f.updates[0].SampleIDs[0] != "it0003-s000" {
		t.Errorf("the first update used %v: want the carried result first", f.updates[0].SampleIDs)
	}
	for _, ids := range f.sampled {
		for _, id := range ids {
			if !strings.Contains(id, "-r1-") {
				t.Errorf("sample %s: a recovered execution's ids must carry its attempt (-r1-)", id)
			}
		}
	}
	if progress.Attempt != 1 || len(progress.Fallbacks) != 1 || progress.Iteration != 4 || progress.BestScore == nil {
		t.Errorf("progress %+v: want attempt 1, the recovered iteration and best score, and the fallback", progress)
	}
}

// A fallback the update reports reaches the iteration's metrics and the progress query, which
// `starter status` prints.
func TestUpdateFallbackIsVisibleInProgress(t *testing.T) {
	const note = "checkpoint checkpoints/iter-0001.json is damaged (x); continued from checkpoints/iter-0000.json"
	f := &fakeRun{fallback: func(in activities.UpdateInput) string {
		if in.Iteration == 2 {
			return note
		}
		return ""
	}}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, func(string) *float64 { return nil })
	var res TrainResult
	env.ExecuteWorkflow(Train, input())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	env.GetWorkflowResult(&res)
	if len(res.Iterations) != 3 || res.Iterations[1].CheckpointFallback != note || res.Iterations[0].CheckpointFallback != "" {
		t.Fatalf("iterations %+v: want the fallback on iteration 2 only", res.Iterations)
	}
}
