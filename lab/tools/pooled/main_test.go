package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/expreport"
)

func TestSummarize(t *testing.T) {
	pairs := []pair{
		// lower is better: the arm better on validation and on test (agree, a win)
		{Dir: expreport.Direction{LowerIsBetter: true}, Valid: [2]float64{0.01, 0.02}, Test: [2]float64{0.05, 0.06}},
		// better on validation, worse on test by one confident miss (disagree)
		{Dir: expreport.Direction{LowerIsBetter: true}, Valid: [2]float64{0.01, 0.03}, Test: [2]float64{0.36, 0.06}},
		// a tie on both: neither a win nor an agreement
		{Dir: expreport.Direction{LowerIsBetter: true}, Valid: [2]float64{0.03, 0.03}, Test: [2]float64{0.06, 0.06}},
		// higher is better: versus better on both (agree, no win)
		{Dir: expreport.Direction{LowerIsBetter: false}, Valid: [2]float64{0.80, 0.90}, Test: [2]float64{0.70, 0.75}},
	}
	s := summarize(pairs, 0.3)
	if s.Pairs != 4 || s.Wins != 1 || s.ValidWins != 2 || s.Agree != 2 || s.Cells != 8 {
		t.Errorf("summarize = %+v, want 4 pairs, 1 win on test, 2 on validation, 2 agreeing, 8 cells", s)
	}
	// Worse than 0.3: only the 0.36 of a lower-is-better pair; where higher is better, 0.70 and
	// 0.75 are better than 0.3.
	if s.Over != 1 {
		t.Errorf("cells worse than 0.3: %d, want 1", s.Over)
	}
	wantMean := (-0.01 + 0.30 + 0 - 0.05) / 4
	if math.Abs(s.MeanDiff-wantMean) > 1e-12 || math.IsNaN(s.SE) || s.SE <= 0 {
		t.Errorf("paired difference %v ± %v, want %v and a positive standard error", s.MeanDiff, s.SE, wantMean)
	}
}

func writeReport(t *testing.T, pass, cells string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"pass.csv": pass, "cells.csv": cells} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const cellsHeader = "Task,Arm,Seed,Status,Reason,Programs,Sandbox s,Best validation,Best test,Chosen test,Answer test,Untuned answer test,Best medal,Answer medal\n"

func TestReadPairs(t *testing.T) {
	dir := writeReport(t,
		"Task,Better,wins vs static,rl - static (by seed),result\nleaf,lower,1 of 2,0 +/- 0,FAIL\ntasks passed,,,,0 of 1 with data\n",
		cellsHeader+
			"leaf,rl,1,done,,80,500,0.02,0.06,0.07,-,-,none,-\n"+
			"leaf,static,1,done,,90,500,0.03,0.05,0.08,-,-,none,-\n"+
			"leaf,rl,2,done,,80,500,0.04,0.36,0.07,-,-,none,-\n"+
			"leaf,static,2,done,,90,500,-,-,-,-,-,-,-\n"+ // no valid best program: the seed drops out
			"leaf,rl,3,done,,80,500,0.04,0.06,0.07,-,-,none,-\n"+
			"leaf,static,3,running,,0,0,-,-,-,-,-,-,-\n"+
			"leaf,random,1,done,,80,500,0.01,0.01,0.01,-,-,none,-\n")
	pairs, err := readPairs(comparison{Dir: dir, Arm: "rl", Versus: "static"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pairs) != 1 {
		t.Fatalf("pairs = %+v, want only seed 1 (seed 2 has no scored static program, seed 3's is running)", pairs)
	}
	p := pairs[0]
	if p.Seed != "1" || !p.Dir.LowerIsBetter || p.Valid != [2]float64{0.02, 0.03} || p.Test != [2]float64{0.06, 0.05} {
		t.Errorf("pair = %+v", p)
	}

	if _, err := readPairs(comparison{Dir: dir, Arm: "rl", Versus: "static-matched"}); err == nil || !strings.Contains(err.Error(), "arm names") {
		t.Errorf("an arm that is not in the report: %v, want an error naming the arms", err)
	}
	noDirection := writeReport(t, "Task,Better\n", cellsHeader+"leaf,rl,1,done,,80,500,0.02,0.06,0.07,-,-,none,-\nleaf,static,1,done,,90,500,0.03,0.05,0.08,-,-,none,-\n")
	if _, err := readPairs(comparison{Dir: noDirection, Arm: "rl", Versus: "static"}); err == nil || !strings.Contains(err.Error(), "lower or higher") {
		t.Errorf("a task pass.csv does not list: %v, want an error saying so", err)
	}
	if _, err := readPairs(comparison{Dir: t.TempDir(), Arm: "rl", Versus: "static"}); err == nil || !strings.Contains(err.Error(), "report directory") {
		t.Errorf("a directory without a report: %v", err)
	}
}

func TestParseComparison(t *testing.T) {
	c, err := parseComparison("lab/experiments/riskbest:rl-risk:static-matched")
	if err != nil || c != (comparison{"lab/experiments/riskbest", "rl-risk", "static-matched"}) {
		t.Errorf("parseComparison = %+v, %v", c, err)
	}
	for _, bad := range []string{"lab/experiments/riskbest", "dir:rl", "dir::static", "a:b:c:d"} {
		if _, err := parseComparison(bad); err == nil {
			t.Errorf("parseComparison(%q) accepted", bad)
		}
	}
}
