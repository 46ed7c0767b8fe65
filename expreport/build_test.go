package expreport

import (
	"strings"
	"testing"

	"mlerl/experiment"
	"mlerl/runrecord"
)

// cell returns the table's cell in column col of the row whose leading cells are row.
func cell(t *testing.T, r *Report, table, col string, row ...string) string {
	t.Helper()
	tb := r.Table(table)
	if tb == nil {
		t.Fatalf("no table %s", table)
	}
	if tb.Skip != "" {
		t.Fatalf("table %s is skipped: %s", table, tb.Skip)
	}
	c := tb.Column(col)
	if c < 0 {
		t.Fatalf("table %s has no column %q: %q", table, col, tb.Header)
	}
	rw := tb.Row(row[0], row[1:]...)
	if rw == nil {
		t.Fatalf("table %s has no row %q", table, row)
	}
	return rw[c]
}

type cellCase struct {
	table, col string
	row        []string
	want       string
}

func checkCells(t *testing.T, r *Report, cases []cellCase) {
	t.Helper()
	for _, tc := range cases {
		if got := cell(t, r, tc.table, tc.col, tc.row...); got != tc.want {
			t.Errorf("%s[%q][%s] = %q, want %q", tc.table, tc.row, tc.col, got, tc.want)
		}
	}
}

func TestDirectionComesFromGradingThenTaskSpecThenPaper(t *testing.T) {
	spec := fixtureSpec()
	spec.Tasks = append(spec.Tasks, "my-own-task")
	led := fixtureLedger(spec)
	for i := range led.Cells { // pizza's reports claim lower is better: the data wins over the task spec
		if c := &led.Cells[i]; c.Task == pizza && c.Best != nil {
			c.Best.Report.IsLowerBetter = true
		}
	}
	ix, err := newIndex(led, nil)
	if err != nil {
		t.Fatal(err)
	}
	for task, lower := range map[string]bool{leaf: true, pizza: true, spooky: true, "my-own-task": false} {
		if ix.dir[task].LowerIsBetter != lower {
			t.Errorf("%s: lower is better = %v, want %v", task, ix.dir[task].LowerIsBetter, lower)
		}
	}
}

func TestTable1(t *testing.T) {
	r := buildFixture(t)
	checkCells(t, r, []cellCase{
		{"table1", "Better", []string{leaf}, "lower"},
		{"table1", "Better", []string{pizza}, "higher"},
		{"table1", "paper: Llama3.1-405B AIDE", []string{leaf}, "6.747 ± 5.398"},
		{"table1", "paper: Qwen2.5-3B RL", []string{spooky}, "0.404 ± 0.011"},
		{"table1", "ours: rl", []string{leaf}, "0.200 ± 0.058 (1 gold, 1 silver)"},
		{"table1-answer", "ours: rl", []string{leaf}, "0.180 ± 0.058 (1 bronze)"},
		{"table1", "ours: static", []string{leaf}, "0.500 ± 0.058"},
		{"table1", "ours: random", []string{leaf}, "1.500 ± 0.500; invalid on test (1)"},
		{"table1", "ours: static-matched", []string{leaf}, "0.400 ± 0.050; failed (1)"},
		{"table1", "ours: rl", []string{pizza}, "0.650 ± 0.029"},
		{"table1", "ours: no-instrumentation", []string{pizza}, "-"}, // does not run on pizza
		{"table1", "ours: rl", []string{spooky}, "no data"},
		{"table1", "ours: static-matched", []string{spooky}, "no data"},
		// rl (leaf 0.200, lower better; pizza 0.650, higher better) beats the four AIDE columns on
		// both tasks and the paper's RL (0.124, 0.663) on neither; spooky has no rl mean
		{"table1", "paper: Qwen2.5-3B AIDE", []string{"tasks ours (rl) beats each column on"}, "2 of 2"},
		{"table1", "paper: Llama3.1-405B AIDE", []string{"tasks ours (rl) beats each column on"}, "2 of 2"},
		{"table1", "paper: Qwen2.5-3B RL", []string{"tasks ours (rl) beats each column on"}, "0 of 2"},
		// the chosen program is 0.01 above the best one; it won no medal
		{"table1-chosen", "ours: rl", []string{leaf}, "0.210 ± 0.058"},
		{"table1-chosen", "ours: random", []string{leaf}, "1.510 ± 0.500; invalid on test (1)"},
		{"table1-chosen", "paper: Qwen2.5-3B RL", []string{"tasks ours (rl) beats each column on"}, "0 of 2"},
	})
	if n := len(r.Table("table1").Rows); n != 4 {
		t.Fatalf("table1 has %d rows, want 3 tasks and the count", n)
	}
	if len(r.NoData) != 1 || r.NoData[0] != spooky {
		t.Fatalf("tasks without data: %v", r.NoData)
	}
}

