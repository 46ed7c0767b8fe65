package sandbox

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
		if res.ExitCode == 0 || strings.Contains(res.Output, "allocated") || (os.Geteuid() == 0 && !res.OutOfMemory) {
			t.Fatalf("800 MiB under a 200 MiB limit must fail (as out of memory, where cgroups bound it), got %+v", res)
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

// requireOrSkip skips, loudly, when the machine lacks something a test needs; under CI=true,
// where everything is installed, it fails instead.
func requireOrSkip(t *testing.T, ok bool, why string) {
	t.Helper()
	if ok {
		return
	}
	if v := os.Getenv("CI"); v != "" && v != "0" && v != "false" {
		t.Fatalf("CI=true and this test cannot run: %s", why)
	}
	t.Skipf("SKIP: %s", why)
}

// requireNoEscape runs testdata/escape.py (the escapes of issue 19: remounting read-only binds
// writable, writing the host's /usr/share and /proc/sys, keeping capabilities, nesting a user
// namespace to mount in, running as host root) and checks each failed, inside and on the host.
func requireNoEscape(t *testing.T, sb Sandbox) {
	t.Helper()
	prog, err := os.ReadFile("testdata/escape.py")
	if err != nil {
		t.Fatal(err)
	}
	ratelimit, _ := os.ReadFile("/proc/sys/kernel/printk_ratelimit")
	res, work := mustRun(t, sb, string(prog), Limits{})
	if res.ExitCode != 0 {
		t.Fatalf("the escape program must run to its end: %+v", res)
	}
	got := map[string]string{}
	for _, line := range strings.Split(res.Output, "\n") {
		if k, v, ok := strings.Cut(line, ": "); ok {
			got[k] = v
		}
	}
	for _, k := range []string{"remount data", "remount usr", "write usr", "write proc sys", "unshare user then mount"} {
		if !strings.HasPrefix(got[k], "blocked") {
			t.Errorf("%s: %q, want blocked", k, got[k])
		}
	}
	for _, k := range []string{"CapEff", "CapPrm", "CapAmb"} {
		if got[k] != "0000000000000000" {
			t.Errorf("%s = %q, want no capabilities", k, got[k])
		}
	}
	if got["NoNewPrivs"] != "1" {
		t.Errorf("NoNewPrivs = %q, want 1", got["NoNewPrivs"])
	}
	// On the host: nothing written where the program had no business, and the file it wrote in
	// its work folder belongs to an unprivileged uid (65534 when the platform is root).
	if _, err := os.Stat("/usr/share/mlerl-escaped"); err == nil {
		os.Remove("/usr/share/mlerl-escaped")
		t.Errorf("the program wrote the host's /usr/share")
	}
	if now, _ := os.ReadFile("/proc/sys/kernel/printk_ratelimit"); string(now) != string(ratelimit) {
		t.Errorf("the program changed the host's printk_ratelimit: %q -> %q", ratelimit, now)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(work), "data", "escaped.csv")); err == nil {
		t.Errorf("the program wrote into the public data")
	}
	st, err := os.Lstat(filepath.Join(work, "owned-by"))
	if err != nil {
		t.Fatalf("the program's file must land in the host work dir: %v", err)
	}
	uid := st.Sys().(*syscall.Stat_t).Uid
	if os.Geteuid() == 0 && (uid != nobodyID || got["uid"] != "65534 65534") {
		t.Errorf("as root the program must run as nobody: host owner %d, uid inside %q", uid, got["uid"])
	}
	if uid == 0 {
		t.Errorf("the program's file is owned by host root")
	}
	t.Logf("escape attempts: %v; host owner of its file: %d", got, uid)
}

func TestSandboxNoEscape(t *testing.T) {
	requireNoEscape(t, newTestSandbox(t))
}

