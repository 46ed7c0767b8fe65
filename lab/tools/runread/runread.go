// Package runread reads a finished run's training programs from its directory, for the tools
// that analyse experiments after the fact (searchtrace, selection).
package runread

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
	"mlerl/runrecord"
	"mlerl/tasks"
)

// Program is one training program as sample.json and result.json record it.
type Program struct {
	ID        string
	Iteration int
	Actions   string // the code actions, described
	Tokens    []int  // the code actions
	Kept      []bool // an edit's kept slots (improve prompts with --improve-edit)
	Reward    float64
	Score     *float64 // the validation score; nil when it was not graded
	Valid     bool
	DurationS float64 // sandbox-seconds it used
	// Finished: the program has a result (Sampled also returns those cancelled before one).
	Finished   bool
	FinishedAt time.Time // when its result was written (zero when it has none)
	Stale      bool      // cancelled while it ran (staleness cap, end of run): its result is partial
	Reason     string    // why it failed, as result.json says
}

// Used reads which samples the run's updates learnt from (metrics.jsonl's "used"): the programs
// the ledger counts. Programs that finished while the run drained at its end are not among them.
func Used(runDir string) (map[string]bool, error) {
	b, err := os.ReadFile(filepath.Join(runDir, runstore.MetricsKey))
	if err != nil {
		return nil, err
	}
	used := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m runrecord.IterationMetrics
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return nil, fmt.Errorf("%s: %w", runstore.MetricsKey, err)
		}
		for _, id := range m.Used {
			used[id] = true
		}
	}
	return used, nil
}

// Programs loads the run's training programs that its updates used, in sampling order.
func Programs(runDir string) ([]Program, error) {
	used, err := Used(runDir)
	if err != nil {
		return nil, err
	}
	return load(runDir, func(id string) bool { return used[id] })
}

// Sampled loads every program the run sampled for training, in sampling order, used or not,
// finished or not (a program cancelled before it had a result has Finished false).
func Sampled(runDir string) ([]Program, error) {
	return load(runDir, nil)
}

// load reads the training programs keep accepts (nil: all); a program that keep accepts must
// have its result unless every program is wanted.
func load(runDir string, keep func(id string) bool) ([]Program, error) {
	records, err := filepath.Glob(filepath.Join(runDir, runstore.Sample("it*").Record()))
	if err != nil {
		return nil, err
	}
	var out []Program
	for _, rec := range records {
		var s struct {
			ID        string `json:"id"`
			Iteration int    `json:"iteration"`
			Actions   string `json:"actions"`
			Sample    struct {
				Tokens []int  `json:"tokens"`
				Kept   []bool `json:"kept"`
			} `json:"sample"`
		}
		if err := ReadJSON(rec, &s); err != nil {
			return nil, err
		}
		if keep != nil && !keep(s.ID) {
			continue
		}
		var r struct {
			Reward    float64  `json:"reward"`
			Score     *float64 `json:"score"`
			Valid     bool     `json:"valid"`
			DurationS float64  `json:"duration_s"`
			Reason    string   `json:"reason"`
			Stale     bool     `json:"stale"`
		}
		result := filepath.Join(filepath.Dir(rec), filepath.Base(runstore.Sample("x").Result()))
		err := ReadJSON(result, &r)
		finished := err == nil
		if err != nil && (keep != nil || !errors.Is(err, os.ErrNotExist)) {
			return nil, err
		}
		var at time.Time
		if finished {
			st, err := os.Stat(result)
			if err != nil {
				return nil, err
			}
			at = st.ModTime()
		}
		out = append(out, Program{ID: s.ID, Iteration: s.Iteration, Actions: s.Actions, Tokens: s.Sample.Tokens,
			Kept: s.Sample.Kept, Reward: r.Reward, Score: r.Score, Valid: r.Valid, DurationS: r.DurationS,
			Finished: finished, FinishedAt: at, Stale: r.Stale, Reason: r.Reason})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Iteration != out[j].Iteration {
			return out[i].Iteration < out[j].Iteration
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// ReadJSON decodes a JSON file, naming the file in its errors.
func ReadJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// Host is what an experiment directory's run.json says about the machine its runs used: where
// the data was, which interpreter and sandbox ran the programs, and a user's task spec.
type Host struct {
	DataDir  string `json:"data_dir"`
	Python   string `json:"python"`
	SpecFile string `json:"task_spec"`
	Sandbox  struct {
		Kind   string  `json:"sandbox"`
		Image  string  `json:"docker_image"`
		CPUs   float64 `json:"docker_cpus"`
		Unsafe bool    `json:"unsafe_no_sandbox"`
	} `json:"sandbox"`
}

// ReadHost reads the experiment directory's run.json; a directory without one gives the zero Host.
func ReadHost(dir string) (Host, error) {
	var h Host
	if err := ReadJSON(filepath.Join(dir, "run.json"), &h); err != nil && !errors.Is(err, os.ErrNotExist) {
		return Host{}, err
	}
	return h, nil
}

// Registry returns the built-in tasks plus the experiment's own spec file: specFile when given,
// else the task_spec its run.json recorded (a path relative to where it was started).
func Registry(dir, specFile string) (*tasks.Registry, error) {
	r := tasks.Builtin()
	if specFile == "" {
		h, err := ReadHost(dir)
		if err != nil {
			return nil, err
		}
		specFile = h.SpecFile
	}
	if specFile == "" {
		return r, nil
	}
	if _, err := r.AddFile(specFile); err != nil {
		return nil, fmt.Errorf("%w: the experiment was started with --task-spec %s; give its path from here with --task-spec", err, specFile)
	}
	return r, nil
}

// Cell is one done cell of an experiment, with its task's spec and its run's directory.
type Cell struct {
	experiment.CellRecord
	Spec   *tasks.Spec
	RunDir string
}

// DoneCells reads the experiment directory's ledger and returns its done cells in ledger order;
// specFile is as for Registry.
func DoneCells(dir, specFile string) ([]Cell, error) {
	var ledger experiment.Ledger
	if err := ReadJSON(filepath.Join(dir, runstore.LedgerFile), &ledger); err != nil {
		return nil, fmt.Errorf("%w: give an experiment directory (it holds %s)", err, runstore.LedgerFile)
	}
	registry, err := Registry(dir, specFile)
	if err != nil {
		return nil, err
	}
	var out []Cell
	for _, c := range ledger.Cells {
		if c.Status != experiment.StatusDone {
			continue
		}
		spec, err := registry.Get(c.Task)
		if err != nil {
			return nil, err
		}
		out = append(out, Cell{CellRecord: c, Spec: spec, RunDir: runstore.ExperimentRunDir(dir, c.Run)})
	}
	return out, nil
}