func TestTable1CountsRespectTheDirection(t *testing.T) {
	// leaf's rl at 0.85, lower is better: it beats AIDE's 0.884 and not GPT-4o's 0.846 (taken as
	// higher-is-better, both counts would flip)
	spec := fixtureSpec()
	spec.Tasks = []string{leaf}
	led := fixtureLedger(spec)
	for i := range led.Cells {
		if c := &led.Cells[i]; c.Arm == "rl" {
			c.Best.Test = f64(0.85)
		}
	}
	r, err := Build(led, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkCells(t, r, []cellCase{
		{"table1", "paper: Qwen2.5-3B AIDE", []string{"tasks ours (rl) beats each column on"}, "1 of 1"},       // 0.85 < 0.884
		{"table1", "paper: GPT-4o-100h AIDE", []string{"tasks ours (rl) beats each column on"}, "0 of 1"},      // 0.85 > 0.846
		{"table1", "paper: Claude3.5-Sonnet AIDE", []string{"tasks ours (rl) beats each column on"}, "0 of 1"}, // 0.85 > 0.436
		{"table1", "ours: rl", []string{leaf}, "0.850 ± 0.000 (1 gold, 1 silver)"},
	})
}

func TestTable4(t *testing.T) {
	r := buildFixture(t)
	if tb := r.Table("table4"); tb.Skip == "" || !strings.Contains(tb.Skip, "scratch-only") {
		t.Fatalf("table4 without a scratch-only arm: skip %q", tb.Skip)
	}
	r = buildFixture(t, experiment.BuiltinArms["scratch-only"])
	checkCells(t, r, []cellCase{
		{"table4", "paper: Qwen2.5-3B RL from scratch only", []string{leaf}, "0.469 ± 0.244"},
		{"table4", "paper: Qwen2.5-3B RL with improve-previous", []string{leaf}, "0.124 ± 0.000"},
		{"table4", "ours: scratch-only", []string{leaf}, "0.233 ± 0.033"},
		{"table4", "ours: rl (improve-previous)", []string{leaf}, "0.200 ± 0.058 (1 gold, 1 silver)"},
		{"table4", "rl - scratch-only (by seed)", []string{leaf}, "-0.033 ± 0.067"}, // -0.1, -0.1, +0.1
		{"table4", "rl better in", []string{leaf}, "2 of 3"},
		{"table4", "rl - scratch-only (by seed)", []string{pizza}, "0.017 ± 0.060"}, // 0.1, -0.1, 0.05
		{"table4", "rl better in", []string{pizza}, "2 of 3"},
		{"table4", "ours: scratch-only", []string{spooky}, "no data"},
		{"table4", "rl better in", []string{spooky}, "-"},
	})
	// scratch-only is an ablation too
	checkCells(t, r, []cellCase{{"ablations", "rl better in", []string{leaf, "scratch-only", "scratch-only"}, "2 of 3"}})
}

func TestAblations(t *testing.T) {
	r := buildFixture(t)
	checkCells(t, r, []cellCase{
		{"ablations", "best test", []string{leaf, "no-duration-weight", "no-duration-weight"}, "0.250 ± 0.058"},
		{"ablations", "rl - ablation, best test (by seed)", []string{leaf, "no-duration-weight", "no-duration-weight"}, "-0.050 ± 0.000"},
		{"ablations", "rl better in", []string{leaf, "no-duration-weight", "no-duration-weight"}, "3 of 3"},
		{"ablations", "mean execution s", []string{leaf, "no-duration-weight", "no-duration-weight"}, "4.00 ± 0.00"},
		{"ablations", "mean execution s", []string{leaf, "no-duration-weight", "rl"}, "2.00 ± 0.00"},
		// pizza is higher-is-better: 0.7 > 0.6, 0.6 = 0.6, 0.65 > 0.6
		{"ablations", "rl - ablation, best test (by seed)", []string{pizza, "no-duration-weight", "no-duration-weight"}, "0.050 ± 0.029"},
		{"ablations", "rl better in", []string{pizza, "no-duration-weight", "no-duration-weight"}, "2 of 3"},
		// leaf: rl 0.1, 0.2, 0.3 against 0.3, 0.1, 0.5
		{"ablations", "rl - ablation, best test (by seed)", []string{leaf, "no-instrumentation", "no-instrumentation"}, "-0.100 ± 0.100"},
		{"ablations", "rl better in", []string{leaf, "no-instrumentation", "no-instrumentation"}, "2 of 3"},
		// the last iteration's mean score: 0.4 + 0.1 × seed index, 0.2 lower for the ablation
		{"ablations", "final mean score (training)", []string{leaf, "no-instrumentation", "rl"}, "0.500 ± 0.058"},
		{"ablations", "final mean score (training)", []string{leaf, "no-instrumentation", "no-instrumentation"}, "0.300 ± 0.058"},
		// rl's seed 1 repeats iteration 2 with a valid rate of 0: only the last line counts
		{"ablations", "valid rate", []string{leaf, "no-instrumentation", "rl"}, "0.750 ± 0.000"},
		{"ablations", "valid rate", []string{leaf, "no-instrumentation", "no-instrumentation"}, "0.500 ± 0.000"},
		{"ablations", "rl better in", []string{leaf, "no-instrumentation", "rl"}, ""},
	})
	if tb := r.Table("ablations"); tb.Row(pizza, "no-instrumentation") != nil || tb.Row(spooky) != nil {
		t.Fatal("ablation rows for tasks the ablation does not run on")
	}
	spec := fixtureSpec()
	spec.Arms = spec.Arms[:4]
	led := fixtureLedger(spec)
	r, err := Build(led, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tb := r.Table("ablations"); tb.Skip == "" {
		t.Fatal("ablations table without ablation arms is not skipped")
	}
}

func TestBudget(t *testing.T) {
	r := buildFixture(t)
	checkCells(t, r, []cellCase{
		{"budget", "Cells", []string{leaf, "rl"}, "3 done"},
		{"budget", "Programs", []string{leaf, "rl"}, "32.0 ± 0.0"},
		{"budget", "Sandbox s", []string{leaf, "rl"}, "110.0 ± 5.8"},
		{"budget", "Wall s", []string{leaf, "rl"}, "201.0 ± 0.6"},
		{"budget", "Sandbox s / rl's (by seed)", []string{leaf, "rl"}, "-"},
		{"budget", "Programs", []string{leaf, "static"}, "32.0 ± 0.0"},
		{"budget", "Cells", []string{leaf, "static-matched"}, "2 done, 1 failed"},
		{"budget", "Programs", []string{leaf, "static-matched"}, "42.0 ± 2.0"},
		{"budget", "Sandbox s / rl's (by seed)", []string{leaf, "static-matched"}, "1.02 ± 0.02"}, // 100/100, 114/110
		{"budget", "Matched budget s", []string{leaf, "static-matched"}, "105.0 ± 5.0"},
		{"budget", "Matched budget s", []string{leaf, "static"}, "-"},
		{"budget", "Cells", []string{spooky, "rl"}, "3 no-data"},
		{"budget", "Programs", []string{spooky, "rl"}, "-"},
	})
	if r.Table("budget").Row(pizza, "no-instrumentation") != nil {
		t.Fatal("a budget row for an arm that does not run on the task")
	}
}

// A medal in the pass rule is an absolute goal: alone (no arm to beat) or on top of the wins.
// The fixture's leaf rl best programs are gold, silver and none; its answers bronze on seed 1.
func TestPassRuleMedal(t *testing.T) {
	for _, tc := range []struct {
		name              string
		versus            []string
		measure, medal    string
		minSeeds          int
		leafMedals        string
		leafRes, pizzaRes string
	}{
		{"answer bronze, 1 of 3, alone", nil, experiment.MeasureAnswerTest, "bronze", 1, "1 of 3", "PASS", "FAIL"},
		{"answer bronze, 2 of 3, alone", nil, experiment.MeasureAnswerTest, "bronze", 2, "1 of 3", "FAIL", "FAIL"},
		{"best silver, 2 of 3, and the wins", []string{"static"}, experiment.MeasureBestTest, "silver", 2, "2 of 3", "PASS", "FAIL"},
		{"best gold, 2 of 3, and the wins", []string{"static"}, experiment.MeasureBestTest, "gold", 2, "1 of 3", "FAIL", "FAIL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fixtureSpec()
			spec.PassRule = experiment.PassRule{Arm: "rl", Versus: tc.versus, Measure: tc.measure, MinSeeds: tc.minSeeds, Medal: tc.medal}
			led := fixtureLedger(spec)
			r, err := Build(led, fixtureMetrics(led))
			if err != nil {
				t.Fatal(err)
			}
			col := tc.medal + " or better"
			checkCells(t, r, []cellCase{
				{"pass", col, []string{leaf}, tc.leafMedals},
				{"pass", col, []string{pizza}, "0 of 3"},
				{"pass", col, []string{spooky}, "-"},
				{"pass", "result", []string{leaf}, tc.leafRes},
				{"pass", "result", []string{pizza}, tc.pizzaRes},
				{"pass", "result", []string{spooky}, "no data"},
			})
			if !strings.Contains(r.Table("pass").Caption, tc.medal+" or better in at least") {
				t.Errorf("the caption does not state the medal: %s", r.Table("pass").Caption)
			}
		})
	}
}

// TestPassRulePaper: a rule naming the paper's system counts the seeds at or better than its
// Table 1 mean, in the task's direction (leaf's RL 0.124 lower; pizza's 0.663 higher).
func TestPassRulePaper(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		versus                []string
		measure, medal        string
		minSeeds              int
		leafCount, pizzaCount string
		leafRes, pizzaRes     string
	}{
		// best: leaf 0.1, 0.2, 0.3; pizza 0.70, 0.60, 0.65
		{"best, 1 of 3", nil, experiment.MeasureBestTest, "", 1, "1 of 3 (paper 0.124)", "1 of 3 (paper 0.663)", "PASS", "PASS"},
		{"best, 2 of 3", nil, experiment.MeasureBestTest, "", 2, "1 of 3 (paper 0.124)", "1 of 3 (paper 0.663)", "FAIL", "FAIL"},
		// the answer: leaf 0.08, 0.18, 0.28 with one bronze; pizza 0.68, 0.58, 0.63
		{"answer and a medal", nil, experiment.MeasureAnswerTest, "bronze", 1, "1 of 3 (paper 0.124)", "1 of 3 (paper 0.663)", "PASS", "FAIL"},
		{"best and the wins", []string{"static"}, experiment.MeasureBestTest, "", 1, "1 of 3 (paper 0.124)", "1 of 3 (paper 0.663)", "PASS", "PASS"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fixtureSpec()
			spec.PassRule = experiment.PassRule{Arm: "rl", Versus: tc.versus, Measure: tc.measure, MinSeeds: tc.minSeeds, Medal: tc.medal, Paper: "Qwen2.5-3B RL"}
			led := fixtureLedger(spec)
			r, err := Build(led, fixtureMetrics(led))
			if err != nil {
				t.Fatal(err)
			}
			col := "at or better than the paper's Qwen2.5-3B RL"
			checkCells(t, r, []cellCase{
				{"pass", col, []string{leaf}, tc.leafCount},
				{"pass", col, []string{pizza}, tc.pizzaCount},
				{"pass", col, []string{spooky}, "-"},
				{"pass", "result", []string{leaf}, tc.leafRes},
				{"pass", "result", []string{pizza}, tc.pizzaRes},
			})
			if !strings.Contains(r.Table("pass").Caption, "at or better than the paper's Qwen2.5-3B RL (Table 1) in at least") {
				t.Errorf("the caption does not state the paper's goal: %s", r.Table("pass").Caption)
			}
		})
	}
}

