package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/client"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/devserver"
	"mlerl/settings"
	"mlerl/worker"
	"mlerl/workflows"
)

// errEmbeddedStopped: the run's embedded Temporal server is not serving (the run finished, or
// was interrupted and waits for `starter resume`).
var errEmbeddedStopped = errors.New("the run's embedded Temporal server is not running")

// dialRun connects to the server a run last used.
func dialRun(ctx context.Context, runDir string) (client.Client, runInfo, error) {
	info, err := readRunInfo(runDir)
	if err != nil {
		return nil, info, err
	}
	address := info.External
	if address == "" {
		address = info.Address
	}
	c, err := dial(ctx, address, info.Namespace, info.TLS, devserver.Quiet, 5*time.Second)
	if err != nil {
		if info.External == "" {
			return nil, info, fmt.Errorf("%w (last at %s): `starter resume %s` starts it and continues the run", errEmbeddedStopped, address, runDir)
		}
		return nil, info, fmt.Errorf("Temporal is unreachable at %s: %w", address, err)
	}
	return c, info, nil
}

func oneRunArg(name string, args []string) (string, error) {
	fs := newFlagSet(name)
	if err := parseFlags(fs, args); err != nil {
		return "", err
	}
	if fs.NArg() != 1 {
		return "", usageError(name)
	}
	return fs.Arg(0), nil
}

func statusCommand(ctx context.Context, args []string, out io.Writer) error {
	runDir, err := oneRunArg("status", args)
	if err != nil {
		return err
	}
	if info, err := readRunInfo(runDir); err == nil && info.Experiment != "" {
		return experimentStatus(ctx, runDir, out)
	}
	c, info, err := dialRun(ctx, runDir)
	if err != nil {
		// The embedded server stops with the run, so a finished run has none to ask: its report,
		// the workflow's last step, says it finished.
		if report, ok := finishedLocally(runDir, info); ok && errors.Is(err, errEmbeddedStopped) {
			fmt.Fprintf(out, "run %s (%s): finished (its embedded server has stopped)\nreport: %s\nmetrics: %s\n",
				info.Input.Run, info.Task, report, filepath.Join(runDir, runstore.MetricsKey))
			printFallbacks(out, runDir, info, nil)
			return nil
		}
		return err
	}
	defer c.Close()
	status, why := workflowState(ctx, c, info.WorkflowID)
	if status == "unknown" {
		return fmt.Errorf("workflow %s: %s", info.WorkflowID, why)
	}
	fmt.Fprintf(out, "run %s (%s): workflow %s is %s\n", info.Input.Run, info.Task, info.WorkflowID, status)
	if info.UIURL != "" {
		fmt.Fprintf(out, "Web UI: %s\n", info.UIURL)
	}
	switch {
	case status == "completed":
		if report := reportOf(ctx, c, info); report != "" {
			fmt.Fprintf(out, "report: %s\n", report)
		}
		printFallbacks(out, runDir, info, nil)
		return nil
	case closedUnsuccessfully(status), status == "not found":
		if why != "" {
			fmt.Fprintf(out, "why: %s\n", why)
		}
		printFallbacks(out, runDir, info, nil)
		fmt.Fprintf(out, "to continue: `starter resume %s` starts a fresh execution from the run's last good checkpoint%s; the iterations it completed are kept\n",
			runDir, lastCheckpoint(runDir, info))
		return nil
	case status != "running":
		return nil
	}
	p, err := queryProgress(ctx, c, info.WorkflowID)
	if err != nil {
		return fmt.Errorf("querying progress: %w (is a worker running? `starter resume %s` starts one)", err, runDir)
	}
	best := "-"
	if p.BestScore != nil {
		best = fmt.Sprintf("%.5f", *p.BestScore)
	}
	fmt.Fprintf(out, "phase %s; iteration %d of %d; samples done %d, in flight %d, stale %d; best score %s; mean reward %.3f; mean exec %.1fs; history segment %d\n",
		p.Phase, p.Iteration, p.Iterations, p.SamplesDone, p.InFlight, p.Stale, best, p.MeanReward, p.MeanSeconds, p.Segment)
	if p.TimeBudgetS > 0 {
		var elapsed float64
		if n := len(p.History); n > 0 {
			elapsed = p.History[n-1].ElapsedS
		}
		fmt.Fprintf(out, "%s at the last iteration; training stops at %.0f%% of the budget, %s\n",
			timeUsed(elapsed, p.TimeBudgetS), 100*settings.TrainShare, laterShares())
	}
	if p.Detail != "" {
		fmt.Fprintf(out, "%s: %s\n", p.Phase, p.Detail)
	}
	if p.Attempt > 0 {
		fmt.Fprintf(out, "execution %d of this run: earlier ones failed; it continued from the last good checkpoint\n", p.Attempt+1)
	}
	for _, m := range p.History {
		fmt.Fprintln(out, "  "+iterationLine(m, p.Iterations, p.TimeBudgetS))
	}
	printFallbacks(out, runDir, info, p.Fallbacks)
	return nil
}

