package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// InputDir is where the public data appears, relative to the program's working directory.
const InputDir = "input"

// Local runs programs on this host: under bubblewrap by default, or unsandboxed when the user
// explicitly asks for it (Unsafe).
type Local struct {
	Python string // interpreter path inside the sandbox, e.g. /usr/bin/python3
	Unsafe bool   // no namespaces: the program sees the host (only with an explicit flag)
}

var runCounter atomic.Int64

// NewLocal checks that the interpreter exists and that bubblewrap can create its namespaces
// here, refusing with the reason and the ways out when it cannot.
func NewLocal(python string, unsafe bool) (*Local, error) {
	if _, err := os.Stat(python); err != nil {
		return nil, fmt.Errorf("sandbox python %s not found: install Debian's python3 with python3-pandas, python3-sklearn, python3-xgboost, python3-scipy (scripts/setup-system.sh) or set --python", python)
	}
	l := &Local{Python: python, Unsafe: unsafe}
	if unsafe {
		fmt.Fprintln(os.Stderr, "WARNING: running agents' programs UNSANDBOXED (--unsafe-no-sandbox): they can reach the network and every file this user can.")
		return l, nil
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, errors.New("bubblewrap (bwrap) is not installed: install Debian's bubblewrap (scripts/setup-system.sh), or pass --unsafe-no-sandbox to run agents' programs unsandboxed")
	}
	probe := exec.Command(bwrap, append(l.baseArgs(), "--", python, "-c", "pass")...)
	if out, err := probe.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("bubblewrap cannot create its namespaces on this machine (%v: %s): enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces>0), or pass --unsafe-no-sandbox to run agents' programs unsandboxed",
			err, strings.TrimSpace(string(out)))
	}
	return l, nil
}

// Name says which isolation is in force.
func (l *Local) Name() string {
	if l.Unsafe {
		return "unsandboxed"
	}
	return "bubblewrap"
}

// baseArgs isolates everything: no network, pid, ipc or uts sharing; read-only system folders.
func (l *Local) baseArgs() []string {
	args := []string{"--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"}
	for _, d := range []string{"/bin", "/lib", "/lib64", "/sbin", "/lib32", "/libx32"} {
		if target, err := os.Readlink(d); err == nil {
			args = append(args, "--symlink", target, d)
		} else if st, err := os.Stat(d); err == nil && st.IsDir() {
			args = append(args, "--ro-bind", d, d)
		}
	}
	// Python and its libraries read a few files under /etc (locale, alternatives).
	for _, f := range []string{"/etc/alternatives", "/etc/ld.so.cache", "/etc/localtime", "/etc/python3", "/etc/python3.11"} {
		if _, err := os.Stat(f); err == nil {
			args = append(args, "--ro-bind", f, f)
		}
	}
	return append(args, "--clearenv",
		"--setenv", "PATH", "/usr/bin:/bin", "--setenv", "HOME", WorkMount, "--setenv", "TMPDIR", "/tmp",
		"--setenv", "MPLCONFIGDIR", "/tmp", "--setenv", "PYTHONDONTWRITEBYTECODE", "1",
		"--setenv", "OMP_NUM_THREADS", "1", "--setenv", "OPENBLAS_NUM_THREADS", "1", "--setenv", "MKL_NUM_THREADS", "1")
}

// Run executes spec.Program with spec.DataDir visible read-only as ./input.
func (l *Local) Run(ctx context.Context, spec Spec, progress func(Progress)) (Result, error) {
	if err := os.MkdirAll(spec.WorkDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating work dir: %w", err)
	}
	lim := spec.Limits
	name := fmt.Sprintf("mlerl-%d-%d", os.Getpid(), runCounter.Add(1))
	cg, err := newCgroup(name, lim)
	if err != nil {
		return Result{}, fmt.Errorf("creating cgroup %s: %w", name, err)
	}
	// The shell joins the cgroup (or sets rlimits) before exec'ing the sandbox, so no process of
	// the program ever runs unconfined.
	var prelude strings.Builder
	if cg != nil {
		defer cg.remove()
		for _, f := range cg.procsFiles {
			fmt.Fprintf(&prelude, "echo $$ > %s || exit 125; ", f)
		}
	} else {
		fmt.Fprintf(&prelude, "ulimit -v %d || exit 125; ulimit -u %d || exit 125; ", lim.MemoryBytes/1024, lim.Processes)
	}
	prelude.WriteString(`exec "$@"`)

	var argv []string
	if l.Unsafe {
		input := filepath.Join(spec.WorkDir, InputDir)
		os.Remove(input)
		if err := os.Symlink(spec.DataDir, input); err != nil {
			return Result{}, err
		}
		argv = []string{l.Python, "-u", spec.Program}
	} else {
		argv = append([]string{"bwrap"}, l.baseArgs()...)
		argv = append(argv, "--bind", spec.WorkDir, WorkMount,
			"--ro-bind", spec.DataDir, WorkMount+"/"+InputDir,
			"--ro-bind", spec.Program, "/code/solution.py",
			"--chdir", WorkMount, "--", l.Python, "-u", "/code/solution.py")
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", prelude.String(), "sh"}, argv...)...)
	cmd.Dir = spec.WorkDir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if l.Unsafe {
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + spec.WorkDir, "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MPLCONFIGDIR=" + spec.WorkDir}
	}
	out := newTailBuffer(lim.OutputBytes)
	cmd.Stdout, cmd.Stderr = out, out

	start := time.Now()
	if err := cmd.Start(); err != nil {
		return Result{}, fmt.Errorf("starting sandbox: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	kill := func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		if cg != nil {
			cg.killAll()
		}
	}
	deadline := time.NewTimer(lim.Wall)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var res Result
	var waitErr error
loop:
	for {
		select {
		case waitErr = <-done:
			break loop
		case <-deadline.C:
			res.TimedOut = true
			kill()
		case <-ctx.Done():
			// Cancelled by the caller: the partial result (output so far) comes with the error,
			// so the caller can still credit the markers the program reached.
			kill()
			<-done
			res.Duration, res.TimedOut = time.Since(start), true
			res.Output, res.OutputBytes, _ = out.snapshot()
			res.ExitCode = -1
			return res, ctx.Err()
		case <-tick.C:
			if progress != nil {
				_, n, last := out.snapshot()
				progress(Progress{Elapsed: time.Since(start), OutputBytes: n, LastLine: last})
			}
		}
	}
	if cg != nil {
		cg.killAll() // orphans the program left behind
	}
	res.Duration = time.Since(start)
	res.Output, res.OutputBytes, _ = out.snapshot()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
	}
	if res.ExitCode == 125 && !res.TimedOut {
		return Result{}, fmt.Errorf("sandbox could not apply its limits: %s", strings.TrimSpace(res.Output))
	}
	if cg != nil && cg.oomKilled() {
		res.OutOfMemory = true
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Result{}, fmt.Errorf("waiting for sandbox: %w", waitErr)
	}
	if !res.TimedOut && !l.Unsafe && res.ExitCode != 0 && strings.HasPrefix(res.Output, "bwrap:") {
		return Result{}, fmt.Errorf("bubblewrap failed: %s", strings.TrimSpace(res.Output))
	}
	return res, nil
}

// Describe renders limits for logs and prompts.
func (l Limits) Describe() string {
	return "wall " + l.Wall.String() + ", memory " + strconv.FormatInt(l.MemoryBytes>>20, 10) + " MiB, " +
		strconv.Itoa(l.Processes) + " processes, output " + strconv.Itoa(l.OutputBytes>>10) + " KiB"
}