func TestPassRule(t *testing.T) {
	for _, tc := range []struct {
		name              string
		measure           string
		minSeeds          int
		mutate            func(*experiment.CellRecord)
		leafRes, pizzaRes string
		leafWinsVsRandom  string
		summary           string
	}{
		{"best test, 2 of 3", experiment.MeasureBestTest, 2, nil, "PASS", "FAIL", "3 of 3", "1 of 2 with data"},
		{"best test, 1 of 3", experiment.MeasureBestTest, 1, nil, "PASS", "PASS", "3 of 3", "2 of 2 with data"},
		{"chosen test, 3 of 3", experiment.MeasureChosenTest, 3, nil, "PASS", "FAIL", "3 of 3", "1 of 2 with data"},
		{"answer test, 2 of 3", experiment.MeasureAnswerTest, 2, nil, "PASS", "FAIL", "3 of 3", "1 of 2 with data"},
		{"no answer on seed 1 loses it", experiment.MeasureAnswerTest, 3, func(c *experiment.CellRecord) {
			if c.Task == leaf && c.Arm == "rl" && c.Seed == 1 {
				c.Answer = nil
			}
		}, "FAIL", "FAIL", "2 of 3", "0 of 2 with data"},
		{"rl invalid on seed 1 loses it", experiment.MeasureBestTest, 3, func(c *experiment.CellRecord) {
			if c.Task == leaf && c.Arm == "rl" && c.Seed == 1 {
				c.Best.Test = nil
			}
		}, "FAIL", "FAIL", "2 of 3", "0 of 2 with data"},
		{"rl failed on seed 1 loses it", experiment.MeasureBestTest, 2, func(c *experiment.CellRecord) {
			if c.Task == leaf && c.Arm == "rl" && c.Seed == 1 {
				c.Status = experiment.StatusFailed
			}
		}, "PASS", "FAIL", "2 of 3", "1 of 2 with data"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := fixtureSpec()
			spec.PassRule.Measure, spec.PassRule.MinSeeds = tc.measure, tc.minSeeds
			led := fixtureLedger(spec)
			for i := range led.Cells {
				if tc.mutate != nil {
					tc.mutate(&led.Cells[i])
				}
			}
			r, err := Build(led, fixtureMetrics(led))
			if err != nil {
				t.Fatal(err)
			}
			checkCells(t, r, []cellCase{
				{"pass", "result", []string{leaf}, tc.leafRes},
				{"pass", "result", []string{pizza}, tc.pizzaRes},
				{"pass", "result", []string{spooky}, "no data"},
				{"pass", "wins vs random", []string{leaf}, tc.leafWinsVsRandom},
				{"pass", "result", []string{"tasks passed"}, tc.summary},
			})
		})
	}
	r := buildFixture(t)
	checkCells(t, r, []cellCase{
		{"pass", "wins vs static", []string{leaf}, "3 of 3"},
		{"pass", "rl - static (by seed)", []string{leaf}, "-0.300 ± 0.058"},
		{"pass", "rl - random (by seed)", []string{leaf}, "-1.350 ± 0.450"}, // random's seed 3 is invalid: 2 pairs
		{"pass", "wins vs static", []string{pizza}, "1 of 3"},
		{"pass", "rl - static (by seed)", []string{pizza}, "0.000 ± 0.050"},
		{"pass", "wins vs random", []string{spooky}, "-"},
	})
}

