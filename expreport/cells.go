package expreport

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"mlerl/experiment"
)

// Files of an experiment folder that keeps only the part of its report that is committed.
const (
	CellsFile = "cells.csv" // the cell table, as the report's cells table wrote it
	PassFile  = "pass.csv"  // the pass rule's verdict, as the report's pass table wrote it
	SpecFile  = "spec.yaml"
)

// Sources Write names in Result.From.
const (
	FromLedger = "ledger"
	FromCells  = "cells"
)

// ErrNotInCells marks a pass rule the cell table cannot decide: it lacks a column the rule reads.
var ErrNotInCells = errors.New("the cell table lacks a column the pass rule reads")

// cellsOnly is why a table or figure is missing from a report rebuilt from the cell table.
const cellsOnly = "it needs the ledger (experiment.json) and the runs' metrics, and only the cell table (cells.csv) was committed"

// measureColumns are, by pass-rule measure, the cell table's score and medal columns ("" when
// the table has no medal for that program).
var measureColumns = map[string][2]string{
	experiment.MeasureBestTest:   {"Best test", "Best medal"},
	experiment.MeasureChosenTest: {"Chosen test", ""},
	experiment.MeasureAnswerTest: {"Answer test", "Answer medal"},
}

// LedgerFromCells rebuilds, from a cell table (the report's cells.csv), the part of a ledger
// the pass rule reads: each cell's status, budget, and its programs' test scores and medals.
// Scores carry the table's 4 decimals. It refuses a table that lacks a column spec's pass rule
// needs (ErrNotInCells), so a verdict is never computed from a guess.
func LedgerFromCells(spec experiment.Spec, r io.Reader) (experiment.Ledger, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return experiment.Ledger{}, err
	}
	if len(rows) == 0 {
		return experiment.Ledger{}, errors.New("empty cell table: want a header line (Task,Arm,Seed,Status,...) and a row per cell")
	}
	head := rows[0]
	col := func(name string) int { return slices.Index(head, name) }
	for _, need := range []string{"Task", "Arm", "Seed", "Status"} {
		if col(need) < 0 {
			return experiment.Ledger{}, fmt.Errorf("the cell table has no %q column (header: %v): it is not a report's cells.csv", need, head)
		}
	}
	if rule := spec.PassRule; rule.Arm != "" {
		mc, ok := measureColumns[rule.Measure]
		switch {
		case !ok:
			return experiment.Ledger{}, fmt.Errorf("%w: measure %q has no column in the cell table", ErrNotInCells, rule.Measure)
		case col(mc[0]) < 0:
			return experiment.Ledger{}, fmt.Errorf("%w: measure %s needs column %q, and this table (written before it existed) has none", ErrNotInCells, rule.Measure, mc[0])
		case rule.Medal != "" && mc[1] == "":
			return experiment.Ledger{}, fmt.Errorf("%w: medal %s on %s needs that program's medal, which the cell table does not record (only Best medal and Answer medal)", ErrNotInCells, rule.Medal, rule.Measure)
		case rule.Medal != "" && col(mc[1]) < 0:
			return experiment.Ledger{}, fmt.Errorf("%w: medal %s on %s needs column %q, and this table has none", ErrNotInCells, rule.Medal, rule.Measure, mc[1])
		}
	}
	get := func(row []string, name string) string {
		if i := col(name); i >= 0 && i < len(row) {
			return row[i]
		}
		return "-"
	}
	led := experiment.Ledger{Spec: spec}
	for n, row := range rows[1:] {
		line := n + 2
		seed, err := strconv.ParseUint(get(row, "Seed"), 10, 64)
		if err != nil {
			return experiment.Ledger{}, fmt.Errorf("cell table line %d: seed %q is not a whole number", line, get(row, "Seed"))
		}
		c := experiment.CellRecord{Status: get(row, "Status"), Reason: get(row, "Reason")}
		c.Cell = experiment.Cell{Task: get(row, "Task"), Arm: get(row, "Arm"), Seed: seed, Run: experiment.RunName(get(row, "Task"), get(row, "Arm"), seed)}
		if c.Programs, err = intOr0(get(row, "Programs")); err != nil {
			return experiment.Ledger{}, fmt.Errorf("cell table line %d: Programs: %v", line, err)
		}
		if c.SandboxSeconds, err = floatOr0(get(row, "Sandbox s")); err != nil {
			return experiment.Ledger{}, fmt.Errorf("cell table line %d: Sandbox s: %v", line, err)
		}
		if c.BestValidation, err = score(get(row, "Best validation")); err != nil {
			return experiment.Ledger{}, fmt.Errorf("cell table line %d: Best validation: %v", line, err)
		}
		for _, g := range []struct {
			into         **experiment.Graded
			score, medal string
		}{{&c.Best, "Best test", "Best medal"}, {&c.Chosen, "Chosen test", ""}, {&c.Answer, "Answer test", "Answer medal"},
			{&c.Untuned, "Untuned answer test", ""}} {
			medal := "-"
			if g.medal != "" {
				medal = get(row, g.medal)
			}
			if *g.into, err = gradedCell(get(row, g.score), medal); err != nil {
				return experiment.Ledger{}, fmt.Errorf("cell table line %d: %s: %v", line, g.score, err)
			}
		}
		led.Cells = append(led.Cells, c)
	}
	return led, nil
}