// requireDiskLimit: a program writing far past Limits.DiskBytes, in its work folder or in /tmp,
// is stopped near the limit with DiskFull, while a program within it keeps its files.
func requireDiskLimit(t *testing.T, sb Sandbox) {
	t.Helper()
	lim := Limits{Wall: 60 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096, DiskBytes: 64 << 20}
	fill := func(dir string) string {
		return "import os, time\nt = time.time()\nn = 0\nchunk = b'x' * (1 << 20)\ntry:\n" +
			"  with open(os.path.join('" + dir + "', 'big'), 'wb') as f:\n" +
			"    for i in range(3000):\n      f.write(chunk); f.flush(); n += 1\n" +
			"except OSError as e:\n  print('stopped after', n, 'MiB in', round(time.time() - t, 2), 's:', e, flush=True)\n  raise\n"
	}
	for _, dir := range []string{".", "/tmp"} {
		t.Run("fill "+dir, func(t *testing.T) {
			res, work := mustRun(t, sb, fill(dir), lim)
			if !res.DiskFull || res.ExitCode == 0 || res.TimedOut {
				t.Fatalf("3000 MiB under a 64 MiB disk limit must be stopped with DiskFull, got %+v", res)
			}
			if n := duBytes(work); n > 2*lim.DiskBytes {
				t.Fatalf("the host work dir holds %d MiB, want at most about the 64 MiB limit", n>>20)
			}
			t.Logf("%s: %s (%s, host work dir %d MiB)", sb.Name(), strings.TrimSpace(res.Output), res.Duration.Round(time.Millisecond), duBytes(work)>>20)
		})
	}
	t.Run("within the limit", func(t *testing.T) {
		res, work := mustRun(t, sb, "open('submission.csv', 'wb').write(b'y' * (20 << 20))\nopen('/tmp/t', 'wb').write(b'z' * (20 << 20))\nprint('ok')", lim)
		if res.DiskFull || res.ExitCode != 0 {
			t.Fatalf("40 MiB under 64 MiB must pass, got %+v", res)
		}
		if st, err := os.Stat(filepath.Join(work, "submission.csv")); err != nil || st.Size() != 20<<20 {
			t.Fatalf("the submission must be in the host work dir whole: %v", err)
		}
	})
}

func TestSandboxDiskLimit(t *testing.T) {
	requireDiskLimit(t, newTestSandbox(t))
}

func TestSandboxOutOfMemory(t *testing.T) {
	sb := newTestSandbox(t)
	res, _ := mustRun(t, sb, "x = bytearray(800 * 1024 * 1024)\nprint('allocated')", Limits{Wall: 20 * time.Second, MemoryBytes: 200 << 20, Processes: 32, OutputBytes: 4096})
	requireOrSkip(t, os.Geteuid() == 0 || res.OutOfMemory, "not root: no cgroup, the memory limit is an rlimit")
	if !res.OutOfMemory || res.ExitCode == 0 {
		t.Fatalf("800 MiB under a 200 MiB limit must be reported as out of memory, got %+v", res)
	}
}

// ourCgroupRuns lists this process's run groups left in the cgroup hierarchies.
func ourCgroupRuns(t *testing.T) []string { return cgroupRunsOf(os.Getpid()) }

// cgroupRunsOf lists the groups of the runs process pid started.
func cgroupRunsOf(pid int) []string {
	var left []string
	prefix := fmt.Sprintf("mlerl-%d-", pid)
	filepath.WalkDir(cgroupFS, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), prefix) {
			left = append(left, p)
			return filepath.SkipDir
		}
		return nil
	})
	return left
}

// TestCgroupUnderOwn: the run's groups are created under this process's own groups.
func TestCgroupUnderOwn(t *testing.T) {
	cg, err := newCgroup(fmt.Sprintf("mlerl-%d-own", os.Getpid()), defaultTestLimits)
	if err != nil {
		t.Fatal(err)
	}
	requireOrSkip(t, cg != nil, "no writable cgroup hierarchy (not root?)")
	defer cg.destroy()
	own1, own2, _ := ownCgroups()
	for _, d := range cg.dirs {
		rel, _ := filepath.Rel(cgroupFS, d)
		ctrl, path, _ := strings.Cut(rel, "/")
		want := filepath.Join(cgroupFS, ctrl, own1[ctrl])
		if cg.v2 {
			want = filepath.Join(cgroupFS, own2)
			if !strings.HasPrefix(d, want+"/") {
				want = filepath.Dir(want) // beside us: see v2Parent
			}
		}
		if filepath.Dir(d) != want {
			t.Errorf("group %s (%s) is not under our own %s", d, path, want)
		}
	}
	t.Logf("groups %v (own: %v %q)", cg.dirs, own1, own2)
}

