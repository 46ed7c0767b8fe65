// Package expreport turns an experiment's ledger (experiment.json) and its runs' metrics.jsonl
// into a report: Table 1 and Table 4 beside the paper's numbers, the ablations, the budgets
// used, the spec's pass rule, every cell, and Figures 7 to 10, as Markdown, CSV, PNG and one
// self-contained HTML page.
package expreport

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"mlerl/experiment"
	"mlerl/report"
	"mlerl/runrecord"
	"mlerl/tasks"
)

// Protocol is the paragraph every report carries: how the numbers were obtained.
const Protocol = "Every arm's best training program (the best by validation score over the whole run, " +
	"not only the final policy's chosen best-of-K program) is re-run on the full public train and graded " +
	"on the private test answers; the final policy's chosen program is graded the same way and reported " +
	"separately (Table 1, chosen). Budgets are matched in programs (every arm gets the same iterations × " +
	"batch) and in sandbox-seconds (static-matched trains until it has used rl's sandbox-seconds on the " +
	"same task and seed); the budget table shows both. The tasks, arms, seeds, budget and the pass rule " +
	"are fixed in the spec file, committed before the runs. Results are mean ± standard error over seeds " +
	"(standard deviation with n-1, divided by sqrt(n); a single seed shows no ±), and comparisons between " +
	"arms are paired differences by seed. Tasks without data are listed, not dropped."

// Report is an experiment's report, ready to render.
type Report struct {
	Spec             experiment.Spec
	Sandbox, Machine string
	TaskSettings     map[string]string // by task: its spec's measured settings, under the experiment's
	Tasks            []string          // the spec's tasks, then any only the ledger names
	Arms             []string          // likewise for arms
	Seeds            []uint64
	NoData           []string       // tasks whose every cell is no-data
	Status           map[string]int // cells by status
	Tables           []Table
	Figures          []Figure
	// Notes are remarks on the input (unreadable metrics lines, cells missing from the ledger).
	Notes []string
}

// Table is one table of the report: a header and rows of cell text.
type Table struct {
	Name    string // file name stem and HTML id suffix: table1, pass, ...
	Title   string
	Caption string
	Header  []string
	Rows    [][]string
	// Skip, when set, says why the table is not in the report.
	Skip string
}

// Column returns the index of the header column named h, or -1.
func (t Table) Column(h string) int { return slices.Index(t.Header, h) }

// Row returns the first row whose first cell is first (and whose other leading cells equal
// more, in order), or nil.
func (t Table) Row(first string, more ...string) []string {
	for _, r := range t.Rows {
		if r[0] != first || len(r) < 1+len(more) {
			continue
		}
		if slices.Equal(r[1:1+len(more)], more) {
			return r
		}
	}
	return nil
}

// Table returns the table named name, or nil.
func (r *Report) Table(name string) *Table {
	for i := range r.Tables {
		if r.Tables[i].Name == name {
			return &r.Tables[i]
		}
	}
	return nil
}

// Figure returns the figure named name, or nil.
func (r *Report) Figure(name string) *Figure {
	for i := range r.Figures {
		if r.Figures[i].Name == name {
			return &r.Figures[i]
		}
	}
	return nil
}

// table1Systems and table4Systems are the paper's columns, in the paper's order.
var (
	table1Systems = []string{"Qwen2.5-3B AIDE", "Llama3.1-405B AIDE", "Claude3.5-Sonnet AIDE", "GPT-4o-100h AIDE", "Qwen2.5-3B RL"}
	table4Systems = []string{"Qwen2.5-3B RL from scratch only", "Qwen2.5-3B RL with improve-previous"}
	ablationArms  = []string{"no-duration-weight", "no-instrumentation", "scratch-only"}
)

type key struct{ task, arm string }

// index is the ledger arranged for the tables and figures.
type index struct {
	led     experiment.Ledger
	tasks   []string
	arms    []string
	seeds   []uint64
	cells   map[key][]experiment.CellRecord // in seed order
	metrics map[string][]runrecord.IterationMetrics
	dir     map[string]Direction
	base    map[string][]report.Baseline
	notes   []string
}

