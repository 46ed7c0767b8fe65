package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"mlerl/internal/testenv"
)

// testLabel tells this test's containers from any other process's on the same engine.
const testLabel = "mlerl.sandbox.test"

type dockerEnv struct {
	sb    *Docker
	cli   *client.Client
	label string // testLabel's value on this test's containers
}

// newDockerSandbox runs against the real engine, or skips loudly when it or the image is missing.
func newDockerSandbox(t *testing.T) dockerEnv {
	t.Helper()
	cli, image := testenv.RequireDockerImage(t)
	b := make([]byte, 6)
	rand.Read(b)
	label := hex.EncodeToString(b)
	sb, err := NewDocker(context.Background(), DockerOptions{Image: image, Client: cli, Labels: map[string]string{testLabel: label}})
	if err != nil {
		t.Fatalf("the Docker sandbox must work when the engine and the image are there: %v", err)
	}
	env := dockerEnv{sb: sb, cli: cli, label: label}
	t.Cleanup(func() { env.requireNoContainers(t) })
	return env
}

// requireNoContainers fails when a container of this test is left, running or not.
func (e dockerEnv) requireNoContainers(t *testing.T) {
	t.Helper()
	list, err := e.cli.ContainerList(context.Background(), container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", DockerLabel+"=1"), filters.Arg("label", testLabel+"="+e.label))})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range list {
		t.Errorf("container %s (%s) was left behind", c.ID[:12], c.State)
	}
}

var defaultTestLimits = Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096}

// runProgram runs program with a small public data set, returning the result, the host work
// dir and the run's error.
func runProgram(ctx context.Context, t *testing.T, sb Sandbox, program string, limits Limits, progress func(Progress)) (Result, string, error) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "train.csv"), []byte("a,b\n1,2\n"), 0o644)
	prog := filepath.Join(dir, "prog.py")
	os.WriteFile(prog, []byte(program), 0o644)
	work := filepath.Join(dir, "work")
	if limits.Wall == 0 {
		limits = defaultTestLimits
	}
	res, err := sb.Run(ctx, Spec{Program: prog, DataDir: data, WorkDir: work, Limits: limits}, progress)
	return res, work, err
}

func mustRun(t *testing.T, sb Sandbox, program string, limits Limits) (Result, string) {
	t.Helper()
	res, work, err := runProgram(context.Background(), t, sb, program, limits, nil)
	if err != nil {
		t.Fatalf("sandbox error: %v", err)
	}
	return res, work
}

func TestDockerIsolation(t *testing.T) {
	env := newDockerSandbox(t)
	secret := filepath.Join(t.TempDir(), "answers.csv")
	os.WriteFile(secret, []byte("secret"), 0o644)
	// The cases of TestSandboxIsolation (bubblewrap), and what only a container adds.
	cases := []struct {
		name, program, wantOutput string
		wantExit                  int
	}{
		{"reads public data", "print(open('input/train.csv').read().strip())", "a,b\n1,2", 0},
		{"writes its work dir", "open('submission.csv','w').write('x'); print('ok')", "ok", 0},
		{"public data is read-only", "open('input/train.csv','w')", "Read-only file system", 1},
		{"no network", "import socket\ntry:\n  socket.create_connection(('1.1.1.1', 80), timeout=3)\nexcept OSError as e: print('blocked', e)", "blocked", 0},
		{"only loopback", "import socket\nprint(sorted(n for _, n in socket.if_nameindex()))", "['lo']", 0},
		{"private answers invisible", "import os\nprint(os.path.exists('" + secret + "'))", "False", 0},
		{"own /tmp", "import os\nprint(os.listdir('/tmp'))", "[]", 0},
		{"a crash is a result", "raise SystemExit(3)", "", 3},
		{"read-only root", "open('/etc/x','w')", "Read-only file system", 1},
		{"not root", "import os\nprint('uid', os.getuid())", "uid ", 0},
		{"no capabilities", "print([l for l in open('/proc/self/status') if l.startswith('CapEff')])", "0000000000000000", 0},
		{"no new privileges", "print([l for l in open('/proc/self/status') if l.startswith('NoNewPrivs')])", "NoNewPrivs:\\t1", 0},
		{"single-threaded libraries", "import os\nprint(os.environ['OMP_NUM_THREADS'], os.getcwd())", "1 /work", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, work := mustRun(t, env.sb, c.program, Limits{})
			if res.ExitCode != c.wantExit || !strings.Contains(res.Output, c.wantOutput) {
				t.Fatalf("exit %d output %q; want exit %d and output containing %q", res.ExitCode, res.Output, c.wantExit, c.wantOutput)
			}
			if c.name == "not root" && strings.Contains(res.Output, "uid 0\n") {
				t.Fatalf("the program runs as root: %q", res.Output)
			}
			if c.name == "writes its work dir" {
				if b, err := os.ReadFile(filepath.Join(work, "submission.csv")); err != nil || string(b) != "x" {
					t.Fatalf("the submission must land in the host work dir: %q, %v", b, err)
				}
			}
		})
	}
}

