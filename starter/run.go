package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/devserver"
	"mlerl/grading"
	"mlerl/settings"
	"mlerl/tasks"
	"mlerl/worker"
	"mlerl/worker/queues"
	"mlerl/workflows"
)

// runFlags are `starter run`'s flags: the run's settings (package settings declares them) and
// where and how it runs.
type runFlags struct {
	taskFlags
	settings.Settings
	sandbox                                                     sandboxFlags
	instrumenter                                                instrumenterFlags
	policy                                                      policyFlags
	tls                                                         tlsFlags
	slots                                                       int
	out, temporalAddress, namespace, workerRoles, store, preset string
	detach, searchAttributes                                    bool
}

// validate checks what is not a setting; the settings check themselves.
func (f *runFlags) validate() error {
	if f.slots < 1 {
		return fmt.Errorf("--slots must be at least 1, got %d", f.slots)
	}
	for _, r := range strings.Split(f.workerRoles, ",") {
		if r != worker.RoleWorkflows && r != worker.RoleExec && r != worker.RoleGPU {
			return fmt.Errorf("--worker-roles: unknown role %q (use workflows, exec, gpu)", r)
		}
	}
	return f.Settings.Validate()
}

// runInfo is run.json: what status, stop, pause and resume need to find and continue a run.
type runInfo struct {
	WorkflowID string               `json:"workflow_id"`
	Task       string               `json:"task"`
	Namespace  string               `json:"namespace"`
	External   string               `json:"temporal_address,omitempty"` // an existing cluster; empty: the embedded server
	Address    string               `json:"last_address"`               // where the server answered last
	UIURL      string               `json:"web_ui,omitempty"`
	DataDir    string               `json:"data_dir"`
	Python     string               `json:"python"`
	Slots      int                  `json:"slots"`
	Store      string               `json:"store,omitempty"`     // artifact store URI; empty: the run directory
	SpecFile   string               `json:"task_spec,omitempty"` // a user's task spec (external workers need --task-spec too)
	TLS        tlsFlags             `json:"tls"`
	Sandbox    sandboxFlags         `json:"sandbox"`
	Instrument instrumenterFlags    `json:"instrumenter"`
	Policy     policyFlags          `json:"policy"`
	Roles      []string             `json:"worker_roles"`
	Input      workflows.TrainInput `json:"input"`
	// Experiment names the spec when the directory is an experiment's (Input is then unused:
	// the cells' inputs are in experiment-input.json).
	Experiment string `json:"experiment,omitempty"`
}

const runInfoFile = "run.json"

func readRunInfo(runDir string) (runInfo, error) {
	var info runInfo
	b, err := os.ReadFile(filepath.Join(runDir, runInfoFile))
	if err != nil {
		return info, fmt.Errorf("%s is not a run directory (no %s): give the folder `starter run` printed", runDir, runInfoFile)
	}
	if err := json.Unmarshal(b, &info); err != nil {
		return info, fmt.Errorf("%s/%s is damaged: %w", runDir, runInfoFile, err)
	}
	return info, nil
}

func writeRunInfo(runDir string, info runInfo) error {
	b, _ := json.MarshalIndent(info, "", "  ")
	return artifacts.FS{Root: runDir}.Put(context.Background(), runInfoFile, b)
}

// runPlan is what `starter run` will start, decided from its flags without side effects.
type runPlan struct {
	f       runFlags
	runDir  string
	info    runInfo
	sandbox string
	// measured is the task spec's run: section ("": none)
	measured string
}