// Build makes the report from a ledger and the runs' metrics (keyed by the cell's Run; a line
// repeated by a resume is kept last). It reads nothing and renders nothing: Write does.
func Build(led experiment.Ledger, metrics map[string][]runrecord.IterationMetrics) (*Report, error) {
	ix, err := newIndex(led, metrics)
	if err != nil {
		return nil, err
	}
	r := &Report{Spec: led.Spec, Sandbox: led.Sandbox, Machine: led.Machine, TaskSettings: led.TaskSettings, Tasks: ix.tasks, Arms: ix.arms,
		Seeds: ix.seeds, Status: map[string]int{}}
	for _, t := range ix.tasks {
		if !ix.hasData(t) {
			r.NoData = append(r.NoData, t)
		}
	}
	for _, c := range ix.all() {
		r.Status[c.Status]++
	}
	r.Tables = []Table{
		ix.table1("table1", "Table 1: best training program, graded on test", bestGraded),
		ix.table1("table1-chosen", "Table 1 (chosen): the final policy's best-of-K program, graded on test", chosenGraded),
		ix.table1("table1-answer", "Table 1 (answer): the run's final answer, the cross-validated ensemble of its best programs, graded on test", answerGraded),
		ix.table4(),
		ix.ablations(),
		ix.budget(),
		ix.pass(),
		ix.cellsTable(),
	}
	r.Figures = []Figure{
		ix.fig7("fig7-programs", "programs"),
		ix.fig7("fig7-wall", "wall"),
		ix.fig8(),
		ix.fig9(),
		ix.fig10(),
	}
	r.Notes = ix.notes
	return r, nil
}

func newIndex(led experiment.Ledger, metrics map[string][]runrecord.IterationMetrics) (*index, error) {
	ix := &index{led: led, tasks: slices.Clone(led.Spec.Tasks), seeds: slices.Clone(led.Spec.Seeds),
		cells: map[key][]experiment.CellRecord{}, metrics: map[string][]runrecord.IterationMetrics{},
		dir: map[string]Direction{}, base: map[string][]report.Baseline{}}
	for _, a := range led.Spec.Arms {
		ix.arms = append(ix.arms, a.Name)
	}
	recs := slices.Clone(led.Cells)
	seen := map[string]bool{}
	for _, c := range recs {
		seen[c.Run] = true
	}
	missing := 0
	for _, c := range led.Spec.Cells() { // a cell the ledger lacks is listed as pending, not dropped
		if !seen[c.Run] {
			recs = append(recs, experiment.CellRecord{Cell: c, Status: experiment.StatusPending, Reason: "not in the ledger"})
			missing++
		}
	}
	if missing > 0 {
		ix.notes = append(ix.notes, fmt.Sprintf("%d of the spec's cells are not in the ledger: listed as pending.", missing))
	}
	for _, c := range recs {
		if !slices.Contains(ix.tasks, c.Task) {
			ix.tasks = append(ix.tasks, c.Task)
		}
		if !slices.Contains(ix.arms, c.Arm) {
			ix.arms = append(ix.arms, c.Arm)
		}
		if !slices.Contains(ix.seeds, c.Seed) {
			ix.seeds = append(ix.seeds, c.Seed)
		}
		k := key{c.Task, c.Arm}
		ix.cells[k] = append(ix.cells[k], c)
	}
	for k, cs := range ix.cells {
		sort.SliceStable(cs, func(i, j int) bool {
			return slices.Index(ix.seeds, cs[i].Seed) < slices.Index(ix.seeds, cs[j].Seed)
		})
		ix.cells[k] = cs
	}
	for run, ms := range metrics {
		ix.metrics[run] = lastPerIteration(ms)
	}
	reg := tasks.Builtin()
	for _, t := range ix.tasks {
		bs, err := report.Baselines(t)
		if err != nil {
			return nil, err
		}
		ix.base[t] = bs
		ix.dir[t] = ix.direction(t, reg)
	}
	return ix, nil
}

