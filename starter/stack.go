package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/sandbox"
	"mlerl/tasks"
)

// hostDeps are what the activities need from the host they run on: the sandbox, the
// instrumenter, the tasks and their data, and an llm policy's servers. run.json records them
// for a run's own worker; `starter worker` takes them as flags.
type hostDeps struct {
	Sandbox    sandboxFlags
	Instrument instrumenterFlags
	Policy     policyFlags
	Python     string
	DataDir    string
	SpecFile   string // a user's task spec, added to the built-in tasks
	// Exec: this worker runs programs, so it opens the sandbox.
	Exec bool
}

// deps are the host dependencies a run's (or experiment's) own worker uses.
func (info runInfo) deps() hostDeps {
	return hostDeps{Sandbox: info.Sandbox, Instrument: info.Instrument, Policy: info.Policy,
		Python: info.Python, DataDir: info.DataDir, SpecFile: info.SpecFile, Exec: true}
}

// activities builds the activities a worker serves over the runs' artifact store: the one
// place the starter composes them.
func (d hostDeps) activities(ctx context.Context, runs artifacts.Runs) (*activities.Activities, error) {
	var sb sandbox.Sandbox
	var err error
	if d.Exec {
		if sb, err = d.Sandbox.open(ctx, d.Python); err != nil {
			return nil, err
		}
	}
	ins, err := d.Instrument.open(d.Python)
	if err != nil {
		return nil, err
	}
	registry := tasks.Builtin()
	if d.SpecFile != "" {
		if _, err := registry.AddFile(d.SpecFile); err != nil {
			return nil, err
		}
	}
	policyLLM, trainer, err := d.Policy.open()
	if err != nil {
		return nil, err
	}
	return &activities.Activities{Runs: runs, Sandbox: sb, Instrumenter: ins, Tasks: registry,
		Layout: tasks.Layout{DataDir: d.DataDir}, Python: d.Python, ScratchDir: filepath.Join(os.TempDir(), "mlerl-work"),
		PolicyLLM: policyLLM, Trainer: trainer}, nil
}

// dial connects to a Temporal frontend, giving up after timeout: the one place the starter
// dials. Callers say what the failure means for them.
func dial(ctx context.Context, address, namespace string, tls tlsFlags, logger log.Logger, timeout time.Duration) (client.Client, error) {
	opts, err := clientOptions(address, namespace, tls, logger)
	if err != nil {
		return nil, err
	}
	dctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return client.DialContext(dctx, opts)
}

// startWorkflow starts a workflow (or joins it, by the options' conflict policy), retrying for
// a while when the server does not answer in time: a dev server restarted after an unclean
// stop (kill -9, a crash) may time out its first requests while it takes its shards back.
func startWorkflow(ctx context.Context, c client.Client, opts client.StartWorkflowOptions, workflow any, args ...any) error {
	deadline := time.Now().Add(2 * time.Minute)
	for {
		_, err := c.ExecuteWorkflow(ctx, opts, workflow, args...)
		if !transientRPC(err) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(2 * time.Second):
		}
	}
}

// awaitWorkflow waits for a workflow's result (following continue-as-new), asking again when
// the wait itself times out or the server is briefly unavailable: a long poll on a loaded or
// just-restarted dev server can outlast its RPC deadline while the workflow runs on. Only the
// workflow's own end, or ctx's, ends the wait.
func awaitWorkflow(ctx context.Context, c client.Client, workflowID string, result any) error {
	for {
		err := c.GetWorkflow(ctx, workflowID, "").Get(ctx, result)
		if !transientRPC(err) || ctx.Err() != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// transientRPC says whether err is an RPC that ran out of time or found the server
// unavailable, rather than an answer.
func transientRPC(err error) bool {
	var timeout *serviceerror.DeadlineExceeded
	var unavailable *serviceerror.Unavailable
	return errors.Is(err, context.DeadlineExceeded) || errors.As(err, &timeout) || errors.As(err, &unavailable)
}