// planRun parses and checks run's flags, the task and its data, and builds the run's run.json.
func planRun(ctx context.Context, args []string) (*runPlan, error) {
	var f runFlags
	fs := newFlagSet("run")
	f.register(fs)
	// The flags fill their own copy: only those given are a layer (settings.FlagOverlay),
	// over the preset and the task spec's run: section.
	given := settings.Defaults()
	given.Register(fs)
	fs.IntVar(&f.slots, "slots", 2, "sandbox slots of the embedded worker (programs run at once)")
	fs.StringVar(&f.out, "out", "", "run directory (default ./runs/<task>-<time>)")
	fs.StringVar(&f.temporalAddress, "temporal-address", "", "host:port of an existing Temporal cluster (default: start the embedded dev server)")
	fs.StringVar(&f.namespace, "namespace", "default", "Temporal namespace")
	fs.StringVar(&f.store, "store", "", "where artifacts go: empty for the run directory, or s3://bucket/prefix (endpoint and keys from MLERL_S3_ENDPOINT or AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or MINIO_ROOT_USER/MINIO_ROOT_PASSWORD, AWS_REGION, MLERL_S3_SECURE)")
	fs.BoolVar(&f.searchAttributes, "search-attributes", false, "with --temporal-address: the cluster has MlerlTask (Keyword), MlerlIteration (Int) and MlerlBestScore (Double) registered; keep them updated")
	f.sandbox.register(fs)
	f.instrumenter.register(fs)
	f.policy.register(fs)
	fs.StringVar(&f.preset, "preset", "", "settings from a preset, under the task spec's run: section and the flags given here: a built-in name ("+strings.Join(settings.PresetNames(), ", ")+") or a YAML file like settings/presets/paper.yaml")
	f.tls.register(fs)
	fs.StringVar(&f.workerRoles, "worker-roles", "workflows,exec,gpu", "queues this process serves; leave out exec or gpu when 'starter worker' processes serve them")
	fs.BoolVar(&f.detach, "detach", false, "leave the run going in the background; follow it with 'starter status RUN_DIR'")
	if err := parse(fs, args); err != nil {
		return nil, err
	}
	spec, err := f.spec()
	if err != nil {
		return nil, err
	}
	// The settings, in layers (settings.Resolve): the defaults, a preset, the task spec's
	// run: section, then the flags given.
	var layers []settings.Overlay
	llmMaxTokens := 0
	if f.preset != "" {
		pre, err := settings.LoadPreset(f.preset)
		if err != nil {
			return nil, err
		}
		layers, llmMaxTokens = append(layers, pre.Run), pre.LLMMaxTokens
	}
	flags := settings.FlagOverlay(fs, &given)
	if flagGiven(fs, "instrumenter") {
		flags = flags.WithFlag("instrumenter", "instrumenter", f.instrumenter.perRun())
	}
	layers = append(layers, spec.Run.Layer(spec.ID), flags)
	return f.plan(ctx, spec, llmMaxTokens, layers...)
}

// noDataError is a plan refused only because the task's prepared data is missing (an
// experiment records such a cell as no-data); its message is the check's.
type noDataError struct{ err error }

func (e *noDataError) Error() string { return e.err.Error() }
func (e *noDataError) Unwrap() error { return e.err }