// TestCgroupsRemoved: no group is left after runs, even when the program leaves a daemon and
// a swarm of children behind as it exits, or is killed at its wall-clock limit.
func TestCgroupsRemoved(t *testing.T) {
	sb := newTestSandbox(t)
	requireOrSkip(t, os.Geteuid() == 0, "not root: no cgroup is created")
	orphans := `import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(1000)
    os._exit(0)
for i in range(20):
    try:
        if os.fork() == 0:
            while True:
                try: os.fork()
                except OSError: time.sleep(0.01)
    except OSError:
        break
time.sleep(0.3)
print('leaving', flush=True)
`
	for i := 0; i < 6; i++ {
		lim := Limits{Wall: 20 * time.Second, MemoryBytes: 512 << 20, Processes: 64, OutputBytes: 4096}
		program, killed := orphans, i%3 == 2
		if killed {
			// Killed at the wall-clock limit: the program never exits, so the kill is certain
			// however slowly a loaded machine gets it to the print.
			lim.Wall = 1500 * time.Millisecond
			program += "time.sleep(1000)\n"
		}
		res, _ := mustRun(t, sb, program, lim)
		if killed && !res.TimedOut || !killed && !strings.Contains(res.Output, "leaving") {
			t.Fatalf("run %d: %+v", i, res)
		}
		if left := ourCgroupRuns(t); len(left) > 0 {
			t.Fatalf("run %d left cgroups behind: %v", i, left)
		}
	}
	if res, _ := mustRun(t, sb, "print('plain')", Limits{}); res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	if left := ourCgroupRuns(t); len(left) > 0 {
		t.Fatalf("cgroups left behind: %v", left)
	}
}

// TestNoZombiesLeft: a run leaves no process of the sandbox's uid behind, zombies included
// (bwrap's monitor exits before reaping its sandbox init; see dropToNobody). Only orphans (of
// the host's pid 1) and our own children count: other tests' containers may run as 65534 too.
func TestNoZombiesLeft(t *testing.T) {
	sb := newTestSandbox(t)
	requireOrSkip(t, os.Geteuid() == 0, "not root: the program runs as our own uid")
	ours := func() map[string]bool {
		m := map[string]bool{}
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
			orphan := strings.Contains(string(b), "\nPPid:\t1\n") || strings.Contains(string(b), fmt.Sprintf("\nPPid:\t%d\n", os.Getpid()))
			if err == nil && orphan && strings.Contains(string(b), fmt.Sprintf("\nUid:\t%d\t", nobodyID)) {
				m[e.Name()] = true
			}
		}
		return m
	}
	before := ours()
	for _, p := range []string{"print('hi')", "import os, time\nif os.fork() == 0:\n  os.setsid(); time.sleep(100)\nprint('x')"} {
		mustRun(t, sb, p, Limits{})
	}
	mustRun(t, sb, "import time\ntime.sleep(60)", Limits{Wall: time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096})
	for pid := range ours() {
		if !before[pid] {
			st, _ := os.ReadFile(filepath.Join("/proc", pid, "stat"))
			t.Errorf("process %s of uid %d left behind: %s", pid, nobodyID, st)
		}
	}
}

// requireOddFilesKept: what the program leaves in its work folder reaches the host as it was,
// never followed: a symlink stays a link (to the host's /etc/passwd, unread), a FIFO a FIFO.
func requireOddFilesKept(t *testing.T, sb Sandbox) {
	t.Helper()
	res, work := mustRun(t, sb, "import os\nos.symlink('/etc/passwd', 'link.csv')\nos.mkfifo('submission.csv')\nos.makedirs('a/b')\nopen('a/b/c', 'w').write('c')\nprint('ok')", Limits{})
	if res.ExitCode != 0 {
		t.Fatalf("%+v", res)
	}
	if st, err := os.Lstat(filepath.Join(work, "link.csv")); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("link.csv must stay a symlink: %v", err)
	}
	if st, err := os.Lstat(filepath.Join(work, "submission.csv")); err != nil || st.Mode()&fs.ModeNamedPipe == 0 {
		t.Errorf("submission.csv must stay a FIFO: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(work, "a", "b", "c")); err != nil || string(b) != "c" {
		t.Errorf("a/b/c must be copied: %q %v", b, err)
	}
}

func TestSandboxOddFilesKept(t *testing.T) { requireOddFilesKept(t, newTestSandbox(t)) }

