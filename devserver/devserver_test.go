package devserver

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"mlerl/internal/testenv"
)

// The embedded stack's server: starts on free ports with its SQLite file, serves the Web UI,
// keeps its state across a restart, and stops.
func TestDevServerKeepsStateAcrossRestart(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	dir := t.TempDir()
	ctx := context.Background()
	opts := Options{CLI: cli, DBFile: filepath.Join(dir, "temporal.db"), LogFile: filepath.Join(dir, "temporal.log")}
	srv, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.UIURL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("Web UI at %s: %v %v", srv.UIURL, err, resp)
	}
	resp.Body.Close()
	c, err := client.Dial(client.Options{HostPort: srv.Address, Logger: Quiet})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "nobody-polls"}, "NoSuchWorkflow")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	srv.Stop()
	if _, err := os.Stat(opts.DBFile); err != nil {
		t.Fatalf("no SQLite state file: %v", err)
	}

	srv, err = Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err = client.Dial(client.Options{HostPort: srv.Address, Logger: Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, "kept", run.GetRunID())
	if err != nil {
		t.Fatalf("the workflow started before the restart is gone: %v", err)
	}
	if !strings.Contains(desc.WorkflowExecutionInfo.GetType().GetName(), "NoSuchWorkflow") {
		t.Fatalf("unexpected workflow %v", desc.WorkflowExecutionInfo.GetType())
	}
}

// A CLI that always dies at start-up is tried three times on fresh ports, then fails with
// its own words.
func TestStartFailsClearlyWithABrokenCLI(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "temporal")
	os.WriteFile(fake, []byte("#!/bin/sh\necho started >> \"$0.count\"\necho 'no server here' >&2\nexit 3\n"), 0o755)
	_, err := Start(context.Background(), Options{CLI: fake, DBFile: filepath.Join(dir, "db"), LogFile: filepath.Join(dir, "log")})
	if err == nil || !strings.Contains(err.Error(), "no server here") {
		t.Fatalf("want the server's own words in the error, got %v", err)
	}
	if b, _ := os.ReadFile(fake + ".count"); strings.Count(string(b), "started") != 3 {
		t.Fatalf("a server failing at start-up must be tried 3 times, was %d", strings.Count(string(b), "started"))
	}
	// A port the caller fixed is not a race: one try.
	os.Remove(fake + ".count")
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Start(context.Background(), Options{CLI: fake, DBFile: filepath.Join(dir, "db"), LogFile: filepath.Join(dir, "log"), Port: port, UIPort: port + 1}); err == nil {
		t.Fatal("a CLI that never starts cannot start on fixed ports either")
	}
	if b, _ := os.ReadFile(fake + ".count"); strings.Count(string(b), "started") != 1 {
		t.Fatalf("with fixed ports, want 1 try, got %d", strings.Count(string(b), "started"))
	}
}

// A server that dies starting (seen in CI: a Go panic, exit status 2, on a restart of a
// finished run's state) is started again on other ports, and the run goes on.
func TestStartRetriesAServerThatDiedStarting(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	dir := t.TempDir()
	flaky := filepath.Join(dir, "temporal")
	script := fmt.Sprintf("#!/bin/sh\nif [ ! -e \"$0.failed\" ]; then touch \"$0.failed\"; echo 'panic: listen tcp 127.0.0.1:1: bind: address already in use'; echo; echo 'goroutine 1 [running]:'; exit 2; fi\nexec %q \"$@\"\n", cli)
	os.WriteFile(flaky, []byte(script), 0o755)
	srv, err := Start(context.Background(), Options{CLI: flaky, DBFile: filepath.Join(dir, "temporal.db"), LogFile: filepath.Join(dir, "temporal.log")})
	if err != nil {
		t.Fatalf("a server that died once at start-up must be started again: %v", err)
	}
	srv.Stop()
	if _, err := os.Stat(flaky + ".failed"); err != nil {
		t.Fatal("the first start never failed: this test no longer exercises the retry")
	}
}

// FreePort leaves its port in TIME_WAIT, so no outgoing connection or bind(:0) takes it before
// the server binds it by number, which still works.
func TestFreePortIsReserved(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile("/proc/net/tcp")
	if err != nil {
		t.Fatal(err)
	}
	local := fmt.Sprintf("0100007F:%04X", port)
	var timeWait bool
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[1] == local && f[3] == "06" {
			timeWait = true
		}
	}
	if !timeWait {
		t.Fatalf("port %d is not in TIME_WAIT:\n%s", port, b)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("a server must still bind the reserved port: %v", err)
	}
	l.Close()
}