func TestDockerLimits(t *testing.T) {
	env := newDockerSandbox(t)
	t.Run("wall clock", func(t *testing.T) {
		var last Progress
		res, _, err := runProgram(context.Background(), t, env.sb, "import time\nprint('start', flush=True)\ntime.sleep(60)",
			Limits{Wall: 3 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096}, func(p Progress) { last = p })
		if err != nil {
			t.Fatal(err)
		}
		if !res.TimedOut || res.Duration > 10*time.Second || res.ExitCode == 0 {
			t.Fatalf("want a timeout after ~3s, got %+v", res)
		}
		if last.LastLine != "start" || last.OutputBytes != 6 || last.Elapsed < time.Second {
			t.Fatalf("want progress about once a second with the last line, got %+v", last)
		}
	})
	t.Run("memory", func(t *testing.T) {
		res, _ := mustRun(t, env.sb, "x = bytearray(800 * 1024 * 1024)\nprint('allocated')", Limits{Wall: 20 * time.Second, MemoryBytes: 200 << 20, Processes: 32, OutputBytes: 4096})
		if res.ExitCode == 0 || strings.Contains(res.Output, "allocated") || !res.OutOfMemory {
			t.Fatalf("800 MiB under a 200 MiB limit must be killed for memory, got %+v", res)
		}
	})
	t.Run("processes", func(t *testing.T) {
		prog := "import os, time\nn = 0\ntry:\n  for i in range(200):\n    if os.fork() == 0:\n      time.sleep(5); os._exit(0)\n    n += 1\nexcept OSError as e:\n  print('refused after', n)\n"
		res, _ := mustRun(t, env.sb, prog, Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 16, OutputBytes: 4096})
		if !strings.Contains(res.Output, "refused after") {
			t.Fatalf("forking 200 under a 16-process limit must be refused, got %+v", res)
		}
	})
	t.Run("output cap", func(t *testing.T) {
		res, _ := mustRun(t, env.sb, "for i in range(100000): print('line', i)", Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 1000})
		if len(res.Output) > 1000 || res.OutputBytes < 1000000 || !strings.Contains(res.Output, "line 99999") {
			t.Fatalf("want the last 1000 bytes of ~1.2 MB, got %d kept of %d", len(res.Output), res.OutputBytes)
		}
	})
}

// TestDockerRemovesContainers checks the container is gone however the run ends.
func TestDockerRemovesContainers(t *testing.T) {
	env := newDockerSandbox(t)
	t.Run("normal run", func(t *testing.T) {
		if res, _ := mustRun(t, env.sb, "print('hi')", Limits{}); res.ExitCode != 0 {
			t.Fatalf("got %+v", res)
		}
		env.requireNoContainers(t)
	})
	t.Run("timeout", func(t *testing.T) {
		res, _ := mustRun(t, env.sb, "import time\ntime.sleep(60)", Limits{Wall: 2 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096})
		if !res.TimedOut {
			t.Fatalf("got %+v", res)
		}
		env.requireNoContainers(t)
	})
	t.Run("cancelled mid-run", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		start := time.Now()
		res, _, err := runProgram(ctx, t, env.sb, "import time\nprint('reached marker', flush=True)\ntime.sleep(60)", defaultTestLimits,
			func(p Progress) {
				if p.LastLine == "reached marker" {
					cancel()
				}
			})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want the context's error, got %v", err)
		}
		if !strings.Contains(res.Output, "reached marker") || time.Since(start) > 15*time.Second {
			t.Fatalf("want the partial output promptly, got %+v after %s", res, time.Since(start))
		}
		env.requireNoContainers(t)
	})
	// A worker killed mid-run leaves its container running; the next sandbox started on the
	// host removes it, and leaves a live worker's alone.
	t.Run("a dead worker's container", func(t *testing.T) {
		dead := exec.Command("true")
		if err := dead.Run(); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		start := func(owner int) string {
			labels := map[string]string{DockerLabel: "1", testLabel: env.label, ownerLabel: ownerOf(owner)}
			c, err := env.cli.ContainerCreate(ctx, &container.Config{Image: env.sb.image, Cmd: []string{"sleep", "600"}, Labels: labels},
				&container.HostConfig{NetworkMode: "none"}, nil, nil, containerName())
			if err != nil {
				t.Fatal(err)
			}
			if err := env.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
				t.Fatal(err)
			}
			return c.ID
		}
		orphan, live := start(dead.Process.Pid), start(os.Getppid())
		defer env.sb.remove(live)
		if _, err := NewDocker(ctx, DockerOptions{Image: env.sb.image, Client: env.cli}); err != nil {
			t.Fatal(err)
		}
		if _, err := env.cli.ContainerInspect(ctx, orphan); !client.IsErrNotFound(err) {
			env.sb.remove(orphan)
			t.Errorf("the dead worker's container is still there (%v)", err)
		}
		if c, err := env.cli.ContainerInspect(ctx, live); err != nil || !c.State.Running {
			t.Errorf("a live worker's container was stopped or removed: %v", err)
		}
	})
}

