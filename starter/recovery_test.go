package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/internal/testenv"
)

// A run whose workflow ended unsuccessfully (terminated here, as a failure after its retries
// would leave it) is resumable: status and stop say so, and `starter resume` starts a fresh
// execution from the last good checkpoint, stepping over a damaged latest one, and finishes the
// run keeping every iteration and sample done before. resume --temporal-address replaces a wrong
// stored address. Once finished, stop says so and where the report is.
func TestFailedRunResumesFromTheLastGoodCheckpoint(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: real-stack recovery test in -short mode")
	}
	dataDir := testenv.PreparedData(t, "leaf-classification")
	ctx := context.Background()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: testenv.TemporalCLI(t), LogLevel: "error"})
	if err != nil {
		t.Fatalf("starting the dev server: %v", err)
	}
	defer srv.Stop()
	address := srv.FrontendHostPort()

	runDir := filepath.Join(t.TempDir(), "run")
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runCommand(ctx, []string{"--task", "leaf-classification", "--iterations", "4", "--batch", "2", "--oversample", "1", "--final-candidates", "2", "--final-folds", "2", "--final-tune", "0",
			"--reward-folds", "1", "--eval-samples", "1", "--data-dir", dataDir, "--out", runDir, "--temporal-address", address}, out)
	}()
	waitFor(t, "two iterations", 4*time.Minute, func() bool {
		b, _ := os.ReadFile(filepath.Join(runDir, runstore.MetricsKey))
		return strings.Count(string(b), "\n") >= 2
	})
	info, err := readRunInfo(runDir)
	if err != nil {
		t.Fatal(err)
	}
	c, err := client.Dial(client.Options{HostPort: address})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.TerminateWorkflow(ctx, info.WorkflowID, "", "test: the workflow ends unsuccessfully"); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil || !strings.Contains(err.Error(), "workflow failed") {
		t.Fatalf("run after its workflow was terminated: %v\n%s", err, out.String())
	}
	store := artifacts.FS{Root: runDir}
	before := metricsOf(t, store)
	samplesBefore, _ := filepath.Glob(filepath.Join(runDir, runstore.Sample("it*").Result()))

	var status bytes.Buffer
	if err := statusCommand(ctx, []string{runDir}, &status); err != nil || !strings.Contains(status.String(), "terminated") ||
		!strings.Contains(status.String(), "starter resume "+runDir) || !strings.Contains(status.String(), "last good checkpoint") {
		t.Fatalf("status of a terminated run must say how to continue: %v\n%s", err, status.String())
	}
	if err := signalCommand(ctx, "stop", "stop", []string{runDir}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "nothing to stop") ||
		!strings.Contains(err.Error(), "starter resume") {
		t.Fatalf("stop on a terminated run: %v", err)
	}

	// Damage the newest checkpoint, and store a wrong address as a typo would have.
	last := -1
	for it := 0; ; it++ {
		if _, err := os.Stat(filepath.Join(runDir, runstore.CheckpointKey(it))); err != nil {
			break
		}
		last = it
	}
	if last < 2 {
		t.Fatalf("want at least checkpoint 2 before the damage, newest is %d", last)
	}
	ptr := filepath.Join(runDir, runstore.CheckpointKey(last))
	b, _ := os.ReadFile(ptr)
	os.WriteFile(ptr, b[:len(b)/2], 0o644)
	info.External = "127.0.0.1:1"
	if err := writeRunInfo(runDir, info); err != nil {
		t.Fatal(err)
	}
	if err := resumeCommand(ctx, []string{runDir}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("resume with the wrong stored address: %v", err)
	}

	out2 := &syncBuffer{}
	if err := resumeCommand(ctx, []string{"--temporal-address", address, runDir}, out2); err != nil {
		t.Fatalf("resume --temporal-address: %v\n%s", err, out2.String())
	}
	t.Log(out2.String())
	for _, want := range []string{"terminated", "fresh execution (attempt 1) from its last good checkpoint",
		"note: checkpoint " + runstore.CheckpointKey(last) + " is damaged", "report: "} {
		if !strings.Contains(out2.String(), want) {
			t.Errorf("resume output lacks %q", want)
		}
	}
	if info, _ := readRunInfo(runDir); info.External != address || info.Input.Attempt != 1 {
		t.Errorf("run.json after resume: address %q attempt %d, want %s and 1", info.External, info.Input.Attempt, address)
	}
	after := metricsOf(t, store)
	if len(after) != 4 {
		t.Fatalf("%d iterations recorded after the resume, want 4", len(after))
	}
	// Iterations before the damaged checkpoint are kept as they were; the one whose checkpoint
	// was damaged is done again from the previous good checkpoint.
	for i := 0; i < last-1; i++ {
		if strings.Join(after[i].Used, ",") != strings.Join(before[i].Used, ",") {
			t.Errorf("iteration %d changed: used %v, before %v", i+1, after[i].Used, before[i].Used)
		}
	}
	// The redone iterations learn first from the programs the failed execution completed but no
	// kept update used (carried, not run again), then from the fresh execution's own (-r1-).
	keptUsed := map[string]bool{}
	for _, m := range after[:last-1] {
		for _, id := range m.Used {
			keptUsed[id] = true
		}
	}
	reused := 0
	for _, m := range after[last-1:] {
		for _, id := range m.Used {
			if !strings.Contains(id, "-r1-") {
				reused++
				if keptUsed[id] {
					t.Errorf("iteration %d used %s, which a kept iteration used already", m.Iteration, id)
				}
			}
		}
	}
	if !strings.Contains(after[last-1].CheckpointFallback, runstore.CheckpointKey(last)) {
		t.Errorf("the first redone iteration's metrics line does not note the fallback: %+v", after[last-1])
	}
	if reused == 0 {
		t.Errorf("the redone iterations used none of the failed execution's completed programs")
	}
	for _, f := range samplesBefore {
		if _, err := os.Stat(f); err != nil {
			t.Errorf("lost %s", f)
		}
	}
	rec, _ := os.ReadFile(filepath.Join(runDir, runstore.RecoveryKey))
	if !strings.Contains(string(rec), runstore.CheckpointKey(last)) {
		t.Errorf("%s does not record the damaged checkpoint %s:\n%s", runstore.RecoveryKey, runstore.CheckpointKey(last), rec)
	}

	status.Reset()
	if err := statusCommand(ctx, []string{runDir}, &status); err != nil || !strings.Contains(status.String(), "completed") ||
		!strings.Contains(status.String(), "report: ") || !strings.Contains(status.String(), "checkpoint fallbacks") {
		t.Fatalf("status of the finished run: %v\n%s", err, status.String())
	}
	var stop bytes.Buffer
	if err := signalCommand(ctx, "stop", "stop", []string{runDir}, &stop); err != nil || !strings.Contains(stop.String(), "already finished") ||
		!strings.Contains(stop.String(), "report: ") || strings.Contains(stop.String(), "resume") {
		t.Fatalf("stop on a finished run: %v\n%s", err, stop.String())
	}
}
