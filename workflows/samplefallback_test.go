package workflows

import (
	"testing"
	"time"

	"mlerl/activities"
)

// A damaged checkpoint that sampling steps over (the activity reads an earlier good one) is
// shown where the user looks, not only in the worker's log: once in the progress query's
// fallbacks (`starter status`, the console's notes), and on that iteration's metrics line, even
// though every later sampling call meets it again.
func TestSamplingFallbackIsVisibleInProgress(t *testing.T) {
	const note = "checkpoint checkpoints/iter-0001.json is damaged (x); continued from checkpoints/iter-0000.json"
	f := &fakeRun{sampleFallback: func(in activities.SampleInput) string {
		if in.Iteration >= 2 {
			return note
		}
		return ""
	}}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, func(string) *float64 { return nil })
	env.ExecuteWorkflow(Train, input())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatal(err)
	}
	var progress Progress
	if v, err := env.QueryWorkflow(ProgressQuery); err != nil {
		t.Fatal(err)
	} else if err := v.Get(&progress); err != nil {
		t.Fatal(err)
	}
	if len(progress.Fallbacks) != 1 || progress.Fallbacks[0] != note {
		t.Errorf("progress fallbacks %q: want the sampling fallback, once", progress.Fallbacks)
	}
	var res TrainResult
	env.GetWorkflowResult(&res)
	noted := 0
	for _, m := range res.Iterations {
		if m.CheckpointFallback == note {
			noted++
		}
	}
	if noted != 1 {
		t.Errorf("iterations %+v: want the fallback on one iteration's metrics line", res.Iterations)
	}
}
