// Package worker starts Temporal workers for the platform's task queues: workflows, sandbox
// executions (concurrency = sandbox slots) and the "gpu" queue (sampling and PPO updates).
package worker

import (
	"fmt"

	"go.temporal.io/sdk/client"
	sdkworker "go.temporal.io/sdk/worker"

	"mlerl/activities"
	"mlerl/worker/queues"
)

// Queue roles a worker process can take.
const (
	RoleWorkflows = "workflows"
	RoleExec      = "exec"
	RoleGPU       = "gpu"
)

// Options say which queues this process serves and with how many sandbox slots. The workflow
// functions are given (workflows.All), so this package stays below the workflows that name its
// queues.
type Options struct {
	Client     client.Client
	Activities *activities.Activities
	Workflows  []any
	Roles      []string
	Slots      int
}

// Workers are the started workers.
type Workers struct{ started []sdkworker.Worker }

// Start registers and starts one worker per role.
func Start(o Options) (*Workers, error) {
	if o.Slots < 1 {
		return nil, fmt.Errorf("slots must be at least 1, got %d", o.Slots)
	}
	ws := &Workers{}
	a := o.Activities
	for _, role := range o.Roles {
		var w sdkworker.Worker
		switch role {
		case RoleWorkflows:
			if len(o.Workflows) == 0 {
				ws.Stop()
				return nil, fmt.Errorf("the %s role needs the workflow functions (Options.Workflows)", RoleWorkflows)
			}
			w = sdkworker.New(o.Client, queues.Workflows, sdkworker.Options{})
			for _, wf := range o.Workflows {
				w.RegisterWorkflow(wf)
			}
			w.RegisterActivity(a.Report)
			w.RegisterActivity(a.SaveLedger)
			w.RegisterActivity(a.SaveState)
			w.RegisterActivity(a.LoadState)
			w.RegisterActivity(a.CandidatePrograms)
			w.RegisterActivity(a.TuneVariants)
		case RoleExec:
			// Host steps read the task's data and run the instrumenter, which live where programs
			// run, but take no sandbox slot: their own worker (as many at once as there are
			// slots, apart from them) keeps them from waiting behind executions.
			host := sdkworker.New(o.Client, queues.ExecHost, sdkworker.Options{MaxConcurrentActivityExecutionSize: o.Slots})
			host.RegisterActivity(a.InstrumentPrograms)
			host.RegisterActivity(a.SelectEnsemble)
			host.RegisterActivity(a.BlendAnswer)
			if err := host.Start(); err != nil {
				ws.Stop()
				return nil, fmt.Errorf("starting the %s worker's host-step queue: %w", role, err)
			}
			ws.started = append(ws.started, host)
			w = sdkworker.New(o.Client, queues.Exec, sdkworker.Options{MaxConcurrentActivityExecutionSize: o.Slots})
			w.RegisterActivity(a.ExecuteProgram)
			w.RegisterActivity(a.FinalGrade)
			w.RegisterActivity(a.CrossValidate)
			// Workflow workers older than the host queue send these here: upgrading the exec
			// workers first keeps every run served.
			w.RegisterActivity(a.InstrumentPrograms)
			w.RegisterActivity(a.SelectEnsemble)
			w.RegisterActivity(a.BlendAnswer)
		case RoleGPU:
			// One update at a time: the policy is a single set of weights.
			w = sdkworker.New(o.Client, queues.GPU, sdkworker.Options{MaxConcurrentActivityExecutionSize: 1})
			w.RegisterActivity(a.InitPolicy)
			w.RegisterActivity(a.SamplePrograms)
			w.RegisterActivity(a.UpdatePolicy)
			w.RegisterActivity(a.RefreshBuffer)
			w.RegisterActivity(a.RecoverState)
		default:
			ws.Stop()
			return nil, fmt.Errorf("unknown worker role %q: use %s, %s or %s", role, RoleWorkflows, RoleExec, RoleGPU)
		}
		if err := w.Start(); err != nil {
			ws.Stop()
			return nil, fmt.Errorf("starting the %s worker: %w", role, err)
		}
		ws.started = append(ws.started, w)
	}
	return ws, nil
}

// Stop stops every worker.
func (ws *Workers) Stop() {
	for _, w := range ws.started {
		w.Stop()
	}
}
