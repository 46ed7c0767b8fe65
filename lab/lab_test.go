// Package lab holds the experiments run on the platform: their specs, ledgers, pages and the
// tools that read them. The platform does not import it.
package lab

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mlerl/experiment"
	"mlerl/expreport"
	"mlerl/settings"
)

// experimentDirs lists lab/experiments/*.
func experimentDirs(t *testing.T) []string {
	t.Helper()
	dirs, err := filepath.Glob(filepath.Join("experiments", "*"))
	if err != nil || len(dirs) == 0 {
		t.Fatalf("no experiments under lab/experiments: %v", err)
	}
	return dirs
}

// Every experiment has a page, and its spec parses under today's rules with the experiment's own name, so
// `starter experiment run lab/experiments/NAME/spec.yaml` can repeat it.
func TestEverySpecParsesAndHasAPage(t *testing.T) {
	for _, dir := range experimentDirs(t) {
		name := filepath.Base(dir)
		if _, err := os.Stat(filepath.Join(dir, "README.md")); err != nil {
			t.Errorf("%s: no page (README.md): write its question, spec, result and what it means", dir)
		}
		// Only spec.yaml: a further spec beside it (leafpriors' control.yaml) is kept as it ran.
		specs, _ := filepath.Glob(filepath.Join(dir, "spec.yaml"))
		if len(specs) == 0 && !slices.Contains(experiment.BuiltinNames(), name) {
			t.Errorf("%s: no spec.yaml, and %s is not a built-in spec", dir, name)
		}
		for _, f := range specs {
			s, _, err := experiment.Load(f)
			if err != nil {
				t.Errorf("%s: %v", f, err)
				continue
			}
			if s.Name != name {
				t.Errorf("%s: spec name %q, want the folder's %q", f, s.Name, name)
			}
			// Every cell's settings resolve over the defaults (its task's run: section aside).
			for _, c := range s.Cells() {
				layers, err := s.Layers(c)
				if err == nil {
					_, err = settings.Resolve(layers...)
				}
				if err != nil {
					t.Errorf("%s: cell %s: %v", f, c.Run, err)
				}
			}
		}
	}
	// A preset file kept beside the experiments loads.
	for _, f := range []string{filepath.Join("learning", "entropy.yaml")} {
		if _, err := settings.LoadPreset(f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// A committed ledger regenerates the report's tables with the values committed beside it: what
// `go tool task lab:report -- NAME` writes is the record, not a new reading of it. The committed
// cells.csv and pass.csv came from an earlier report, so today's may add columns; every
// committed column must hold the same values, row by row.
func TestLedgersRegenerateTheirCells(t *testing.T) {
	ledgers, _ := filepath.Glob(filepath.Join("experiments", "*", "experiment.json"))
	if len(ledgers) == 0 {
		t.Fatal("no committed ledger under lab/experiments")
	}
	for _, l := range ledgers {
		dir := t.TempDir()
		b, err := os.ReadFile(l)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "experiment.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := expreport.Write(dir); err != nil {
			t.Errorf("%s: %v", l, err)
			continue
		}
		for _, f := range []string{"cells.csv", "pass.csv"} {
			want := readCSV(t, filepath.Join(filepath.Dir(l), f))
			got := readCSV(t, filepath.Join(dir, expreport.Dir, f))
			if len(got) != len(want) || len(want) < 2 {
				t.Errorf("%s: regenerated %s has %d rows, the committed one %d", l, f, len(got), len(want))
				continue
			}
			for _, col := range want[0] {
				wi, gi := slices.Index(want[0], col), slices.Index(got[0], col)
				if gi < 0 {
					t.Errorf("%s: regenerated %s has no column %q", l, f, col)
					continue
				}
				for r := 1; r < len(want); r++ {
					if got[r][gi] != want[r][wi] {
						t.Errorf("%s: %s row %d column %q: regenerated %q, committed %q", l, f, r, col, got[r][gi], want[r][wi])
					}
				}
			}
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}
