// Package adversarial runs hostile and careless agent programs, and bad input of every kind,
// through the real platform (the ExecuteProgram activity with both sandboxes; the starter
// binary) and checks each is contained or refused with a clear reason, with the host unchanged.
// MLERL_ADVERSARIAL_TABLE=FILE also writes the case / expected / observed table that
// benchmarks/RESULTS.md quotes.
package adversarial

import (
	"context"
	"crypto/rand"
	_ "embed"
	"fmt"
	"math"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/sandbox"
	"mlerl/tasks"
)

//go:embed attacks.py
var attacksPy string

const task = "leaf-classification"

// The limits every case runs under: small, so resource attacks end in seconds. The disk is
// 128 MiB: filling 256 MiB of an ext4 image took 10 s and more on a loaded 2-core machine.
var limits = tasks.Limits{WallSeconds: 10, MemoryMB: 512, Processes: 64, OutputKB: 64, DiskMB: 128}

// outcome is what one program did, as the platform recorded it and as the host shows it.
type outcome struct {
	res      activities.ExecuteResult
	output   string   // the stored output tail
	escaped  []string // the program's ESCAPED lines
	blocked  int      // its BLOCKED lines
	done     bool     // it printed DONE (ran to its end)
	hostDiff []string // what changed on the host
	err      error    // an activity error (the sandbox failed, not the program)
}

// programCase is one hostile program; judge returns "" when the outcome is what was expected.
type programCase struct {
	name, expect string
	judge        func(o outcome) string
}

// contained: no attack worked and the host is unchanged; extra checks the result.
func contained(extra func(o outcome) string) func(o outcome) string {
	return func(o outcome) string {
		switch {
		case o.err != nil:
			return "activity error: " + o.err.Error()
		case len(o.escaped) > 0:
			return "ESCAPED: " + strings.Join(o.escaped, "; ")
		case len(o.hostDiff) > 0:
			return "host changed: " + strings.Join(o.hostDiff, "; ")
		case o.res.Valid:
			return "graded as a valid submission"
		}
		if extra != nil {
			return extra(o)
		}
		return ""
	}
}

func reasonHas(words ...string) func(o outcome) string {
	return func(o outcome) string {
		for _, w := range words {
			if !strings.Contains(strings.ToLower(o.res.Reason), w) {
				return fmt.Sprintf("reason %q does not say %q", o.res.Reason, w)
			}
		}
		return ""
	}
}

func ranToEnd(o outcome) string {
	if !o.done || o.blocked == 0 {
		return fmt.Sprintf("the program did not run its attacks to the end (done %v, %d blocked): %s", o.done, o.blocked, tail(o.output, 300))
	}
	return ""
}

// ranToEndDone: the program printed DONE (for cases that attempt nothing to refuse).
func ranToEndDone(o outcome) string {
	if !o.done {
		return "the program did not run to its end: " + tail(o.output, 300)
	}
	return ""
}

