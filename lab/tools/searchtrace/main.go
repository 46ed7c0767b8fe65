// Command searchtrace says how each done cell of an experiment searched: how often its training
// programs were valid early and late, when (iteration, share of its sandbox-seconds) it first
// reached its best validation score, how many model families its valid programs covered, and
// how concentrated its last iterations were on one family. It is the evidence for why one arm
// finds a better best program than another at the same budget: breadth (many families, the
// best found early by a lucky draw) against depth (few families, improved within them). With
// --improve-edit it also says how many programs were edits of a previous one (sample.json's
// kept marks), how often edits and the rest were valid, and whether the best was an edit. It
// also counts repeats: programs that write the same submission as an earlier one of the cell
// (codeactions.Library.SubmissionKey), and the share of the sandbox-seconds they used.
//
// A task that is not built in is read from the spec file the experiment was started with
// (run.json's task_spec), or from --task-spec when that path no longer resolves from here.
//
//	go run ./lab/tools/searchtrace [--task-spec FILE] EXPERIMENT_DIR
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"

	"mlerl/codeactions"
	"mlerl/lab/tools/runread"
)

// program is one training program as the trace needs it.
type program struct {
	ID        string
	Iteration int
	Model     string  // the code action's model option ("" when the library has no model slot)
	Valid     bool    // graded valid, as its reward counts it
	Reward    float64 // higher is better (the score, sign flipped for lower-is-better metrics)
	Score     float64
	Seconds   float64 // sandbox-seconds it used
	Edit      bool    // an edit of a previous program: some of its tokens were kept
	Key       string  // its submission key, described: equal keys write one submission
}

// trace is what one cell's search did.
type trace struct {
	Programs       int
	ValidEarly     float64 // share valid in the first half of the iterations
	ValidLate      float64 // share valid in the second half
	BestScore      float64
	BestIteration  int     // the iteration that first reached the best reward
	BestAtSeconds  float64 // share of the cell's sandbox-seconds spent when it was found
	Families       int     // distinct models among valid programs
	LateFamily     string  // the most common model among the last three iterations' programs
	LateFamilyRate float64 // its share of them
	BestFamily     string
	Edits          int     // programs that were edits
	ValidEdits     float64 // share of the edits that were valid
	ValidRest      float64 // share of the other programs that were valid
	BestFromEdit   bool    // the program that first reached the best was an edit
	Repeats        int     // programs whose submission key an earlier program had
	RepeatSeconds  float64 // the repeats' share of the cell's sandbox-seconds
}

// modelOf reads the model option from a code action's description ("slot=option ...").
func modelOf(actions string) string {
	for _, f := range strings.Fields(actions) {
		if v, ok := strings.CutPrefix(f, "model="); ok {
			return v
		}
	}
	return ""
}

// traceOf summarises programs, which must be in the order they were sampled.
func traceOf(progs []program) trace {
	t := trace{Programs: len(progs), BestScore: math.NaN()}
	if len(progs) == 0 {
		return t
	}
	last := 0
	for _, p := range progs {
		last = max(last, p.Iteration)
	}
	var total float64
	for _, p := range progs {
		total += p.Seconds
	}
	var early, earlyN, late, lateN, validEdits, validRest int
	families := map[string]bool{}
	lateCount := map[string]int{}
	lateN3 := 0
	best, spent := math.Inf(-1), 0.0
	keys := map[string]bool{}
	for _, p := range progs {
		spent += p.Seconds
		if p.Key != "" && keys[p.Key] {
			t.Repeats++
			t.RepeatSeconds += p.Seconds
		}
		keys[p.Key] = true
		if 2*p.Iteration <= last {
			earlyN++
			if p.Valid {
				early++
			}
		} else {
			lateN++
			if p.Valid {
				late++
			}
		}
		if p.Edit {
			t.Edits++
			if p.Valid {
				validEdits++
			}
		} else if p.Valid {
			validRest++
		}
		if p.Iteration > last-3 {
			lateCount[p.Model]++
			lateN3++
		}
		if !p.Valid {
			continue
		}
		families[p.Model] = true
		if p.Reward > best {
			best = p.Reward
			t.BestScore, t.BestIteration, t.BestFamily, t.BestFromEdit = p.Score, p.Iteration, p.Model, p.Edit
			if total > 0 {
				t.BestAtSeconds = spent / total
			}
		}
	}
	if total > 0 {
		t.RepeatSeconds /= total
	}
	t.ValidEarly = ratio(early, earlyN)
	t.ValidLate = ratio(late, lateN)
	t.ValidEdits = ratio(validEdits, t.Edits)
	t.ValidRest = ratio(validRest, t.Programs-t.Edits)
	t.Families = len(families)
	for m, n := range lateCount {
		if n > lateCount[t.LateFamily] || (n == lateCount[t.LateFamily] && m < t.LateFamily) {
			t.LateFamily = m
		}
	}
	t.LateFamilyRate = ratio(lateCount[t.LateFamily], lateN3)
	return t
}

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}