// plan resolves the run's settings from its layers over the defaults, checks them, the task's
// data and where the run goes, and builds its run.json.
func (f runFlags) plan(ctx context.Context, spec *tasks.Spec, llmMaxTokens int, layers ...settings.Overlay) (*runPlan, error) {
	var err error
	if f.Settings, err = settings.Resolve(layers...); err != nil {
		return nil, err
	}
	if err := f.validate(); err != nil {
		return nil, err
	}
	if err := f.policy.check(f.Backend, f.PPO.LearningRate); err != nil {
		return nil, err
	}
	f.Settings = f.Settings.ForTask(spec.Validation.FoldCount())
	if f.RewardFolds > spec.Validation.FoldCount() {
		return nil, fmt.Errorf("--reward-folds %d: task %s carves %d validation folds (validation.folds in its spec): lower --reward-folds, or raise validation.folds in a --task-spec and prepare again", f.RewardFolds, spec.ID, spec.Validation.FoldCount())
	}
	if err := (tasks.Layout{DataDir: f.dataDir}).CheckPrepared(spec); err != nil {
		return nil, &noDataError{err}
	}
	if _, err := f.instrumenter.open(f.python); err != nil {
		return nil, err
	}
	if cfg, err := f.tls.options(); err != nil {
		return nil, err
	} else if cfg != nil && f.temporalAddress == "" {
		return nil, errors.New("--tls* flags are for an existing cluster: give --temporal-address too (the embedded server speaks plain gRPC on loopback)")
	}
	if f.store != "" {
		if _, err := artifacts.OpenRuns(f.store, os.Getenv); err != nil {
			return nil, fmt.Errorf("--store: %w", err)
		}
	}
	sb, err := f.sandbox.open(ctx, f.python)
	if err != nil {
		return nil, err
	}
	if c, ok := sb.(interface{ Close() error }); ok {
		c.Close()
	}
	if f.out == "" {
		f.out = filepath.Join("runs", spec.ID+"-"+time.Now().UTC().Format("20060102-150405"))
	}
	runDir, err := filepath.Abs(f.out)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(runDir, runInfoFile)); err == nil {
		return nil, fmt.Errorf("%s already holds a run: continue it with `starter resume %s`, or choose another --out", runDir, f.out)
	}
	run := filepath.Base(runDir)
	dataDir, _ := filepath.Abs(f.dataDir)
	specFile := ""
	if f.specFile != "" {
		specFile, _ = filepath.Abs(f.specFile)
	}
	wfID := "train-" + run // says task and run: the default run name starts with the task
	if !strings.HasPrefix(run, spec.ID) {
		wfID = "train-" + spec.ID + "-" + run
	}
	info := runInfo{WorkflowID: wfID, Task: spec.ID, Namespace: f.namespace, External: f.temporalAddress,
		DataDir: dataDir, Python: f.python, Slots: f.slots, Store: f.store, SpecFile: specFile, TLS: f.tls, Sandbox: f.sandbox, Instrument: f.instrumenter, Policy: f.policy, Roles: strings.Split(f.workerRoles, ","),
		Input: workflows.TrainInput{Run: run, Task: spec.ID, Settings: f.Settings,
			ExecTimeout:      time.Duration(f.RewardFolds) * (time.Duration(spec.Limits.WallSeconds)*time.Second + 5*time.Minute),
			SearchAttributes: f.temporalAddress == "" || f.searchAttributes, InstrumentTimeout: f.instrumenter.timeout(),
			LLM: llmSampling(f.Backend, f.policy, f.Policy, llmMaxTokens)}}
	return &runPlan{f: f, runDir: runDir, info: info, sandbox: sb.Name(), measured: spec.Run.String()}, nil
}

func runCommand(ctx context.Context, args []string, out io.Writer) error {
	plan, err := planRun(ctx, args)
	if err != nil {
		return err
	}
	f, runDir, info := plan.f, plan.runDir, plan.info
	if f.temporalAddress != "" {
		// Before run.json exists: a wrong address must leave nothing behind that blocks a rerun.
		if err := checkReachable(ctx, f.temporalAddress, f.namespace, f.tls); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		return fmt.Errorf("creating the run directory: %w", err)
	}
	if err := writeRunInfo(runDir, info); err != nil {
		return err
	}
	fmt.Fprintf(out, "run %s: %s, %d iterations, B=%d, m=%d, %d slots, %s protocol, sandbox %s\nrun directory: %s\n",
		info.Input.Run, info.Task, f.Iterations, f.Batch, f.Oversample, f.slots, f.Protocol, plan.sandbox, runDir)
	if b := info.Input.TimeBudget; b > 0 {
		fmt.Fprintf(out, "time budget %s: training stops at %.0f%% of it, mid-iteration if need be (or at %d iterations), %s (--time-budget)\n",
			time.Duration(b*float64(time.Second)).Round(time.Second), 100*settings.TrainShare, f.Iterations, laterShares())
	}
	if plan.measured != "" {
		fmt.Fprintf(out, "task %s's spec sets run settings over the defaults and any preset (its run: section; flags given win): %s\n", info.Task, plan.measured)
	}
	if f.detach {
		return detach(runDir, out)
	}
	if err := serve(ctx, runDir, "", out); err != nil {
		var se *stackError
		if errors.As(err, &se) {
			// The workflow never started: leave nothing that blocks running again.
			os.Remove(filepath.Join(runDir, runInfoFile))
			return fmt.Errorf("%w; %s was removed, so the same command runs again once Temporal is reachable", err, filepath.Join(runDir, runInfoFile))
		}
		return err
	}
	return nil
}

