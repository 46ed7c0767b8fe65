package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/client"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/experiment"
	"mlerl/expreport"
	"mlerl/settings"
	"mlerl/worker"
	"mlerl/worker/queues"
	"mlerl/workflows"
)

const experimentUsage = `usage: starter experiment run SPEC [flags]     run a spec (a YAML file, or built-in: %s)
       starter experiment status DIR          the grid: each cell's status and result
       starter experiment resume DIR          continue an interrupted experiment
       starter experiment report DIR          write DIR/report/ (tables, figures, index.html) again
`

func experimentCommand(ctx context.Context, args []string, out io.Writer) error {
	help := fmt.Sprintf(experimentUsage, strings.Join(experiment.BuiltinNames(), ", "))
	if len(args) == 0 {
		return errors.New("experiment needs a subcommand: run, status, resume or report\n" + help)
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		fmt.Fprint(helpOut, help)
		return flag.ErrHelp
	case "run":
		return experimentRun(ctx, args[1:], out)
	case "status":
		dir, err := oneRunArg("experiment status", args[1:])
		if err != nil {
			return err
		}
		return experimentStatus(ctx, dir, out)
	case "resume":
		dir, err := oneRunArg("experiment resume", args[1:])
		if err != nil {
			return err
		}
		return serveExperiment(ctx, dir, out)
	case "report":
		dir, err := oneRunArg("experiment report", args[1:])
		if err != nil {
			return err
		}
		return writeExperimentReport(dir, out)
	}
	return fmt.Errorf("unknown experiment subcommand %q: use run, status, resume or report\n%s", args[0], help)
}

