package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
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
// here, refusing with the reason and the ways out when it cannot. The check is a real run of a
// trivial program, with every restriction Run applies.
func NewLocal(python string, unsafe bool) (*Local, error) {
	if _, err := os.Stat(python); err != nil {
		return nil, fmt.Errorf("sandbox python %s not found: install Debian's python3 with python3-pandas, python3-sklearn, python3-xgboost, python3-scipy (scripts/setup-system.sh) or set --python", python)
	}
	l := &Local{Python: python, Unsafe: unsafe}
	if unsafe {
		fmt.Fprintln(os.Stderr, "WARNING: running agents' programs UNSANDBOXED (--unsafe-no-sandbox): they can reach the network and every file this user can.")
		return l, nil
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		return nil, errors.New("bubblewrap (bwrap) is not installed: install Debian's bubblewrap (scripts/setup-system.sh), or pass --unsafe-no-sandbox to run agents' programs unsandboxed")
	}
	if os.Geteuid() == 0 {
		for _, tool := range []string{"setpriv", "unshare"} {
			if _, err := exec.LookPath(tool); err != nil {
				return nil, fmt.Errorf("%s is not installed (Debian's util-linux): as root the sandbox needs it to start bubblewrap as an unprivileged user", tool)
			}
		}
	}
	if os.Geteuid() == 0 {
		cleanStaleWorkspaces()
		cleanStaleCgroups()
	}
	if err := l.probe(); err != nil {
		return nil, fmt.Errorf("the bubblewrap sandbox cannot run a trivial program on this machine (%v): if bwrap cannot create its namespaces, enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 or user.max_user_namespaces>0); or pass --unsafe-no-sandbox to run agents' programs unsandboxed", err)
	}
	return l, nil
}

// probe runs a trivial program that reads its data and writes its work folder.
func (l *Local) probe() error {
	dir, err := os.MkdirTemp("", "mlerl-bwrap-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prog, data, work := filepath.Join(dir, "probe.py"), filepath.Join(dir, "data"), filepath.Join(dir, "work")
	if err := os.WriteFile(prog, []byte("import os\nopen('probe', 'w').write(str(os.listdir('input')))\n"), 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(data, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(data, "x"), nil, 0o644); err != nil {
		return err
	}
	res, err := l.Run(context.Background(), Spec{Program: prog, DataDir: data, WorkDir: work,
		Limits: Limits{Wall: time.Minute, MemoryBytes: 256 << 20, Processes: 16, OutputBytes: 4096, DiskBytes: 16 << 20}}, nil)
	if err != nil {
		return err
	}
	if b, _ := os.ReadFile(filepath.Join(work, "probe")); res.ExitCode != 0 || string(b) != "['x']" {
		return fmt.Errorf("a trivial program failed (exit %d): %s", res.ExitCode, strings.TrimSpace(res.Output))
	}
	return nil
}

// Name says which isolation is in force.
func (l *Local) Name() string {
	if l.Unsafe {
		return "unsandboxed"
	}
	return "bubblewrap"
}

// baseArgs isolates everything: no network, pid, ipc or uts sharing; read-only system folders;
// a user namespace the program cannot nest another in (--disable-userns), no capabilities.
// /proc/sys is a read-only bind (bwrap's --proc covers it, /proc/sysrq-trigger, /proc/irq and
// /proc/bus only where they are writable to it, i.e. when bwrap runs as root), and the user
// namespace locks it, like every other read-only bind, so the program cannot remount it.
func (l *Local) baseArgs() []string {
	args := []string{"--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL",
		"--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--ro-bind", "/usr", "/usr", "--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev"}
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

// sealArgs close bubblewrap's own tmpfs areas, which it makes writable by the program and
// which no disk quota covers (their pages are charged to the memory cgroup at most): / (with
// the folders bwrap creates in it for its mounts: /code, /etc, /work's parent) and /dev become
// read-only once every mount is in place (each remount is of that mount alone: /tmp, /work and
// the device nodes stay usable), and /dev/shm, where POSIX semaphores and shared memory live,
// is a tmpfs of shmBytes, as Docker gives containers by default.
var sealArgs = []string{"--size", strconv.Itoa(shmBytes), "--tmpfs", "/dev/shm", "--remount-ro", "/dev", "--remount-ro", "/"}

const shmBytes = 64 << 20

// closeOnExecAbove2 marks every descriptor of this process above stderr close-on-exec, so the
// sandbox gets none: Go opens its own with O_CLOEXEC, but one inherited from this process's
// parent, or opened by a library, would otherwise reach the program, which could read and write
// through it whatever it points to (a root-only file, a socket to the platform's services).
func closeOnExecAbove2() error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("listing this process's descriptors, to keep them from the sandbox: %w", err)
	}
	for _, e := range entries {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			syscall.CloseOnExec(fd) // the listing's own descriptor is gone by now: EBADF, harmless
		}
	}
	return nil
}

