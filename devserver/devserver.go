// Package devserver runs the Temporal CLI's development server for the embedded stack: one
// process, state in a SQLite file under the run directory (so a run survives a restart), and
// the Web UI on its own port.
package devserver

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/log"
)

// Server is a running dev server.
type Server struct {
	Address string // gRPC frontend, host:port
	UIURL   string // Web UI base URL
	cmd     *exec.Cmd
	exited  chan error
	logFile string
	lock    *os.File // the state lock; the server process holds it too
}

// Options configure the dev server.
type Options struct {
	CLI     string // path of the temporal binary
	DBFile  string // SQLite state file
	LogFile string // the server's output
	Port    int    // 0 picks a free port
	UIPort  int    // 0 picks a free port
	// SearchAttributes to register, name to type (Keyword, Int, Double...).
	SearchAttributes map[string]string
}

// Quiet is an SDK logger that drops everything: the dial-retry noise while a server boots, and
// short control commands.
var Quiet = log.NewStructuredLogger(slog.New(slog.DiscardHandler))

// FindCLI locates the temporal binary: $MLERL_TEMPORAL_CLI, next to this executable, ./bin, PATH.
func FindCLI() (string, error) {
	if p := os.Getenv("MLERL_TEMPORAL_CLI"); p != "" {
		return p, nil
	}
	var candidates []string
	if exe, err := os.Executable(); err == nil {
		candidates = append(candidates, filepath.Join(filepath.Dir(exe), "temporal"))
	}
	candidates = append(candidates, filepath.Join("bin", "temporal"))
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && !st.IsDir() {
			return filepath.Abs(c)
		}
	}
	if p, err := exec.LookPath("temporal"); err == nil {
		return p, nil
	}
	return "", errors.New("the Temporal CLI (temporal) was not found in $MLERL_TEMPORAL_CLI, beside this executable, in ./bin or on PATH: " +
		"set MLERL_TEMPORAL_CLI to its path (a starter built elsewhere than the repository's bin/ needs it), " +
		"or install it with `go tool task setup` (it runs `GOBIN=$PWD/bin go install github.com/temporalio/cli/cmd/temporal@v1.5.1`), " +
		"or give --temporal-address of an existing cluster")
}

// FreePort asks the kernel for an unused loopback port and keeps the kernel from handing it
// out again for a while: a port merely bound and closed goes back to the ephemeral pool at
// once, where the next outgoing connection of any process may take it before the server binds
// it. A connection to it that the listening side closes first leaves the port in TIME_WAIT
// (60 s on Linux), during which bind(:0) and connect skip it, while a server binding it by
// number (Go sets SO_REUSEADDR) still can.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	addr := l.Addr().(*net.TCPAddr)
	client, err := net.DialTCP("tcp", nil, addr)
	if err != nil {
		return 0, fmt.Errorf("reserving port %d: %w", addr.Port, err)
	}
	defer client.Close()
	server, err := l.Accept()
	if err != nil {
		return 0, fmt.Errorf("reserving port %d: %w", addr.Port, err)
	}
	server.Close() // the listening side first: TIME_WAIT is on its port
	return addr.Port, nil
}

// busyWait is how long Start waits for another server to release the SQLite file.
var busyWait = 60 * time.Second

// errBusy: the server exited at start-up because another process holds its SQLite file.
var errBusy = errors.New("SQLite file busy")

// errStartup: the server exited at start-up for another reason.
var errStartup = errors.New("the Temporal dev server exited during start-up")