// experimentRun plans every cell as `starter run` plans a run, its settings resolved from the
// task spec's run: section, the experiment spec's and its arm's (a bad one is refused before
// anything starts), then serves the experiment.
func experimentRun(ctx context.Context, args []string, out io.Writer) error {
	fs := newFlagSet("experiment run")
	var t taskFlags
	var sb sandboxFlags
	t.register(fs)
	sb.register(fs)
	dirFlag := fs.String("out", "", "experiment directory (default ./runs/experiment-<name>-<time>)")
	slots := fs.Int("slots", 2, "sandbox slots of the embedded worker, shared by the cells that run at once")
	maxConcurrent := fs.Int("max-concurrent", 0, "Train workflows at once (0: the spec's max_concurrent)")
	// The spec comes first or last: `experiment run table1 --out DIR` or `--out DIR table1`.
	var specArg string
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		specArg, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if specArg == "" && fs.NArg() == 1 {
		specArg = fs.Arg(0)
	} else if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q: give one spec, then flags", fs.Arg(0))
	}
	if specArg == "" {
		return fmt.Errorf("experiment run needs a spec: a YAML file or one of %s", strings.Join(experiment.BuiltinNames(), ", "))
	}
	if t.task != "" {
		return errors.New("--task: an experiment's tasks come from its spec (field tasks)")
	}
	spec, raw, err := experiment.Load(specArg)
	if err != nil {
		return err
	}
	if *maxConcurrent < 0 {
		return fmt.Errorf("--max-concurrent must be 0 (the spec's) or more, got %d", *maxConcurrent)
	} else if *maxConcurrent > 0 {
		spec.MaxConcurrent = *maxConcurrent
	}
	if *dirFlag == "" {
		*dirFlag = filepath.Join("runs", "experiment-"+spec.Name+"-"+time.Now().UTC().Format("20060102-150405"))
	}
	dir, err := filepath.Abs(*dirFlag)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, runInfoFile)); err == nil {
		return fmt.Errorf("%s already holds an experiment: continue it with `starter experiment resume %s`, or choose another --out", dir, *dirFlag)
	}
	registry, err := t.registry()
	if err != nil {
		return err
	}
	in := workflows.ExperimentInput{Dir: dir, ChildPrefix: "train-" + filepath.Base(dir) + "-", MatchedIterationsCap: 20,
		Ledger: experiment.Ledger{Spec: spec, Sandbox: sb.Kind}}
	// Cells share the worker's slots, so a wall-clock budget would measure their contention:
	// they run without one (budgets are matched in sandbox-seconds), and their answers' tuning
	// within twice the candidates' cross-validation time, unless the spec sets them.
	shared := settings.MustOverlay("starter experiment run (cells share the slots: no wall-clock budget)", map[string]any{"time_budget": 0, "final_tune_budget": 2})
	var ref *runPlan
	runnable := 0
	for _, c := range spec.Cells() {
		rec := experiment.CellRecord{Cell: c, Status: experiment.StatusPending}
		var input workflows.TrainInput
		taskSpec, err := registry.Get(c.Task)
		if err != nil {
			return fmt.Errorf("spec %s: task %s: %w", spec.Name, c.Task, err)
		}
		cellLayers, err := spec.Layers(c)
		if err != nil {
			return err
		}
		// Every cell's settings are checked, with data or without: a typo is refused up front.
		f := runFlags{taskFlags: t, sandbox: sb, slots: *slots, out: runstore.ExperimentRunDir(dir, c.Run), namespace: "default",
			workerRoles: strings.Join([]string{worker.RoleWorkflows, worker.RoleExec, worker.RoleGPU}, ","), instrumenter: instrumenterFlags{Kind: "ast"}}
		f.task = c.Task
		plan, err := f.plan(ctx, taskSpec, 0, append([]settings.Overlay{taskSpec.Run.Layer(taskSpec.ID), shared}, cellLayers...)...)
		var noData *noDataError
		switch {
		case errors.As(err, &noData):
			rec.Status, rec.Reason = experiment.StatusNoData, noData.Error()
		case err != nil:
			return fmt.Errorf("spec %s, cell %s (arm %s): %w; fix the arm's or the spec's run: settings", spec.Name, c.Run, c.Arm, err)
		default:
			input = plan.info.Input
			input.SearchAttributes = true // the embedded server registers them
			if plan.measured != "" {
				if in.Ledger.TaskSettings == nil {
					in.Ledger.TaskSettings = map[string]string{}
				}
				in.Ledger.TaskSettings[c.Task] = plan.measured
			}
			if ref == nil {
				ref = plan
			}
			runnable++
		}
		in.Ledger.Cells = append(in.Ledger.Cells, rec)
		in.Inputs = append(in.Inputs, input)
	}
	if runnable == 0 {
		return fmt.Errorf("spec %s: no task has prepared data (%s): prepare them with `starter tasks prepare --task ID --raw DIR`", spec.Name, in.Ledger.Cells[0].Reason)
	}
	if err := os.MkdirAll(filepath.Join(dir, runstore.ExperimentRunsDir), 0o755); err != nil {
		return fmt.Errorf("creating the experiment directory: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstore.ExperimentSpecFile), raw, 0o644); err != nil {
		return err
	}
	if err := writeJSONFile(filepath.Join(dir, runstore.ExperimentInputFile), in); err != nil {
		return err
	}
	if err := (&activities.Activities{}).SaveLedger(ctx, activities.SaveLedgerInput{Dir: dir, Ledger: in.Ledger}); err != nil {
		return err
	}
	info := ref.info
	info.WorkflowID = "experiment-" + filepath.Base(dir)
	info.Task, info.Experiment, info.Input = "", spec.Name, workflows.TrainInput{}
	info.Roles = []string{worker.RoleWorkflows, worker.RoleExec, worker.RoleGPU}
	if err := writeRunInfo(dir, info); err != nil {
		return err
	}
	fmt.Fprintf(out, "experiment %s: %d cells (%d to run, %s), at most %d at once, %d slots\nexperiment directory: %s\n",
		spec.Name, len(in.Ledger.Cells), runnable, cellSummary(in.Ledger), spec.MaxConcurrent, *slots, dir)
	var noDataTasks []string
	for _, c := range in.Ledger.Cells {
		if c.Status == experiment.StatusNoData && !slices.Contains(noDataTasks, c.Task) {
			noDataTasks = append(noDataTasks, c.Task)
		}
	}
	if len(noDataTasks) > 0 {
		fmt.Fprintf(out, "no prepared data in %s for %s: their cells are recorded as no-data and reported as such (`starter tasks prepare` adds a task)\n",
			t.dataDir, strings.Join(noDataTasks, ", "))
	}
	return serveExperiment(ctx, dir, out)
}

