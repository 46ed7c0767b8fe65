package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/devserver"
	"mlerl/instrument"
	"mlerl/model"
	"mlerl/model/ppo"
	"mlerl/sandbox"
	"mlerl/tasks"
	"mlerl/worker"
	"mlerl/workflows"
)

type runFlags struct {
	taskFlags
	iterations, batch, oversample, slots, evalSamples, staleness, bufferCap int
	protocol, out, temporalAddress, namespace                               string
	seed                                                                    uint64
	improveFraction                                                         float64
	noDurationWeight, unsafeNoSandbox                                       bool
}

func (f *runFlags) validate() error {
	switch {
	case f.iterations < 1:
		return fmt.Errorf("--iterations must be at least 1, got %d", f.iterations)
	case f.batch < 1:
		return fmt.Errorf("--batch must be at least 1, got %d", f.batch)
	case f.oversample < 1:
		return fmt.Errorf("--oversample must be at least 1 (m*B executions stay in flight), got %d", f.oversample)
	case f.slots < 1:
		return fmt.Errorf("--slots must be at least 1, got %d", f.slots)
	case f.evalSamples < 1:
		return fmt.Errorf("--eval-samples must be at least 1, got %d", f.evalSamples)
	case f.protocol != workflows.ProtocolLeakFree && f.protocol != workflows.ProtocolPaper:
		return fmt.Errorf("--protocol must be %s or %s, got %q", workflows.ProtocolLeakFree, workflows.ProtocolPaper, f.protocol)
	case f.improveFraction < 0 || f.improveFraction > 1:
		return fmt.Errorf("--improve-fraction must be in [0, 1], got %v", f.improveFraction)
	}
	return nil
}

