// Package orchestration measures the training workflow itself on the real stack (a Temporal dev
// server, the real activities and worker): how busy it keeps the sandbox slots when programs
// take heavy-tailed times, and what the loop costs per sample when programs take no time.
// Run with: MLERL_BENCH=1 go test -v -timeout 60m ./benchmarks/orchestration/
package orchestration

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/sandbox"
	"mlerl/settings"
	"mlerl/tasks"
	"mlerl/worker"
	"mlerl/worker/queues"
	"mlerl/workflows"
)

// timedSandbox stands in for the program: each training sample takes a deterministic
// heavy-tailed time (lognormal, from a hash of its id), or, with inner set, runs a no-op program
// in the real sandbox. It records when each sample occupied a slot.
type timedSandbox struct {
	inner    sandbox.Sandbox
	duration func(id string) time.Duration
	noop     string // path of a no-op program for inner

	mu    sync.Mutex
	spans []span
}

type span struct {
	id         string
	start, end time.Time
}

func (s *timedSandbox) Name() string { return "timed" }

func (s *timedSandbox) Run(ctx context.Context, spec sandbox.Spec, progress func(sandbox.Progress)) (sandbox.Result, error) {
	id := strings.SplitN(filepath.Base(filepath.Dir(spec.Program)), "-", 3)
	sample := id[0] + "-" + id[1]
	start := time.Now()
	defer func() {
		s.mu.Lock()
		s.spans = append(s.spans, span{sample, start, time.Now()})
		s.mu.Unlock()
	}()
	if s.inner != nil {
		spec.Program = s.noop
		return s.inner.Run(ctx, spec, progress)
	}
	d := s.duration(sample)
	select {
	case <-time.After(d):
		return sandbox.Result{ExitCode: 0, Duration: d, Output: "imported packages\n"}, nil
	case <-ctx.Done():
		return sandbox.Result{Duration: time.Since(start), TimedOut: true}, ctx.Err()
	}
}

// lognormal gives a deterministic heavy-tailed duration per sample id: median 2 s, sigma 1
// (a tenth of the programs take over 7 s, one in a hundred over 20 s).
func lognormal(id string) time.Duration {
	// sha256, not FNV: ids differing in one character must get independent durations.
	sum := sha256.Sum256([]byte(id))
	u := (float64(binary.BigEndian.Uint64(sum[:8])>>11) + 0.5) / float64(1<<53)
	z := math.Sqrt2 * math.Erfinv(2*u-1)
	return time.Duration(2 * math.Exp(z) * float64(time.Second))
}

type result struct {
	wall        time.Duration
	samples     int
	utilisation float64
}

func runTraining(t *testing.T, sb *timedSandbox, slots, batch, oversample, iterations int, atStart bool) result {
	t.Helper()
	dataDir := testenv.PreparedData(t, "leaf-classification")
	ctx := context.Background()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: testenv.TemporalCLI(t), LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c := srv.Client()
	root := t.TempDir()
	acts := &activities.Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb,
		Instrumenter: instrument.AST{Python: testenv.Python}, Tasks: tasks.Builtin(),
		Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: t.TempDir()}
	ws, err := worker.Start(worker.Options{Workflows: workflows.All, Client: c, Activities: acts, Slots: slots,
		Roles: []string{worker.RoleWorkflows, worker.RoleExec, worker.RoleGPU}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Stop()
	s := settings.Defaults()
	s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.ContinueEvery, s.SampleAtIterationStart = iterations, batch, oversample, 1, 100, atStart
	in := workflows.TrainInput{Run: "bench", Task: "leaf-classification", Settings: s, ExecTimeout: time.Hour}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: fmt.Sprintf("bench-%d", time.Now().UnixNano()),
		TaskQueue: queues.Workflows}, workflows.Train, in)
	if err != nil {
		t.Fatal(err)
	}
	if err := run.Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	// The training phase: from the first program's start to the start of the evaluation.
	var first, evalStart time.Time
	var train []span
	for _, s := range sb.spans {
		if strings.HasPrefix(s.id, "eval") {
			if evalStart.IsZero() || s.start.Before(evalStart) {
				evalStart = s.start
			}
			continue
		}
		train = append(train, s)
		if first.IsZero() || s.start.Before(first) {
			first = s.start
		}
	}
	wall := evalStart.Sub(first)
	busy := 0.0
	for _, s := range train {
		end := s.end
		if end.After(evalStart) {
			end = evalStart
		}
		busy += end.Sub(s.start).Seconds()
	}
	return result{wall: wall, samples: len(train), utilisation: busy / (float64(slots) * wall.Seconds())}
}