// serveExperiment runs (or follows) an experiment to its end from this process: the embedded
// server on the experiment's SQLite file, a worker on every queue, the Experiment workflow
// started unless it is running or done, then the grid's progress and finally the report. A
// workflow that failed or was terminated is started afresh from the ledger: finished cells are
// kept, interrupted ones continue from their last good checkpoint.
func serveExperiment(ctx context.Context, dirArg string, out io.Writer) error {
	dir, err := filepath.Abs(dirArg)
	if err != nil {
		return err
	}
	info, err := readRunInfo(dir)
	if err != nil {
		return err
	}
	if info.Experiment == "" {
		return fmt.Errorf("%s is a run, not an experiment: `starter resume %s`", dir, dirArg)
	}
	var in workflows.ExperimentInput
	if err := readJSONFile(filepath.Join(dir, runstore.ExperimentInputFile), &in); err != nil {
		return err
	}
	if info.External == "" && info.Address != "" {
		// Another starter may still serve it: follow, never start a second server on one file.
		if c, _, err := dialRun(ctx, dir); err == nil {
			defer c.Close()
			if state, _ := workflowState(ctx, c, info.WorkflowID); state == "running" || state == "completed" {
				fmt.Fprintf(out, "the experiment is being served at %s; following it\n", info.Address)
				return followExperiment(ctx, c, info, dir, out)
			}
			return fmt.Errorf("another starter process serves this experiment's embedded server at %s, but its workflow is not running: end that process, then `starter experiment resume %s`", info.Address, dirArg)
		}
	}
	acts, err := info.deps().activities(ctx, artifacts.FSRuns{Root: filepath.Join(dir, runstore.ExperimentRunsDir)})
	if err != nil {
		return err
	}
	st, err := openStack(ctx, dir, &info, out)
	if err != nil {
		return err
	}
	defer st.close()
	ws, err := worker.Start(worker.Options{Workflows: workflows.All, Client: st.client, Activities: acts, Slots: info.Slots, Roles: info.Roles})
	if err != nil {
		return err
	}
	defer ws.Stop()

	reuse := enums.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE
	if state, why := workflowState(ctx, st.client, info.WorkflowID); closedUnsuccessfully(state) {
		if in, err = restartExperiment(dir, in); err != nil {
			return err
		}
		fmt.Fprintf(out, "the experiment's workflow %s: starting a fresh execution from the ledger (%s)\n", withWhy(state, why), cellSummary(in.Ledger))
		reuse = enums.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE
	}
	err = startWorkflow(ctx, st.client, client.StartWorkflowOptions{ID: info.WorkflowID, TaskQueue: queues.Workflows,
		WorkflowIDConflictPolicy: enums.WORKFLOW_ID_CONFLICT_POLICY_USE_EXISTING, WorkflowIDReusePolicy: reuse,
		Memo: map[string]any{"experiment": in.Ledger.Spec.Name, "dir": dir}}, workflows.Experiment, in)
	var started *serviceerror.WorkflowExecutionAlreadyStarted
	if err != nil && !errors.As(err, &started) {
		return fmt.Errorf("starting the experiment workflow: %w", err)
	}
	if info.UIURL != "" {
		fmt.Fprintf(out, "Web UI: %s (each cell is a child workflow train-...)\n", info.UIURL)
	}
	return followExperiment(ctx, st.client, info, dir, out)
}