// direction takes the task's direction from a grading report of its cells, else from the task
// spec, else from the paper's table, else higher is better.
func (ix *index) direction(task string, reg *tasks.Registry) Direction {
	for _, a := range ix.arms {
		for _, c := range ix.cells[key{task, a}] {
			for _, g := range []*experiment.Graded{c.Best, c.Chosen, c.Answer} {
				if g != nil && g.Report.CompetitionID != "" {
					return Direction{LowerIsBetter: g.Report.IsLowerBetter}
				}
			}
		}
	}
	if s, err := reg.Get(task); err == nil {
		return Direction{LowerIsBetter: s.LowerIsBetter()}
	}
	for _, b := range ix.base[task] {
		return Direction{LowerIsBetter: b.Better == "min"}
	}
	return Direction{}
}

// lastPerIteration keeps the last line of each iteration, in iteration order.
func lastPerIteration(ms []runrecord.IterationMetrics) []runrecord.IterationMetrics {
	last := map[int]runrecord.IterationMetrics{}
	for _, m := range ms {
		last[m.Iteration] = m
	}
	out := make([]runrecord.IterationMetrics, 0, len(last))
	for _, m := range last {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Iteration < out[j].Iteration })
	return out
}

// all lists every cell record: by task, arm and seed.
func (ix *index) all() []experiment.CellRecord {
	var out []experiment.CellRecord
	for _, t := range ix.tasks {
		for _, a := range ix.arms {
			out = append(out, ix.cells[key{t, a}]...)
		}
	}
	return out
}

func (ix *index) ran(task, arm string) bool { return len(ix.cells[key{task, arm}]) > 0 }

// hasData says whether any of the task's cells is other than no-data.
func (ix *index) hasData(task string) bool {
	for _, a := range ix.arms {
		for _, c := range ix.cells[key{task, a}] {
			if c.Status != experiment.StatusNoData {
				return true
			}
		}
	}
	return false
}

func (ix *index) has(arm string) bool { return slices.Contains(ix.arms, arm) }

// ours is the arm compared against the paper's columns: rl, else the pass rule's arm.
func (ix *index) ours() string {
	if ix.has("rl") || ix.led.Spec.PassRule.Arm == "" {
		return "rl"
	}
	return ix.led.Spec.PassRule.Arm
}

func bestGraded(c experiment.CellRecord) *experiment.Graded   { return c.Best }
func chosenGraded(c experiment.CellRecord) *experiment.Graded { return c.Chosen }
func answerGraded(c experiment.CellRecord) *experiment.Graded { return c.Answer }

// scores maps seed to the test score of g's program, for done cells with a valid score.
func (ix *index) scores(task, arm string, g func(experiment.CellRecord) *experiment.Graded) map[uint64]*float64 {
	out := map[uint64]*float64{}
	for _, c := range ix.cells[key{task, arm}] {
		if c.Status == experiment.StatusDone && g(c) != nil && g(c).Test != nil {
			out[c.Seed] = g(c).Test
		}
	}
	return out
}

// perSeed maps seed to f of each done cell (nil results left out).
func (ix *index) perSeed(task, arm string, f func(experiment.CellRecord) *float64) map[uint64]*float64 {
	out := map[uint64]*float64{}
	for _, c := range ix.cells[key{task, arm}] {
		if c.Status != experiment.StatusDone {
			continue
		}
		if v := f(c); v != nil {
			out[c.Seed] = v
		}
	}
	return out
}

var statusOrder = []string{experiment.StatusFailed, experiment.StatusBlocked,
	experiment.StatusNoData, experiment.StatusRunning, experiment.StatusPending}