func runCommand(ctx context.Context, args []string, out io.Writer) error {
	var f runFlags
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	f.register(fs)
	fs.IntVar(&f.iterations, "iterations", 10, "RL iterations (PPO updates)")
	fs.IntVar(&f.batch, "batch", 8, "B: completed executions per update")
	fs.IntVar(&f.oversample, "oversample", 2, "m: m*B executions are kept in flight")
	fs.IntVar(&f.slots, "slots", 2, "sandbox slots of the embedded worker (programs run at once)")
	fs.IntVar(&f.evalSamples, "eval-samples", 8, "K: final evaluation samples (scratch, then one improve each)")
	fs.IntVar(&f.staleness, "staleness", 2, "cancel executions sampled more than this many iterations ago (0: never)")
	fs.IntVar(&f.bufferCap, "buffer", 16, "capacity of the self-improve buffer (half best, half recent)")
	fs.Float64Var(&f.improveFraction, "improve-fraction", 0.5, "share of training prompts that improve a previous solution")
	fs.StringVar(&f.protocol, "protocol", workflows.ProtocolLeakFree, "leak-free (rewards on a validation split) or paper (rewards on the test split)")
	fs.Uint64Var(&f.seed, "seed", 1, "seed of the warm start, the samples and the updates")
	fs.StringVar(&f.out, "out", "", "run directory (default ./runs/<run-id>)")
	fs.StringVar(&f.temporalAddress, "temporal-address", "", "host:port of an existing Temporal cluster (default: start the embedded dev server)")
	fs.StringVar(&f.namespace, "namespace", "default", "Temporal namespace")
	fs.BoolVar(&f.noDurationWeight, "no-duration-weight", false, "turn off the duration-aware gradient weight (ablation)")
	fs.BoolVar(&f.unsafeNoSandbox, "unsafe-no-sandbox", false, "run agents' programs WITHOUT bubblewrap (only where namespaces are unavailable)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		return err
	}
	spec, err := f.spec()
	if err != nil {
		return err
	}
	registry, _ := f.registry()
	layout := tasks.Layout{DataDir: f.dataDir}
	if err := layout.CheckPrepared(spec); err != nil {
		return err
	}
	sb, err := sandbox.NewLocal(f.python, f.unsafeNoSandbox)
	if err != nil {
		return err
	}

	runID := time.Now().UTC().Format("20060102-150405")
	if f.out == "" {
		f.out = filepath.Join("runs", spec.ID+"-"+runID)
	}
	runDir, err := filepath.Abs(f.out)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("creating the run directory: %w", err)
	}
	logFile, err := os.OpenFile(filepath.Join(runDir, "worker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(logFile, &slog.HandlerOptions{Level: slog.LevelWarn})))

	address, uiBase := f.temporalAddress, ""
	if address == "" {
		cli, err := devserver.FindCLI()
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "starting the Temporal dev server (state in %s)\n", filepath.Join(runDir, "temporal.db"))
		srv, err := devserver.Start(ctx, devserver.Options{CLI: cli, DBFile: filepath.Join(runDir, "temporal.db"),
			LogFile: filepath.Join(runDir, "temporal.log")})
		if err != nil {
			return err
		}
		defer srv.Stop()
		address, uiBase = srv.Address, srv.UIURL
	}
	dialCtx, cancel := context.WithTimeout(ctx, 15*time.Second)
	c, err := client.DialContext(dialCtx, client.Options{HostPort: address, Namespace: f.namespace, Logger: logger})
	cancel()
	if err != nil {
		return fmt.Errorf("Temporal is unreachable at %s: %w (is the server running and the address right?)", address, err)
	}
	defer c.Close()

	acts := &activities.Activities{Store: artifacts.FS{Root: runDir}, Sandbox: sb,
		Instrumenter: instrument.AST{Python: f.python}, Tasks: registry, Layout: layout,
		ScratchDir: filepath.Join(os.TempDir(), "mlerl-work")}
	ws, err := worker.Start(worker.Options{Client: c, Activities: acts, Slots: f.slots,
		Roles: []string{worker.RoleWorkflows, worker.RoleExec, worker.RoleGPU}})
	if err != nil {
		return err
	}
	defer ws.Stop()

	cfg := ppo.Paper()
	cfg.DurationWeight = !f.noDurationWeight
	in := workflows.TrainInput{RunID: runID, Task: spec.ID, Iterations: f.iterations, Batch: f.batch, Oversample: f.oversample,
		Protocol: f.protocol, Seed: f.seed, EvalSamples: f.evalSamples, StalenessIterations: f.staleness,
		BufferCapacity: f.bufferCap, ImproveFraction: f.improveFraction,
		ExecTimeout: time.Duration(spec.Limits.WallSeconds)*time.Second + 5*time.Minute,
		Policy:      model.DefaultConfig(), PPO: cfg}
	wfID := "train-" + spec.ID + "-" + runID
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: wfID, TaskQueue: activities.WorkflowQueue}, workflows.Train, in)
	if err != nil {
		return fmt.Errorf("starting the training workflow: %w", err)
	}
	fmt.Fprintf(out, "run %s: %s, %d iterations, B=%d, m=%d, %d slots, %s protocol, sandbox %s\n",
		runID, spec.ID, f.iterations, f.batch, f.oversample, f.slots, f.protocol, sb.Name())
	fmt.Fprintf(out, "run directory: %s\n", runDir)
	if uiBase != "" {
		fmt.Fprintf(out, "Web UI: %s/namespaces/%s/workflows/%s\n", uiBase, f.namespace, wfID)
	} else {
		fmt.Fprintf(out, "workflow: %s in namespace %s at %s (open it in your cluster's Web UI)\n", wfID, f.namespace, address)
	}

	done := make(chan error, 1)
	var result workflows.TrainResult
	go func() { done <- run.Get(ctx, &result) }()
	printed, phase := 0, ""
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	show := func() {
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		v, err := c.QueryWorkflow(qctx, wfID, "", workflows.ProgressQuery)
		if err != nil {
			return
		}
		var p workflows.Progress
		if v.Get(&p) != nil {
			return
		}
		for ; printed < len(p.History); printed++ {
			m := p.History[printed]
			best := "-"
			if m.BestScore != nil {
				best = fmt.Sprintf("%.5f", *m.BestScore)
			}
			fmt.Fprintf(out, "iteration %d/%d: valid %3.0f%%  mean reward %7.3f  best score %s  mean exec %5.1fs  (in flight %d, pg_loss %.3f, entropy %.3f)\n",
				m.Iteration, p.Iterations, 100*m.ValidRate, m.MeanReward, best, m.MeanDuration, m.InFlight, m.PPO.PGLoss, m.PPO.Entropy)
		}
		if p.Phase != phase && (p.Phase == "evaluating" || p.Phase == "final grading") {
			fmt.Fprintf(out, "%s (best of %d: scratch, then improve)...\n", p.Phase, f.evalSamples)
		}
		phase = p.Phase
	}
	for {
		select {
		case err := <-done:
			show()
			if err != nil {
				return fmt.Errorf("the training workflow failed: %w (details in the Web UI and %s)", err, logFile.Name())
			}
			fmt.Fprintln(out)
			fmt.Fprint(out, result.Report.Table)
			if result.Final != nil {
				r := result.Final.Report
				fmt.Fprintf(out, "graded on the private test answers: valid %v, gold %v, silver %v, bronze %v, above median %v\n",
					r.ValidSubmission, r.GoldMedal, r.SilverMedal, r.BronzeMedal, r.AboveMedian)
			}
			fmt.Fprintf(out, "report: %s\nmetrics: %s\n", result.Report.Location, filepath.Join(runDir, "metrics.jsonl"))
			return nil
		case <-tick.C:
			show()
		case <-ctx.Done():
			return errors.New("interrupted: the workflow's state is kept in " + strings.TrimSpace(runDir))
		}
	}
}
