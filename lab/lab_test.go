// Package lab holds the experiments run on the platform: their specs, ledgers, pages and the
// tools that read them. The platform does not import it.
package lab

import (
	"encoding/csv"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
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

// Every committed verdict (pass.csv) is what the pass rule gives on the committed cell table
// (cells.csv), recomputed by the report's own pass-rule code: a verdict no table supports fails
// here. A folder whose cell table cannot decide its rule (a column the rule reads is missing)
// must hold its ledger, which TestLedgersRegenerateTheirCells checks instead. (leafpriors'
// control-report is left out: control.yaml's rule names nothing to beat, so it has no verdict.)
func TestVerdictsFollowFromTheirCells(t *testing.T) {
	checked := 0
	for _, dir := range experimentDirs(t) {
		cellsPath := filepath.Join(dir, expreport.CellsFile)
		if _, err := os.Stat(cellsPath); err != nil {
			continue
		}
		spec, err := expreport.SpecOf(dir)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		f, err := os.Open(cellsPath)
		if err != nil {
			t.Fatal(err)
		}
		got, err := expreport.Verdict(spec, f)
		f.Close()
		if errors.Is(err, expreport.ErrNotInCells) {
			if _, lerr := os.Stat(filepath.Join(dir, "experiment.json")); lerr != nil {
				t.Errorf("%s: %v, and no ledger is committed: its verdict cannot be regenerated", dir, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		if got.Skip != "" {
			t.Errorf("%s: no verdict recomputed: %s", dir, got.Skip)
			continue
		}
		want := readCSV(t, filepath.Join(dir, expreport.PassFile))
		rows := append([][]string{got.Header}, got.Rows...)
		if len(rows) != len(want) {
			t.Errorf("%s: recomputed verdict has %d rows, the committed pass.csv %d", dir, len(rows), len(want))
			continue
		}
		for r := range want {
			g := csvRow(rows[r])
			if len(g) != len(want[r]) {
				t.Errorf("%s: pass.csv row %d: recomputed from cells.csv %q, committed %q", dir, r, g, want[r])
				continue
			}
			for c := range g {
				if g[c] != want[r][c] && !(strings.HasSuffix(want[0][c], "(by seed)") && sameDiff(g[c], want[r][c])) {
					t.Errorf("%s: pass.csv row %d column %q: recomputed from cells.csv %q, committed %q", dir, r, want[0][c], g[c], want[r][c])
				}
			}
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no verdict checked: no experiment holds cells.csv and pass.csv")
	}
}

// sameDiff says whether two paired differences ("m +/- s", 3 decimals) agree within one unit
// of their last place: the cell table rounds scores to 4 decimals, so a difference recomputed
// from it can land on the other side of a rounding boundary (paper's nomad: 0.00951 from the
// ledger, 0.0095 from the table). The wins and the result column are compared exactly.
func sameDiff(a, b string) bool {
	pa, pb := strings.Split(a, " +/- "), strings.Split(b, " +/- ")
	if len(pa) != len(pb) {
		return false
	}
	for i := range pa {
		x, errx := strconv.ParseFloat(pa[i], 64)
		y, erry := strconv.ParseFloat(pb[i], 64)
		if errx != nil || erry != nil || math.Abs(x-y) > 0.0010001 {
			return false
		}
	}
	return true
}

// pageTasks are the short task names the pages use.
var pageTasks = map[string]string{"leaf": "leaf-classification", "insults": "detecting-insults-in-social-commentary",
	"nomad": "nomad2018-predict-transparent-conductors", "pizza": "random-acts-of-pizza"}

var (
	pageScores = regexp.MustCompile(`(?m)^- ([\w-]+), ([\w-]+): (.*) \(seeds ([\d, ]+)\)$`)
	pagePass   = regexp.MustCompile(`(?m)^Pass rule \(pass\.csv\): (.*)$`)
)

// A page says only what its tables show: each per-seed score line ("- leaf, rl: 0.0098 B, ...
// (seeds 491, ...)") is the cell table's score of the pass rule's measure with its medal, and
// the verdict line is pass.csv's.
func TestPagesQuoteTheirTables(t *testing.T) {
	medals := map[string]string{"gold": " G", "silver": " S", "bronze": " B", "unknown": " U"}
	short := map[string]string{}
	for s, task := range pageTasks {
		short[task] = s
	}
	for _, dir := range experimentDirs(t) {
		page, err := os.ReadFile(filepath.Join(dir, "README.md"))
		if err != nil {
			continue // TestEverySpecParsesAndHasAPage names it
		}
		if _, err := os.Stat(filepath.Join(dir, expreport.CellsFile)); err != nil {
			continue
		}
		spec, err := expreport.SpecOf(dir)
		if err != nil {
			t.Errorf("%s: %v", dir, err)
			continue
		}
		cells := readCSV(t, filepath.Join(dir, expreport.CellsFile))
		col := func(name string) int { return slices.Index(cells[0], name) }
		score, medal := col("Best test"), col("Best medal")
		if spec.PassRule.Measure == experiment.MeasureAnswerTest {
			score, medal = col("Answer test"), col("Answer medal")
		}
		for _, m := range pageScores.FindAllStringSubmatch(string(page), -1) {
			task, ok := pageTasks[m[1]]
			if !ok {
				t.Errorf("%s: page line %q: unknown task %q: use one of leaf, insults, nomad, pizza", dir, m[0], m[1])
				continue
			}
			vals, seeds := strings.Split(m[3], ", "), strings.Split(m[4], ", ")
			if len(vals) != len(seeds) {
				t.Errorf("%s: page line %q: %d scores for %d seeds", dir, m[0], len(vals), len(seeds))
				continue
			}
			for i, seed := range seeds {
				want := ""
				for _, r := range cells[1:] {
					if r[col("Task")] == task && r[col("Arm")] == m[2] && r[col("Seed")] == seed {
						want = r[col("Status")]
						if want == experiment.StatusDone {
							want = r[score] + medals[r[medal]]
						}
					}
				}
				if vals[i] != want {
					t.Errorf("%s: page says %s %s seed %s: %q, cells.csv %q", dir, m[1], m[2], seed, vals[i], want)
				}
			}
		}
		pass := readCSV(t, filepath.Join(dir, expreport.PassFile))
		var parts []string
		for _, r := range pass[1 : len(pass)-1] {
			parts = append(parts, short[r[0]]+" "+r[len(r)-1])
		}
		want := strings.Join(parts, "; ") + "; " + pass[len(pass)-1][len(pass[0])-1] + " passed."
		if m := pagePass.FindStringSubmatch(string(page)); m != nil && m[1] != want {
			t.Errorf("%s: page's verdict %q, pass.csv's %q", dir, m[1], want)
		}
	}
}

// csvRow is a row as the report's CSV writes it ("±" as "+/-").
func csvRow(r []string) []string {
	out := make([]string, len(r))
	for i, c := range r {
		out[i] = strings.ReplaceAll(c, "±", "+/-")
	}
	return out
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
