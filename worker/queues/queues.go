// Package queues names the Temporal task queues: the workers (package worker) serve them and
// the workflows send their activities to them. It is a package of its own because the worker
// package imports the workflows.
package queues

const (
	// Workflows runs workflow tasks and the short bookkeeping activities (state, ledger, report).
	Workflows = "mlerl-workflows"
	// Exec runs programs in the sandbox; a worker's concurrency on it is its sandbox slots.
	Exec = "mlerl-exec"
	// ExecHost runs the execution hosts' own steps that hold no sandbox slot (instrumenting,
	// ensemble selection, blending): queued behind executions on Exec they waited up to 27
	// minutes (experiment insultsbudget2). The exec role serves both queues.
	ExecHost = "mlerl-exec-host"
	// GPU samples programs from the policy and updates it, one at a time per worker.
	GPU = "mlerl-gpu"
)
