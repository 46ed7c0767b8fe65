// Command pooled reads the reports of several two-arm comparisons on the best training program
// (each experiment report's cells.csv, and pass.csv for which way is better) and pools them: per
// task and seed, which arm's best program was better on validation and which on test; over all
// pairs the first arm's wins on test, the paired test difference, and how often the arm with the
// better best validation also had the better test score; over all cells the rank correlation of
// the best program's validation score with its test score. Each comparison's verdict is its own
// pre-registered pass rule; the pool is post hoc and asks a different question: can the measure
// separate two arms at all, when best-by-validation picks a program whose test score the
// validation barely predicts?
//
// --worse-than X also counts the cells whose best program scored worse than X on test (on leaf's
// 99 test rows, one row given probability ~0 costs 0.36 of log loss).
//
//	go run ./lab/tools/pooled [--worse-than X] REPORT_DIR:ARM:VERSUS ...
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"mlerl/expreport"
	"mlerl/lab/tools/rankcorr"
)

// comparison is one experiment's pair of arms, read from its report directory.
type comparison struct{ Dir, Arm, Versus string }

func parseComparison(arg string) (comparison, error) {
	parts := strings.Split(arg, ":")
	if len(parts) != 3 || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return comparison{}, fmt.Errorf("%q: give REPORT_DIR:ARM:VERSUS, e.g. lab/experiments/riskbest:rl-risk:static-matched", arg)
	}
	return comparison{parts[0], parts[1], parts[2]}, nil
}

// pair is one task and seed of a comparison: both arms' best training programs.
type pair struct {
	Experiment, Task, Seed string
	Dir                    expreport.Direction
	Valid, Test            [2]float64 // [arm, versus]
}

// summary is what the pool says.
type summary struct {
	Pairs, Wins    int     // the first arm's wins on test (a tie is not a win)
	Agree          int     // pairs where the better best validation had the better test score
	MeanDiff, SE   float64 // first arm minus the other on test, mean ± standard error
	Cells          int
	Spearman       float64 // best validation against best test over every cell
	ValidWins      int     // the first arm's wins on validation
	Over           int     // cells whose best program's test score is worse than Threshold
	Threshold      float64
	MedianCellTest float64
}