// finishedLocally returns the report of a run whose artifacts are in its run directory, if
// the workflow wrote it (its last step).
func finishedLocally(runDir string, info runInfo) (string, bool) {
	report := filepath.Join(runDir, runstore.ReportKey)
	_, err := os.Stat(report)
	return report, info.Store == "" && err == nil
}

// reportOf is where a completed workflow's report is.
func reportOf(ctx context.Context, c client.Client, info runInfo) string {
	gctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var res workflows.TrainResult
	if err := c.GetWorkflow(gctx, info.WorkflowID, "").Get(gctx, &res); err != nil {
		return ""
	}
	return res.Report.Location
}

// printFallbacks lists the damaged checkpoints the run stepped over: from the progress query
// while it runs, and from the run directory's recovery log, where every checkpoint load that
// fell back (sampling, updates, a recovery) appends one, whether or not the workflow heard.
func printFallbacks(out io.Writer, runDir string, info runInfo, fallbacks []string) {
	if info.Store == "" {
		b, _ := os.ReadFile(filepath.Join(runDir, runstore.RecoveryKey))
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var f activities.CheckpointFallback
			if json.Unmarshal([]byte(l), &f) == nil && f.Damaged != "" && !slices.Contains(fallbacks, f.String()) {
				fallbacks = append(fallbacks, f.String())
			}
		}
	}
	if len(fallbacks) == 0 {
		return
	}
	fmt.Fprintf(out, "checkpoint fallbacks (%d; details in %s):\n", len(fallbacks), runstore.RecoveryKey)
	for _, f := range fallbacks {
		fmt.Fprintf(out, "  %s\n", f)
	}
}

// lastCheckpoint names the newest checkpoint in a local run directory, for status's advice.
func lastCheckpoint(runDir string, info runInfo) string {
	if info.Store != "" {
		return ""
	}
	last := ""
	for it := 0; ; it++ {
		k := runstore.CheckpointKey(it)
		if _, err := os.Stat(filepath.Join(runDir, k)); err != nil {
			break
		}
		last = k
	}
	if last == "" {
		return ""
	}
	return " (the newest written is " + last + "; a damaged one is stepped over)"
}

