package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writePage writes a run page's ledger into a temporary folder.
func writePage(t *testing.T, plan, results string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"plan.csv": plan, "results.csv": results} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const header = "task,seed,commit,wall_s,load_mean,iterations,valid_first,valid_last,reward_first,reward_last,answer_cv,answer_test,medal,closing_line\n"

func TestTableCountsEachRuleOverThePlansSeeds(t *testing.T) {
	page := writePage(t, "task,seed\nleaf-classification,1\nleaf-classification,2\nleaf-classification,3\ndetecting-insults-in-social-commentary,1\naerial-cactus-identification,1\n",
		header+
			"leaf-classification,1,c,2400,2,10,0.500,0.750,-3.0,-2.0,0.02,0.01000,bronze medal,x\n"+
			// Worse than the paper's RL (0.124, lower is better), no medal, the reward falling.
			"leaf-classification,2,c,1800,2,10,0.375,0.500,-1.0,-2.0,0.2,0.20000,no medal,x\n"+
			"detecting-insults-in-social-commentary,1,c,600,2,10,1.000,1.000,-1.0,-1.0,,,invalid or none,x\n"+
			"aerial-cactus-identification,1,c,60,2,2,0.875,0.625,-2.0,1.5,0.99,0.99000,medals unknown (the task spec has no thresholds),x\n")
	got, err := Table(page)
	if err != nil {
		t.Fatal(err)
	}
	rows := strings.Split(strings.TrimSpace(got), "\n")
	if len(rows) != 5 {
		t.Fatalf("want a header, its rule and 3 task rows, got:\n%s", got)
	}
	cells := func(row string) []string {
		var out []string
		for _, c := range strings.Split(strings.Trim(row, "|"), "|") {
			out = append(out, strings.TrimSpace(c))
		}
		return out
	}
	for _, tc := range []struct {
		row  int
		want []string
	}{
		{2, []string{"leaf-classification", "1, 2, 3",
			"0.01000 B, 0.20000, pending (a medal 1 of 3; the paper's RL or better 1 of 3)", "0.124", "0.01526 / 0.00791 / 0",
			"50%, 38%, pending (≥ 50%: 1 of 3; over 50%: 0 of 3)", "75%, 50%, pending", "-3.00 → -2.00, -1.00 → -2.00, pending (rises: 1 of 3)", "40.0, 30.0, pending"}},
		// An equal mean reward does not rise; an invalid answer meets neither answer rule.
		{3, []string{"detecting-insults-in-social-commentary", "1", "no valid answer (a medal 0 of 1; the paper's RL or better 0 of 1)",
			"0.895", "0.79111 / 0.82307 / 0.83321", "100% (≥ 50%: 1 of 1; over 50%: 1 of 1)", "100%", "-1.00 → -1.00 (rises: 0 of 1)", "10.0"}},
		// No thresholds and no paper number: the answer stands alone.
		{4, []string{"aerial-cactus-identification", "1", "0.99000", "-", "not known", "88% (≥ 50%: 1 of 1; over 50%: 1 of 1)", "62%", "-2.00 → 1.50 (rises: 1 of 1)", "1.0"}},
	} {
		got := cells(rows[tc.row])
		if strings.Join(got, " | ") != strings.Join(tc.want, " | ") {
			t.Errorf("row %d:\n got %q\nwant %q", tc.row, got, tc.want)
		}
	}
}

func TestTableNamesWhatIsWrong(t *testing.T) {
	for _, tc := range []struct{ name, plan, results, want string }{
		{"no results", "task,seed\n", "", "results.csv"},
		{"missing column", "task,seed\n", "task,seed\n", "no wall_s column"},
		{"not a number", "task,seed\nleaf-classification,1\n",
			header + "leaf-classification,1,c,2400,2,10,half,0.750,-3.0,-2.0,0.02,0.01,bronze medal,x\n", `valid_first "half" is not a number`},
		{"unknown task", "task,seed\nno-such-task,1\n", header, "no-such-task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := writePage(t, tc.plan, tc.results)
			if tc.results == "" {
				os.Remove(filepath.Join(page, "results.csv"))
			}
			if _, err := Table(page); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
}

// Every quote of a run page's table in the repository's Markdown is the table its ledger gives
// today: a results.csv row added without its quotes rewritten fails here.
func TestQuotesMatchTheirLedgers(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	var files []string
	for _, dir := range []string{"benchmarks", "docs", "lab"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
				files = append(files, p)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	quotes := 0
	for _, f := range append(files, filepath.Join(root, "README.md")) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		quotes += len(quote.FindAllString(string(b), -1))
		_, changed, err := Requote(string(b), root)
		if err != nil {
			t.Errorf("%s: %v", f, err)
		}
		for _, page := range changed {
			rel, _ := filepath.Rel(root, f)
			t.Errorf("%s quotes %s's table, and its ledger now says otherwise: run `go run ./lab/tools/runtable -write %s` and read the diff", rel, page, rel)
		}
	}
	if quotes == 0 {
		t.Fatal("no `<!-- runtable PAGE -->` quote found: the freshseeds table in benchmarks/RESULTS.md should be one")
	}
}