func TestCellsTable(t *testing.T) {
	r := buildFixture(t)
	tb := r.Table("cells")
	if len(tb.Rows) != 45 { // leaf 6 arms, pizza 5, spooky 4; 3 seeds
		t.Fatalf("%d cell rows, want 45", len(tb.Rows))
	}
	checkCells(t, r, []cellCase{
		{"cells", "Status", []string{leaf, "static-matched", "2"}, "failed"},
		{"cells", "Reason", []string{leaf, "static-matched", "2"}, "workflow failed: sandbox | exit 1"},
		{"cells", "Best test", []string{leaf, "static-matched", "2"}, "-"},
		{"cells", "Best test", []string{leaf, "random", "3"}, "invalid"},
		{"cells", "Best test", []string{leaf, "rl", "1"}, "0.1000"},
		{"cells", "Chosen test", []string{leaf, "rl", "1"}, "0.1100"},
		{"cells", "Answer test", []string{leaf, "rl", "1"}, "0.0800"},
		{"cells", "Answer medal", []string{leaf, "rl", "1"}, "bronze"},
		{"cells", "Answer medal", []string{leaf, "rl", "2"}, "none"},
		{"cells", "Answer test", []string{leaf, "static-matched", "2"}, "-"},
		{"cells", "Untuned answer test", []string{leaf, "rl", "2"}, "0.1900"},
		{"cells", "Untuned answer test", []string{leaf, "rl", "1"}, "-"},
		{"cells", "Best medal", []string{leaf, "rl", "1"}, "gold"},
		{"cells", "Best medal", []string{leaf, "rl", "3"}, "none"},
		{"cells", "Sandbox s", []string{leaf, "rl", "2"}, "120.0"},
		{"cells", "Programs", []string{pizza, "static-matched", "3"}, "44"},
		{"cells", "Status", []string{spooky, "random", "2"}, "no-data"},
	})
	md, err := tb.Markdown()
	if err != nil || !strings.Contains(md, `sandbox \| exit 1`) {
		t.Fatalf("the reason's pipe is not escaped in Markdown: %v\n%s", err, md)
	}
}

