package expreport

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
	"mlerl/grading"
	"mlerl/runrecord"
	"mlerl/settings"
)

func f64(v float64) *float64 { return &v }

const (
	leaf   = "leaf-classification"          // lower is better; has data
	pizza  = "random-acts-of-pizza"         // higher is better; has data
	spooky = "spooky-author-identification" // no data
)

// fixtureSpec is a small paper-like spec: three tasks (spooky without data), the four Table 1
// arms and the two ablations on some tasks, three seeds.
func fixtureSpec(extraArms ...experiment.Arm) experiment.Spec {
	arms := []experiment.Arm{
		experiment.BuiltinArms["rl"], experiment.BuiltinArms["static"], experiment.BuiltinArms["random"],
		experiment.BuiltinArms["static-matched"],
	}
	ndw := experiment.BuiltinArms["no-duration-weight"]
	ndw.Tasks = []string{leaf, pizza}
	ni := experiment.BuiltinArms["no-instrumentation"]
	ni.Tasks = []string{leaf}
	arms = append(arms, ndw, ni)
	arms = append(arms, extraArms...)
	return experiment.Spec{
		Name: "fixture", Description: "a synthetic experiment for the report's tests",
		Tasks: []string{leaf, pizza, spooky}, Arms: arms, Seeds: []uint64{1, 2, 3},
		Run: settings.MustOverlay("fixture", map[string]any{"iterations": 4, "batch": 8}), MaxConcurrent: 2,
		PassRule: experiment.PassRule{Arm: "rl", Versus: []string{"static", "random"}, Measure: experiment.MeasureBestTest, MinSeeds: 2},
	}
}

// bestTests are the best programs' test scores by task, arm and seed index (nil: invalid on
// test; a missing arm or task: see the statuses).
var bestTests = map[string]map[string][3]*float64{
	leaf: {
		"rl":                 {f64(0.1), f64(0.2), f64(0.3)},
		"static":             {f64(0.5), f64(0.4), f64(0.6)},
		"random":             {f64(1.0), f64(2.0), nil},
		"static-matched":     {f64(0.45), nil, f64(0.35)}, // seed 2 fails
		"no-duration-weight": {f64(0.15), f64(0.25), f64(0.35)},
		"no-instrumentation": {f64(0.3), f64(0.1), f64(0.5)},
		"scratch-only":       {f64(0.2), f64(0.3), f64(0.2)},
	},
	pizza: {
		"rl":                 {f64(0.70), f64(0.60), f64(0.65)},
		"static":             {f64(0.60), f64(0.65), f64(0.70)},
		"random":             {f64(0.5), f64(0.5), f64(0.5)},
		"static-matched":     {f64(0.55), f64(0.6), f64(0.65)},
		"no-duration-weight": {f64(0.6), f64(0.6), f64(0.6)},
		"scratch-only":       {f64(0.6), f64(0.7), f64(0.6)},
	},
}

var rlSandbox = [3]float64{100, 120, 110}

func graded(task string, v *float64, medal string) *experiment.Graded {
	r := grading.Report{CompetitionID: task, Score: v, IsLowerBetter: task == leaf, ValidSubmission: v != nil,
		GoldMedal: medal == "gold", SilverMedal: medal == "silver", BronzeMedal: medal == "bronze", AnyMedal: medal != ""}
	return &experiment.Graded{Sample: "s-" + task, Validation: v, Test: v, Report: r}
}