func programCases() []programCase {
	return []programCase{
		{"remount-usr", "remount of the read-only /usr bind refused; nothing written to the host's /usr/share", contained(ranToEnd)},
		{"remount-input", "the prepared data stays read-only: no remount, no new file, no truncation", contained(ranToEnd)},
		{"sysctl-write", "every /proc/sys file and /proc/sysrq-trigger unwritable", contained(ranToEnd)},
		{"capabilities", "no effective, permitted or ambient capability; setuid(0) and chroot refused", contained(ranToEnd)},
		{"user-namespace", "no new user namespace (or, if one, its mounts stay locked read-only)", contained(ranToEnd)},
		{"new-mounts", "mounting tmpfs, sysfs or proc refused", contained(ranToEnd)},
		{"devices", "mknod refused; no disk, memory or kernel-log device opens", contained(ranToEnd)},
		{"kernel-calls", "module loading, setting the clock and the hostname refused", contained(ranToEnd)},
		{"cgroup-escape", "the program cannot leave or raise its cgroup limits", contained(ranToEnd)},
		{"private-answers", "the private answers unreadable by any path", contained(ranToEnd)},
		{"host-secrets", "a root-only host file unreadable", contained(ranToEnd)},
		{"host-processes", "no host process visible in /proc", contained(ranToEnd)},
		{"kill-everyone", "kill(-1) reaches only the sandbox; host processes (root and the sandbox's uid) live", contained(nil)},
		{"network", "no interface but loopback; the host's loopback listener unreachable; no raw sockets", contained(ranToEnd)},
		{"inherited-fds", "no descriptor of the platform's (a root-only file, a listening socket, both without close-on-exec) reaches the program", contained(ranToEnd)},
		{"environ-secrets", "the platform's API key and AWS_SECRET_ACCESS_KEY in no environment the program can read, /proc/1/environ included", contained(ranToEnd)},
		{"system-tmpfs-fill", "/, /code, /etc, /dev read-only; /dev/shm stops at 64 MiB: no storage beside the disk quota", contained(ranToEnd)},
		{"sparse-file", "a 1 GiB sparse file fails the run at copy-out (over the 128 MiB disk limit) with the reason; the host gets at most the limit", contained(reasonHas("copied out", "disk limit"))},
		{"hard-links", "41 names of one 20 MiB file fail the run at copy-out with the reason", contained(reasonHas("copied out", "hard links"))},
		{"many-small-files", "files until no inode is left: stopped by the workspace, reported as the disk limit, copied out within budget", contained(reasonHas("disk"))},
		{"deep-tree", "folders 200 deep fail the run at copy-out, over its depth limit", contained(reasonHas("copied out", "nested"))},
		{"escape-names", "file names with a newline, escapes and invalid UTF-8 in a copy-out failure's reason come quoted", contained(func(o outcome) string {
			if strings.ContainsAny(o.res.Reason, "\n\x1b") || !strings.Contains(o.res.Reason, `\n`) {
				return fmt.Sprintf("reason %q: want the names quoted", o.res.Reason)
			}
			return reasonHas("copied out")(o)
		})},
		{"long-path", "a path over 4,096 bytes is the program's failure with a reason, never an activity error or retry", contained(reasonHas("copied out", "path"))},
		{"special-files", "a socket, a FIFO, symlinks to host files and loops are copied as what they are, never followed", contained(ranToEndDone)},
		{"ancestor-descriptors", "no other process's descriptors open a host file; no other root visible", contained(ranToEnd)},
		{"abstract-socket", "the host's abstract unix socket is unreachable (another network namespace)", contained(ranToEnd)},
		{"huge-line", "64 MiB on one line: only the last 64 KiB kept", contained(func(o outcome) string {
			if len(o.output) > limits.OutputKB<<10+1024 {
				return fmt.Sprintf("%d bytes of output stored", len(o.output))
			}
			return ranToEndDone(o)
		})},
		{"binary-output", "NULs, invalid UTF-8 and escapes printed: stored as output, nothing breaks", contained(ranToEndDone)},
		{"tamper-program", "the program file and system binaries unwritable, no hard link across", contained(ranToEnd)},
		{"fork-bomb", "fork refused at the process limit; nothing left running", contained(nil)},
		{"thread-bomb", "threads refused at the process limit; nothing left running", contained(nil)},
		{"memory-bomb", "killed at the memory limit, reported as out of memory", contained(reasonHas("memory"))},
		{"disk-fill-work", "stopped at the disk limit, reported as such", contained(reasonHas("disk"))},
		{"disk-fill-tmp", "/tmp bounded too: stopped at the disk or memory limit with that reason", contained(func(o outcome) string {
			r := strings.ToLower(o.res.Reason)
			if !strings.Contains(r, "disk") && !strings.Contains(r, "memory") {
				return fmt.Sprintf("reason %q names neither the disk nor the memory limit", o.res.Reason)
			}
			return ""
		})},
		{"output-flood", "200 MiB printed, only the last 64 KiB kept", contained(func(o outcome) string {
			if len(o.output) > limits.OutputKB<<10+1024 {
				return fmt.Sprintf("%d bytes of output stored", len(o.output))
			}
			return ""
		})},
		{"infinite-loop", "ended at the wall-clock limit, reported as a timeout", contained(func(o outcome) string {
			if !o.res.TimedOut {
				return "not reported as timed out"
			}
			return reasonHas("timed out")(o)
		})},
		{"orphan-daemon", "the daemon it leaves behind is killed with the run", contained(nil)},
		{"fd-exhaustion", "stopped by the descriptor limit", contained(ranToEnd)},
		{"submission-symlink", "a symlink to the answers is refused, never read", contained(reasonHas("not a regular file"))},
		{"submission-fifo", "a FIFO is refused without blocking the platform", contained(reasonHas("not a regular file"))},
		{"submission-sparse", "a 4 GiB sparse file is refused at copy-out, before it costs the host any disk", contained(reasonHas("copied out", "submission.csv"))},
		{"submission-dir", "a directory is refused", contained(reasonHas("not a regular file"))},
	}
}