// detach starts `starter resume RUN` in its own session, so the run outlives this process.
func detach(runDir string, out io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	logf, err := os.OpenFile(filepath.Join(runDir, "starter.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "resume", runDir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the background run: %w", err)
	}
	fmt.Fprintf(out, "detached (pid %d, log %s).\nfollow it: starter status %s\nstop it:   starter stop %s\n",
		cmd.Process.Pid, logf.Name(), runDir, runDir)
	return cmd.Process.Release()
}

func resumeCommand(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("resume")
	address := fs.String("temporal-address", "", "host:port of the Temporal cluster to use from now on, instead of the one run.json names (e.g. after a typo, or when the cluster moved); the run's artifacts are kept and a run the new cluster does not know continues from its last good checkpoint")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		return usageError("resume")
	}
	if info, err := readRunInfo(fs.Arg(0)); err == nil && info.Experiment != "" {
		if *address != "" {
			return errors.New("--temporal-address: an experiment runs on its embedded server; resume it without the flag")
		}
		return serveExperiment(ctx, fs.Arg(0), out)
	}
	return serve(ctx, fs.Arg(0), *address, out)
}

// stack is a connection to Temporal: the embedded dev server (on the run's SQLite file) or an
// existing cluster.
type stack struct {
	server *devserver.Server
	client client.Client
	log    *os.File
}

func (s *stack) close() {
	if s.client != nil {
		s.client.Close()
	}
	s.server.Stop()
	if s.log != nil {
		s.log.Close()
	}
}