// dropToNobody starts bubblewrap as uid/gid 65534 with no groups and no capabilities left to
// inherit or regain, when this process is root. As root, bwrap would otherwise keep the
// program's user namespace mapped to host root (or create none): the program then held every
// capability over its own mounts (remounting read-only binds writable) and host root's file
// ownership (writing /proc/sys). As nobody, bwrap needs unprivileged user namespaces.
//
// unshare --pid --fork puts setpriv and bwrap in a pid namespace of their own, whose init is
// bwrap's monitor: bwrap's monitor exits once its sandbox init reports the exit code, before
// reaping it, so without this every run left a [bwrap] zombie of uid 65534 for the host's pid 1
// to reap whenever it gets round to it. When the namespace's init exits, the kernel kills and
// reaps everything left in it, and unshare (our child) waits for that.
var dropToNobody = []string{"unshare", "--pid", "--fork", "--kill-child", "--", "setpriv", "--reuid", strconv.Itoa(nobodyID), "--regid", strconv.Itoa(nobodyID),
	"--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--"}

// Run executes spec.Program with spec.DataDir visible read-only as ./input.
//
// As root, the program runs as nobody in a per-run tmpfs workspace of Limits.DiskBytes (its
// work folder and /tmp), with the data and program bind-mounted read-only where nobody can
// reach them; spec.WorkDir is copied in before and out after. Otherwise (not root, or Unsafe)
// spec.WorkDir is used in place and its size is watched.
func (l *Local) Run(ctx context.Context, spec Spec, progress func(Progress)) (res Result, err error) {
	if err := os.MkdirAll(spec.WorkDir, 0o755); err != nil {
		return Result{}, fmt.Errorf("creating work dir: %w", err)
	}
	lim := spec.Limits
	disk := lim.disk()
	var ws *workspace
	if os.Geteuid() == 0 && !l.Unsafe {
		if ws, err = newWorkspace(disk, nobodyID, nobodyID); err != nil {
			return Result{}, err
		}
		defer func() {
			if cerr := ws.close(); cerr != nil {
				fmt.Fprintf(os.Stderr, "WARNING: bubblewrap sandbox: %v\n", cerr)
			}
		}()
		if err := ws.bindInputs(spec.DataDir, spec.Program); err != nil {
			return Result{}, err
		}
		if err := readableByOthers(spec.DataDir, spec.Program); err != nil {
			return Result{}, err
		}
		if err := ws.copyIn(spec.WorkDir); err != nil {
			return Result{}, fmt.Errorf("copying the work dir into the workspace: %w", err)
		}
	}
	name := fmt.Sprintf("mlerl-%d-%d", os.Getpid(), runCounter.Add(1))
	cg, err := newCgroup(name, lim)
	if err != nil {
		return Result{}, fmt.Errorf("creating cgroup %s: %w", name, err)
	}
	// The shell joins the cgroup (or sets rlimits) before exec'ing the sandbox, so no process of
	// the program ever runs unconfined.
	var prelude strings.Builder
	if cg != nil {
		for _, f := range cg.procsFiles {
			fmt.Fprintf(&prelude, "echo $$ > '%s' || exit 125; ", strings.ReplaceAll(f, "'", `'\''`))
		}
	} else {
		// RLIMIT_NPROC counts every thread of the real uid on the host, this process's included,
		// so the program's allowance is added to what the uid already runs. bash spells it -u,
		// dash (Debian's sh) -p.
		nproc := lim.Processes + threadsOfUID(os.Getuid())
		fmt.Fprintf(&prelude, "ulimit -v %d || exit 125; { ulimit -u %d 2>/dev/null || ulimit -p %d; } || exit 125; ",
			lim.MemoryBytes/1024, nproc, nproc)
	}
	if ws == nil {
		// No workspace (not root): one file cannot outgrow the disk limit (RLIMIT_FSIZE, in
		// 512-byte blocks; Python ignores SIGXFSZ, so the write fails with EFBIG), and
		// watchDisk bounds the folder's total, approximately.
		fmt.Fprintf(&prelude, "ulimit -f %d || exit 125; ", disk/512)
	}
	prelude.WriteString(`exec "$@"`)

	var argv []string
	switch {
	case l.Unsafe:
		input := filepath.Join(spec.WorkDir, InputDir)
		os.Remove(input)
		if err := os.Symlink(spec.DataDir, input); err != nil {
			cg.destroyOrWarn()
			return Result{}, err
		}
		argv = []string{l.Python, "-u", spec.Program}
	case ws != nil:
		argv = append(append(append([]string{}, dropToNobody...), "bwrap"), l.baseArgs()...)
		argv = append(argv, "--bind", ws.Tmp(), "/tmp", "--bind", ws.Work(), WorkMount,
			"--ro-bind", ws.Data(), WorkMount+"/"+InputDir,
			"--ro-bind", ws.Program(), "/code/solution.py")
		argv = append(append(argv, sealArgs...), "--chdir", WorkMount, "--", l.Python, "-u", "/code/solution.py")
	default:
		argv = append([]string{"bwrap"}, l.baseArgs()...)
		argv = append(argv, "--size", strconv.FormatInt(disk, 10), "--tmpfs", "/tmp",
			"--bind", spec.WorkDir, WorkMount,
			"--ro-bind", spec.DataDir, WorkMount+"/"+InputDir,
			"--ro-bind", spec.Program, "/code/solution.py")
		argv = append(append(argv, sealArgs...), "--chdir", WorkMount, "--", l.Python, "-u", "/code/solution.py")
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", prelude.String(), "sh"}, argv...)...)
	cmd.Dir = spec.WorkDir
	if ws != nil {
		cmd.Dir = "/"
	}
	// Pdeathsig: should this process die (a worker killed mid-run), the kernel kills the
	// sandbox's first process (unshare, whose --kill-child then ends the program's pid
	// namespace; or bwrap itself, or the unsafe python): a program never outlives its worker.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// bwrap stays the sandbox's pid 1 and keeps the environment it was started with, readable
	// by the program at /proc/1/environ (--clearenv cleans only the program's): it gets nothing
	// of this process's (API keys, AWS_*), only the PATH that finds bwrap.
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}
	if l.Unsafe {
		cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + spec.WorkDir, "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MPLCONFIGDIR=" + spec.WorkDir}
	}
	out := newTailBuffer(lim.OutputBytes)
	cmd.Stdout, cmd.Stderr = out, out

	start := time.Now()
	started := make(chan error, 1)
	done := make(chan error, 1)
	var waited sync.Mutex // held while the group may be signalled; exited once reaped
	exited := false
	go func() {
		// The parent-death signal fires when the thread that forked the child ends, not the
		// process: this goroutine holds its thread until the child is reaped, so the Go runtime
		// never retires it (nor lends it to a goroutine that might) while the program runs.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := closeOnExecAbove2(); err != nil {
			started <- err
			return
		}
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		err := cmd.Wait()
		waited.Lock()
		exited = true
		waited.Unlock()
		done <- err
	}()
	if err := <-started; err != nil {
		cg.destroyOrWarn()
		return Result{}, fmt.Errorf("starting sandbox: %w", err)
	}
	killGroup := func() {
		waited.Lock()
		defer waited.Unlock()
		if !exited { // once reaped, the group's id may be another's
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		}
	}
	kill := func() {
		if ws != nil && cg != nil {
			// Everything but unshare (our child) and bwrap's monitor (its child, the pid
			// namespace's init): the monitor exits once the sandbox is gone, unshare reaps it
			// (dead, it would be a zombie of the host's pid 1; killed, unshare complains into
			// the program's output). Should they not exit, they go too.
			unshare := cmd.Process.Pid
			cg.killAll(func(pid int) bool { return pid == unshare || parentOf(pid) == unshare })
			time.AfterFunc(5*time.Second, killGroup)
			return
		}
		killGroup()
		if cg != nil {
			cg.killAll(nil)
		}
	}
	var watch *diskWatch
	if ws == nil {
		watch = watchDisk(spec.WorkDir, disk, kill)
	}
	// finish ends every process of the run, removes its cgroup, and reads how the run used its
	// memory and disk, whichever way the run ended.
	finish := func() error {
		var errs []error
		if cg != nil {
			sig9 := cmd.ProcessState != nil && !res.TimedOut && res.ExitCode == 128+int(syscall.SIGKILL)
			res.OutOfMemory = cg.oomKilled(sig9)
			if err := cg.destroy(); err != nil {
				errs = append(errs, err)
			}
		}
		if watch != nil {
			res.DiskFull = watch.close() || diskErrorIn(res.Output)
		}
		if ws != nil {
			res.DiskFull = ws.checkFull() || diskErrorIn(res.Output) // a program faking it only mislabels its own failure
			failure, err := ws.copyOut(spec.WorkDir)
			if err != nil {
				errs = append(errs, fmt.Errorf("copying the work dir out of the workspace: %w", err))
			}
			res.Failure = failure
		}
		return errors.Join(errs...)
	}
	deadline := time.NewTimer(lim.Wall)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
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
			if err := finish(); err != nil {
				fmt.Fprintf(os.Stderr, "WARNING: bubblewrap sandbox: %v\n", err)
			}
			return res, ctx.Err()
		case <-tick.C:
			if ws != nil {
				ws.checkFull()
			}
			if progress != nil {
				_, n, last := out.snapshot()
				progress(Progress{Elapsed: time.Since(start), OutputBytes: n, LastLine: last})
			}
		}
	}
	res.Duration = time.Since(start)
	res.Output, res.OutputBytes, _ = out.snapshot()
	res.ExitCode = cmd.ProcessState.ExitCode()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
	}
	// Orphans the program left behind are killed here, before anything reads the work folder.
	if err := finish(); err != nil {
		return Result{}, fmt.Errorf("cleaning up after the program: %w", err)
	}
	if res.ExitCode == 125 && !res.TimedOut {
		return Result{}, fmt.Errorf("sandbox could not apply its limits: %s", strings.TrimSpace(res.Output))
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return Result{}, fmt.Errorf("waiting for sandbox: %w", waitErr)
	}
	if !res.TimedOut && !l.Unsafe && res.ExitCode != 0 && (strings.HasPrefix(res.Output, "bwrap:") || strings.HasPrefix(res.Output, "setpriv:") || strings.HasPrefix(res.Output, "unshare:")) {
		return Result{}, fmt.Errorf("bubblewrap failed: %s", strings.TrimSpace(res.Output))
	}
	return res, nil
}

