// Package sandbox runs untrusted agent programs: no network, public data read-only, a fresh
// writable work folder, a private /tmp, and limits on wall time, memory, processes and output.
package sandbox

import (
	"context"
	"time"
)

// Limits bound one run.
type Limits struct {
	Wall        time.Duration
	MemoryBytes int64
	Processes   int
	OutputBytes int // the tail of the output kept; the rest is counted, not stored
	// DiskBytes bounds what the program can store in its work folder and /tmp together
	// (0: DefaultDiskBytes). Where the platform runs as root it is a tmpfs of this size, so
	// it is also memory: see workspace.
	DiskBytes int64
}

// Spec is one program run. Paths are on the host.
type Spec struct {
	Program string // the Python file to run
	DataDir string // visible read-only as ./input (InputDir) in the program's working directory
	WorkDir string // the program's writable working directory (/work inside the sandbox)
	Limits  Limits
}

// Result is how a run ended. A program's crash or timeout is a Result, never an error.
type Result struct {
	ExitCode    int  `json:"exit_code"`
	TimedOut    bool `json:"timed_out"`
	OutOfMemory bool `json:"out_of_memory"`
	DiskFull    bool `json:"disk_full"` // the work folder and /tmp reached Limits.DiskBytes
	// Failure is why the run failed after the program ended, for what it left behind (its work
	// folder over copy-out's limits, say): the program's failure, never the sandbox's.
	Failure     string        `json:"failure,omitempty"`
	Output      string        `json:"output"`       // the last Limits.OutputBytes of stdout+stderr
	OutputBytes int64         `json:"output_bytes"` // everything the program printed
	Duration    time.Duration `json:"duration"`
}

// Progress is reported while a program runs so callers can heartbeat.
type Progress struct {
	Elapsed     time.Duration
	OutputBytes int64
	LastLine    string
}

// Sandbox runs programs. Errors mean the sandbox itself failed (retry elsewhere), or the context
// was cancelled, in which case the partial Result comes with the context's error.
type Sandbox interface {
	Run(ctx context.Context, spec Spec, progress func(Progress)) (Result, error)
	Name() string
}

// Paths inside the sandbox, as the programs see them.
const (
	DataMount = "/data"
	WorkMount = "/work"
)
