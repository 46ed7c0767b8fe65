package experiment

import (
	"encoding/json"
	"fmt"

	"mlerl/grading"
	"mlerl/settings"
)

// Cell statuses, as the ledger and `starter experiment status` show them.
const (
	StatusPending = "pending" // not started yet
	StatusRunning = "running" // its Train workflow is going
	StatusDone    = "done"    // finished, graded
	StatusFailed  = "failed"  // its Train workflow failed; Reason says why
	StatusNoData  = "no-data" // the task's prepared data is missing: reported, never dropped
	StatusBlocked = "blocked" // the arm it is matched to failed, so it has no budget
)

// Ledger is an experiment's record: the spec it ran and one entry per cell. The Experiment
// workflow returns it and stores it as experiment.json; reports are built from it and from the
// cells' run directories.
type Ledger struct {
	Spec  Spec         `json:"spec"`
	Cells []CellRecord `json:"cells"`
	// Sandbox is what ran the programs, e.g. "bubblewrap"; Machine a line about the host.
	Sandbox string `json:"sandbox,omitempty"`
	Machine string `json:"machine,omitempty"`
	// TaskSettings are, by task, the measured settings of its spec's run: section that its
	// cells ran with under the experiment's ("iterations=20 final_folds=10"): the experiment
	// spec alone does not say what a cell ran.
	TaskSettings map[string]string `json:"task_settings,omitempty"`
}

// CellRecord is one cell's state and, once done, its results.
type CellRecord struct {
	Cell
	Status string `json:"status"`
	Reason string `json:"reason,omitempty"`
	// Budget actually used by training (evaluation and final grading excluded).
	Programs       int     `json:"programs"`        // training programs executed
	SandboxSeconds float64 `json:"sandbox_seconds"` // their summed execution time
	// LeftOutSeconds: the program that crossed a matched budget, run but left out because
	// that landed nearer the budget; not in SandboxSeconds.
	LeftOutSeconds float64 `json:"left_out_seconds,omitempty"`
	WallSeconds    float64 `json:"wall_seconds"` // the training phase's wall time
	Iterations     int     `json:"iterations"`   // updates completed
	// MatchedSeconds is the sandbox-seconds budget a matched arm was given (0 otherwise).
	MatchedSeconds float64 `json:"matched_seconds,omitempty"`
	// BestValidation is the best training program's score on the selection split.
	BestValidation *float64 `json:"best_validation,omitempty"`
	// Chosen is the final policy's best-of-K program graded on the test answers; Best is the
	// run's best training program by validation score, re-run and graded on the test answers.
	Chosen *Graded `json:"chosen,omitempty"`
	Best   *Graded `json:"best,omitempty"`
	// Answer is the run's final answer (the cross-validated ensemble of its best programs)
	// graded on the test answers; its Validation is the ensemble's out-of-fold score.
	Answer *Graded `json:"answer,omitempty"`
	// Untuned is the answer the same run chose without its tuned variants, graded on the test
	// answers: the tuning's effect within the run (nil when the tuning kept no variant).
	Untuned *Graded `json:"untuned_answer,omitempty"`
	// Curve is the best-so-far program at points of the training budget, graded on test.
	Curve []CurvePoint `json:"curve,omitempty"`
}

// Graded is a program graded on the private test answers.
type Graded struct {
	Sample     string         `json:"sample"`
	Validation *float64       `json:"validation,omitempty"` // its selection-split score
	Test       *float64       `json:"test,omitempty"`       // nil: invalid on the test answers
	Report     grading.Report `json:"report"`
	Reason     string         `json:"reason,omitempty"`
}

// Medal names the best medal, "unknown" for a valid score on a task without thresholds, or "".
func (g *Graded) Medal() string {
	if g == nil {
		return ""
	}
	return g.Report.Medal()
}

// CurvePoint is the best-so-far training program after Programs executed programs.
type CurvePoint struct {
	Programs       int      `json:"programs"`
	SandboxSeconds float64  `json:"sandbox_seconds"`
	WallSeconds    float64  `json:"wall_seconds"`
	Sample         string   `json:"sample"`
	Validation     *float64 `json:"validation,omitempty"`
	Test           *float64 `json:"test,omitempty"`
}

// UnmarshalJSON reads a spec as ledgers hold it, including those recorded when its settings
// were `starter run` flags (flags: [...]), read as the run: section they meant.
func (s *Spec) UnmarshalJSON(b []byte) error {
	type plain Spec
	var p struct {
		plain
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*s = Spec(p.plain)
	return fromFlags(&s.Run, "spec "+s.Name, p.Flags)
}

// UnmarshalJSON reads an arm as ledgers hold it; see Spec.UnmarshalJSON.
func (a *Arm) UnmarshalJSON(b []byte) error {
	type plain Arm
	var p struct {
		plain
		Flags []string `json:"flags"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*a = Arm(p.plain)
	return fromFlags(&a.Run, "arm "+a.Name, p.Flags)
}

// fromFlags sets run from a recorded ledger's flags, if it has them.
func fromFlags(run *settings.Overlay, source string, flags []string) error {
	if len(flags) == 0 {
		return nil
	}
	if !run.Empty() {
		return fmt.Errorf("%s holds both flags and run: settings: a ledger holds one or the other", source)
	}
	o, err := settings.FromArgs(source+" (recorded flags)", flags)
	if err != nil {
		return err
	}
	*run = o
	return nil
}