// readableByOthers checks the program, running as nobody, can read the public data and its
// own source (their parents need not be open: the workspace's binds skip them).
func readableByOthers(data, program string) error {
	if st, err := os.Stat(data); err != nil || st.Mode().Perm()&0o005 != 0o005 {
		return fmt.Errorf("the public data dir %s must be readable and searchable by other users (mode o+rx): the sandboxed program runs as uid %d (%v)", data, nobodyID, err)
	}
	if st, err := os.Stat(program); err != nil || st.Mode().Perm()&0o004 == 0 {
		return fmt.Errorf("the program %s must be readable by other users (mode o+r): the sandboxed program runs as uid %d (%v)", program, nobodyID, err)
	}
	return nil
}

// threadsOfUID counts the threads whose real uid is uid, as RLIMIT_NPROC does.
func threadsOfUID(uid int) int {
	n := 0
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue
		}
		var real, threads int
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) >= 2 {
				switch f[0] {
				case "Uid:":
					real, _ = strconv.Atoi(f[1])
				case "Threads:":
					threads, _ = strconv.Atoi(f[1])
				}
			}
		}
		if real == uid {
			n += threads
		}
	}
	return n
}

// destroyOrWarn removes a group after a failed start; nil-safe.
func (c *cgroup) destroyOrWarn() {
	if c == nil {
		return
	}
	if err := c.destroy(); err != nil {
		fmt.Fprintf(os.Stderr, "WARNING: sandbox: %v\n", err)
	}
}

// Describe renders limits for logs and prompts.
func (l Limits) Describe() string {
	return "wall " + l.Wall.String() + ", memory " + strconv.FormatInt(l.MemoryBytes>>20, 10) + " MiB, " +
		strconv.Itoa(l.Processes) + " processes, output " + strconv.Itoa(l.OutputBytes>>10) + " KiB, disk " +
		strconv.FormatInt(l.disk()>>20, 10) + " MiB"
}