func summarize(pairs []pair, threshold float64) summary {
	s := summary{Pairs: len(pairs), Threshold: threshold}
	var diffs, valid, test []float64
	for _, p := range pairs {
		validFirst, testFirst := p.Dir.Better(p.Valid[0], p.Valid[1]), p.Dir.Better(p.Test[0], p.Test[1])
		if testFirst {
			s.Wins++
		}
		if validFirst {
			s.ValidWins++
		}
		if (validFirst && testFirst) || (p.Dir.Better(p.Valid[1], p.Valid[0]) && p.Dir.Better(p.Test[1], p.Test[0])) {
			s.Agree++
		}
		diffs = append(diffs, p.Test[0]-p.Test[1])
		for i := range 2 {
			valid, test = append(valid, p.Valid[i]), append(test, p.Test[i])
			if p.Dir.Better(threshold, p.Test[i]) {
				s.Over++
			}
		}
	}
	s.Cells = len(valid)
	diff := expreport.Summarize(diffs)
	s.MeanDiff, s.SE = diff.Mean, diff.SE
	s.Spearman = rankcorr.Spearman(valid, test)
	s.MedianCellTest = median(test)
	return s
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Sorted(slices.Values(xs))
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func readCSV(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: give an experiment report directory (`starter experiment report` writes it)", err)
	}
	defer f.Close()
	records, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("%s is empty", path)
	}
	var rows []map[string]string
	for _, r := range records[1:] {
		row := map[string]string{}
		for i, h := range records[0] {
			if i < len(r) {
				row[h] = r[i]
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// readPairs returns the comparison's pairs: every task and seed where both arms are done with a
// best program scored on validation and test.
func readPairs(c comparison) ([]pair, error) {
	passRows, err := readCSV(filepath.Join(c.Dir, "pass.csv"))
	if err != nil {
		return nil, err
	}
	lower := map[string]bool{}
	for _, r := range passRows {
		if b := r["Better"]; b == "lower" || b == "higher" {
			lower[r["Task"]] = b == "lower"
		}
	}
	cells, err := readCSV(filepath.Join(c.Dir, "cells.csv"))
	if err != nil {
		return nil, err
	}
	type key struct{ task, seed string }
	found := map[key]*pair{}
	var order []key
	for _, r := range cells {
		side := -1
		switch r["Arm"] {
		case c.Arm:
			side = 0
		case c.Versus:
			side = 1
		}
		if side < 0 || r["Status"] != "done" {
			continue
		}
		v, errV := strconv.ParseFloat(r["Best validation"], 64)
		t, errT := strconv.ParseFloat(r["Best test"], 64)
		if errV != nil || errT != nil {
			continue // no valid best program: no score to compare
		}
		k := key{r["Task"], r["Seed"]}
		if found[k] == nil {
			lo, ok := lower[k.task]
			if !ok {
				return nil, fmt.Errorf("%s: pass.csv does not say whether lower or higher is better on %s", c.Dir, k.task)
			}
			found[k] = &pair{Experiment: filepath.Base(c.Dir), Task: k.task, Seed: k.seed, Dir: expreport.Direction{LowerIsBetter: lo},
				Valid: [2]float64{math.NaN(), math.NaN()}, Test: [2]float64{math.NaN(), math.NaN()}}
			order = append(order, k)
		}
		found[k].Valid[side], found[k].Test[side] = v, t
	}
	var out []pair
	for _, k := range order {
		if p := found[k]; !math.IsNaN(p.Test[0]) && !math.IsNaN(p.Test[1]) {
			out = append(out, *p)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no task and seed where arms %s and %s are both done with a scored best program (check the arm names in cells.csv)", c.Dir, c.Arm, c.Versus)
	}
	return out, nil
}

func main() {
	worseThan := flag.Float64("worse-than", math.NaN(), "also count the cells whose best program's test score is worse than this")
	flag.Parse()
	if flag.NArg() < 1 {
		fmt.Fprintln(os.Stderr, "usage: pooled [--worse-than X] REPORT_DIR:ARM:VERSUS ...")
		os.Exit(2)
	}
	var pairs []pair
	for _, arg := range flag.Args() {
		c, err := parseComparison(arg)
		if err == nil {
			var ps []pair
			ps, err = readPairs(c)
			pairs = append(pairs, ps...)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "pooled:", err)
			os.Exit(1)
		}
	}
	fmt.Println("| experiment | task | seed | best validation: arm / versus | best test: arm / versus | better validation | better test |")
	fmt.Println("|---|---|---|---|---|---|---|")
	name := func(p pair, a, b float64) string {
		switch {
		case p.Dir.Better(a, b):
			return "arm"
		case p.Dir.Better(b, a):
			return "versus"
		}
		return "tie"
	}
	for _, p := range pairs {
		fmt.Printf("| %s | %s | %s | %.4f / %.4f | %.4f / %.4f | %s | %s |\n", p.Experiment, p.Task, p.Seed,
			p.Valid[0], p.Valid[1], p.Test[0], p.Test[1], name(p, p.Valid[0], p.Valid[1]), name(p, p.Test[0], p.Test[1]))
	}
	s := summarize(pairs, *worseThan)
	fmt.Printf("\npairs: %d; the arm better on test in %d, on validation in %d; the better validation had the better test in %d of %d\n",
		s.Pairs, s.Wins, s.ValidWins, s.Agree, s.Pairs)
	fmt.Printf("paired test difference (arm - versus): %.4f ± %.4f\n", s.MeanDiff, s.SE)
	fmt.Printf("cells: %d; Spearman correlation of best validation with best test: %.2f; median best test %.4f\n",
		s.Cells, s.Spearman, s.MedianCellTest)
	if !math.IsNaN(*worseThan) {
		fmt.Printf("cells whose best program scored worse than %g on test: %d of %d\n", *worseThan, s.Over, s.Cells)
	}
}