// fixtureLedger records every cell of spec: spooky's are no-data, leaf's static-matched seed
// 2 failed, the rest are done with the scores above.
func fixtureLedger(spec experiment.Spec) experiment.Ledger {
	led := experiment.Ledger{Spec: spec, Sandbox: "bubblewrap", Machine: "test machine",
		TaskSettings: map[string]string{leaf: "final_tune_budget=8"}}
	for _, c := range spec.Cells() {
		rec := experiment.CellRecord{Cell: c, Status: experiment.StatusDone}
		i := int(c.Seed - 1)
		switch {
		case c.Task == spooky:
			rec.Status, rec.Reason = experiment.StatusNoData, "prepared data missing: ~/.cache/mle-bench/data/"+spooky
		case c.Task == leaf && c.Arm == "static-matched" && c.Seed == 2:
			rec.Status, rec.Reason = experiment.StatusFailed, "workflow failed:\n sandbox | exit 1"
		default:
			v := bestTests[c.Task][c.Arm][i]
			medal := ""
			if c.Task == leaf && c.Arm == "rl" {
				medal = []string{"gold", "silver", ""}[i]
			}
			rec.Best = graded(c.Task, v, medal)
			var chosen *float64
			if v != nil {
				chosen = f64(*v + 0.01)
			}
			rec.Chosen = graded(c.Task, chosen, "")
			// The final answer: 0.02 from the best program (better on leaf, worse elsewhere),
			// and leaf's rl seed 1 a bronze.
			if v != nil {
				answerMedal := ""
				if c.Task == leaf && c.Arm == "rl" && i == 0 {
					answerMedal = "bronze"
				}
				rec.Answer = graded(c.Task, f64(*v-0.02), answerMedal)
				if c.Arm == "rl" && i == 1 {
					rec.Untuned = graded(c.Task, f64(*v-0.01), "")
				}
			}
			rec.BestValidation = v
			rec.Programs, rec.SandboxSeconds, rec.WallSeconds, rec.Iterations = 32, rlSandbox[i], 200+float64(i), 4
			if c.Arm != "rl" {
				rec.SandboxSeconds = 50 + float64(i)
			}
			if c.Arm == "static-matched" {
				rec.Programs = 40 + 2*i
				rec.MatchedSeconds = rlSandbox[i]
				rec.SandboxSeconds = rlSandbox[i] + 2*float64(i) // seed 3 over by 4: ratio 114/110
			}
			// the best-so-far curve: worse, then better, then the best program
			ai := float64(slices.IndexFunc(spec.Arms, func(a experiment.Arm) bool { return a.Name == c.Arm }))
			worse := 0.9 + 0.1*ai
			if c.Task == pizza {
				worse = 0.3 - 0.02*ai
			}
			off := float64(2 * i)
			rec.Curve = []experiment.CurvePoint{
				{Programs: 8 + int(off), WallSeconds: 50 + off, Test: f64(worse)},
				{Programs: 20 + int(off), WallSeconds: 120 + off, Test: nil}, // its program was invalid on test
				{Programs: 32, WallSeconds: 200 + float64(i), Test: v},
			}
		}
		led.Cells = append(led.Cells, rec)
	}
	return led
}

// fixtureMetrics are four iterations per done cell: the mean score improves by 0.1 per
// iteration from a seed-dependent start, 0.2 lower for the arms other than rl; rl has a valid
// rate of 0.75 and 2 s per program, the others 0.5 and 4 s. Leaf's rl seed 1 repeats iteration 2 (a resume: the last line
// counts), and pizza's static seed 1 has old lines without the newer fields.
func fixtureMetrics(led experiment.Ledger) map[string][]runrecord.IterationMetrics {
	out := map[string][]runrecord.IterationMetrics{}
	for _, c := range led.Cells {
		if c.Status != experiment.StatusDone {
			continue
		}
		var ms []runrecord.IterationMetrics
		for it := 1; it <= 4; it++ {
			m := runrecord.IterationMetrics{Iteration: it, Samples: 8, ValidRate: 0.75, MeanDuration: 2,
				MeanScore: f64(0.1*float64(it) + 0.1*float64(c.Seed-1)), Programs: 8 * it, SandboxSeconds: 25 * float64(it)}
			if c.Arm != "rl" {
				m.ValidRate, m.MeanDuration, *m.MeanScore = 0.5, 4, *m.MeanScore-0.2
			}
			if c.Task == pizza && c.Arm == "static" && c.Seed == 1 {
				m.MeanScore, m.Programs, m.SandboxSeconds = nil, 0, 0
			}
			if c.Task == leaf && c.Arm == "rl" && c.Seed == 1 && it == 2 {
				stale := m
				stale.MeanScore, stale.ValidRate = f64(9.9), 0
				ms = append(ms, stale)
			}
			ms = append(ms, m)
		}
		out[c.Run] = ms
	}
	return out
}

// writeFixtureDir writes experiment.json and the runs' metrics.jsonl into a new directory; a
// truncated last line is added to one run's metrics.
func writeFixtureDir(t *testing.T, spec experiment.Spec) string {
	t.Helper()
	dir := t.TempDir()
	led := fixtureLedger(spec)
	b, err := json.MarshalIndent(led, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstore.LedgerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for run, ms := range fixtureMetrics(led) {
		d := runstore.ExperimentRunDir(dir, run)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		var lines []byte
		for _, m := range ms {
			l, _ := json.Marshal(m)
			lines = append(append(lines, l...), '\n')
		}
		if run == experiment.RunName(pizza, "rl", 2) {
			lines = append(lines, []byte(`{"iteration": 5, "samp`)...)
		}
		if err := os.WriteFile(filepath.Join(d, runstore.MetricsKey), lines, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func buildFixture(t *testing.T, extraArms ...experiment.Arm) *Report {
	t.Helper()
	led := fixtureLedger(fixtureSpec(extraArms...))
	r, err := Build(led, fixtureMetrics(led))
	if err != nil {
		t.Fatal(err)
	}
	return r
}