// signalCommand sends stop, pause or resume to a running run.
func signalCommand(ctx context.Context, name, signal string, args []string, out io.Writer) error {
	runDir, err := oneRunArg(name, args)
	if err != nil {
		return err
	}
	if info, err := readRunInfo(runDir); err == nil && info.Experiment != "" {
		return fmt.Errorf("%s is an experiment: %s applies to a single run; interrupt the experiment (Ctrl-C) and continue it later with `starter experiment resume %s`", runDir, name, runDir)
	}
	c, info, err := dialRun(ctx, runDir)
	if err != nil {
		if report, ok := finishedLocally(runDir, info); ok && errors.Is(err, errEmbeddedStopped) {
			fmt.Fprintf(out, "run %s already finished: nothing to %s\nreport: %s\n", info.Input.Run, name, report)
			return nil
		}
		if errors.Is(err, errEmbeddedStopped) {
			return fmt.Errorf("run %s is not being served (it was interrupted, or its workflow failed): there is nothing to %s now; `starter resume %s` continues it (then `starter %s %s` works)",
				info.Input.Run, name, runDir, name, runDir)
		}
		return err
	}
	defer c.Close()
	switch state, why := workflowState(ctx, c, info.WorkflowID); {
	case state == "completed":
		fmt.Fprintf(out, "run %s already finished: nothing to %s\n", info.Input.Run, name)
		if report := reportOf(ctx, c, info); report != "" {
			fmt.Fprintf(out, "report: %s\n", report)
		}
		return nil
	case closedUnsuccessfully(state), state == "not found":
		return fmt.Errorf("run %s's workflow is %s: there is nothing to %s; `starter resume %s` starts a fresh execution from its last good checkpoint",
			info.Input.Run, withWhy(state, why), name, runDir)
	}
	if err := c.SignalWorkflow(ctx, info.WorkflowID, "", signal, nil); err != nil {
		return fmt.Errorf("signalling %s: %w", info.WorkflowID, err)
	}
	switch signal {
	case workflows.StopSignal:
		fmt.Fprintln(out, "stop sent: the run finishes its in-flight programs, evaluates, reports and ends")
	case workflows.PauseSignal:
		fmt.Fprintf(out, "pause sent: the run finishes this iteration and waits; `starter resume %s` continues it\n", runDir)
	}
	return nil
}

// workerCommand serves task queues of any run from this process: more sandbox slots on another
// machine, or a separate "gpu" worker.
func workerCommand(ctx context.Context, args []string, out io.Writer) error {
	var tf taskFlags
	fs := newFlagSet("worker")
	tf.register(fs)
	address := fs.String("temporal-address", "127.0.0.1:7233", "host:port of the Temporal frontend")
	namespace := fs.String("namespace", "default", "Temporal namespace")
	roles := fs.String("queues", "exec", "comma-separated roles: workflows, exec (sandbox executions, and the host steps beside them: instrumenting, ensemble selection, blending), gpu (sampling and updates)")
	slots := fs.Int("slots", 2, "sandbox slots (programs run at once) for the exec role")
	runs := fs.String("runs", "runs", "where runs' artifacts live: a folder shared with the starter (e.g. over NFS), or the starter's s3://bucket/prefix (see starter run -h, --store)")
	var sbf sandboxFlags
	sbf.register(fs)
	var inf instrumenterFlags
	inf.register(fs)
	var pf policyFlags
	pf.register(fs)
	var tf2 tlsFlags
	tf2.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	list := strings.Split(*roles, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	where := *runs
	if !strings.Contains(where, "://") {
		var err error
		if where, err = filepath.Abs(where); err != nil {
			return err
		}
	}
	store, err := artifacts.OpenRuns(where, os.Getenv)
	if err != nil {
		return fmt.Errorf("--runs: %w", err)
	}
	deps := hostDeps{Sandbox: sbf, Instrument: inf, Policy: pf, Python: tf.python, DataDir: tf.dataDir, SpecFile: tf.specFile,
		Exec: slices.Contains(list, worker.RoleExec)}
	acts, err := deps.activities(ctx, store)
	if err != nil {
		return err
	}
	c, err := dial(ctx, *address, *namespace, tf2, devserver.Quiet, 15*time.Second)
	if err != nil {
		return fmt.Errorf("Temporal is unreachable at %s: %w", *address, err)
	}
	defer c.Close()

	ws, err := worker.Start(worker.Options{Workflows: workflows.All, Client: c, Activities: acts, Slots: *slots, Roles: list})
	if err != nil {
		return err
	}
	defer ws.Stop()
	fmt.Fprintf(out, "worker serving %s at %s (%d slots, runs in %s); Ctrl-C stops it\n", *roles, *address, *slots, where)
	<-ctx.Done()
	if errors.Is(ctx.Err(), context.Canceled) {
		return nil
	}
	return ctx.Err()
}
