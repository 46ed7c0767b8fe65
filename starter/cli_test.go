package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/artifacts/runstore"
	"mlerl/internal/testenv"
)

// Every command's -h and --help print a usage line, what the command does, its arguments and
// its flags on stdout, and exit 0 (they used to print nothing useful and exit 2).
func TestEveryCommandHasHelp(t *testing.T) {
	bin := testenv.BuildStarter(t)
	cases := []struct {
		args  []string
		wants []string
	}{
		{[]string{"status"}, []string{"usage: starter status RUN_DIR", "progress", "arguments:", "RUN_DIR", "flags:"}},
		{[]string{"stop"}, []string{"usage: starter stop RUN_DIR", "in-flight", "RUN_DIR", "flags:"}},
		{[]string{"pause"}, []string{"usage: starter pause RUN_DIR", "RUN_DIR", "flags:"}},
		{[]string{"resume"}, []string{"usage: starter resume [--temporal-address HOST:PORT] RUN_DIR", "last good checkpoint", "RUN_DIR", "-temporal-address"}},
		{[]string{"run"}, []string{"usage: starter run --task ID", "Trains", "-iterations", "-temporal-address", "MLERL_TEMPORAL_CLI", "-detach\n"}},
		{[]string{"worker"}, []string{"usage: starter worker", "-queues", "-slots"}},
		{[]string{"grade"}, []string{"usage: starter grade --task ID --submission FILE", "MLE-bench", "-submission", "-jsonl"}},
		{[]string{"tasks", "list"}, []string{"usage: starter tasks list", "prepared", "-data-dir", "-task string\n"}},
		{[]string{"tasks", "prepare"}, []string{"usage: starter tasks prepare", "-raw", "-if-needed"}},
		{[]string{"tasks", "thresholds"}, []string{"usage: starter tasks thresholds", "progression", "-leaderboard", "-direction"}},
		{[]string{"tasks"}, []string{"usage: starter tasks list", "starter tasks prepare"}},
	}
	for _, c := range cases {
		for _, h := range []string{"-h", "--help"} {
			args := append(append([]string(nil), c.args...), h)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				cmd := exec.Command(bin, args...)
				var stdout, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &stdout, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("exit: %v (want 0)\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
				}
				// A backquoted word in a flag's usage becomes its argument's name
				// ("-task starter tasks list"), so usages must not quote commands that way.
				for _, line := range strings.Split(stdout.String(), "\n") {
					if strings.HasPrefix(line, "  -") && strings.Contains(line, " starter ") {
						t.Errorf("flag line names a command as its argument: %q", line)
					}
				}
				for _, want := range c.wants {
					if !strings.Contains(stdout.String(), want) {
						t.Errorf("help lacks %q:\n%s", want, stdout.String())
					}
				}
			})
		}
	}
	// `starter help status` is `starter status --help`; a wrong argument count names the usage.
	out, err := exec.Command(bin, "help", "status").Output()
	if err != nil || !strings.Contains(string(out), "usage: starter status RUN_DIR") {
		t.Errorf("starter help status: %v\n%s", err, out)
	}
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "status")
	cmd.Stderr = &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || !strings.Contains(stderr.String(), "usage: starter status RUN_DIR") {
		t.Errorf("starter status with no run: %v, want a non-zero exit naming the usage\n%s", err, stderr.String())
	}
}

// Grading a file that does not exist is an error (exit status 2) naming it, not a report of an
// invalid submission with exit status 0.
func TestGradeMissingSubmissionFails(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope.csv")
	err := gradeCommand([]string{"--task", "leaf-classification", "--submission", missing}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), missing+" does not exist") {
		t.Fatalf("got %v", err)
	}
	dir := t.TempDir()
	if err := gradeCommand([]string{"--task", "leaf-classification", "--submission", dir}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Fatalf("a folder: %v", err)
	}
	bin := testenv.BuildStarter(t)
	cmd := exec.Command(bin, "grade", "--task", "leaf-classification", "--submission", missing)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	var exit *exec.ExitError
	if err := cmd.Run(); !errors.As(err, &exit) || exit.ExitCode() == 0 || !strings.Contains(stderr.String(), "does not exist") {
		t.Fatalf("starter grade on a missing file: %v\n%s", err, stderr.String())
	}
}

// A wrong --temporal-address is refused before run.json is written, so the same command with the
// right address runs (it used to find a run.json that blocked it and named the wrong address).
func TestBadTemporalAddressLeavesNoRun(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	out := filepath.Join(t.TempDir(), "run")
	err := runCommand(context.Background(), []string{"--task", "leaf-classification", "--data-dir", dataDir,
		"--out", out, "--temporal-address", "127.0.0.1:1"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "Temporal is unreachable at 127.0.0.1:1") || !strings.Contains(err.Error(), "--temporal-address") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(filepath.Join(out, runInfoFile)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a run that never reached Temporal left %s behind (%v)", runInfoFile, err)
	}
}

// stop (and pause) on a finished embedded run, whose server stopped with it, say it finished and
// where its report is, instead of advising resume; on one that is merely not served they say
// resume continues it.
func TestStopOnAFinishedEmbeddedRun(t *testing.T) {
	runDir := t.TempDir()
	if err := writeRunInfo(runDir, runInfo{WorkflowID: "train-x", Task: "leaf-classification", Namespace: "default", Address: "127.0.0.1:1"}); err != nil {
		t.Fatal(err)
	}
	err := signalCommand(context.Background(), "stop", "stop", []string{runDir}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "nothing to stop") || !strings.Contains(err.Error(), "starter resume "+runDir) {
		t.Fatalf("stop on an interrupted run: %v", err)
	}
	os.WriteFile(filepath.Join(runDir, runstore.ReportKey), []byte("# report\n"), 0o644)
	var out bytes.Buffer
	if err := signalCommand(context.Background(), "stop", "stop", []string{runDir}, &out); err != nil ||
		!strings.Contains(out.String(), "already finished") || !strings.Contains(out.String(), filepath.Join(runDir, runstore.ReportKey)) ||
		strings.Contains(out.String(), "resume") {
		t.Fatalf("stop on a finished run: %v\n%s", err, out.String())
	}
}

// A task spec whose wall_seconds would overflow is refused by `starter run` before anything
// starts, naming the field and the allowed range.
func TestRunRefusesAnOverflowingWallLimit(t *testing.T) {
	good, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "tasks", "specs", "leaf-classification.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "leaf.yaml")
	os.WriteFile(spec, []byte(strings.Replace(string(good), "wall_seconds: 300", "wall_seconds: 99999999999", 1)), 0o644)
	out := filepath.Join(t.TempDir(), "run")
	err = runCommand(context.Background(), []string{"--task", "leaf-classification", "--task-spec", spec, "--out", out}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "limits.wall_seconds") || !strings.Contains(err.Error(), "between 1 and 604800") {
		t.Fatalf("got %v", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the refused run left %s behind", out)
	}
}
