package activities

import (
	"context"
	"time"

	"go.temporal.io/sdk/activity"
)

// keepAliveInterval is how often keepAlive heartbeats; the workflow's heartbeat timeout for
// these activities (30 s) leaves room for several missed beats on a loaded machine.
var keepAliveInterval = 5 * time.Second

// keepAlive heartbeats until the returned stop is called. Activities without progress of their
// own to report (sampling, updates, the buffer, state, the report) use it so that a worker
// that dies mid-activity is noticed within the heartbeat timeout and the activity retried on
// another, instead of the run waiting out a start-to-close timeout sized for the slowest
// update (30 minutes).
//
// The steps that work in the worker itself (reading, joining, grading and blending submissions
// of millions of rows) use it too: they can outlast the heartbeat timeout, and a timed-out
// cross-validation runs all its folds again. Outside an activity (analysis tools call execute
// directly) it does nothing.
func keepAlive(ctx context.Context) (stop func()) {
	if !activity.IsActivity(ctx) {
		return func() {}
	}
	done := make(chan struct{})
	activity.RecordHeartbeat(ctx)
	go func() {
		t := time.NewTicker(keepAliveInterval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				activity.RecordHeartbeat(ctx)
			}
		}
	}()
	return func() { close(done) }
}
