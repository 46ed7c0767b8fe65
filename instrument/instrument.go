// Package instrument inserts the seven progress prints into an agent's program before it runs,
// with a static rewriter that is never the policy being trained (so the policy cannot learn to
// print for credit), and verifies that only prints were added.
package instrument

import (
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
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
// inserted after them; no existing line changes.
type AST struct {
	Python string
}

// Only parsing happens here (nothing of the program runs), but a pathological program could
// still make the parser slow, so the call is bounded.
const parseTimeout = 30 * time.Second

func (a AST) run(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, parseTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, a.Python, append([]string{"-c", string(script)}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("instrumenter (%s) failed: %v: %s", a.Python, err, stderr.String())
	}
	return out, nil
}

// Instrument returns the program with marker prints inserted, verified.
func (a AST) Instrument(ctx context.Context, program string) (Result, error) {
	dir, err := os.MkdirTemp("", "mlerl-instrument-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	in, out := filepath.Join(dir, "in.py"), filepath.Join(dir, "out.py")
	if err := os.WriteFile(in, []byte(program), 0o600); err != nil {
		return Result{}, err
	}
	raw, err := a.run(ctx, "instrument", in, out)
	if err != nil {
		return Result{}, err
	}
	var res Result
	if err := json.Unmarshal(raw, &res); err != nil {
		return Result{}, fmt.Errorf("instrumenter printed %q: %w", raw, err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		return Result{}, err
	}
	res.Program = string(b)
	if len(res.Inserted) > 0 {
		ok, why, err := a.Verify(ctx, program, res.Program)
		if err != nil {
			return Result{}, err
		}
		if !ok {
			// Never run a program whose meaning the instrumenter may have changed.
			return Result{Program: program, Note: "instrumentation rejected by the verifier: " + why}, nil
		}
	}
	return res, nil
}

// Verify reports whether removing the marker prints from instrumented gives back original.
func (a AST) Verify(ctx context.Context, original, instrumented string) (bool, string, error) {
	dir, err := os.MkdirTemp("", "mlerl-verify-")
	if err != nil {
		return false, "", err
	}
	defer os.RemoveAll(dir)
	o, i := filepath.Join(dir, "orig.py"), filepath.Join(dir, "instr.py")
	os.WriteFile(o, []byte(original), 0o600)
	os.WriteFile(i, []byte(instrumented), 0o600)
	raw, err := a.run(ctx, "verify", o, i)
	if err != nil {
		return false, "", err
	}
	var v struct {
		OK     bool   `json:"ok"`
		Reason string `json:"reason"`
	}
	if err := json.Unmarshal(raw, &v); err != nil {
		return false, "", fmt.Errorf("verifier printed %q: %w", raw, err)
	}
	return v.OK, v.Reason, nil
}