func requireBench(t *testing.T) {
	if os.Getenv("MLERL_BENCH") == "" {
		t.Skip("SKIP: orchestration benchmarks take minutes; run with MLERL_BENCH=1")
	}
}

// TestSlotUtilisation: busy slot-seconds / (slots x wall seconds) with heavy-tailed program
// times, waiting for all (m=1) against keeping 2B in flight (m=2).
func TestSlotUtilisation(t *testing.T) {
	requireBench(t)
	const slots, batch, iterations = 8, 8, 12
	var rows []string
	util := map[string]float64{}
	for _, c := range []struct {
		name    string
		m       int
		atStart bool
	}{
		{"m=1, sample at iteration start (wait for all)", 1, true},
		{"m=2, sample at iteration start", 2, true},
		{"m=1, replace each finished program", 1, false},
		{"m=2, replace each finished program (default)", 2, false},
	} {
		r := runTraining(t, &timedSandbox{duration: lognormal}, slots, batch, c.m, iterations, c.atStart)
		util[c.name] = r.utilisation
		if r.samples < batch*iterations {
			t.Errorf("%s: %d programs ran, want at least B x iterations = %d", c.name, r.samples, batch*iterations)
		}
		rows = append(rows, fmt.Sprintf("| %s | %d | %.1f | %.1f%% |", c.name, r.samples, r.wall.Seconds(), 100*r.utilisation))
	}
	t.Logf("\n| scheduling | programs run | training wall s | slot utilisation |\n|---|---|---|---|\n%s", strings.Join(rows, "\n"))
	// RESULTS.md's claims: the default keeps at least 90% of the slots busy, over twice the
	// synchronous wait-for-all baseline.
	def, sync := util["m=2, replace each finished program (default)"], util["m=1, sample at iteration start (wait for all)"]
	if def < 0.90 {
		t.Errorf("the default scheduling keeps %.1f%% of the slots busy, the target is at least 90%%", 100*def)
	}
	if def < 2*sync {
		t.Errorf("the default scheduling (%.1f%%) is not twice the wait-for-all baseline (%.1f%%)", 100*def, 100*sync)
	}
}

// TestOverheadPerSample: no-op programs through the whole loop (sample, instrument, execute in
// the real bubblewrap sandbox, grade, store) with 16 slots.
func TestOverheadPerSample(t *testing.T) {
	requireBench(t)
	local, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	noop := filepath.Join(t.TempDir(), "noop.py")
	os.WriteFile(noop, []byte("pass\n"), 0o644)
	sb := &timedSandbox{inner: local, noop: noop}
	r := runTraining(t, sb, 16, 16, 2, 8, false)
	var inSandbox []float64
	for _, s := range sb.spans {
		inSandbox = append(inSandbox, s.end.Sub(s.start).Seconds())
	}
	sort.Float64s(inSandbox)
	perSample := r.wall.Seconds() / float64(r.samples)
	t.Logf("\n%d no-op programs in %.1f s: %.2f samples/s, %.0f ms of wall time per sample; the bubblewrap run itself: median %.0f ms",
		r.samples, r.wall.Seconds(), float64(r.samples)/r.wall.Seconds(), 1000*perSample, 1000*inSandbox[len(inSandbox)/2])
	// RESULTS.md's claim: the loop's cost for a real leaf iteration (B = 8 programs, about 6 s of
	// wall time at the fastest) stays under 5% of it, so at most 0.05 x 6 s / 8 = 37.5 ms per sample.
	if r.samples < 16*8 {
		t.Errorf("%d programs ran, want at least B x iterations = %d", r.samples, 16*8)
	}
	if limit := 0.05 * 6 / 8; perSample > limit {
		t.Errorf("%.1f ms of wall time per sample: 8 of them are over 5%% of a 6 s leaf iteration (limit %.1f ms)", 1000*perSample, 1000*limit)
	}
}
