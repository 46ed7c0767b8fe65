package instrument

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"mlerl/internal/testenv"
)

// Ctrl-C sends SIGINT to the terminal's whole process group: the instrumenter must not answer it
// with a Python traceback, and the Go side says "interrupted".
func TestInterruptIsQuiet(t *testing.T) {
	testenv.RequirePython(t)

	// The script itself: SIGINT while it waits for a request ends it at once, with nothing on
	// stderr.
	cmd := exec.Command(testenv.Python, "-c", string(script))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // past the imports, waiting on stdin
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("want exit status 130 after SIGINT, got %v", err)
	}
	if strings.Contains(stderr.String(), "Traceback") || stderr.Len() > 0 {
		t.Errorf("SIGINT printed to stderr:\n%s", stderr.String())
	}

	// The server the Go side starts is in its own process group, so a terminal's Ctrl-C reaches
	// only the starter, which then reports the interruption.
	a := AST{Python: testenv.Python}
	if _, err := a.Instrument(context.Background(), program); err != nil {
		t.Fatal(err)
	}
	v, _ := servers.Load(a.Python)
	s := v.(*server)
	s.mu.Lock()
	pid := s.cmd.Process.Pid
	s.mu.Unlock()
	child, err := syscall.Getpgid(pid)
	if err != nil {
		t.Fatal(err)
	}
	if child == syscall.Getpgrp() {
		t.Errorf("the instrumenter shares the starter's process group %d: Ctrl-C would reach it", child)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Instrument(ctx, program); err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Errorf("a cancelled request: %v, want an error saying interrupted", err)
	}
}
