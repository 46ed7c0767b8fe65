// Command selection audits how an experiment's cells picked their best training program. It
// grades every valid training program of each done cell on the private test answers (re-run on
// the full public train, as the experiment graded the one it picked) and says per cell how well
// the validation score ranked the programs (rank correlation), where the program picked by best
// validation ranks on test, and the best test score the cell held (the oracle); per task and
// seed, which arm picked the better program and which held the better one. If the arms hold
// equally good programs and the pick decides, the comparison measures the selection, not the
// search. It reads the test answers to diagnose a finished comparison, never to choose a
// submission, and reuses a program's earlier test grade (its final/ result) when there is one.
//
// With --top N it grades only each cell's N best programs by validation: the pick's
// neighbourhood, for experiments whose every program would take hours to re-run; the rank
// correlation and the best program held are then over those N.
//
//	go run ./lab/tools/selection [--parallel N] [--top N] [--task-spec FILE] EXPERIMENT_DIR
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"sync"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/lab/tools/rankcorr"
	"mlerl/lab/tools/runread"
	"mlerl/sandbox"
	"mlerl/settings"
	"mlerl/tasks"
)

// graded is one valid training program with its validation and test scores.
type graded struct {
	ID         string
	Validation float64
	Test       float64 // NaN: invalid on the test answers
}

// cellAudit is what one cell's programs say about its pick.
type cellAudit struct {
	Programs      int     // valid training programs
	TestInvalid   int     // of them, invalid on the test answers
	Spearman      float64 // validation against test, over the programs valid on both
	Picked        graded  // best validation (the earliest on ties, as the run kept it)
	PickedRank    int     // its place on test among the programs valid on both (1: the best)
	Oracle        graded  // the best test score the cell held
	TopFiveTest   float64 // mean test score of the five best by validation (valid on test)
	lowerIsBetter bool
}

func better(lower bool, a, b float64) bool {
	if math.IsNaN(b) {
		return !math.IsNaN(a)
	}
	if lower {
		return a < b
	}
	return a > b
}

// audit summarizes a cell's programs, in sampling order; picked is the program the experiment
// graded as the cell's best ("": the best by validation, the earliest on ties, as a run keeps it).
func audit(progs []graded, picked string, lower bool) cellAudit {
	a := cellAudit{Programs: len(progs), lowerIsBetter: lower, Spearman: math.NaN(), TopFiveTest: math.NaN(),
		Picked: graded{Validation: math.NaN(), Test: math.NaN()}, Oracle: graded{Validation: math.NaN(), Test: math.NaN()}}
	var vs, ts []float64
	for _, p := range progs {
		if (picked == "" && better(lower, p.Validation, a.Picked.Validation)) || p.ID == picked {
			a.Picked = p
		}
		if math.IsNaN(p.Test) {
			a.TestInvalid++
			continue
		}
		vs, ts = append(vs, p.Validation), append(ts, p.Test)
		if better(lower, p.Test, a.Oracle.Test) {
			a.Oracle = p
		}
	}
	a.Spearman = rankcorr.Spearman(vs, ts)
	if !math.IsNaN(a.Picked.Test) {
		a.PickedRank = 1
		for _, t := range ts {
			if better(lower, t, a.Picked.Test) {
				a.PickedRank++
			}
		}
	}
	byValidation := append([]graded(nil), progs...)
	sort.SliceStable(byValidation, func(i, j int) bool { return better(lower, byValidation[i].Validation, byValidation[j].Validation) })
	var sum float64
	n := 0
	for _, p := range byValidation {
		if n == 5 {
			break
		}
		if !math.IsNaN(p.Test) {
			sum += p.Test
			n++
		}
	}
	if n > 0 {
		a.TopFiveTest = sum / float64(n)
	}
	return a
}

// topByValidation keeps the n best programs by validation (the earliest on ties), in sampling
// order so that audit still picks the earliest of tied bests; n <= 0 keeps them all.
func topByValidation(progs []graded, n int, lower bool) []graded {
	if n <= 0 || n >= len(progs) {
		return progs
	}
	order := make([]int, len(progs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return better(lower, progs[order[i]].Validation, progs[order[j]].Validation) })
	keep := order[:n]
	slices.Sort(keep)
	out := make([]graded, 0, n)
	for _, i := range keep {
		out = append(out, progs[i])
	}
	return out
}

// testScore returns the program's test grade: the one already stored in its final/ folder, or a
// new leak-free run on the full public train graded on the test answers.
func testScore(ctx context.Context, a *activities.Activities, runDir, task, id string) (float64, error) {
	var res activities.ExecuteResult
	err := runread.ReadJSON(filepath.Join(runDir, runstore.Sample(id).Final().Result()), &res)
	if errors.Is(err, os.ErrNotExist) {
		_, err = a.FinalGrade(ctx, activities.FinalGradeInput{Run: filepath.Base(runDir), Task: task, SampleID: id, Protocol: settings.LeakFree})
		if err == nil {
			err = runread.ReadJSON(filepath.Join(runDir, runstore.Sample(id).Final().Result()), &res)
		}
	}
	if err != nil {
		return 0, fmt.Errorf("%s: %w", id, err)
	}
	if !res.Valid || res.Score == nil {
		return math.NaN(), nil
	}
	return *res.Score, nil
}

