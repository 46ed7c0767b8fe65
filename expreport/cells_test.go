package expreport

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"mlerl/experiment"
)

// cellsCSV is the cell table the ledger's report writes: what a lab experiment commits.
func cellsCSV(t *testing.T, led experiment.Ledger) []byte {
	t.Helper()
	r, err := Build(led, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.Table("cells").CSV()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The verdict recomputed from the cell table is the one the ledger gives, for rules of every
// kind: versus arms, a medal, the paper's score, each measure; with failed, no-data and invalid
// cells in the grid.
func TestVerdictFromCellsIsTheLedgers(t *testing.T) {
	for _, rule := range []experiment.PassRule{
		{Arm: "rl", Versus: []string{"static", "random"}, Measure: experiment.MeasureBestTest, MinSeeds: 2},
		{Arm: "rl", Versus: []string{"static-matched"}, Measure: experiment.MeasureChosenTest, MinSeeds: 2},
		{Arm: "rl", Measure: experiment.MeasureAnswerTest, MinSeeds: 1, Medal: "bronze"},
		{Arm: "rl", Versus: []string{"static"}, Measure: experiment.MeasureBestTest, MinSeeds: 2, Medal: "silver"},
		{Arm: "rl", Measure: experiment.MeasureAnswerTest, MinSeeds: 2, Paper: "Qwen2.5-3B RL"},
	} {
		spec := fixtureSpec()
		spec.PassRule = rule
		led := fixtureLedger(spec)
		want, err := Build(led, nil)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Verdict(spec, bytes.NewReader(cellsCSV(t, led)))
		if err != nil {
			t.Fatalf("%+v: %v", rule, err)
		}
		w := want.Table("pass")
		if !slices.Equal(got.Header, w.Header) || len(got.Rows) != len(w.Rows) {
			t.Fatalf("%+v: header %q and %d rows, the ledger's %q and %d", rule, got.Header, len(got.Rows), w.Header, len(w.Rows))
		}
		for i := range w.Rows {
			if !slices.Equal(got.Rows[i], w.Rows[i]) {
				t.Errorf("%+v: row %d from the cells %q, from the ledger %q", rule, i, got.Rows[i], w.Rows[i])
			}
		}
		if got.Caption != w.Caption {
			t.Errorf("%+v: caption from the cells %q, from the ledger %q", rule, got.Caption, w.Caption)
		}
	}
}

// A verdict flips with the cells it reads: the table is what decides, not a stored answer.
func TestVerdictFollowsTheCells(t *testing.T) {
	spec := fixtureSpec()
	spec.PassRule = experiment.PassRule{Arm: "rl", Measure: experiment.MeasureAnswerTest, MinSeeds: 1, Medal: "bronze"}
	table := string(cellsCSV(t, fixtureLedger(spec)))
	got, err := Verdict(spec, strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Row(leaf); r == nil || r[len(r)-1] != "PASS" {
		t.Fatalf("leaf's row %q, want PASS (seed 1's answer is bronze)", r)
	}
	// Leaf's rl seed 1 is the only cell whose answer medal is bronze.
	table = strings.Replace(table, ",gold,bronze\n", ",gold,none\n", 1)
	got, err = Verdict(spec, strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Row(leaf); r == nil || r[len(r)-1] != "FAIL" {
		t.Fatalf("leaf's row %q after its bronze is taken away, want FAIL", r)
	}
}

// A rule the cell table cannot decide is refused by name, never guessed.
func TestCellsThatCannotDecideTheRule(t *testing.T) {
	spec := fixtureSpec()
	table := cellsCSV(t, fixtureLedger(spec))
	for _, tc := range []struct {
		name  string
		rule  experiment.PassRule
		table string
		want  string
	}{
		{"no medal of the chosen program", experiment.PassRule{Arm: "rl", Measure: experiment.MeasureChosenTest, MinSeeds: 1, Medal: "bronze"},
			string(table), "does not record"},
		{"a table older than the answer", experiment.PassRule{Arm: "rl", Versus: []string{"static"}, Measure: experiment.MeasureAnswerTest, MinSeeds: 1},
			strings.Replace(string(table), "Answer test", "Something else", 1), `needs column "Answer test"`},
	} {
		spec.PassRule = tc.rule
		_, err := Verdict(spec, strings.NewReader(tc.table))
		if !errors.Is(err, ErrNotInCells) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want ErrNotInCells saying %q", tc.name, err, tc.want)
		}
	}
	spec.PassRule = experiment.PassRule{Arm: "rl", Versus: []string{"static"}, Measure: experiment.MeasureBestTest, MinSeeds: 1}
	bad := strings.Replace(string(table), ",0.1000,", ",0.1O00,", 1)
	if _, err := Verdict(spec, strings.NewReader(bad)); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a misspelt score: error %v, want one naming line 2", err)
	}
}

// Without a ledger, Write rebuilds the cell table and the verdict from DIR/cells.csv and
// DIR/spec.yaml, says so, and skips the rest with the reason.
func TestWriteFromTheCellTable(t *testing.T) {
	spec := fixtureSpec()
	led := fixtureLedger(spec)
	dir := t.TempDir()
	y, err := yaml.Marshal(spec)
	if err != nil {
		t.Fatal(err)
	}
	table := cellsCSV(t, led)
	if err := os.WriteFile(filepath.Join(dir, SpecFile), y, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CellsFile), table, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if res.From != FromCells {
		t.Errorf("From %q, want %q", res.From, FromCells)
	}
	fromLedger, err := Build(led, nil)
	if err != nil {
		t.Fatal(err)
	}
	wantPass, _ := fromLedger.Table("pass").CSV()
	for name, want := range map[string][]byte{"pass.csv": wantPass, "cells.csv": table} {
		got, err := os.ReadFile(filepath.Join(dir, Dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("report/%s:\n%s\nwant\n%s", name, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, Dir, "table1.csv")); err == nil {
		t.Error("table1.csv written from the cell table alone")
	}
	if !slices.ContainsFunc(res.Skipped, func(s string) bool { return strings.HasPrefix(s, "table1: ") && strings.Contains(s, "experiment.json") }) {
		t.Errorf("Skipped %q does not say table1 needs the ledger", res.Skipped)
	}
	md, err := os.ReadFile(filepath.Join(dir, Dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "Rebuilt from the committed cell table") {
		t.Error("report.md does not say it was rebuilt from the cell table")
	}
}
