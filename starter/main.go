// Command starter is the user's entry point: prepare and list tasks, grade submissions, and
// start, watch and report training runs.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"mlerl/workflows"
)

const usage = `usage: starter <command> [flags]

commands:
  run            train an agent on a task and report its best solution
  status RUN     show a run's progress
  stop RUN       finish in-flight work, evaluate, report and end
  pause RUN      finish the current iteration and wait
  resume RUN     continue a run (restarting the embedded server if needed)
  experiment     run a spec's grid of runs (tasks x arms x seeds) and report it: run, status, resume, report
  worker         serve task queues (more sandbox slots, a separate gpu worker)
  tasks list     list the known tasks and whether their data is prepared
  tasks prepare  build MLE-bench's prepared layout from Kaggle's raw files
  tasks thresholds  medal thresholds from a Kaggle leaderboard, as MLE-bench computes them
  grade          grade a submission as MLE-bench does

Run 'starter <command> -h' for a command's usage, arguments and flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := dispatch(ctx, os.Args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return // -h or --help: the help was asked for and printed
		}
		fmt.Fprintln(os.Stderr, "error:", err)
		if errors.As(err, new(errInvalidSubmission)) {
			os.Exit(1)
		}
		os.Exit(2)
	}
}

func dispatch(ctx context.Context, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return errors.New("no command given")
	}
	switch args[0] {
	case "run":
		return runCommand(ctx, args[1:], os.Stdout)
	case "status":
		return statusCommand(ctx, args[1:], os.Stdout)
	case "stop":
		return signalCommand(ctx, "stop", workflows.StopSignal, args[1:], os.Stdout)
	case "pause":
		return signalCommand(ctx, "pause", workflows.PauseSignal, args[1:], os.Stdout)
	case "resume":
		return resumeCommand(ctx, args[1:], os.Stdout)
	case "experiment":
		return experimentCommand(ctx, args[1:], os.Stdout)
	case "worker":
		return workerCommand(ctx, args[1:], os.Stdout)
	case "tasks":
		if len(args) < 2 {
			return errors.New("tasks needs a subcommand: list, prepare or thresholds (`starter tasks list -h`, `starter tasks prepare -h`, `starter tasks thresholds -h`)")
		}
		if a := args[1]; a == "-h" || a == "-help" || a == "--help" {
			fmt.Fprint(helpOut, "usage: starter tasks list [flags]\n       starter tasks prepare --task ID --raw PATH [flags]\n       starter tasks thresholds --leaderboard FILE [--task ID | --direction min|max]\n\n"+
				"list: the known tasks and whether their data is prepared; prepare: build MLE-bench's layout from\nKaggle's raw files; thresholds: the medal thresholds MLE-bench computes from a leaderboard.\n"+
				"`starter tasks list -h`, `starter tasks prepare -h` and `starter tasks thresholds -h` give their flags.\n")
			return flag.ErrHelp
		}
		switch args[1] {
		case "list":
			return tasksList(args[2:])
		case "prepare":
			return tasksPrepare(ctx, args[2:])
		case "thresholds":
			return tasksThresholds(args[2:], os.Stdout)
		}
		return fmt.Errorf("unknown tasks subcommand %q: use list, prepare or thresholds", args[1])
	case "grade":
		// Grading is bounded in time, but a signal must still end it at once.
		done := make(chan error, 1)
		go func() { done <- gradeCommand(args[1:], os.Stdout) }()
		select {
		case err := <-done:
			return err
		case <-ctx.Done():
			return errors.New("interrupted while grading")
		}
	case "-h", "--help", "-help", "help":
		if len(args) > 1 { // starter help COMMAND
			return dispatch(ctx, append(args[1:], "--help"))
		}
		fmt.Fprint(helpOut, usage)
		return nil
	}
	fmt.Fprint(os.Stderr, usage)
	return fmt.Errorf("unknown command %q", args[0])
}
