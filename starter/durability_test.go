package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/devserver"
	"mlerl/internal/testenv"
)

// syncBuffer is an output the run writes from its goroutine while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// metricsOf reads a run's metrics.jsonl from its store and checks that no sample fed two updates
// and that every sample an update used has its result stored.
func metricsOf(t *testing.T, store artifacts.Store) []activities.IterationMetrics {
	t.Helper()
	ctx := context.Background()
	b, _ := store.Get(ctx, runstore.MetricsKey)
	var out []activities.IterationMetrics
	used := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if line == "" {
			continue
		}
		var m activities.IterationMetrics
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatal(err)
		}
		for _, id := range m.Used {
			used[id]++
			if _, err := store.Get(ctx, runstore.Sample(id).Result()); err != nil {
				t.Errorf("sample %s fed an update but has no result: %v", id, err)
			}
		}
		out = append(out, m)
	}
	for id, n := range used {
		if n > 1 {
			t.Errorf("sample %s was counted by %d updates", id, n)
		}
	}
	return out
}

// The multi-worker stack: a Temporal server, MinIO, one "gpu" worker process and one execution
// worker process. Kill the execution worker in the middle of an iteration: its executions are
// retried on a new worker once their heartbeats stop, and the run finishes with every sample
// and artifact in MinIO, each sample counted once.
func TestKilledWorkerLosesNoSample(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: multi-process durability test in -short mode")
	}
	dataDir := testenv.PreparedData(t, "leaf-classification")
	ctx := context.Background()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: testenv.TemporalCLI(t), LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	bin := testenv.BuildStarter(t)
	endpoint, user, password := testenv.StartMinIO(t)
	t.Setenv("MLERL_S3_ENDPOINT", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", user)
	t.Setenv("AWS_SECRET_ACCESS_KEY", password)
	const storeURI = "s3://mlerl-kill/runs"
	runDir := filepath.Join(t.TempDir(), "run")
	startWorker := func(queues string) *exec.Cmd {
		cmd := exec.Command(bin, "worker", "--temporal-address", srv.FrontendHostPort(), "--queues", queues,
			"--slots", "2", "--runs", storeURI, "--data-dir", dataDir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Env = os.Environ()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	kill := func(cmd *exec.Cmd) { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() }
	gpu := startWorker("gpu")
	defer kill(gpu)
	first := startWorker("exec")
	runs, err := artifacts.OpenRuns(storeURI, nil)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := runs.Run("run")

	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runCommand(ctx, []string{"--task", "leaf-classification", "--iterations", "3", "--batch", "2", "--final-candidates", "2", "--final-folds", "2", "--final-tune", "0",
			"--continue-every", "2", "--eval-samples", "1", "--worker-roles", "workflows", "--protocol", "paper",
			"--store", storeURI, "--temporal-address", srv.FrontendHostPort(), "--data-dir", dataDir, "--out", runDir}, out)
	}()
	// Kill as soon as the first programs are being executed.
	waitFor(t, "the first execution", 2*time.Minute, func() bool {
		_, err := store.Get(context.Background(), runstore.Sample("it0001-s000").Instrumented())
		return err == nil
	})
	kill(first)
	second := startWorker("exec")
	defer kill(second)
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("run failed: %v\n%s", err, out.String())
		}
	case <-time.After(8 * time.Minute):
		t.Fatalf("the run did not finish after the worker was replaced\n%s", out.String())
	}
	ms := metricsOf(t, store)
	if len(ms) != 3 {
		t.Fatalf("%d iterations recorded, want 3\n%s", len(ms), out.String())
	}
	for _, m := range ms {
		if len(m.Used) != 2 {
			t.Errorf("iteration %d used %d samples, want B=2", m.Iteration, len(m.Used))
		}
	}
	for _, key := range []string{runstore.SegmentKey(0), runstore.ReportKey, runstore.CheckpointKey(3)} {
		if _, err := store.Get(context.Background(), key); err != nil {
			t.Errorf("%s is not in MinIO: %v", key, err)
		}
	}
}