// Start launches the dev server and waits until it answers. If another server still holds the
// SQLite file (a killed starter's server shutting down: Pdeathsig sends it SIGTERM, and it may
// take seconds to let go), it tries again until busyWait has passed, so a resume right after a
// crash does not fail.
//
// The SQLite file alone does not say when the old server is gone: one still shutting down
// takes the file's lock only now and then, so a new server may start beside it and then stall
// on every write (seen in CI: a resume whose workflows never started). So each server holds an
// advisory lock on DBFile+".lock" for its whole life, through an inherited descriptor, and Start
// first waits for that lock.
func Start(ctx context.Context, o Options) (*Server, error) {
	deadline := time.Now().Add(busyWait)
	lock, err := lockStateFile(ctx, o.DBFile, deadline)
	if err != nil {
		return nil, err
	}
	startupFailures := 0
	for {
		s, err := start(ctx, o, lock)
		if err == nil {
			return s, nil
		}
		// A server that died starting on ports picked here met a port some other process took
		// first (the CLI picks several more itself): fresh ports cure that. A fixed port, or a
		// third failure, is not a race.
		if errors.Is(err, errStartup) && o.Port == 0 && o.UIPort == 0 && startupFailures < 2 {
			startupFailures++
			slog.Warn("the Temporal dev server failed to start; trying again on other ports", "error", err)
			continue
		}
		if !errors.Is(err, errBusy) {
			lock.Close()
			return nil, err
		}
		if time.Now().After(deadline) {
			lock.Close()
			return nil, fmt.Errorf("%w: another process still holds %s after %v: stop the Temporal server using it (ps aux | grep %s), then try again",
				err, o.DBFile, busyWait, filepath.Base(o.DBFile))
		}
		select {
		case <-ctx.Done():
			lock.Close()
			return nil, ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// lockStateFile takes the exclusive lock of dbFile's lock file, waiting until deadline while
// another server holds it. The lock lives as long as any process holds the returned file: the
// server inherits it, so a starter killed outright leaves it held until its server has exited.
// That server got SIGTERM from Pdeathsig; one still there after orphanGrace is ended with
// SIGKILL, as Stop would have done had its starter lived.
func lockStateFile(ctx context.Context, dbFile string, deadline time.Time) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(dbFile), 0o755); err != nil {
		return nil, err
	}
	name := dbFile + ".lock"
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the Temporal state lock: %w", err)
	}
	graceEnds := time.Now().Add(orphanGrace)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return f, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("locking %s: %w", name, err)
		}
		server, owner := readHolder(name)
		if time.Now().After(graceEnds) && server > 0 && !alive(owner) && serves(server, dbFile) {
			syscall.Kill(-server, syscall.SIGKILL) // its own process group, as start made it
		}
		if time.Now().After(deadline) {
			f.Close()
			if server == 0 { // the lock file names no holder: say how to find it
				return nil, fmt.Errorf("%w: another process still holds %s after %v: stop the Temporal server using it (ps aux | grep %s), then try again",
					errBusy, name, busyWait, filepath.Base(dbFile))
			}
			return nil, fmt.Errorf("%w: the Temporal server with pid %d (started by pid %d) still holds %s after %v: stop it (kill %d), then try again",
				errBusy, server, owner, dbFile, busyWait, server)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// orphanGrace is how long a server whose starter is gone may take to exit on its SIGTERM.
var orphanGrace = 10 * time.Second

// recordHolder writes the server's pid and this process's into the lock file they hold.
func recordHolder(lock *os.File, server int) {
	if lock.Truncate(0) == nil {
		lock.WriteAt(fmt.Appendf(nil, "%d %d\n", server, os.Getpid()), 0)
	}
}

// readHolder reads the pids recordHolder wrote: 0 for what it cannot read.
func readHolder(name string) (server, owner int) {
	b, _ := os.ReadFile(name)
	fmt.Sscan(string(b), &server, &owner)
	return server, owner
}

func alive(pid int) bool {
	return pid > 0 && syscall.Kill(pid, 0) == nil
}

// serves says whether pid is still a process serving dbFile (and not a reused pid).
func serves(pid int, dbFile string) bool {
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	return err == nil && strings.Contains(string(cmdline), dbFile)
}

func start(ctx context.Context, o Options, lock *os.File) (*Server, error) {
	var err error
	if o.Port == 0 {
		if o.Port, err = FreePort(); err != nil {
			return nil, err
		}
	}
	if o.UIPort == 0 {
		if o.UIPort, err = FreePort(); err != nil {
			return nil, err
		}
	}
	if err := os.MkdirAll(filepath.Dir(o.DBFile), 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(o.LogFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	logStart, _ := logf.Seek(0, io.SeekEnd) // this attempt's output starts here
	args := []string{"server", "start-dev", "--ip", "127.0.0.1", "--port", strconv.Itoa(o.Port),
		"--ui-port", strconv.Itoa(o.UIPort), "--db-filename", o.DBFile, "--log-level", "warn"}
	names := make([]string, 0, len(o.SearchAttributes))
	for k := range o.SearchAttributes {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, "--search-attribute", k+"="+o.SearchAttributes[k])
	}
	cmd := exec.Command(o.CLI, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a terminal's Ctrl-C reaches only the starter, which drains and
	// then stops the server; Pdeathsig, so a starter killed outright (kill -9, the OOM killer)
	// takes its server along instead of leaving one that holds the SQLite file with no worker,
	// which a later resume would follow forever.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	cmd.ExtraFiles = []*os.File{lock} // fd 3: the server holds the state lock until it exits
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, fmt.Errorf("starting the Temporal dev server (%s): %w", o.CLI, err)
	}
	recordHolder(lock, cmd.Process.Pid)
	s := &Server{Address: fmt.Sprintf("127.0.0.1:%d", o.Port), UIURL: fmt.Sprintf("http://localhost:%d", o.UIPort),
		cmd: cmd, exited: make(chan error, 1), logFile: o.LogFile, lock: lock}
	go func() { s.exited <- cmd.Wait(); logf.Close() }()
	deadline := time.Now().Add(90 * time.Second)
	for {
		select {
		case err := <-s.exited:
			out := outputSince(o.LogFile, logStart)
			if strings.Contains(out, "SQLITE_BUSY") {
				return nil, fmt.Errorf("the Temporal dev server exited during start-up (%v): %w", err, errBusy)
			}
			return nil, fmt.Errorf("%w (%v; ports %d and %d; its log: %s): %s", errStartup, err, o.Port, o.UIPort, o.LogFile, startupCause(out))
		case <-ctx.Done():
			s.Stop()
			return nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
		c, err := client.Dial(client.Options{HostPort: s.Address, Logger: Quiet})
		if err == nil {
			_, err = c.CheckHealth(ctx, &client.CheckHealthRequest{})
			c.Close()
			if err == nil {
				return s, nil
			}
		}
		if time.Now().After(deadline) {
			s.Stop()
			return nil, fmt.Errorf("the Temporal dev server did not answer within 90s: %s", tail(o.LogFile))
		}
	}
}

// Stop ends the server: SIGTERM, then SIGKILL after ten seconds.
func (s *Server) Stop() {
	if s == nil || s.cmd.Process == nil {
		return
	}
	syscall.Kill(-s.cmd.Process.Pid, syscall.SIGTERM)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
	}
	s.lock.Close()
}

// WorkflowURL is the Web UI page of a workflow in the default namespace.
func (s *Server) WorkflowURL(workflowID string) string {
	return s.UIURL + "/namespaces/default/workflows/" + workflowID
}

// outputSince is what the server wrote to file after offset.
func outputSince(file string, offset int64) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "(no server log)"
	}
	if offset > int64(len(b)) {
		offset = 0
	}
	return string(b[offset:])
}

// startupCause picks from a failed start's output the lines that say why: a Go panic's message
// comes first and its stack after, so the last lines alone (what a log tail shows) name only
// goroutines; the first panic or error line with the two after it, else the last lines.
func startupCause(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") || strings.HasPrefix(l, "Error:") {
			return strings.Join(lines[i:min(i+3, len(lines))], "\n")
		}
	}
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}

func tail(file string) string {
	b, err := os.ReadFile(file)
	if err != nil {
		return "(no server log)"
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return strings.Join(lines, "\n")
}
