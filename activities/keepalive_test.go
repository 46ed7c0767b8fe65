package activities

import (
	"context"
	"errors"
	"testing"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/testsuite"
	"go.temporal.io/sdk/workflow"
)

// An activity busy for many heartbeat timeouts survives when it keeps alive, and times out
// when it does not (the control shows the timeout is really enforced).
func TestKeepAliveOutlivesTheHeartbeatTimeout(t *testing.T) {
	defer func(d time.Duration) { keepAliveInterval = d }(keepAliveInterval)
	keepAliveInterval = 20 * time.Millisecond
	busy := func(ctx context.Context, keep bool) error {
		if keep {
			defer keepAlive(ctx)()
		}
		select {
		case <-time.After(50 * keepAliveInterval):
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	run := func(ctx workflow.Context, keep bool) error {
		ctx = workflow.WithActivityOptions(ctx, workflow.ActivityOptions{StartToCloseTimeout: time.Minute,
			HeartbeatTimeout: 10 * keepAliveInterval, RetryPolicy: &temporal.RetryPolicy{MaximumAttempts: 1}})
		return workflow.ExecuteActivity(ctx, busy, keep).Get(ctx, nil)
	}
	for _, keep := range []bool{true, false} {
		var suite testsuite.WorkflowTestSuite
		env := suite.NewTestWorkflowEnvironment()
		env.RegisterActivityWithOptions(busy, activity.RegisterOptions{Name: "busy"})
		env.RegisterWorkflow(run)
		env.ExecuteWorkflow(run, keep)
		err := env.GetWorkflowError()
		var timeout *temporal.TimeoutError
		switch {
		case keep && err != nil:
			t.Fatalf("an activity that keeps alive failed: %v", err)
		case !keep && !errors.As(err, &timeout):
			t.Fatalf("an activity that never heartbeats must time out, got %v", err)
		}
	}
}

// Outside an activity (analysis tools call execute directly) keepAlive does nothing: the SDK
// panics on a heartbeat there.
func TestKeepAliveOutsideAnActivity(t *testing.T) {
	defer func() {
		if r := recover(); r != nil {
			t.Fatalf("keepAlive outside an activity panicked: %v", r)
		}
	}()
	stop := keepAlive(context.Background())
	stop()
}