func TestCellsMissingFromTheLedgerAreListed(t *testing.T) {
	spec := fixtureSpec()
	led := fixtureLedger(spec)
	led.Cells = led.Cells[:len(led.Cells)-2]
	r, err := Build(led, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(r.Table("cells").Rows); n != 45 {
		t.Fatalf("%d cell rows, want 45", n)
	}
	if r.Status[experiment.StatusPending] != 2 || len(r.Notes) != 1 {
		t.Fatalf("status %v notes %v", r.Status, r.Notes)
	}
}

func TestFigureSeries(t *testing.T) {
	r := buildFixture(t)
	f7 := r.Figure("fig7-programs")
	if f7.Skip != "" || len(f7.Panels) != 2 || f7.Panels[0].Title != leaf || f7.Panels[1].Title != pizza {
		t.Fatalf("fig7 panels: skip %q, %d", f7.Skip, len(f7.Panels))
	}
	if !strings.Contains(f7.Panels[0].YLabel, "lower is better") || !strings.Contains(f7.Panels[1].YLabel, "higher is better") {
		t.Fatalf("y labels %q, %q", f7.Panels[0].YLabel, f7.Panels[1].YLabel)
	}
	// leaf's rl seeds have points at 8/10/12 (0.9), 20/22/24 (invalid on test) and 32 (0.1, 0.2, 0.3)
	want := "rl: 8=0.9[0.9,0.9] 10=0.9[0.9,0.9] 12=0.9[0.9,0.9] 20=0.9[0.9,0.9] 22=0.9[0.9,0.9] 32=0.2[0.1,0.3]"
	if got := f7.Panels[0].Series[0].String(); got != want {
		t.Fatalf("fig7 leaf rl:\n got %s\nwant %s", got, want)
	}
	if n := f7.Panels[0].Series[0].N; n[0] != 1 || n[2] != 3 || n[4] != 1 {
		t.Fatalf("seeds per point %v", n)
	}
	if len(f7.Panels[0].Series) != 6 || len(f7.Panels[1].Series) != 5 {
		t.Fatalf("fig7 series per panel: %d, %d", len(f7.Panels[0].Series), len(f7.Panels[1].Series))
	}
	f8 := r.Figure("fig8-duration")
	if f8.Skip != "" || len(f8.Panels) != 2 || len(f8.Panels[1].Series) != 2 || f8.Panels[1].Series[1].Mean[0] != 4 {
		t.Fatalf("fig8: %+v", f8)
	}
	f9 := r.Figure("fig9-instrumentation")
	if f9.Skip != "" || len(f9.Panels) != 2 || f9.Cols != 2 || f9.Panels[1].Series[0].Mean[3] != 0.75 {
		t.Fatalf("fig9: %+v", f9)
	}
	f10 := r.Figure("fig10-training")
	if f10.Skip != "" || len(f10.Panels) != 2 {
		t.Fatalf("fig10: %+v", f10)
	}
	// pizza's static seed 1 wrote old lines without mean_score: two seeds per iteration
	found := false
	for _, s := range f10.Panels[1].Series {
		if s.Label != "static" {
			continue
		}
		found = true
		if s.N[0] != 2 || s.String() != "static: 1=0.05[0,0.1] 2=0.15[0.1,0.2] 3=0.25[0.2,0.3] 4=0.35[0.3,0.4]" {
			t.Fatalf("fig10 pizza static: %s %v", s, s.N)
		}
	}
	if !found {
		t.Fatal("fig10 has no static series on pizza")
	}
}

func TestFiguresAreSkippedWithAReason(t *testing.T) {
	spec := fixtureSpec()
	spec.Arms = spec.Arms[:2] // rl and static
	led := fixtureLedger(spec)
	for i := range led.Cells {
		led.Cells[i].Curve = nil
	}
	r, err := Build(led, map[string][]runrecord.IterationMetrics{})
	if err != nil {
		t.Fatal(err)
	}
	for name, why := range map[string]string{
		"fig7-programs": "curve", "fig7-wall": "curve", "fig10-training": "mean_score",
		"fig8-duration": "no-duration-weight", "fig9-instrumentation": "no-instrumentation",
	} {
		if f := r.Figure(name); !strings.Contains(f.Skip, why) {
			t.Errorf("%s: skip %q, want a reason naming %q", name, f.Skip, why)
		}
	}
	md, err := r.Markdown()
	if err != nil || !strings.Contains(md, "Skipped: the spec does not have both the rl and no-duration-weight arms.") {
		t.Fatalf("report.md does not say why fig8 is skipped: %v", err)
	}
}

// A cell that found no valid program is told apart from one whose program failed on test.
func TestArmCellSaysWhyAScoreIsMissing(t *testing.T) {
	v := 0.5
	done := func(g *experiment.Graded) experiment.CellRecord {
		return experiment.CellRecord{Status: experiment.StatusDone, Best: g}
	}
	for _, c := range []struct {
		name string
		recs []experiment.CellRecord
		want string
	}{
		{"no cells", nil, "-"},
		{"no program", []experiment.CellRecord{done(nil), done(&experiment.Graded{Test: &v})}, "0.500; no valid program (1)"},
		{"invalid on test", []experiment.CellRecord{done(&experiment.Graded{}), done(nil)}, "no valid program (1); invalid on test (1)"},
		{"no data", []experiment.CellRecord{{Status: experiment.StatusNoData}}, "no data"},
	} {
		if got := armCell(c.recs, bestGraded); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