// Stop the process serving an embedded run (its dev server and worker with it) mid-run; `starter
// status` then says how to continue, and `starter resume` restarts the server on the same SQLite
// file and finishes the run with no sample lost or counted twice; once it has ended, status
// says it finished and where its report is.
func TestRunSurvivesServerRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: server restart test in -short mode")
	}
	dataDir := testenv.PreparedData(t, "leaf-classification")
	t.Setenv("MLERL_TEMPORAL_CLI", testenv.TemporalCLI(t))
	runDir := filepath.Join(t.TempDir(), "run")
	ctx, cancel := context.WithCancel(context.Background())
	out := &syncBuffer{}
	done := make(chan error, 1)
	go func() {
		done <- runCommand(ctx, []string{"--task", "leaf-classification", "--iterations", "3", "--batch", "2", "--final-candidates", "2", "--final-folds", "2", "--final-tune", "0",
			"--reward-folds", "1", "--eval-samples", "1", "--data-dir", dataDir, "--out", runDir}, out)
	}()
	waitFor(t, "the first iteration", 3*time.Minute, func() bool {
		b, _ := os.ReadFile(filepath.Join(runDir, runstore.MetricsKey))
		return strings.Count(string(b), "\n") >= 1
	})
	cancel()
	if err := <-done; err == nil || !strings.Contains(err.Error(), "starter resume") {
		t.Fatalf("an interrupted run must say how to continue: %v", err)
	}
	var status bytes.Buffer
	if err := statusCommand(context.Background(), []string{runDir}, &status); err == nil || !strings.Contains(err.Error(), "starter resume") {
		t.Fatalf("status of a stopped embedded run: %v", err)
	}
	out2 := &syncBuffer{}
	if err := resumeCommand(context.Background(), []string{runDir}, out2); err != nil {
		t.Fatalf("resume: %v\n%s", err, out2.String())
	}
	if ms := metricsOf(t, artifacts.FS{Root: runDir}); len(ms) != 3 {
		t.Fatalf("%d iterations recorded after the restart, want 3\n%s", len(ms), out2.String())
	}
	if !strings.Contains(out2.String(), "report: ") {
		t.Fatalf("the resumed run must end with the report:\n%s", out2.String())
	}
	// The run is over and its embedded server with it: status reads the report, not the server.
	status.Reset()
	if err := statusCommand(context.Background(), []string{runDir}, &status); err != nil || !strings.Contains(status.String(), "finished") ||
		!strings.Contains(status.String(), filepath.Join(runDir, runstore.ReportKey)) {
		t.Fatalf("status of a finished embedded run: %v\n%s", err, status.String())
	}
	checkWebUI(t, runDir)
}

// checkWebUI serves the finished run's SQLite state again and loads its workflow page in
// headless Chromium: the page must show the workflow, completed, with activity summaries; the
// screenshot is kept as <run>/webui.png.
func checkWebUI(t *testing.T, runDir string) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("Debian's chromium is needed to check the Web UI: run `go tool task setup` (%v)", err)
	}
	info, err := readRunInfo(runDir)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := devserver.Start(context.Background(), devserver.Options{CLI: testenv.TemporalCLI(t),
		DBFile: filepath.Join(runDir, "temporal.db"), LogFile: filepath.Join(runDir, "temporal.log")})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	url := srv.WorkflowURL(info.WorkflowID)
	browse := func(args ...string) string {
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
			"--window-size=1400,1000", "--virtual-time-budget=20000", "--user-data-dir=" + t.TempDir()}, args...)
		out, err := exec.Command(chromium, append(args, url)...).Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return string(out)
	}
	// The page is a single-page app that fetches the workflow after loading; on a busy machine
	// the first render can come before the data, so look again a few times.
	wants := []string{info.WorkflowID, "Completed", "PPO update 1 on", "run it0001-s000 on the validation split"}
	var missing []string
	for attempt := 0; attempt < 5; attempt++ {
		dom := browse("--dump-dom")
		missing = missing[:0]
		for _, want := range wants {
			if !strings.Contains(dom, want) {
				missing = append(missing, want)
			}
		}
		if len(missing) == 0 {
			break
		}
		time.Sleep(2 * time.Second)
	}
	if len(missing) > 0 {
		t.Errorf("the Web UI page of %s does not show %q", url, missing)
	}
	shot := filepath.Join(runDir, "webui.png")
	browse("--screenshot=" + shot)
	if st, err := os.Stat(shot); err != nil || st.Size() < 20000 {
		t.Fatalf("no screenshot of the Web UI: %v", err)
	}
	t.Logf("Web UI screenshot: %s", shot)
}
