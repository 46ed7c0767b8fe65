package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
	"mlerl/experiment"
	"mlerl/internal/testenv"
)

// A real small experiment end to end on the embedded stack: a task with data and one without
// x 2 arms x 1 seed, 2 iterations each (a second task with data doubled the cells to run and
// checked nothing the first does not). The starter is killed (SIGKILL, with its embedded
// server) once the first cell is done; `experiment resume` finishes the grid without rerunning
// the finished cell, the task without data is reported as such, and the report is written.
func TestExperimentRunsKillAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: real-stack experiment in -short mode")
	}
	testenv.RequirePython(t)
	t.Setenv("MLERL_TEMPORAL_CLI", testenv.TemporalCLI(t)) // the test's cwd has no bin/temporal
	dataDir := testenv.PreparedData(t, "leaf-classification")
	bin := testenv.BuildStarter(t)
	tmp := t.TempDir()
	specFile := filepath.Join(tmp, "small.yaml")
	writeFile(t, specFile, `name: small
tasks: [leaf-classification, spooky-author-identification]
arms: [rl, static]
seeds: [5]
run: {iterations: 2, batch: 2, oversample: 1, eval_samples: 1, final_candidates: 2, final_folds: 2, final_tune: 0, reward_folds: 1}
max_concurrent: 1
pass_rule: {arm: rl, versus: [static], measure: best_test, min_seeds: 1}
`)
	dir := filepath.Join(tmp, "exp")
	logf, err := os.Create(filepath.Join(tmp, "first.log"))
	if err != nil {
		t.Fatal(err)
	}
	first := exec.Command(bin, "experiment", "run", specFile, "--out", dir, "--data-dir", dataDir)
	first.Stdout, first.Stderr = logf, logf
	first.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its embedded server dies with it
	if err := first.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- first.Wait() }()
	firstLog := func() string { b, _ := os.ReadFile(filepath.Join(tmp, "first.log")); return string(b) }
	var doneBefore []experiment.CellRecord
	// A hang guard, not a timing claim: beside a training run one cell has taken over 8 minutes.
	deadline := time.After(15 * time.Minute)
	for len(doneBefore) == 0 {
		select {
		case err := <-exited:
			t.Fatalf("the experiment ended before it was killed: %v\n%s", err, firstLog())
		case <-deadline:
			t.Fatalf("no cell finished in 15 minutes:\n%s", firstLog())
		case <-time.After(300 * time.Millisecond):
		}
		if l, err := activities.ReadLedger(dir); err == nil {
			for _, c := range l.Cells {
				if c.Status == experiment.StatusDone {
					doneBefore = append(doneBefore, c)
				}
			}
		}
	}
	syscall.Kill(-first.Process.Pid, syscall.SIGKILL)
	<-exited
	logf.Close()
	type stamp struct {
		samples int
		report  time.Time
	}
	stampOf := func(run string) stamp {
		samples, _ := filepath.Glob(filepath.Join(runstore.ExperimentRunDir(dir, run), runstore.Sample("*").Result()))
		fi, err := os.Stat(filepath.Join(runstore.ExperimentRunDir(dir, run), runstore.ReportKey))
		if err != nil {
			t.Fatalf("finished cell %s has no report: %v", run, err)
		}
		return stamp{len(samples), fi.ModTime()}
	}
	before := map[string]stamp{}
	for _, c := range doneBefore {
		before[c.Run] = stampOf(c.Run)
	}

	// The embedded server was killed with the process group, but nothing waits for it to exit:
	// for a moment it may still answer, and status rightly reports the workflow as running.
	var status []byte
	for wait := time.Now().Add(30 * time.Second); ; time.Sleep(500 * time.Millisecond) {
		status, err = exec.Command(bin, "status", dir).CombinedOutput()
		if err == nil && strings.Contains(string(status), "experiment resume") || time.Now().After(wait) {
			break
		}
	}
	if err != nil || !strings.Contains(string(status), "experiment resume") || !strings.Contains(string(status), doneBefore[0].Run) {
		t.Fatalf("status of an interrupted experiment must show the grid and how to continue: %v\n%s", err, status)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "experiment", "resume", dir).CombinedOutput()
	if err != nil {
		first, _ := os.ReadFile(filepath.Join(tmp, "first.log"))
		t.Fatalf("experiment resume: %v\n%s\nfirst run:\n%s\n%s", err, out, first, resumeDiagnosis(dir))
	}
	l, err := activities.ReadLedger(dir)
	if err != nil {
		t.Fatal(err)
	}
	done, noData := 0, 0
	for _, c := range l.Cells {
		switch {
		case c.Task == "spooky-author-identification":
			if c.Status != experiment.StatusNoData || !strings.Contains(c.Reason, "not prepared") {
				t.Errorf("cell %s without data: %s (%s), want no-data with the reason", c.Run, c.Status, c.Reason)
			}
			noData++
		case c.Status == experiment.StatusDone:
			done++
			if c.Programs < 4 || c.Iterations != 2 || c.SandboxSeconds <= 0 {
				t.Errorf("cell %s: %d programs, %d iterations, %.1f sandbox-s: want at least 2x2 programs over 2 iterations", c.Run, c.Programs, c.Iterations, c.SandboxSeconds)
			}
		default:
			t.Errorf("cell %s ended %s: %s", c.Run, c.Status, c.Reason)
		}
	}
	if done != 2 || noData != 2 {
		t.Fatalf("%d cells done and %d without data, want 2 and 2\n%s", done, noData, out)
	}
	// No built-in spec carries run settings, so the ledger records none for leaf.
	if got := l.TaskSettings["leaf-classification"]; got != "" {
		t.Errorf("the ledger's task settings for leaf: %q (all: %v), want none: its spec has no run: section", got, l.TaskSettings)
	}
	for run, b := range before {
		if a := stampOf(run); a != b {
			t.Errorf("cell %s, done before the kill, was run again: %d samples and report at %v, then %d and %v", run, b.samples, b.report, a.samples, a.report)
		}
	}
	if !strings.Contains(string(out), "report: ") {
		t.Errorf("resume did not write the report:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "index.html")); err != nil {
		t.Errorf("no report page: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, runstore.ExperimentSpecFile)); !strings.Contains(string(b), "seeds: [5]") {
		t.Errorf("the spec as given is not kept beside the results: %q", b)
	}
}

// Bad specs are refused before anything runs, with the field and the fix.
func TestExperimentRefusesBadSpecs(t *testing.T) {
	tmp := t.TempDir()
	base := "name: bad\ntasks: [leaf-classification]\nseeds: [1]\npass_rule: {arm: rl, versus: [static], measure: best_test, min_seeds: 1}\n"
	cases := []struct{ name, spec, want string }{
		{"unknown arm", base + "arms: [rl, static, greedy]\n", `unknown arm "greedy"`},
		{"arm sets the seed", base + "arms: [rl, {name: static, run: {seed: 3}}]\n", "arms.static.run: seed is set by the experiment"},
		{"misspelt key", base + "arms: [rl, static]\nitertions: 3\n", "itertions"},
		{"pass rule arm missing", strings.Replace(base, "arm: rl", "arm: ppo", 1) + "arms: [rl, static]\n", "pass_rule.arm"},
		{"matched to a missing arm", base + "arms: [rl, static, {name: m, run: {ppo: {learning_rate: 0}}, match_sandbox_seconds: random}]\n", "match_sandbox_seconds"},
		{"bad run setting", base + "arms: [rl, static]\nrun: {iterations: 0}\n", "(run:) sets iterations (line 6): --iterations must be at least 1"},
		{"old flags", base + "arms: [rl, static]\nflags: [--iterations, \"2\"]\n", "write run: {iterations: 2}"},
		{"unknown task", strings.Replace(base, "leaf-classification", "no-such-task", 1) + "arms: [rl, static]\n", "no-such-task"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := filepath.Join(tmp, strings.ReplaceAll(c.name, " ", "-")+".yaml")
			writeFile(t, f, c.spec)
			dir := filepath.Join(tmp, "out-"+filepath.Base(f))
			err := experimentCommand(context.Background(), []string{"run", f, "--out", dir, "--data-dir", tmp}, &strings.Builder{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("a refused experiment left %s behind", dir)
			}
		})
	}
}

// resumeDiagnosis is what a failed resume leaves to read: the ledger's cells, each unfinished
// cell's samples and their results, and the end of the worker's log (what it last retried).
func resumeDiagnosis(dir string) string {
	var b strings.Builder
	if l, err := activities.ReadLedger(dir); err == nil {
		for _, c := range l.Cells {
			fmt.Fprintf(&b, "cell %s: %s %s\n", c.Run, c.Status, c.Reason)
			if c.Status != experiment.StatusRunning {
				continue
			}
			run := runstore.ExperimentRunDir(dir, c.Run)
			all, _ := filepath.Glob(filepath.Join(run, runstore.SamplesDir, "*"))
			results, _ := filepath.Glob(filepath.Join(run, runstore.Sample("*").Result()))
			fmt.Fprintf(&b, "  %d samples, %d with results; checkpoints: %v\n", len(all), len(results), globNames(filepath.Join(run, runstore.CheckpointsDir, "*")))
		}
	}
	for _, name := range []string{"worker.log", "temporal.log"} {
		if log, err := os.ReadFile(filepath.Join(dir, name)); err == nil {
			lines := strings.Split(strings.TrimSpace(string(log)), "\n")
			fmt.Fprintf(&b, "%s, last %d of %d lines:\n%s\n", name, min(len(lines), 60), len(lines), strings.Join(lines[max(0, len(lines)-60):], "\n"))
		}
	}
	return b.String()
}

func globNames(pattern string) []string {
	m, _ := filepath.Glob(pattern)
	for i := range m {
		m[i] = filepath.Base(m[i])
	}
	return m
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