// armCell is a Table 1 cell: mean ± s.e. of the test scores over seeds, the medals, and what
// happened to the cells without a score.
func armCell(recs []experiment.CellRecord, g func(experiment.CellRecord) *experiment.Graded) string {
	if len(recs) == 0 {
		return "-"
	}
	var vals []float64
	medals := map[string]int{}
	status := map[string]int{}
	// A cell without a program to grade (no valid one was found) is not one whose program
	// failed on the test answers: the table says which.
	nothing, invalid := 0, 0
	for _, c := range recs {
		switch {
		case c.Status != experiment.StatusDone:
			status[c.Status]++
		case g(c) == nil:
			nothing++
		case g(c).Test == nil:
			invalid++
		default:
			vals = append(vals, *g(c).Test)
			if m := g(c).Medal(); m != "" {
				medals[m]++
			}
		}
	}
	if status[experiment.StatusNoData] == len(recs) {
		return "no data"
	}
	var parts []string
	if len(vals) > 0 {
		parts = append(parts, Summarize(vals).Format(3)+medalMark(medals))
	}
	if nothing > 0 {
		parts = append(parts, fmt.Sprintf("no valid program (%d)", nothing))
	}
	if invalid > 0 {
		parts = append(parts, fmt.Sprintf("invalid on test (%d)", invalid))
	}
	parts = append(parts, statusCounts(status)...)
	return strings.Join(parts, "; ")
}

// statusCounts lists "failed (2)"-style counts of the statuses other than done.
func statusCounts(status map[string]int) []string {
	var out []string
	var others []string
	for s := range status {
		if !slices.Contains(statusOrder, s) && s != experiment.StatusDone {
			others = append(others, s)
		}
	}
	sort.Strings(others)
	for _, s := range append(slices.Clone(statusOrder), others...) {
		if status[s] > 0 {
			out = append(out, fmt.Sprintf("%s (%d)", s, status[s]))
		}
	}
	return out
}

