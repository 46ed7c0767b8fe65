package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func newTestSandbox(t *testing.T) *Local {
	t.Helper()
	sb, err := NewLocal("/usr/bin/python3", false)
	if err != nil {
		t.Fatalf("the sandbox must work on this machine: %v", err)
	}
	return sb
}

func run(t *testing.T, sb *Local, program string, limits Limits) (Result, string) {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "train.csv"), []byte("a,b\n1,2\n"), 0o644)
	prog := filepath.Join(dir, "prog.py")
	os.WriteFile(prog, []byte(program), 0o644)
	work := filepath.Join(dir, "work")
	if limits.Wall == 0 {
		limits = Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096}
	}
	res, err := sb.Run(context.Background(), Spec{Program: prog, DataDir: data, WorkDir: work, Limits: limits}, nil)
	if err != nil {
		t.Fatalf("sandbox error: %v", err)
	}
	return res, work
}

func TestSandboxIsolation(t *testing.T) {
	sb := newTestSandbox(t)
	secret := filepath.Join(t.TempDir(), "answers.csv")
	os.WriteFile(secret, []byte("secret"), 0o644)
	cases := []struct {
		name, program, wantOutput string
		wantExit                  int
	}{
		{"reads public data", "print(open('input/train.csv').read().strip())", "a,b\n1,2", 0},
		{"writes its work dir", "open('submission.csv','w').write('x'); print('ok')", "ok", 0},
		{"public data is read-only", "open('input/train.csv','w')", "Read-only file system", 1},
		{"no network", "import socket\ntry:\n  socket.create_connection(('1.1.1.1', 80), timeout=3)\nexcept OSError as e: print('blocked', e)", "blocked", 0},
		{"private answers invisible", "import os\nprint(os.path.exists(" + "'" + secret + "'" + "))", "False", 0},
		{"own /tmp", "import os\nprint(os.listdir('/tmp'))", "[]", 0},
		{"a crash is a result", "raise SystemExit(3)", "", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, _ := run(t, sb, c.program, Limits{})
			if res.ExitCode != c.wantExit || !strings.Contains(res.Output, c.wantOutput) {
				t.Fatalf("exit %d output %q; want exit %d and output containing %q", res.ExitCode, res.Output, c.wantExit, c.wantOutput)
			}
		})
	}
}

func TestSandboxLimits(t *testing.T) {
	sb := newTestSandbox(t)
	t.Run("wall clock", func(t *testing.T) {
		res, _ := run(t, sb, "import time\nprint('start', flush=True)\ntime.sleep(60)", Limits{Wall: 2 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096})
		if !res.TimedOut || res.Duration > 10*time.Second {
			t.Fatalf("want a timeout after ~2s, got %+v", res)
		}
	})
	t.Run("memory", func(t *testing.T) {
		res, _ := run(t, sb, "x = bytearray(800 * 1024 * 1024)\nprint('allocated')", Limits{Wall: 20 * time.Second, MemoryBytes: 200 << 20, Processes: 32, OutputBytes: 4096})
		if res.ExitCode == 0 || strings.Contains(res.Output, "allocated") {
			t.Fatalf("800 MiB under a 200 MiB limit must fail, got %+v", res)
		}
	})
	t.Run("processes", func(t *testing.T) {
		prog := "import os, time\nn = 0\ntry:\n  for i in range(200):\n    if os.fork() == 0:\n      time.sleep(5); os._exit(0)\n    n += 1\nexcept OSError as e:\n  print('refused after', n)\n"
		res, _ := run(t, sb, prog, Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 16, OutputBytes: 4096})
		if !strings.Contains(res.Output, "refused after") {
			t.Fatalf("forking 200 under a 16-process limit must be refused, got %+v", res)
		}
	})
	t.Run("output cap", func(t *testing.T) {
		res, _ := run(t, sb, "for i in range(100000): print('line', i)", Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 1000})
		if len(res.Output) > 1000 || res.OutputBytes < 1000000 || !strings.Contains(res.Output, "line 99999") {
			t.Fatalf("want the last 1000 bytes of ~1.2 MB, got %d kept of %d", len(res.Output), res.OutputBytes)
		}
	})
}
