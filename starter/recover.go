package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/workflows"
)

// stackError: Temporal could not be reached or started, so no workflow was started.
type stackError struct{ err error }

func (e *stackError) Error() string { return e.err.Error() }
func (e *stackError) Unwrap() error { return e.err }

// workflowState is the lower-case status of a workflow's latest execution ("running",
// "completed", "failed", ...; "not found" when the server does not know it) and, for one that
// ended unsuccessfully, why.
func workflowState(ctx context.Context, c client.Client, id string) (state, why string) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	desc, err := c.DescribeWorkflowExecution(dctx, id, "")
	if err != nil {
		var nf *serviceerror.NotFound
		if errors.As(err, &nf) {
			return "not found", ""
		}
		return "unknown", err.Error()
	}
	status := desc.WorkflowExecutionInfo.GetStatus()
	state = strings.ToLower(strings.TrimPrefix(status.String(), "WORKFLOW_EXECUTION_STATUS_"))
	if closedUnsuccessfully(state) {
		if err := c.GetWorkflow(dctx, id, "").Get(dctx, nil); err != nil {
			why = err.Error()
			if cause := errors.Unwrap(err); cause != nil { // the failure itself, without the ids
				why = cause.Error()
			}
			if why == state {
				why = "" // "terminated (terminated)" says nothing more
			}
		}
	}
	return state, why
}

// withWhy is a state with its reason, if any: "failed (iteration 3: ...)".
func withWhy(state, why string) string {
	if why == "" {
		return state
	}
	return state + " (" + why + ")"
}

func closedUnsuccessfully(state string) bool {
	switch state {
	case "failed", "terminated", "timed_out", "canceled":
		return true
	}
	return false
}

// restartPlan decides how serve starts the workflow: as stored (a new run, or one still
// running, which is then just followed), or, when its last execution failed or the server does
// not know a run that has checkpoints (another --temporal-address), as a fresh execution that
// recovers the run's state from its artifacts (workflows.TrainInput.Recover).
func restartPlan(ctx context.Context, c client.Client, runs artifacts.Runs, info *runInfo, runDir string, out io.Writer) (workflows.TrainInput, enums.WorkflowIdReusePolicy, error) {
	state, why := workflowState(ctx, c, info.WorkflowID)
	recoverRun := closedUnsuccessfully(state)
	if state == "not found" {
		store, err := runs.Run(info.Input.Run)
		if err != nil {
			return info.Input, 0, err
		}
		_, err = store.Get(ctx, runstore.CheckpointKey(0))
		recoverRun = err == nil
	}
	if !recoverRun {
		return info.Input, enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE, nil
	}
	info.Input.Attempt++
	if err := writeRunInfo(runDir, *info); err != nil {
		return info.Input, 0, err
	}
	if state == "not found" {
		fmt.Fprintf(out, "Temporal at %s does not know this run, which has checkpoints: starting a fresh execution (attempt %d) from its last good checkpoint; the iterations it completed are kept\n",
			info.Address, info.Input.Attempt)
	} else {
		fmt.Fprintf(out, "the run's last execution %s\nstarting a fresh execution (attempt %d) from its last good checkpoint; the iterations it completed are kept\n",
			withWhy(state, why), info.Input.Attempt)
	}
	in := info.Input
	in.Recover, in.StateKey = true, ""
	return in, enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE, nil
}