func openStack(ctx context.Context, runDir string, info *runInfo, out io.Writer) (*stack, error) {
	s := &stack{}
	var err error
	s.log, err = os.OpenFile(filepath.Join(runDir, "worker.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	logger := log.NewStructuredLogger(slog.New(slog.NewTextHandler(s.log, &slog.HandlerOptions{Level: slog.LevelWarn})))
	address := info.External
	if address == "" {
		cli, err := devserver.FindCLI()
		if err != nil {
			s.close()
			return nil, err
		}
		fmt.Fprintf(out, "starting the Temporal dev server (state in %s)\n", filepath.Join(runDir, "temporal.db"))
		s.server, err = devserver.Start(ctx, devserver.Options{CLI: cli, DBFile: filepath.Join(runDir, "temporal.db"),
			LogFile: filepath.Join(runDir, "temporal.log"), SearchAttributes: workflows.SearchAttributeKeys})
		if err != nil {
			s.close()
			return nil, err
		}
		address, info.UIURL = s.server.Address, s.server.WorkflowURL(info.WorkflowID)
	}
	s.client, err = dial(ctx, address, info.Namespace, info.TLS, logger, 15*time.Second)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("Temporal is unreachable at %s: %w (is the server running and the address right?)", address, err)
	}
	info.Address = address
	return s, writeRunInfo(runDir, *info)
}

// serve runs a run to its end from this process: the server (embedded) or a connection, a
// worker on every queue, the workflow started if it is not yet, a resume signal in case it
// was paused, and progress until the result.
func serve(ctx context.Context, runDirArg, address string, out io.Writer) error {
	runDir, err := filepath.Abs(runDirArg)
	if err != nil {
		return err
	}
	info, err := readRunInfo(runDir)
	if err != nil {
		return err
	}
	if address != "" && address != info.External {
		// Stored once the server answers (openStack), so a wrong address here changes nothing.
		fmt.Fprintf(out, "using the Temporal cluster at %s (run.json named %q)\n", address, info.External)
		info.External = address
	}
	if info.External == "" && info.Address != "" {
		// Someone (a foreground `starter run` or a detached one) may still serve this run: then
		// only resume and follow it; two embedded servers on one SQLite file must never run.
		if c, _, err := dialRun(ctx, runDir); err == nil {
			defer c.Close()
			if state, why := workflowState(ctx, c, info.WorkflowID); closedUnsuccessfully(state) {
				return fmt.Errorf("the run's workflow %s, and another starter process still serves its embedded server at %s: end that process (Ctrl-C, or `kill` the pid in %s), then `starter resume %s` continues from the last good checkpoint",
					withWhy(state, why), info.Address, filepath.Join(runDir, "starter.log"), runDir)
			}
			if err := c.SignalWorkflow(ctx, info.WorkflowID, "", workflows.ResumeSignal, nil); err != nil {
				return fmt.Errorf("signalling %s: %w", info.WorkflowID, err)
			}
			fmt.Fprintf(out, "the run is being served at %s; resumed it, following its progress\n", info.Address)
			return attach(ctx, c, info, runDir, out)
		}
	}
	var runs artifacts.Runs = artifacts.FSRuns{Root: filepath.Dir(runDir)}
	if info.Store != "" {
		var err error
		if runs, err = artifacts.OpenRuns(info.Store, os.Getenv); err != nil {
			return fmt.Errorf("the run's store %s: %w", info.Store, err)
		}
	}
	acts, err := info.deps().activities(ctx, runs)
	if err != nil {
		return err
	}
	st, err := openStack(ctx, runDir, &info, out)
	if err != nil {
		return &stackError{err}
	}
	defer st.close()
	ws, err := worker.Start(worker.Options{Workflows: workflows.All, Client: st.client, Activities: acts, Slots: info.Slots,
		Roles: info.Roles})
	if err != nil {
		return err
	}
	defer ws.Stop()

	input, reuse, err := restartPlan(ctx, st.client, runs, &info, runDir, out)
	if err != nil {
		return err
	}
	err = startWorkflow(ctx, st.client, client.StartWorkflowOptions{ID: info.WorkflowID, TaskQueue: queues.Workflows,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING,
		WorkflowIDReusePolicy:    reuse,
		Memo:                     map[string]any{"task": info.Task, "run": info.Input.Run, "protocol": info.Input.Protocol}},
		workflows.Train, input)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("starting the training workflow: %w", err)
	}
	_ = st.client.SignalWorkflow(ctx, info.WorkflowID, "", workflows.ResumeSignal, nil)
	if info.UIURL != "" {
		fmt.Fprintf(out, "Web UI: %s\n", info.UIURL)
	} else {
		fmt.Fprintf(out, "workflow: %s in namespace %s at %s (open it in your cluster's Web UI)\n", info.WorkflowID, info.Namespace, info.Address)
	}
	return attach(ctx, st.client, info, runDir, out)
}

