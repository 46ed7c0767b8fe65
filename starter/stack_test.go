package main

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
)

// scriptedRun answers Get with the next of its errors, then with the value.
type scriptedRun struct {
	client.WorkflowRun
	errs  *[]error
	value string
}

func (r scriptedRun) Get(_ context.Context, valuePtr any) error {
	if len(*r.errs) > 0 {
		err := (*r.errs)[0]
		*r.errs = (*r.errs)[1:]
		return err
	}
	*valuePtr.(*string) = r.value
	return nil
}

// scriptedClient is a client whose only working method is GetWorkflow.
type scriptedClient struct {
	client.Client
	errs  []error
	calls int
}

func (c *scriptedClient) GetWorkflow(context.Context, string, string) client.WorkflowRun {
	c.calls++
	return scriptedRun{errs: &c.errs, value: "done"}
}

// Waiting for a workflow outlasts RPCs that time out or find the server away (a loaded or
// just-restarted dev server), and ends on the workflow's own failure or the caller's context.
func TestAwaitWorkflow(t *testing.T) {
	failed := errors.New("workflow execution error: activity failed")
	cases := []struct {
		name    string
		errs    []error
		want    error
		wantVal string
	}{
		{"answers at once", nil, nil, "done"},
		{"long poll timed out twice", []error{context.DeadlineExceeded, fmt.Errorf("polling: %w", context.DeadlineExceeded)}, nil, "done"},
		{"server deadline and unavailable", []error{serviceerror.NewDeadlineExceeded("slow"), serviceerror.NewUnavailable("restarting")}, nil, "done"},
		{"the workflow failed", []error{failed}, failed, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cl := &scriptedClient{errs: c.errs}
			var got string
			err := awaitWorkflow(context.Background(), cl, "wf", &got)
			if !errors.Is(err, c.want) || got != c.wantVal {
				t.Fatalf("got %q, %v; want %q, %v", got, err, c.wantVal, c.want)
			}
			if want := len(c.errs) + 1; c.want == nil && cl.calls != want {
				t.Errorf("%d waits, want %d", cl.calls, want)
			}
		})
	}
	t.Run("the caller gives up", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		cl := &scriptedClient{errs: []error{context.DeadlineExceeded, context.DeadlineExceeded}}
		var got string
		if err := awaitWorkflow(ctx, cl, "wf", &got); err == nil || cl.calls != 1 {
			t.Fatalf("a cancelled wait must end after one try with its error: %v after %d", err, cl.calls)
		}
	})
}