// restartExperiment builds a fresh execution's input from the saved one and the ledger: done,
// no-data and blocked cells keep their records; a cell that was running continues from its
// stored artifacts (Recover) under a new attempt.
func restartExperiment(dir string, in workflows.ExperimentInput) (workflows.ExperimentInput, error) {
	ledger, err := activities.ReadLedger(dir)
	if err != nil {
		return in, err
	}
	if len(ledger.Cells) != len(in.Inputs) {
		return in, fmt.Errorf("%s and %s disagree on the cells: the experiment directory was edited", runstore.LedgerFile, runstore.ExperimentInputFile)
	}
	for i := range ledger.Cells {
		c := &ledger.Cells[i]
		switch c.Status {
		case experiment.StatusRunning, experiment.StatusFailed:
			// Its run directory holds what it did; a fresh Train recovers from it.
			if _, err := os.Stat(filepath.Join(runstore.ExperimentRunDir(dir, c.Run), runstore.CheckpointsDir)); err == nil {
				in.Inputs[i].Recover = true
				in.Inputs[i].Attempt++
			}
			c.Status, c.Reason = experiment.StatusPending, ""
		case experiment.StatusBlocked:
			c.Status, c.Reason = experiment.StatusPending, ""
		}
	}
	in.Ledger = ledger
	return in, writeJSONFile(filepath.Join(dir, runstore.ExperimentInputFile), in)
}

// followExperiment prints each cell as it finishes, then writes the report.
func followExperiment(ctx context.Context, c client.Client, info runInfo, dir string, out io.Writer) error {
	done := make(chan error, 1)
	var final experiment.Ledger
	go func() { done <- awaitWorkflow(ctx, c, info.WorkflowID, &final) }()
	seen := map[string]string{}
	show := func(l experiment.Ledger) {
		finished, runnable := 0, 0
		for _, cell := range l.Cells {
			if cell.Status == experiment.StatusNoData {
				continue
			}
			runnable++
			if cell.Status != experiment.StatusPending && cell.Status != experiment.StatusRunning {
				finished++
			}
		}
		for _, cell := range l.Cells {
			if seen[cell.Run] == cell.Status || cell.Status == experiment.StatusPending || cell.Status == experiment.StatusNoData {
				continue
			}
			seen[cell.Run] = cell.Status
			fmt.Fprintf(out, "[%d/%d] %s\n", finished, runnable, cellLine(cell))
		}
	}
	tick := time.NewTicker(3 * time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("the experiment workflow failed: %w (details in the Web UI and %s); `starter experiment resume %s` continues it", err, filepath.Join(dir, "worker.log"), dir)
			}
			show(final)
			return writeExperimentReport(dir, out)
		case <-tick.C:
			qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			v, err := c.QueryWorkflow(qctx, info.WorkflowID, "", workflows.ExperimentProgressQuery)
			cancel()
			var l experiment.Ledger
			if err == nil && v.Get(&l) == nil {
				show(l)
			}
		case <-ctx.Done():
			return fmt.Errorf("interrupted: the experiment's state is kept in %s; continue it with `starter experiment resume %s`", dir, dir)
		}
	}
}

// experimentStatus prints the grid, from the workflow if it is being served, else from the
// ledger on disk.
func experimentStatus(ctx context.Context, dir string, out io.Writer) error {
	info, err := readRunInfo(dir)
	if err != nil {
		return err
	}
	if info.Experiment == "" {
		return fmt.Errorf("%s is a run, not an experiment: `starter status %s`", dir, dir)
	}
	ledger, err := activities.ReadLedger(dir)
	if err != nil {
		return err
	}
	where := "from " + filepath.Join(dir, runstore.LedgerFile)
	if c, _, err := dialRun(ctx, dir); err == nil {
		defer c.Close()
		state, why := workflowState(ctx, c, info.WorkflowID)
		where = "workflow " + info.WorkflowID + " is " + withWhy(state, why)
		qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		if v, err := c.QueryWorkflow(qctx, info.WorkflowID, "", workflows.ExperimentProgressQuery); err == nil {
			var l experiment.Ledger
			if v.Get(&l) == nil {
				ledger = l
			}
		}
		cancel()
		if info.UIURL != "" {
			where += "; Web UI: " + info.UIURL
		}
	} else {
		where += " (no server is running: `starter experiment resume " + dir + "` continues an unfinished experiment)"
	}
	fmt.Fprintf(out, "experiment %s: %s; %s\n", ledger.Spec.Name, cellSummary(ledger), where)
	for _, cell := range ledger.Cells {
		fmt.Fprintln(out, "  "+cellLine(cell))
	}
	if _, err := os.Stat(filepath.Join(dir, expreport.Dir, expreport.IndexFile)); err == nil {
		fmt.Fprintf(out, "report: %s\n", filepath.Join(dir, expreport.Dir, expreport.IndexFile))
	}
	return nil
}