// attach prints progress each iteration until the workflow ends, then the result table.
func attach(ctx context.Context, c client.Client, info runInfo, runDir string, out io.Writer) error {
	done := make(chan error, 1)
	var result workflows.TrainResult
	go func() { done <- awaitWorkflow(ctx, c, info.WorkflowID, &result) }()
	printed, phase, detail, fallbacks := 0, workflows.Phase(""), "", 0
	tick := time.NewTicker(2 * time.Second)
	defer tick.Stop()
	show := func() {
		p, err := queryProgress(ctx, c, info.WorkflowID)
		if err != nil {
			return
		}
		for _, m := range p.History {
			if m.Iteration <= printed {
				continue
			}
			printed = m.Iteration
			fmt.Fprintln(out, iterationLine(m, p.Iterations, p.TimeBudgetS))
		}
		if p.Phase != phase && slices.Contains([]workflows.Phase{workflows.PhaseEvaluating, workflows.PhaseFinalGrading, workflows.PhaseFinalAnswer, workflows.PhasePaused,
			workflows.PhaseStopping, workflows.PhaseDraining}, p.Phase) {
			fmt.Fprintf(out, "%s...\n", p.Phase)
		}
		phase = p.Phase
		if p.Detail != "" && p.Detail != detail {
			fmt.Fprintf(out, "  %s\n", p.Detail)
		}
		detail = p.Detail
		for ; fallbacks < len(p.Fallbacks); fallbacks++ {
			fmt.Fprintf(out, "note: %s (recorded in %s)\n", p.Fallbacks[fallbacks], runstore.RecoveryKey)
		}
	}
	for {
		select {
		case err := <-done:
			show() // the last notes (a fallback of the final evaluation's sampling) since the last tick
			if err != nil {
				return fmt.Errorf("the training workflow failed: %w (details in the Web UI and %s)", err, filepath.Join(runDir, "worker.log"))
			}
			fmt.Fprintln(out)
			fmt.Fprint(out, result.Report.Table)
			if result.Final != nil {
				r := result.Final.Report
				fmt.Fprintf(out, "the policy's best-of-K program %s, graded on the private test answers: valid %v, %s\n",
					result.Final.SampleID, r.ValidSubmission, r.MedalsText())
			} else {
				fmt.Fprintln(out, "no evaluated program wrote a valid submission, so nothing was graded on the test answers (try more --iterations or --eval-samples)")
			}
			// The run's product is its final answer, so it closes the output.
			if line := answerLine(result.Answer); line != "" {
				fmt.Fprintln(out, line)
			}
			if result.Stopped {
				fmt.Fprintln(out, "(stopped early by `starter stop`)")
			}
			for _, n := range result.TimeBudgetNotes {
				fmt.Fprintf(out, "(%s)\n", n)
			}
			if a := result.Answer; a != nil && a.Test != nil && a.Note != "" {
				fmt.Fprintf(out, "(final answer: %s)\n", a.Note)
			}
			fmt.Fprintf(out, "report: %s\nmetrics: %s\n", result.Report.Location, filepath.Join(runDir, runstore.MetricsKey))
			return nil
		case <-tick.C:
			show()
		case <-ctx.Done():
			return fmt.Errorf("interrupted: the run's state is kept in %s; continue it with `starter resume %s`", runDir, runDir)
		}
	}
}

// answerLine is the closing line about the run's final answer: what it is, its
// cross-validated score and its grade on the private test answers; "" when the run made none.
func answerLine(a *activities.FinalAnswer) string {
	if a == nil {
		return ""
	}
	if a.Test == nil {
		if a.Note != "" {
			return "final answer: none (" + a.Note + ")"
		}
		return ""
	}
	what := fmt.Sprintf("blend of %d programs", len(a.Members))
	if len(a.Members) == 1 {
		what = "one program"
	}
	cv := ""
	if a.CVScore != nil {
		cv = fmt.Sprintf(", out-of-fold %.5f", *a.CVScore)
	}
	r := a.Test.Report
	if !r.ValidSubmission || r.Score == nil {
		reason := a.Test.Reason
		if reason == "" {
			reason = "no valid submission"
		}
		return fmt.Sprintf("final answer (%s%s), graded on the private test answers: invalid (%s)", what, cv, reason)
	}
	return fmt.Sprintf("final answer (%s%s), graded on the private test answers: %.5f, %s", what, cv, *r.Score, medalWords(r))
}

