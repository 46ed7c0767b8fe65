// Package instrument inserts the seven progress prints into an agent's program before it runs,
// with a static rewriter that is never the policy being trained (so the policy cannot learn to
// print for credit), and verifies that only prints were added.
package instrument

import (
	"bufio"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

//go:embed instrument.py
var script []byte

// Result is an instrumented program and what was inserted.
type Result struct {
	Program  string   `json:"-"`
	Inserted []string `json:"inserted"`
	Note     string   `json:"note,omitempty"`
}

// Instrumenter rewrites a program to announce its progress.
type Instrumenter interface {
	Instrument(ctx context.Context, program string) (Result, error)
}

// AST is the default instrumenter: Python's ast module finds the operations and lines are
// inserted after them; no existing line changes. Requests go to one long-lived Python process
// per interpreter (started on first use, restarted if it dies or hangs).
type AST struct {
	Python string
}

// Only parsing happens here (nothing of the program runs), but a pathological program could
// still make the parser slow, so each request is bounded.
const requestTimeout = 30 * time.Second

// server is a running instrument.py.
type server struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
}

var servers sync.Map // interpreter path -> *server

func (s *server) stop() {
	if s.cmd != nil {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		s.cmd = nil
	}
}

func (s *server) start(python string) error {
	cmd := exec.Command(python, "-c", string(script))
	in, err := cmd.StdinPipe()
	if err != nil {
		return err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	cmd.Stderr = os.Stderr
	// Its own process group: Ctrl-C in the terminal goes to the starter, which ends this
	// process itself (and says "interrupted"), instead of Python printing a traceback.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the instrumenter (%s): %w", python, err)
	}
	s.cmd, s.in, s.out = cmd, in, bufio.NewReaderSize(out, 1<<20)
	return nil
}

// call sends one request and decodes the answer, restarting the process once if it had died.
func (a AST) call(ctx context.Context, req, answer any) error {
	v, _ := servers.LoadOrStore(a.Python, &server{})
	s := v.(*server)
	s.mu.Lock()
	defer s.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if ctx.Err() != nil {
		return fmt.Errorf("instrumenter interrupted: %w", ctx.Err())
	}
	var last error
	for attempt := 0; attempt < 2; attempt++ {
		if s.cmd == nil {
			if err := s.start(a.Python); err != nil {
				return err
			}
		}
		reply, err := s.roundTrip(ctx, append(line, '\n'))
		if err == nil {
			var e struct {
				Error string `json:"error"`
			}
			if json.Unmarshal(reply, &e) == nil && e.Error != "" {
				return fmt.Errorf("instrumenter: %s", e.Error)
			}
			return json.Unmarshal(reply, answer)
		}
		s.stop()
		last = err
		if ctx.Err() != nil {
			return fmt.Errorf("instrumenter interrupted: %w", ctx.Err())
		}
	}
	return fmt.Errorf("instrumenter (%s) failed: %w", a.Python, last)
}

func (s *server) roundTrip(ctx context.Context, line []byte) ([]byte, error) {
	type result struct {
		b   []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		if _, err := s.in.Write(line); err != nil {
			done <- result{nil, err}
			return
		}
		b, err := s.out.ReadBytes('\n')
		done <- result{b, err}
	}()
	timer := time.NewTimer(requestTimeout)
	defer timer.Stop()
	select {
	case r := <-done:
		return r.b, r.err
	case <-timer.C:
		s.stop() // unblocks the reader
		<-done
		return nil, fmt.Errorf("no answer within %s", requestTimeout)
	case <-ctx.Done():
		s.stop()
		<-done
		return nil, ctx.Err()
	}
}

// Instrument returns the program with marker prints inserted, verified.
func (a AST) Instrument(ctx context.Context, program string) (Result, error) {
	var res struct {
		Program  string   `json:"program"`
		Inserted []string `json:"inserted"`
		Note     string   `json:"note"`
	}
	if err := a.call(ctx, map[string]string{"op": "instrument", "program": program}, &res); err != nil {
		return Result{}, err
	}
	out := Result{Program: res.Program, Inserted: res.Inserted, Note: res.Note}
	if len(out.Inserted) > 0 {
		ok, why, err := a.Verify(ctx, program, out.Program)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			// Never run a program whose meaning the instrumenter may have changed.
			return Result{Program: program, Note: "instrumentation rejected by the verifier: " + why}, nil
		}
	}
	return out, nil
}

// Verify reports whether removing the marker prints from instrumented gives back original.
func (a AST) Verify(ctx context.Context, original, instrumented string) (bool, string, error) {
	var v struct {
		OK     bool   `json:"ok"`
		Reason string `json:"reason"`
	}
	if err := a.call(ctx, map[string]string{"op": "verify", "original": original, "instrumented": instrumented}, &v); err != nil {
		return false, "", err
	}
	return v.OK, v.Reason, nil
}