func openSandbox(ctx context.Context, h runread.Host) (sandbox.Sandbox, error) {
	switch h.Sandbox.Kind {
	case "bubblewrap", "":
		return sandbox.NewLocal(h.Python, h.Sandbox.Unsafe)
	case "docker":
		return sandbox.NewDocker(ctx, sandbox.DockerOptions{Image: h.Sandbox.Image, CPUs: h.Sandbox.CPUs})
	}
	return nil, fmt.Errorf("run.json's sandbox %q: must be bubblewrap or docker", h.Sandbox.Kind)
}

func run(ctx context.Context, dir, specFile string, parallel, top int) error {
	cells, err := runread.DoneCells(dir, specFile)
	if err != nil {
		return err
	}
	h, err := runread.ReadHost(dir)
	if err != nil {
		return err
	}
	if h.Python == "" {
		h.Python = "/usr/bin/python3"
	}
	if h.DataDir == "" {
		h.DataDir = tasks.DefaultDataDir()
	}
	registry, err := runread.Registry(dir, specFile)
	if err != nil {
		return err
	}
	sb, err := openSandbox(ctx, h)
	if err != nil {
		return err
	}
	acts := &activities.Activities{Runs: artifacts.FSRuns{Root: filepath.Join(dir, runstore.ExperimentRunsDir)}, Sandbox: sb,
		Tasks: registry, Layout: tasks.Layout{DataDir: h.DataDir}, Python: h.Python, ScratchDir: filepath.Join(os.TempDir(), "mlerl-work")}

	type key struct {
		task string
		seed uint64
	}
	audits := map[key]map[string]cellAudit{}
	var keys []key
	var arms []string
	fmt.Println("| task | seed | arm | valid programs (invalid on test) | validation vs test, rank correlation | picked: validation → test (its rank on test) | best test it held (its validation) | top 5 by validation: mean test |")
	fmt.Println("|---|---|---|---|---|---|---|---|")
	for _, c := range cells {
		progs, err := runread.Programs(c.RunDir)
		if err != nil {
			return err
		}
		var valid []graded
		for _, p := range progs {
			if p.Valid && p.Score != nil {
				valid = append(valid, graded{ID: p.ID, Validation: *p.Score})
			}
		}
		valid = topByValidation(valid, top, c.Spec.LowerIsBetter())
		// Two programs at a time by default: the machine's cores, as the experiment's slots.
		var wg sync.WaitGroup
		errs := make([]error, len(valid))
		sem := make(chan struct{}, parallel)
		for i := range valid {
			wg.Add(1)
			go func() {
				defer wg.Done()
				sem <- struct{}{}
				defer func() { <-sem }()
				valid[i].Test, errs[i] = testScore(ctx, acts, c.RunDir, c.Task, valid[i].ID)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("cell %s: %w", c.Run, err)
		}
		picked := ""
		if c.Best != nil {
			picked = c.Best.Sample
		}
		a := audit(valid, picked, c.Spec.LowerIsBetter())
		k := key{c.Task, c.Seed}
		if audits[k] == nil {
			audits[k] = map[string]cellAudit{}
			keys = append(keys, k)
		}
		audits[k][c.Arm] = a
		if !slices.Contains(arms, c.Arm) {
			arms = append(arms, c.Arm)
		}
		fmt.Printf("| %s | %d | %s | %d (%d) | %.2f | %.4f → %.4f (%d of %d) | %.4f (%.4f) | %.4f |\n", c.Task, c.Seed, c.Arm,
			a.Programs, a.TestInvalid, a.Spearman, a.Picked.Validation, a.Picked.Test, a.PickedRank, a.Programs-a.TestInvalid,
			a.Oracle.Test, a.Oracle.Validation, a.TopFiveTest)
	}
	if len(arms) < 2 {
		return nil
	}
	fmt.Printf("\n| task | seed | better pick on test | better program held | better top 5 by validation |\n|---|---|---|---|---|\n")
	for _, k := range keys {
		pick := func(a cellAudit) float64 { return a.Picked.Test }
		held := func(a cellAudit) float64 { return a.Oracle.Test }
		top := func(a cellAudit) float64 { return a.TopFiveTest }
		fmt.Printf("| %s | %d | %s | %s | %s |\n", k.task, k.seed, winner(audits[k], arms, pick), winner(audits[k], arms, held), winner(audits[k], arms, top))
	}
	return nil
}

// winner names the arm with the best value of score among the cell's arms ("tie" when two
// share it).
func winner(cells map[string]cellAudit, arms []string, score func(cellAudit) float64) string {
	best, name, tie := math.NaN(), "-", false
	for _, arm := range arms {
		a, ok := cells[arm]
		if !ok {
			continue
		}
		v := score(a)
		switch {
		case better(a.lowerIsBetter, v, best):
			best, name, tie = v, arm, false
		case !math.IsNaN(v) && v == best:
			tie = true
		}
	}
	if tie {
		return "tie"
	}
	return name
}

func main() {
	parallel := flag.Int("parallel", 2, "programs run at once")
	top := flag.Int("top", 0, "grade only each cell's N best programs by validation (0: all)")
	specFile := flag.String("task-spec", "", "the task spec file of a task that is not built in (default: the one run.json names)")
	flag.Parse()
	if flag.NArg() != 1 || *parallel < 1 || *top < 0 {
		fmt.Fprintln(os.Stderr, "usage: selection [--parallel N ≥ 1] [--top N ≥ 0] [--task-spec FILE] EXPERIMENT_DIR")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, flag.Arg(0), *specFile, *parallel, *top); err != nil {
		fmt.Fprintln(os.Stderr, "selection:", err)
		os.Exit(1)
	}
}