// medalWords names the best medal a grade report reaches, or none.
func medalWords(r grading.Report) string {
	switch {
	case r.MedalsUnknown:
		return "medals unknown (the task spec has no thresholds)"
	case r.GoldMedal:
		return "gold medal"
	case r.SilverMedal:
		return "silver medal"
	case r.BronzeMedal:
		return "bronze medal"
	case r.AboveMedian:
		return "no medal, above the median"
	}
	return "no medal, not above the median"
}

func iterationLine(m activities.IterationMetrics, total int, budgetS float64) string {
	best := "-"
	if m.BestScore != nil {
		best = fmt.Sprintf("%.5f", *m.BestScore)
	}
	const width = 20
	filled := width * m.Iteration / max(total, 1)
	bar := strings.Repeat("#", filled) + strings.Repeat("-", width-filled)
	line := fmt.Sprintf("[%s] iteration %d/%d: valid %3.0f%%  mean reward %7.3f  best score %s  mean exec %5.1fs  (in flight %d, stale %d, pg_loss %.3f, entropy %.3f)",
		bar, m.Iteration, total, 100*m.ValidRate, m.MeanReward, best, m.MeanDuration, m.InFlight, m.Stale, m.PPO.PGLoss, m.PPO.Entropy)
	line += "  " + timeUsed(m.ElapsedS, budgetS)
	if m.CheckpointFallback != "" {
		line += "\n    (" + m.CheckpointFallback + ")"
	}
	return line
}

// laterShares says how the budget left after training is spent, as `run` and `status` print it.
func laterShares() string {
	return fmt.Sprintf("best-of-K %.0f%% later (at %.0f%% at most), the final answer's cross-validation and tuning at the budget",
		100*settings.EvalShare, 100*(settings.TrainShare+settings.EvalShare))
}

// timeUsed is the run's wall-clock time so far, against its budget when it has one.
func timeUsed(elapsedS, budgetS float64) string {
	d := func(s float64) string { return (time.Duration(s) * time.Second).Round(time.Second).String() }
	if budgetS <= 0 {
		return "time " + d(elapsedS)
	}
	return fmt.Sprintf("time %s of %s (%.0f%%)", d(elapsedS), d(budgetS), 100*elapsedS/budgetS)
}

// queryProgress asks the run where it stands; during the final answer, which runs as a child
// workflow of its own, the answer's progress query gives the phase's detail.
func queryProgress(ctx context.Context, c client.Client, wfID string) (workflows.Progress, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var p workflows.Progress
	v, err := c.QueryWorkflow(qctx, wfID, "", workflows.ProgressQuery)
	if err != nil {
		return p, err
	}
	if err := v.Get(&p); err != nil {
		return p, err
	}
	if p.Phase == workflows.PhaseFinalAnswer && p.AnswerWorkflow != "" {
		var a workflows.AnswerProgress
		// The answer may not have started yet or have just ended: its detail is then left out.
		if v, err := c.QueryWorkflow(qctx, p.AnswerWorkflow, "", workflows.AnswerProgressQuery); err == nil && v.Get(&a) == nil {
			p.Detail = a.Detail
		}
	}
	return p, nil
}

// checkReachable dials a Temporal cluster once, to refuse a wrong --temporal-address before
// anything is written.
func checkReachable(ctx context.Context, address, namespace string, tls tlsFlags) error {
	c, err := dial(ctx, address, namespace, tls, devserver.Quiet, 15*time.Second)
	if err != nil {
		return fmt.Errorf("Temporal is unreachable at %s: %w: check --temporal-address (host:port of the cluster's frontend, e.g. 127.0.0.1:7233) or leave it out to use the embedded server; nothing was written", address, err)
	}
	c.Close()
	return nil
}

// flagGiven says whether flag name was set on the command line.
func flagGiven(fs *flag.FlagSet, name string) bool {
	found := false
	fs.Visit(func(f *flag.Flag) { found = found || f.Name == name })
	return found
}