// invalid: graded invalid with a reason that says why (words), the host unchanged.
func invalid(words ...string) func(o outcome) string {
	return contained(func(o outcome) string {
		if !o.res.Submitted {
			return "no submission seen: " + tail(o.output, 300)
		}
		return reasonHas(words...)(o)
	})
}

// valid: accepted and scored as MLE-bench scores it (uniform probabilities over 99 classes).
func valid(o outcome) string {
	if o.err != nil {
		return "activity error: " + o.err.Error()
	}
	if !o.res.Valid || o.res.Score == nil {
		return fmt.Sprintf("not valid: %q", o.res.Reason)
	}
	if want := math.Log(99); math.Abs(*o.res.Score-want) > 1e-6 {
		return fmt.Sprintf("score %v, want log(99) = %v", *o.res.Score, want)
	}
	return ""
}

func submissionCases() []programCase {
	return []programCase{
		{"bad-columns-numbered", "invalid: class columns named 0..98 instead of the species", invalid("column")},
		{"bad-missing-rows", "invalid: half the ids missing", invalid()},
		{"bad-duplicate-ids", "invalid: an id twice", invalid()},
		{"bad-nan", "invalid: a missing probability", invalid()},
		{"bad-negative", "invalid: a probability below 0", invalid()},
		{"bad-row-sums", "invalid: rows sum to 1.5, beyond np.isclose's tolerance", invalid()},
		{"bad-empty", "invalid: an empty file", invalid()},
		{"bad-header-only", "invalid: no rows", invalid()},
		{"bad-garbage", "invalid: 4 KiB of random bytes", invalid()},
		{"bad-text-in-numbers", "invalid: text in a probability column", invalid()},
		{"ok-float-ids", "valid: ids written 4.0 read as 4, as pandas does", valid},
		{"ok-uniform", "valid: uniform probabilities, log loss log(99)", valid},
	}
}

// runner executes programs through the real ExecuteProgram activity with one sandbox.
type runner struct {
	t     *testing.T
	a     *activities.Activities
	env   *testsuite.TestActivityEnvironment
	store artifacts.FS
	n     int
}

func newRunner(t *testing.T, sb sandbox.Sandbox, dataDir string) *runner {
	reg := tasks.Builtin()
	spec, err := reg.Get(task)
	if err != nil {
		t.Fatal(err)
	}
	spec.Limits = limits // the registry's specs are ours to change
	root := t.TempDir()
	a := &activities.Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb,
		Instrumenter: instrument.AST{Python: testenv.Python}, Tasks: reg,
		Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return &runner{t: t, a: a, env: env, store: artifacts.FS{Root: filepath.Join(root, "r")}}
}

// run stores program as a sample, instruments it as the platform does and executes it on the
// validation split.
func (r *runner) run(program string) (activities.ExecuteResult, string, error) {
	r.n++
	id := fmt.Sprintf("adv-%03d", r.n)
	ctx := context.Background()
	if err := r.store.Put(ctx, runstore.Sample(id).Program(), []byte(program)); err != nil {
		r.t.Fatal(err)
	}
	if _, err := r.env.ExecuteActivity(r.a.InstrumentPrograms, activities.InstrumentInput{Run: "r", SampleIDs: []string{id}}); err != nil {
		return activities.ExecuteResult{}, "", err
	}
	v, err := r.env.ExecuteActivity(r.a.ExecuteProgram, activities.ExecuteInput{Run: "r", Task: task, SampleID: id, Split: tasks.SplitValidation})
	if err != nil {
		return activities.ExecuteResult{}, "", err
	}
	var res activities.ExecuteResult
	if err := v.Get(&res); err != nil {
		r.t.Fatal(err)
	}
	out, _ := r.store.Get(ctx, runstore.Sample(id).Output())
	return res, string(out), nil
}

var (
	escapedLine = regexp.MustCompile(`(?m)^ESCAPED .*$`)
	blockedLine = regexp.MustCompile(`(?m)^BLOCKED `)
)