// TestDockerRealProgram runs what agents write: pandas and scikit-learn on the public data,
// a submission in the work dir, owned on the host by the uid the program ran as.
func TestDockerRealProgram(t *testing.T) {
	env := newDockerSandbox(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	var train strings.Builder
	train.WriteString("id,x1,x2,y\n")
	for i := 0; i < 200; i++ {
		train.WriteString(strings.Join([]string{strconv.Itoa(i), strconv.Itoa(i % 17), strconv.Itoa((i * 7) % 23), strconv.Itoa(i % 2)}, ",") + "\n")
	}
	os.WriteFile(filepath.Join(data, "train.csv"), []byte(train.String()), 0o644)
	prog := filepath.Join(dir, "solution.py")
	os.WriteFile(prog, []byte(`import pandas as pd, xgboost, scipy
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
df = pd.read_csv('input/train.csv')
X, y = df[['x1', 'x2']], df['y']
print('cv', round(cross_val_score(LogisticRegression(), X, y, cv=3).mean(), 3))
model = LogisticRegression().fit(X, y)
pd.DataFrame({'id': df['id'], 'y': model.predict_proba(X)[:, 1]}).to_csv('submission.csv', index=False)
print('wrote submission')
`), 0o644)
	work := filepath.Join(dir, "work")
	res, err := env.sb.Run(context.Background(), Spec{Program: prog, DataDir: data, WorkDir: work,
		Limits: Limits{Wall: 2 * time.Minute, MemoryBytes: 1 << 30, Processes: 64, OutputBytes: 1 << 16}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || !strings.Contains(res.Output, "wrote submission") {
		t.Fatalf("the program must run in the image: %+v", res)
	}
	st, err := os.Stat(filepath.Join(work, "submission.csv"))
	if err != nil || st.Size() < 200*4 {
		t.Fatalf("submission.csv must land in the host work dir: %v", err)
	}
	if uid := st.Sys().(*syscall.Stat_t).Uid; uid != uint32(env.sb.uid) || uid == 0 {
		t.Fatalf("the submission is owned by uid %d, want the sandbox's non-root uid %d", uid, env.sb.uid)
	}
}

// TestDockerRefusesMissingImage: images are never pulled, so a missing one is refused with
// the command that builds it.
func TestDockerRefusesMissingImage(t *testing.T) {
	cli, _ := testenv.RequireDockerImage(t)
	_, err := NewDocker(context.Background(), DockerOptions{Image: "mlerl-sandbox:no-such-tag", Client: cli})
	if err == nil || !strings.Contains(err.Error(), "mlerl-sandbox:no-such-tag") || !strings.Contains(err.Error(), "scripts/build-sandbox-image.sh") {
		t.Fatalf("want a refusal naming the image and the build script, got %v", err)
	}
}

// TestDockerNoEscape: the escapes of issue 19 fail in a container too (see requireNoEscape).
func TestDockerNoEscape(t *testing.T) {
	requireNoEscape(t, newDockerSandbox(t).sb)
}

// TestDockerDiskLimit: the work folder and /tmp are bounded by Limits.DiskBytes.
func TestDockerDiskLimit(t *testing.T) {
	requireDiskLimit(t, newDockerSandbox(t).sb)
}

func TestDockerOddFilesKept(t *testing.T) { requireOddFilesKept(t, newDockerSandbox(t).sb) }

func TestDockerCopyOutBounded(t *testing.T) { requireCopyOutBounded(t, newDockerSandbox(t).sb) }