// gradedCell is a program as the cell table shows it: "-" not graded, "invalid" graded but not
// valid, else its test score; medal is "-", "none", "unknown" or the medal's name.
func gradedCell(test, medal string) (*experiment.Graded, error) {
	switch test {
	case "-", "":
		return nil, nil
	case "invalid":
		return &experiment.Graded{}, nil
	}
	v, err := strconv.ParseFloat(test, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a score, \"invalid\" or \"-\"", test)
	}
	g := &experiment.Graded{Test: &v}
	g.Report.Score = &v
	switch medal {
	case "gold":
		g.Report.GoldMedal = true
	case "silver":
		g.Report.SilverMedal = true
	case "bronze":
		g.Report.BronzeMedal = true
	case "unknown":
		g.Report.MedalsUnknown = true
	case "none", "-", "":
	default:
		return nil, fmt.Errorf("medal %q is not gold, silver, bronze, unknown, none or -", medal)
	}
	g.Report.AnyMedal = g.Report.GoldMedal || g.Report.SilverMedal || g.Report.BronzeMedal
	return g, nil
}

func score(s string) (*float64, error) {
	if s == "-" || s == "" {
		return nil, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, fmt.Errorf("%q is not a score or \"-\"", s)
	}
	return &v, nil
}

func intOr0(s string) (int, error) {
	if s == "-" || s == "" {
		return 0, nil
	}
	return strconv.Atoi(s)
}

func floatOr0(s string) (float64, error) {
	if s == "-" || s == "" {
		return 0, nil
	}
	return strconv.ParseFloat(s, 64)
}

// Verdict recomputes the pass rule's table (the report's pass.csv) from a cell table, with the
// same code the report runs on a ledger.
func Verdict(spec experiment.Spec, cells io.Reader) (Table, error) {
	rep, err := BuildFromCells(spec, cells)
	if err != nil {
		return Table{}, err
	}
	return *rep.Table("pass"), nil
}

// BuildFromCells is Build on the ledger a cell table gives back: the cell table and the pass
// rule's verdict are filled, every other table and figure is skipped and says why.
func BuildFromCells(spec experiment.Spec, cells io.Reader) (*Report, error) {
	led, err := LedgerFromCells(spec, cells)
	if err != nil {
		return nil, err
	}
	rep, err := Build(led, nil)
	if err != nil {
		return nil, err
	}
	for i := range rep.Tables {
		if t := &rep.Tables[i]; t.Name != "pass" && t.Name != "cells" && t.Skip == "" {
			t.Skip = cellsOnly
		}
	}
	for i := range rep.Figures { // every figure reads the ledger's curves or the runs' metrics
		rep.Figures[i].Skip = cellsOnly
	}
	rep.Notes = append(rep.Notes, "Rebuilt from the committed cell table (cells.csv), not from a ledger: scores carry "+
		"its 4 decimals, and only the cell table and the pass rule's verdict are written.")
	return rep, nil
}

// SpecOf is an experiment folder's spec: DIR/spec.yaml, else the built-in spec of the folder's
// name.
func SpecOf(dir string) (experiment.Spec, error) {
	p := filepath.Join(dir, SpecFile)
	if _, err := os.Stat(p); err != nil && slices.Contains(experiment.BuiltinNames(), filepath.Base(dir)) {
		p = filepath.Base(dir)
	}
	s, _, err := experiment.Load(p)
	if err != nil {
		return experiment.Spec{}, fmt.Errorf("the experiment's spec: %w", err)
	}
	return s, nil
}

// writeFromCells writes DIR/report from DIR/cells.csv and the folder's spec.
func writeFromCells(dir string) (Result, error) {
	spec, err := SpecOf(dir)
	if err != nil {
		return Result{}, err
	}
	f, err := os.Open(filepath.Join(dir, CellsFile))
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	rep, err := BuildFromCells(spec, f)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", filepath.Join(dir, CellsFile), err)
	}
	res, err := rep.WriteTo(filepath.Join(dir, Dir))
	res.From = FromCells
	return res, err
}