// TestStaleWorkspacesCleaned: a workspace left mounted by a process that died is unmounted and
// removed when a sandbox starts; a live process's is kept.
func TestStaleWorkspacesCleaned(t *testing.T) {
	requireOrSkip(t, os.Geteuid() == 0, "not root: no workspace is mounted")
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	base, err := workspaceBase()
	if err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(base, fmt.Sprintf("run-%d-x", dead.Process.Pid))
	live := filepath.Join(base, fmt.Sprintf("run-%d-x", os.Getppid()))
	for _, d := range []string{stale, live} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Mount("tmpfs", d, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { syscall.Unmount(live, syscall.MNT_DETACH); os.Remove(live) }()
	newTestSandbox(t)
	if _, err := os.Stat(stale); err == nil {
		t.Errorf("the dead process's workspace %s is still there", stale)
	}
	if b, _ := os.ReadFile("/proc/self/mounts"); !strings.Contains(string(b), live) || strings.Contains(string(b), stale) {
		t.Errorf("want %s mounted and %s not", live, stale)
	}
}

// TestV2Parent: on the unified hierarchy the runs' groups go under our own group when it
// delegates pids and memory, else beside it, else at the root (a fake hierarchy in a folder).
func TestV2Parent(t *testing.T) {
	fake := t.TempDir()
	defer func(old string) { cgroupFS = old }(cgroupFS)
	cgroupFS = fake
	own := filepath.Join(fake, "a", "b")
	os.MkdirAll(own, 0o755)
	set := func(dir, controllers string) {
		os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(controllers), 0o644)
	}
	set(fake, "cpu memory pids")
	set(filepath.Join(fake, "a"), "")
	set(own, "")
	if got := v2Parent("/a/b"); got != fake {
		t.Errorf("only the root delegates: got %s", got)
	}
	set(filepath.Join(fake, "a"), "memory pids")
	if got := v2Parent("/a/b"); got != filepath.Join(fake, "a") {
		t.Errorf("our parent delegates (we hold processes): got %s", got)
	}
	set(own, "pids memory")
	if got := v2Parent("/a/b"); got != own {
		t.Errorf("our own group delegates: got %s", got)
	}
	set(fake, "cpu")
	set(filepath.Join(fake, "a"), "")
	set(own, "memory")
	if got := v2Parent("/a/b"); got != "" {
		t.Errorf("nothing delegates both: got %q, want none (rlimits)", got)
	}
}

// orphanHelperEnv makes TestProgramDiesWithItsWorker the worker it kills: it runs one program
// that starts `sleep MARKER` and waits.
const orphanHelperEnv = "MLERL_SANDBOX_ORPHAN_HELPER"

// TestProgramDiesWithItsWorker: a worker killed mid-run (SIGKILL: no deferred cleanup runs)
// takes its program and the program's children with it, and the next sandbox started removes
// the run's cgroup it left.
func TestProgramDiesWithItsWorker(t *testing.T) {
	if marker := os.Getenv(orphanHelperEnv); marker != "" {
		sb, err := NewLocal("/usr/bin/python3", false)
		if err != nil {
			t.Fatal(err)
		}
		run(t, sb, fmt.Sprintf("import subprocess\nprint('started', flush=True)\nsubprocess.run(['sleep', '%s'])", marker),
			Limits{Wall: 5 * time.Minute, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096})
		t.Fatal("the program ended before its worker was killed")
	}
	marker := fmt.Sprintf("%d.%06d", 3000+os.Getpid()%1000, time.Now().UnixNano()%1000000)
	sleeping := func() []int {
		var pids []int
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if pid, perr := strconv.Atoi(e.Name()); perr == nil && err == nil && string(b) == "sleep\x00"+marker+"\x00" {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	var out strings.Builder
	worker := exec.Command(os.Args[0], "-test.run=^TestProgramDiesWithItsWorker$", "-test.count=1")
	worker.Env = append(os.Environ(), orphanHelperEnv+"="+marker, "TMPDIR="+t.TempDir())
	worker.Stdout, worker.Stderr = &out, &out
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { worker.Wait(); close(exited) }()
	for deadline := time.Now().Add(time.Minute); len(sleeping()) == 0; time.Sleep(100 * time.Millisecond) {
		select {
		case <-exited:
			t.Fatalf("the worker ended before its program started:\n%s", out.String())
		default:
		}
		if time.Now().After(deadline) {
			worker.Process.Kill()
			t.Fatalf("the program did not start in a minute:\n%s", out.String())
		}
	}
	worker.Process.Kill()
	<-exited
	deadline := time.Now().Add(10 * time.Second)
	for len(sleeping()) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if left := sleeping(); len(left) > 0 {
		for _, pid := range left {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatalf("the program's child (pids %v) outlived its killed worker by 10 s", left)
	}
	if os.Geteuid() != 0 {
		return // no cgroup is created
	}
	if len(cgroupRunsOf(worker.Process.Pid)) == 0 {
		t.Fatal("the killed worker left no cgroup: nothing for the next sandbox to clean")
	}
	newTestSandbox(t)
	if left := cgroupRunsOf(worker.Process.Pid); len(left) > 0 {
		t.Errorf("a new sandbox left the killed worker's cgroups in place: %v", left)
	}
}