func TestStartupCause(t *testing.T) {
	for _, c := range []struct{ name, out, want, not string }{
		{"a panic's message, not its stack", "CLI 1.5\npanic: listen tcp: bind: address already in use\n\ngoroutine 1 [running]:\nmain.main()\n" + strings.Repeat("\tframe\n", 20),
			"panic: listen tcp: bind: address already in use", "frame"},
		{"the CLI's error line", "Error: can't set UI port 5: address already in use\n", "can't set UI port 5", ""},
		{"else the last lines", strings.Repeat("noise\n", 20) + "the end\n", "the end", ""},
	} {
		got := startupCause(c.out)
		if !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
			t.Errorf("%s: got %q, want it to hold %q and not %q", c.name, got, c.want, c.not)
		}
	}
}

// A resume right after a crash finds the killed starter's server still letting go of the
// SQLite file: Start waits for it instead of failing, and says so clearly when it never lets go.
func TestStartWaitsForABusyStateFile(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	testenv.RequirePython(t) // its sqlite3 module holds the lock, as a shutting-down server does
	dir := t.TempDir()
	ctx := context.Background()
	opts := Options{CLI: cli, DBFile: filepath.Join(dir, "temporal.db"), LogFile: filepath.Join(dir, "temporal.log")}
	srv, err := Start(ctx, opts) // creates the schema
	if err != nil {
		t.Fatal(err)
	}
	srv.Stop()

	hold := func(seconds string) *exec.Cmd {
		lock := exec.Command(testenv.Python, "-c", `import sqlite3, sys, time
c = sqlite3.connect(sys.argv[1], isolation_level=None)
c.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(float(sys.argv[2]))`, opts.DBFile, seconds)
		out, err := lock.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := lock.Start(); err != nil {
			t.Fatal(err)
		}
		if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
			t.Fatalf("python could not lock %s: %q", opts.DBFile, line)
		}
		return lock
	}

	old := busyWait
	defer func() { busyWait = old }()
	busyWait = time.Second
	lock := hold("30")
	_, err = Start(ctx, opts)
	lock.Process.Kill()
	lock.Wait()
	if err == nil || !strings.Contains(err.Error(), "another process still holds") {
		t.Fatalf("a file held for good must fail naming the cause and the fix, got %v", err)
	}

	busyWait = 60 * time.Second
	lock = hold("4")
	defer lock.Wait()
	srv, err = Start(ctx, opts)
	if err != nil {
		t.Fatalf("the server must start once the file is released: %v", err)
	}
	defer srv.Stop()
	if log, _ := os.ReadFile(opts.LogFile); !strings.Contains(string(log), "SQLITE_BUSY") {
		t.Fatal("the lock was never met: this test no longer exercises the wait")
	}
}

// A server keeps the state lock for its whole life, so a second Start on the same file waits
// and then fails naming the holder; a server whose starter is gone and that outlives its
// SIGTERM (the case a resume right after a kill -9 meets) is ended, and Start goes on.
func TestStartWaitsForTheServerHoldingTheState(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	testenv.RequirePython(t)
	dir := t.TempDir()
	ctx := context.Background()
	opts := Options{CLI: cli, DBFile: filepath.Join(dir, "temporal.db"), LogFile: filepath.Join(dir, "temporal.log")}
	oldWait, oldGrace := busyWait, orphanGrace
	defer func() { busyWait, orphanGrace = oldWait, oldGrace }()

	srv, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	busyWait = 2 * time.Second
	_, err = Start(ctx, opts)
	if err == nil || !strings.Contains(err.Error(), strconv.Itoa(srv.cmd.Process.Pid)) || !strings.Contains(err.Error(), "still holds") {
		srv.Stop()
		t.Fatalf("a second server on a held state file must fail naming the holder's pid %d, got %v", srv.cmd.Process.Pid, err)
	}
	srv.Stop()

	// An orphan: holds the lock through an inherited descriptor, ignores SIGTERM, and its
	// recorded starter has exited.
	lock, err := os.OpenFile(opts.DBFile+".lock", os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		t.Fatalf("the stopped server left its lock held: %v", err)
	}
	orphan := exec.Command(testenv.Python, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(300)", opts.DBFile)
	orphan.ExtraFiles = []*os.File{lock}
	orphan.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := orphan.Start(); err != nil {
		t.Fatal(err)
	}
	gone := exec.Command("true")
	gone.Run()
	lock.Truncate(0)
	lock.WriteAt(fmt.Appendf(nil, "%d %d\n", orphan.Process.Pid, gone.Process.Pid), 0)
	lock.Close()
	ended := make(chan error, 1)
	go func() { ended <- orphan.Wait() }()

	busyWait, orphanGrace = 60*time.Second, time.Second
	srv, err = Start(ctx, opts)
	if err != nil {
		orphan.Process.Kill()
		t.Fatalf("the server must start once the orphan is ended: %v", err)
	}
	defer srv.Stop()
	select {
	case err := <-ended:
		if err == nil || !strings.Contains(err.Error(), "killed") {
			t.Fatalf("the orphan ended with %v, want killed", err)
		}
	case <-time.After(5 * time.Second):
		orphan.Process.Kill()
		t.Fatal("Start went on while the orphan still held the state")
	}
}