// medalMark is " (2 gold, 1 bronze)", or "" without medals.
func medalMark(medals map[string]int) string {
	var parts []string
	for _, m := range []string{"gold", "silver", "bronze"} {
		if medals[m] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", medals[m], m))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// baselineCell prints a paper number as the paper does: mean ± s.e. with 3 decimals.
func baselineCell(b *report.Baseline) string {
	if b == nil || b.Mean == nil {
		return "-"
	}
	s := num(*b.Mean, 3)
	if b.Stderr != nil {
		s += " ± " + num(*b.Stderr, 3)
	}
	return s
}

func (ix *index) baseline(task, table, system string) *report.Baseline {
	for i, b := range ix.base[task] {
		if b.Table == table && b.System == system {
			return &ix.base[task][i]
		}
	}
	return nil
}

func (ix *index) table1(name, title string, g func(experiment.CellRecord) *experiment.Graded) Table {
	ours := ix.ours()
	t := Table{Name: name, Title: title, Header: []string{"Task", "Better"}}
	if name == "table1-answer" && !slices.ContainsFunc(ix.all(), func(c experiment.CellRecord) bool { return g(c) != nil }) {
		t.Skip = "no cell has a final answer (runs with --final-candidates 0, or from before it existed)"
		return t
	}
	for _, s := range table1Systems {
		t.Header = append(t.Header, "paper: "+s)
	}
	for _, a := range ix.arms {
		t.Header = append(t.Header, "ours: "+a)
	}
	beats, both := make([]int, len(table1Systems)), make([]int, len(table1Systems))
	for _, task := range ix.tasks {
		d := ix.dir[task]
		row := []string{task, d.Word()}
		mine := values(ix.seeds, ix.scores(task, ours, g))
		for i, s := range table1Systems {
			b := ix.baseline(task, "table1", s)
			row = append(row, baselineCell(b))
			if b != nil && b.Mean != nil && len(mine) > 0 {
				both[i]++
				if d.Better(Summarize(mine).Mean, *b.Mean) {
					beats[i]++
				}
			}
		}
		for _, a := range ix.arms {
			row = append(row, armCell(ix.cells[key{task, a}], g))
		}
		t.Rows = append(t.Rows, row)
	}
	last := []string{fmt.Sprintf("tasks ours (%s) beats each column on", ours), ""}
	for i := range table1Systems {
		last = append(last, fmt.Sprintf("%d of %d", beats[i], both[i]))
	}
	for range ix.arms {
		last = append(last, "")
	}
	t.Rows = append(t.Rows, last)
	what := "the run's best training program (by validation score)"
	switch name {
	case "table1-chosen":
		what = "the final policy's chosen best-of-K program"
	case "table1-answer":
		what = "the run's final answer (its best programs cross-validated on the full public train, ensembled and refit)"
	}
	t.Caption = fmt.Sprintf("Test score of %s, mean ± s.e. over seeds, medals counted over seeds; beside the paper's "+
		"Table 1 (mean ± s.e. as printed there, - where it has none). \"-\" in our columns: the arm does not run on the "+
		"task. The last row counts the tasks where our %s arm's mean beats the paper's, in the task's direction, "+
		"over the tasks where both exist.", what, ours)
	return t
}

func (ix *index) table4() Table {
	t := Table{Name: "table4", Title: "Table 4: improve-previous (rl) vs scratch-only"}
	if !ix.has("scratch-only") {
		t.Skip = "the spec has no scratch-only arm"
		return t
	}
	t.Header = []string{"Task", "Better", "paper: " + table4Systems[0], "paper: " + table4Systems[1],
		"ours: scratch-only", "ours: rl (improve-previous)", "rl - scratch-only (by seed)", "rl better in"}
	for _, task := range ix.tasks {
		if !ix.ran(task, "scratch-only") {
			continue
		}
		d := ix.dir[task]
		p := PairedDiff(ix.seeds, ix.scores(task, "rl", bestGraded), ix.scores(task, "scratch-only", bestGraded), d)
		t.Rows = append(t.Rows, []string{task, d.Word(),
			baselineCell(ix.baseline(task, "table4", table4Systems[0])), baselineCell(ix.baseline(task, "table4", table4Systems[1])),
			armCell(ix.cells[key{task, "scratch-only"}], bestGraded), armCell(ix.cells[key{task, "rl"}], bestGraded),
			p.Format(3), betterIn(p)})
	}
	t.Caption = "Test score of the best training program, mean ± s.e. over seeds, for rl (half of the prompts improve a " +
		"previous solution) and scratch-only (none do), beside the paper's Table 4; the paired difference is rl minus " +
		"scratch-only on the same seed (negative is better for rl where lower is better)."
	return t
}

// betterIn is "2 of 3" seeds, or "-" without pairs.
func betterIn(p Paired) string {
	if p.N == 0 {
		return "-"
	}
	return fmt.Sprintf("%d of %d", p.Better, p.N)
}

// runSummary is a done cell's training, from its metrics: the last iteration's mean score,
// and the valid rate and mean execution seconds over all its programs.
type runSummary struct {
	finalMean, valid, duration *float64
}

func (ix *index) summary(c experiment.CellRecord) runSummary {
	ms := ix.metrics[c.Run]
	var s runSummary
	if c.Status != experiment.StatusDone || len(ms) == 0 {
		return s
	}
	s.finalMean = ms[len(ms)-1].MeanScore
	var n, valid, dur float64
	for _, m := range ms {
		w := float64(m.Samples)
		if w <= 0 {
			w = 1
		}
		n += w
		valid += w * m.ValidRate
		dur += w * m.MeanDuration
	}
	valid, dur = valid/n, dur/n
	s.valid, s.duration = &valid, &dur
	return s
}

func (ix *index) ablations() Table {
	t := Table{Name: "ablations", Title: "Ablations: rl against each ablation arm"}
	var abl []string
	for _, a := range ablationArms {
		if ix.has(a) {
			abl = append(abl, a)
		}
	}
	if !ix.has("rl") || len(abl) == 0 {
		t.Skip = "the spec has no rl arm or no ablation arm (" + strings.Join(ablationArms, ", ") + ")"
		return t
	}
	t.Header = []string{"Task", "Ablation", "Arm", "best test", "final mean score (training)", "valid rate",
		"mean execution s", "rl - ablation, best test (by seed)", "rl better in"}
	for _, a := range abl {
		for _, task := range ix.tasks {
			if !ix.ran(task, a) || !ix.ran(task, "rl") {
				continue
			}
			d := ix.dir[task]
			for _, arm := range []string{"rl", a} {
				row := []string{task, a, arm, armCell(ix.cells[key{task, arm}], bestGraded)}
				for _, f := range []struct {
					get  func(runSummary) *float64
					prec int
				}{{func(s runSummary) *float64 { return s.finalMean }, 3}, {func(s runSummary) *float64 { return s.valid }, 3},
					{func(s runSummary) *float64 { return s.duration }, 2}} {
					m := ix.perSeed(task, arm, func(c experiment.CellRecord) *float64 { return f.get(ix.summary(c)) })
					row = append(row, Summarize(values(ix.seeds, m)).Format(f.prec))
				}
				if arm == "rl" {
					row = append(row, "", "")
				} else {
					p := PairedDiff(ix.seeds, ix.scores(task, "rl", bestGraded), ix.scores(task, a, bestGraded), d)
					row = append(row, p.Format(3), betterIn(p))
				}
				t.Rows = append(t.Rows, row)
			}
		}
	}
	t.Caption = "Per task and ablation, rl and the ablation arm: the best training program's test score; from the " +
		"training metrics, the last iteration's mean score of valid programs (selection split), the valid-program rate and " +
		"the mean execution seconds over all training programs; each mean ± s.e. over seeds. The paired difference is rl " +
		"minus the ablation on the same seed; \"rl better in\" counts the seeds where rl's score is better in the task's " +
		"direction."
	return t
}

func (ix *index) budget() Table {
	t := Table{Name: "budget", Title: "Budget used per task and arm",
		Header: []string{"Task", "Arm", "Cells", "Programs", "Sandbox s", "Wall s", "Sandbox s / rl's (by seed)", "Matched budget s"}}
	for _, task := range ix.tasks {
		for _, a := range ix.arms {
			recs := ix.cells[key{task, a}]
			if len(recs) == 0 {
				continue
			}
			var progs, sand, wall, matched []float64
			status := map[string]int{}
			for _, c := range recs {
				status[c.Status]++
				if c.Status != experiment.StatusDone {
					continue
				}
				progs = append(progs, float64(c.Programs))
				sand = append(sand, c.SandboxSeconds)
				wall = append(wall, c.WallSeconds)
				if c.Match != "" {
					matched = append(matched, c.MatchedSeconds)
				}
			}
			ratio := "-"
			if a != "rl" && ix.ran(task, "rl") {
				rl := ix.perSeed(task, "rl", func(c experiment.CellRecord) *float64 { return &c.SandboxSeconds })
				var rs []float64
				for _, c := range recs {
					if r := rl[c.Seed]; c.Status == experiment.StatusDone && r != nil && *r > 0 {
						rs = append(rs, c.SandboxSeconds / *r)
					}
				}
				ratio = Summarize(rs).Format(2)
			}
			t.Rows = append(t.Rows, []string{task, a, cellCounts(status), Summarize(progs).Format(1),
				Summarize(sand).Format(1), Summarize(wall).Format(1), ratio, Summarize(matched).Format(1)})
		}
	}
	t.Caption = "Training budget used by the done cells, mean ± s.e. over seeds: programs executed (rl, static and random " +
		"get the same iterations × batch), their summed sandbox-seconds, and the training phase's wall seconds. " +
		"\"Sandbox s / rl's\" is the arm's sandbox-seconds over rl's on the same seed (about 1 for static-matched); " +
		"\"Matched budget s\" is the sandbox-seconds a matched arm was given."
	return t
}

// cellCounts is "3 done" or "2 done, 1 failed".
func cellCounts(status map[string]int) string {
	var parts []string
	if status[experiment.StatusDone] > 0 {
		parts = append(parts, fmt.Sprintf("%d done", status[experiment.StatusDone]))
	}
	for _, s := range statusCounts(status) {
		name, n, _ := strings.Cut(s, " (")
		parts = append(parts, strings.TrimSuffix(n, ")")+" "+name)
	}
	return strings.Join(parts, ", ")
}

func (ix *index) pass() Table {
	rule := ix.led.Spec.PassRule
	t := Table{Name: "pass", Title: "Pass rule"}
	if rule.Arm == "" {
		t.Skip = "the spec has no pass rule"
		return t
	}
	g := bestGraded
	switch rule.Measure {
	case experiment.MeasureChosenTest:
		g = chosenGraded
	case experiment.MeasureAnswerTest:
		g = answerGraded
	}
	t.Header = []string{"Task", "Better"}
	for _, v := range rule.Versus {
		t.Header = append(t.Header, "wins vs "+v, rule.Arm+" - "+v+" (by seed)")
	}
	if rule.Medal != "" {
		t.Header = append(t.Header, rule.Medal+" or better")
	}
	if rule.Paper != "" {
		t.Header = append(t.Header, "at or better than the paper's "+rule.Paper)
	}
	t.Header = append(t.Header, "result")
	passed, withData := 0, 0
	for _, task := range ix.tasks {
		d := ix.dir[task]
		row := []string{task, d.Word()}
		if !ix.hasData(task) {
			for range rule.Versus {
				row = append(row, "-", "-")
			}
			if rule.Medal != "" {
				row = append(row, "-")
			}
			if rule.Paper != "" {
				row = append(row, "-")
			}
			t.Rows = append(t.Rows, append(row, "no data"))
			continue
		}
		withData++
		mine := ix.scores(task, rule.Arm, g)
		ok, compared := ix.ran(task, rule.Arm), 0
		for _, v := range rule.Versus {
			if !ix.ran(task, v) {
				row = append(row, "not run", "-")
				continue
			}
			compared++
			theirs := ix.scores(task, v, g)
			w := Wins(ix.seeds, mine, theirs, d)
			ok = ok && w >= rule.MinSeeds
			row = append(row, fmt.Sprintf("%d of %d", w, len(ix.seeds)), PairedDiff(ix.seeds, mine, theirs, d).Format(3))
		}
		if rule.Medal != "" {
			m := ix.medalSeeds(task, rule.Arm, g, experiment.MedalRank(rule.Medal))
			ok = ok && m >= rule.MinSeeds
			row = append(row, fmt.Sprintf("%d of %d", m, len(ix.seeds)))
		}
		if rule.Paper != "" {
			if ref, found := experiment.PaperScore(task, rule.Paper); found {
				n := ix.atOrBetterSeeds(mine, ref, d)
				ok = ok && n >= rule.MinSeeds
				row = append(row, fmt.Sprintf("%d of %d (paper %s)", n, len(ix.seeds), num(ref, 3)))
			} else {
				ok = false // a goal that cannot be checked is not met
				row = append(row, "no paper score")
			}
		}
		switch {
		case !ix.ran(task, rule.Arm):
			row = append(row, rule.Arm+" not run")
		case compared == 0 && rule.Medal == "" && rule.Paper == "":
			row = append(row, "no versus arm ran")
		case ok:
			passed++
			row = append(row, "PASS")
		default:
			row = append(row, "FAIL")
		}
		t.Rows = append(t.Rows, row)
	}
	last := []string{"tasks passed", ""}
	for range rule.Versus {
		last = append(last, "", "")
	}
	if rule.Medal != "" {
		last = append(last, "")
	}
	if rule.Paper != "" {
		last = append(last, "")
	}
	t.Rows = append(t.Rows, append(last, fmt.Sprintf("%d of %d with data", passed, withData)))
	t.Caption = fmt.Sprintf("The spec's pass rule, fixed before the runs: %s.", ruleText(rule, len(ix.seeds)))
	if len(rule.Versus) > 0 {
		t.Caption += fmt.Sprintf(" Wins count the seeds where %s's score beats "+
			"the other arm's on the same seed (a missing or invalid score loses); the paired difference is %s minus the "+
			"other arm over the seeds where both have a score, mean ± s.e.", rule.Arm, rule.Arm)
	}
	return t
}

// medalSeeds counts the seeds where arm's g program, in a done cell, won a medal of at least
// rank.
func (ix *index) medalSeeds(task, arm string, g func(experiment.CellRecord) *experiment.Graded, rank int) int {
	n := 0
	for _, c := range ix.cells[key{task, arm}] {
		if c.Status == experiment.StatusDone && experiment.MedalRank(g(c).Medal()) >= rank {
			n++
		}
	}
	return n
}

// atOrBetterSeeds counts the seeds whose score is at or better than ref in direction d.
func (ix *index) atOrBetterSeeds(scores map[uint64]*float64, ref float64, d Direction) int {
	n := 0
	for _, seed := range ix.seeds {
		if v := scores[seed]; v != nil && !d.Better(ref, *v) {
			n++
		}
	}
	return n
}

// ruleText says the pass rule in words.
func ruleText(r experiment.PassRule, seeds int) string {
	measure := map[string]string{experiment.MeasureBestTest: "the best training program's test score (best_test)",
		experiment.MeasureChosenTest: "the final policy's chosen program's test score (chosen_test)",
		experiment.MeasureAnswerTest: "the run's final answer's test score (answer_test)"}[r.Measure]
	if measure == "" {
		measure = r.Measure
	}
	var goals []string
	if r.Medal != "" {
		goals = append(goals, fmt.Sprintf("wins %s or better", r.Medal))
	}
	if r.Paper != "" {
		goals = append(goals, fmt.Sprintf("scores at or better than the paper's %s (Table 1)", r.Paper))
	}
	if len(r.Versus) == 0 {
		return fmt.Sprintf("%s passes a task when %s %s in at least %d of the %d seeds",
			r.Arm, measure, strings.Join(goals, " and "), r.MinSeeds, seeds)
	}
	also := ""
	if len(goals) > 0 {
		also = fmt.Sprintf(" and that program %s in at least %d of the %d seeds", strings.Join(goals, " and "), r.MinSeeds, seeds)
	}
	return fmt.Sprintf("%s passes a task when it beats each of %s on %s in at least %d of the %d seeds%s",
		r.Arm, strings.Join(r.Versus, ", "), measure, r.MinSeeds, seeds, also)
}

func (ix *index) cellsTable() Table {
	t := Table{Name: "cells", Title: "Every cell",
		Header: []string{"Task", "Arm", "Seed", "Status", "Reason", "Programs", "Sandbox s", "Best validation", "Best test", "Chosen test", "Answer test", "Untuned answer test", "Best medal", "Answer medal"}}
	opt := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return num(*v, 4)
	}
	test := func(g *experiment.Graded) string {
		if g == nil {
			return "-"
		}
		if g.Test == nil {
			return "invalid"
		}
		return num(*g.Test, 4)
	}
	for _, c := range ix.all() {
		medal := medalOf(c.Best)
		bv := c.BestValidation
		if bv == nil && c.Best != nil {
			bv = c.Best.Validation
		}
		t.Rows = append(t.Rows, []string{c.Task, c.Arm, fmt.Sprint(c.Seed), c.Status, oneLine(c.Reason),
			fmt.Sprint(c.Programs), num(c.SandboxSeconds, 1), opt(bv), test(c.Best), test(c.Chosen), test(c.Answer), test(c.Untuned), medal, medalOf(c.Answer)})
	}
	t.Caption = "Every cell of the grid as the ledger records it; scores with 4 decimals, \"invalid\": graded but not " +
		"valid on the test answers, \"-\": not graded. \"Untuned answer test\": the answer the same run chose " +
		"without its tuned variants (\"-\" when the tuning kept none), what the tuning added within the run."
	return t
}

// medalOf names g's medal: "none" for a valid test score without one, "-" when not graded.
func medalOf(g *experiment.Graded) string {
	if g == nil || g.Test == nil {
		return "-"
	}
	if m := g.Medal(); m != "" {
		return m
	}
	return "none"
}

// oneLine folds a reason onto one line.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