func writeExperimentReport(dirArg string, out io.Writer) error {
	dir, err := filepath.Abs(dirArg)
	if err != nil {
		return err
	}
	res, err := expreport.Write(dir)
	if err != nil {
		return fmt.Errorf("writing the experiment's report: %w", err)
	}
	fmt.Fprintf(out, "report: %s (%d files in %s)\n", filepath.Join(dir, expreport.Dir, expreport.IndexFile), len(res.Files), filepath.Join(dir, expreport.Dir))
	return nil
}

// cellLine is one cell of the grid in a line.
func cellLine(c experiment.CellRecord) string {
	s := fmt.Sprintf("%-60s %-8s", c.Run, c.Status)
	switch c.Status {
	case experiment.StatusDone:
		s += fmt.Sprintf(" %d programs, %.0f sandbox-s, %d iterations", c.Programs, c.SandboxSeconds, c.Iterations)
		if c.MatchedSeconds > 0 {
			s += fmt.Sprintf(" (matched to %.0f s)", c.MatchedSeconds)
		}
		if c.LeftOutSeconds > 0 {
			s += fmt.Sprintf(" (left out %.0f s: the program that crossed the budget)", c.LeftOutSeconds)
		}
		s += "; best validation " + fmtScore(c.BestValidation)
		if c.Best != nil {
			s += ", its test score " + fmtScore(c.Best.Test) + medalNote(c.Best)
		}
		if c.Chosen != nil {
			s += "; chosen program's test score " + fmtScore(c.Chosen.Test) + medalNote(c.Chosen)
		}
		if c.Answer != nil {
			s += "; final answer's test score " + fmtScore(c.Answer.Test) + medalNote(c.Answer)
		}
	case experiment.StatusFailed, experiment.StatusBlocked, experiment.StatusNoData:
		s += " " + firstClause(c.Reason)
	}
	return strings.TrimRight(s, " ")
}

func fmtScore(v *float64) string {
	if v == nil {
		return "-"
	}
	return strconv.FormatFloat(*v, 'g', 5, 64)
}

func medalNote(g *experiment.Graded) string {
	if m := g.Medal(); m == "unknown" {
		return " (medals unknown)"
	} else if m != "" {
		return " (" + m + ")"
	}
	return ""
}

// firstClause shortens an error for a one-line grid.
func firstClause(s string) string {
	if k := strings.Index(s, ": run `"); k > 0 {
		return s[:k]
	}
	if len(s) > 160 {
		return s[:160] + "..."
	}
	return s
}

func cellSummary(l experiment.Ledger) string {
	counts := map[string]int{}
	for _, c := range l.Cells {
		counts[c.Status]++
	}
	var parts []string
	for _, st := range []string{experiment.StatusDone, experiment.StatusRunning, experiment.StatusPending, experiment.StatusFailed,
		experiment.StatusBlocked, experiment.StatusNoData} {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[st], st))
		}
	}
	return strings.Join(parts, ", ")
}

func writeJSONFile(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return artifacts.FS{Root: filepath.Dir(path)}.Put(context.Background(), filepath.Base(path), b)
}

func readJSONFile(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%s is missing: the experiment directory is incomplete (%w)", path, err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s is damaged: %w", path, err)
	}
	return nil
}