// readPrograms loads a run's training programs that its updates used, in sampling order, with
// their submission keys on the task's schema.
func readPrograms(runDir string, lib *codeactions.Library, schema codeactions.Schema) ([]program, error) {
	read, err := runread.Programs(runDir)
	if err != nil {
		return nil, err
	}
	var out []program
	for _, r := range read {
		p := program{ID: r.ID, Iteration: r.Iteration, Model: modelOf(r.Actions), Valid: r.Valid && r.Score != nil, Reward: r.Reward,
			Seconds: r.DurationS, Edit: slices.Contains(r.Kept, true)}
		if r.Score != nil {
			p.Score = *r.Score
		}
		key, err := lib.SubmissionKey(r.Tokens, schema)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.ID, err)
		}
		p.Key = lib.Describe(key)
		out = append(out, p)
	}
	return out, nil
}

func main() {
	specFile := flag.String("task-spec", "", "the task spec file of a task that is not built in (default: the one run.json names)")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: searchtrace [--task-spec FILE] EXPERIMENT_DIR")
		os.Exit(2)
	}
	if err := run(flag.Arg(0), *specFile); err != nil {
		fmt.Fprintln(os.Stderr, "searchtrace:", err)
		os.Exit(1)
	}
}

func run(dir, specFile string) error {
	cells, err := runread.DoneCells(dir, specFile)
	if err != nil {
		return err
	}
	fmt.Println("| task | seed | arm | programs (edits) | valid: first half | valid: second half | valid: edits / the rest | best validation | found in iteration | at share of sandbox-s | its model | best from an edit | model families (valid) | last 3 iterations: commonest model, share | repeats (same submission), share of sandbox-s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, c := range cells {
		lib, err := codeactions.For(c.Spec.Modality)
		if err != nil {
			return err
		}
		progs, err := readPrograms(c.RunDir, lib, codeactions.SchemaOf(c.Spec))
		if err != nil {
			return err
		}
		t := traceOf(progs)
		edits, fromEdit := "-", "-"
		if t.Edits > 0 {
			edits = fmt.Sprintf("%.2f", t.ValidEdits)
			fromEdit = map[bool]string{true: "yes", false: "no"}[t.BestFromEdit]
		}
		fmt.Printf("| %s | %d | %s | %d (%d) | %.2f | %.2f | %s / %.2f | %.4f | %d | %.2f | %s | %s | %d | %s, %.2f | %d, %.2f |\n",
			c.Task, c.Seed, c.Arm, t.Programs, t.Edits, t.ValidEarly, t.ValidLate, edits, t.ValidRest, t.BestScore, t.BestIteration,
			t.BestAtSeconds, t.BestFamily, fromEdit, t.Families, t.LateFamily, t.LateFamilyRate, t.Repeats, t.RepeatSeconds)
	}
	return nil
}