func TestAdversarialPrograms(t *testing.T) {
	dataDir := testenv.PreparedData(t, task)
	layout := tasks.Layout{DataDir: dataDir}
	spec, err := tasks.Builtin().Get(task)
	if err != nil {
		t.Fatal(err)
	}
	answers := filepath.Join(layout.Dirs(task, tasks.SplitValidation).Private, spec.Files.Answers)
	canary := filepath.Join(t.TempDir(), "canary")
	secret := "mlerl-canary-" + rand.Text()
	if err := os.WriteFile(canary, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan struct{}, 100)
	go func() {
		for {
			c, err := listener.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() { listener.Close() })
	abstract := "mlerl-adversarial-" + rand.Text()
	unixListener, err := net.Listen("unix", "@"+abstract)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for {
			c, err := unixListener.Accept()
			if err != nil {
				return
			}
			c.Close()
			accepted <- struct{}{}
		}
	}()
	t.Cleanup(func() { unixListener.Close() })
	holdInheritableDescriptors(t, canary, listener)
	// The platform's credentials, as a worker's environment holds them.
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("MLERL_POLICY_API_KEY", secret)
	fill := strings.NewReplacer("{{HOST_ANSWERS}}", answers, "{{HOST_CANARY}}", canary,
		"{{LISTEN_PORT}}", fmt.Sprint(listener.Addr().(*net.TCPAddr).Port), "{{ABSTRACT_SOCKET}}", abstract)
	lib := fill.Replace(attacksPy)

	host := newHostWatch(t, dataDir, secret, answers)
	hostile, careless := newTable("case", "expected"), newTable("case", "expected")
	for _, kind := range sandboxKinds {
		t.Run(kind, func(t *testing.T) {
			r := newRunner(t, openSandbox(t, kind), dataDir)
			for _, set := range []struct {
				table *table
				cases []programCase
			}{{hostile, programCases()}, {careless, submissionCases()}} {
				runCases(t, r, host, set.table, set.table.addColumn(kind), set.cases, lib, accepted)
			}
		})
	}
	hostile.write(t, "Hostile programs")
	careless.write(t, "Bad submissions written by programs")
}

// holdInheritableDescriptors keeps open, without close-on-exec, descriptors to the root-only
// canary and to the loopback listener, as a starter that inherited them from its parent (or
// got them from a C library) would: the inherited-fds case must find neither.
func holdInheritableDescriptors(t *testing.T, canary string, listener net.Listener) {
	fd, err := syscall.Open(canary, syscall.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Dup'd in place: File().Fd() would switch the listener to blocking mode, and its Accept
	// would then never return on Close.
	rc, err := listener.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	sock := -1
	if cerr := rc.Control(func(fd uintptr) { sock, err = syscall.Dup(int(fd)) }); cerr != nil || err != nil { // a dup has no close-on-exec
		t.Fatal(cerr, err)
	}
	t.Cleanup(func() { syscall.Close(fd); syscall.Close(sock) })
}

// runCases runs each case's program in r's sandbox and fills column col of the table.
func runCases(t *testing.T, r *runner, host *hostWatch, table *table, col int, cases []programCase, lib string, accepted chan struct{}) {
	sb := r.a.Sandbox
	for _, c := range cases {
		before := host.snapshot()
		res, out, err := r.run(lib + fmt.Sprintf("\nmain(%q)\n", c.name))
		o := outcome{res: res, output: out, err: err, done: strings.Contains(out, "DONE "+c.name),
			escaped: escapedLine.FindAllString(out, -1), blocked: len(blockedLine.FindAllString(out, -1))}
		o.hostDiff = host.diff(before, out)
		for len(accepted) > 0 {
			<-accepted
			o.hostDiff = append(o.hostDiff, "the host's loopback listener accepted a connection")
		}
		verdict := c.judge(o)
		if verdict != "" {
			t.Errorf("%s / %s: %s\n%s", sb.Name(), c.name, verdict, tail(out, 2000))
		}
		table.set(c.name, c.expect, col, observed(o, verdict))
	}
}

// observed is the table's cell: the verdict first when it failed, then what happened.
func observed(o outcome, verdict string) string {
	var parts []string
	if verdict != "" {
		parts = append(parts, "FAILED: "+verdict)
	} else {
		parts = append(parts, "contained")
	}
	if o.blocked > 0 {
		parts = append(parts, fmt.Sprintf("%d attempts refused", o.blocked))
	}
	if o.err == nil {
		parts = append(parts, fmt.Sprintf("ran %.1f s", o.res.DurationS))
	}
	switch {
	case o.err != nil:
	case o.res.Reason != "":
		parts = append(parts, "reason: "+o.res.Reason)
	case o.res.Valid:
		parts = append(parts, "valid submission")
	}
	return strings.Join(parts, "; ")
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}
