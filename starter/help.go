package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// helpOut is where -h and --help print (a test may capture it).
var helpOut io.Writer = os.Stdout

// cmdDoc is a command's help: its usage line, what it does, and its positional arguments.
type cmdDoc struct{ usage, about, args string }

// temporalCLINote says where the embedded server's binary is looked for: a starter built
// outside the repository finds no bin/temporal beside it.
const temporalCLINote = "The embedded server runs the Temporal CLI found in $MLERL_TEMPORAL_CLI, beside the starter\n" +
	"binary, in ./bin or on PATH: set MLERL_TEMPORAL_CLI=/path/to/temporal when the starter is built elsewhere."

const runDirArg = "  RUN_DIR   the run directory `starter run` printed (it holds run.json)"

var docs = map[string]cmdDoc{
	"run": {"starter run --task ID [flags]",
		"Trains an agent on a task: starts the embedded Temporal dev server (or uses --temporal-address),\n" +
			"a worker, and the training workflow; prints progress each iteration, then the best program's\n" +
			"grade and the report's path. The run's state lives in its run directory (--out).\n" +
			temporalCLINote, ""},
	"status": {"starter status RUN_DIR",
		"Shows a run's progress: its workflow's state, phase, iteration, best score and recent\n" +
			"iterations; for a finished run, where its report is; for a failed one, how to continue it.", runDirArg},
	"stop": {"starter stop RUN_DIR",
		"Asks a running run to finish its in-flight programs, evaluate, report and end.\n" +
			"On a run that already finished it says so and where its report is.", runDirArg},
	"pause": {"starter pause RUN_DIR",
		"Asks a running run to finish the current iteration and wait; `starter resume RUN_DIR`\n" +
			"continues it.", runDirArg},
	"resume": {"starter resume [--temporal-address HOST:PORT] RUN_DIR",
		"Continues a run: restarts its embedded server (or connects to its cluster), serves its\n" +
			"queues, resumes it if paused and follows it to the end. A run whose workflow failed gets a\n" +
			"fresh execution that continues from its last good checkpoint; iterations done are kept.\n" +
			temporalCLINote, runDirArg},
	"worker": {"starter worker [flags]",
		"Serves task queues of any run from this process: more sandbox slots on another machine,\n" +
			"or a separate gpu worker. Ctrl-C stops it.", ""},
	"tasks list": {"starter tasks list [flags]",
		"Lists the known tasks and whether their data is prepared in --data-dir.", ""},
	"tasks prepare": {"starter tasks prepare --task ID --raw PATH [flags]\n       starter tasks prepare --task-spec FILE --raw PATH [flags]\n       starter tasks prepare --task ID [flags]",
		"Builds MLE-bench's prepared layout (the test split) from Kaggle's raw files, then carves the\n" +
			"platform's validation folds from its public train. A spec prepares by its split (split.raw:\n" +
			"the generic preparer) or by its preparer (a Python file beside the spec). Without --raw, a\n" +
			"test split already in --data-dir (e.g. from `mlebench prepare`) gets its validation folds.\n" +
			"docs/tasks.md says how to add a competition.", ""},
	"tasks thresholds": {"starter tasks thresholds --leaderboard FILE [--task ID | --direction min|max]",
		"Prints the gold, silver, bronze and median thresholds MLE-bench computes from a Kaggle private\n" +
			"leaderboard (rows in rank order; medal positions by team count, Kaggle's progression rules),\n" +
			"and the spec's thresholds line. The direction comes from --direction, else the --task spec,\n" +
			"else the leaderboard (first row better than last); a leaderboard contradicting it is refused.", ""},
	"grade": {"starter grade --task ID --submission FILE [flags]\n       starter grade --jsonl FILE [flags]",
		"Grades a submission CSV as MLE-bench does and prints its score and medals; with --jsonl,\n" +
			"grades many and prints MLE-bench's aggregate report. Exit status: 0 valid, 1 invalid (after\n" +
			"the report), 2 a missing file or bad usage.", ""},
}

// newFlagSet returns a flag set whose usage is the command's help.
func newFlagSet(name string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { printHelp(fs.Output(), name, fs) }
	return fs
}

func printHelp(w io.Writer, name string, fs *flag.FlagSet) {
	d, ok := docs[name]
	if !ok {
		d = cmdDoc{usage: "starter " + name + " [flags]"}
	}
	fmt.Fprintf(w, "usage: %s\n", d.usage)
	if d.about != "" {
		fmt.Fprintf(w, "\n%s\n", d.about)
	}
	if d.args != "" {
		fmt.Fprintf(w, "\narguments:\n%s\n", d.args)
	}
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	if n == 0 {
		fmt.Fprintln(w, "\nflags: none besides -h, --help (this help)")
		return
	}
	fmt.Fprintln(w, "\nflags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
	fmt.Fprintln(w, "  -h, --help\n    \tthis help")
}

// parseFlags parses args; -h or --help prints the command's help on helpOut and returns
// flag.ErrHelp, which main turns into exit status 0.
func parseFlags(fs *flag.FlagSet, args []string) error {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--help" || a == "--h" {
			printHelp(helpOut, fs.Name(), fs)
			return flag.ErrHelp
		}
	}
	return fs.Parse(args)
}

// usageError is a wrong number of arguments: the usage line and where the help is.
func usageError(name string) error {
	return fmt.Errorf("usage: %s (`starter %s -h` explains)", strings.Split(docs[name].usage, "\n")[0], name)
}
