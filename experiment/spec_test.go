package experiment

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"mlerl/settings"
)

const noRule = `name: grid
tasks: [leaf-classification, random-acts-of-pizza]
seeds: [1, 2]
`

const base = noRule + "pass_rule: {arm: rl, versus: [static], measure: best_test, min_seeds: 1}\n"

func TestBuiltinSpecsParse(t *testing.T) {
	names := BuiltinNames()
	for _, want := range []string{"ablations", "learning", "paper", "table1"} {
		if !slices.Contains(names, want) {
			t.Errorf("built-in spec %s missing from %v", want, names)
		}
	}
	for _, n := range names {
		s, raw, err := Load(n)
		if err != nil || len(raw) == 0 || len(s.Cells()) == 0 {
			t.Errorf("%s: %v (%d bytes, %d cells)", n, err, len(raw), len(s.Cells()))
		}
	}
	if _, _, err := Load("tabel1"); err == nil || !strings.Contains(err.Error(), "not a built-in spec") {
		t.Errorf("a misspelt spec name: %v", err)
	}
}

// Cells go seed by seed, then task, then arm; a matched arm after the arm it is matched to; an
// arm limited to some tasks only on those; every cell's settings are the budget, the arm's,
// then its seed.
func TestCellsExpandTheGrid(t *testing.T) {
	s, err := Parse([]byte(base + `arms: [static-matched, rl, static, {name: fast, run: {iterations: 2}, tasks: [random-acts-of-pizza]}]
run: {batch: 4}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range s.Cells() {
		got = append(got, c.Run)
	}
	want := []string{
		"leaf-classification-rl-s1", "leaf-classification-static-s1", "leaf-classification-static-matched-s1",
		"random-acts-of-pizza-rl-s1", "random-acts-of-pizza-static-s1", "random-acts-of-pizza-fast-s1", "random-acts-of-pizza-static-matched-s1",
		"leaf-classification-rl-s2", "leaf-classification-static-s2", "leaf-classification-static-matched-s2",
		"random-acts-of-pizza-rl-s2", "random-acts-of-pizza-static-s2", "random-acts-of-pizza-fast-s2", "random-acts-of-pizza-static-matched-s2",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("cells\n%v\nwant\n%v", got, want)
	}
	for _, c := range s.Cells() {
		switch c.Arm {
		case "static-matched":
			if c.Match != RunName(c.Task, "rl", c.Seed) {
				t.Errorf("%s matched to %q", c.Run, c.Match)
			}
		case "fast":
			if want := []string{"batch", "iterations", "seed"}; c.Seed == 2 && !slices.Equal(cellKeys(t, s, c), want) {
				t.Errorf("%s settings %v, want %v", c.Run, cellKeys(t, s, c), want)
			}
			if got := cellSettings(t, s, c); got.Batch != 4 || got.Iterations != 2 || got.Seed != c.Seed {
				t.Errorf("%s settings %+v", c.Run, got)
			}
		case "static":
			if want := []string{"batch", "ppo.learning_rate", "seed"}; c.Seed == 1 && !slices.Equal(cellKeys(t, s, c), want) {
				t.Errorf("%s settings %v, want %v", c.Run, cellKeys(t, s, c), want)
			}
			if got := cellSettings(t, s, c); got.Batch != 4 || got.PPO.LearningRate != 0 || got.Seed != c.Seed {
				t.Errorf("%s settings %+v", c.Run, got)
			}
		}
	}
}

// Every bad spec is refused naming the field and what to do.
func TestValidateNamesTheField(t *testing.T) {
	for _, c := range []struct{ name, yaml, want string }{
		{"unknown key", base + "arms: [rl, static]\nseed: [3]\n", "field seed not found"},
		{"unknown arm", base + "arms: [rl, statik]\n", `unknown arm "statik"`},
		{"no arms", base + "arms: []\n", "field arms: list at least one arm"},
		{"arm twice", base + "arms: [rl, static, rl]\n", "field arms: rl is listed twice"},
		{"task twice", strings.Replace(base, "random-acts-of-pizza]", "random-acts-of-pizza, leaf-classification]", 1) + "arms: [rl, static]\n", "field tasks: leaf-classification is listed twice"},
		{"seed twice", strings.Replace(base, "[1, 2]", "[1, 1]", 1) + "arms: [rl, static]\n", "field seeds: 1 is listed twice"},
		{"no seeds", strings.Replace(base, "[1, 2]", "[]", 1) + "arms: [rl, static]\n", "field seeds: list the seeds"},
		{"bad name", strings.Replace(base, "name: grid", "name: my grid", 1) + "arms: [rl, static]\n", "field name"},
		{"too concurrent", base + "arms: [rl, static]\nmax_concurrent: 100\n", "field max_concurrent"},
		{"arm on a task outside the spec", base + "arms: [rl, static, {name: x, tasks: [spooky-author-identification]}]\n", "field arms.x.tasks"},
		{"matched to a missing arm", noRule + "arms: [static, {name: m, run: {}, match_sandbox_seconds: rl}]\npass_rule: {arm: static, versus: [m], measure: best_test, min_seeds: 1}\n", `field arms.m.match_sandbox_seconds: arm "rl" is not in the spec`},
		{"matched to a matched arm", base + "arms: [rl, static, static-matched, {name: m2, run: {}, match_sandbox_seconds: static-matched}]\n", "is itself matched"},
		{"a setting the experiment owns", noRule + "arms: [rl, {name: s, run: {seed: 4}}]\npass_rule: {arm: rl, versus: [s], measure: best_test, min_seeds: 1}\n", "field arms.s.run: seed is set by the experiment"},
		{"an owned setting in the budget", base + "arms: [rl, static]\nrun: {backend: llm}\n", "field run: backend is set by the experiment"},
		{"not a run setting in the budget", base + "arms: [rl, static]\nrun: {out: x}\n", "out (line 6): not a run setting"},
		{"a bad value in an arm", base + "arms: [rl, static, {name: s, run: {iterations: 0}}]\n", "field arms.s.run: experiment spec grid, arm s (run:) sets iterations (line 5): --iterations must be at least 1, got 0"},
		{"flags of old", base + "arms: [rl, static]\nflags: [--iterations, \"4\", --learning-rate, \"0\"]\n", "flags (line 6): settings are a run: section of the same keys as a task spec's: write run: {iterations: 4, ppo: {learning_rate: 0}}"},
		{"an arm's flags of old", base + "arms: [rl, {name: static, flags: [--batch, \"2\"]}]\n", "flags (line 5): settings are a run: section of the same keys as a task spec's: write run: {batch: 2}"},
		{"pass rule on a missing arm", strings.Replace(base, "arm: rl,", "arm: ppo,", 1) + "arms: [rl, static]\n", `field pass_rule.arm: "ppo"`},
		{"pass rule against itself", strings.Replace(base, "versus: [static]", "versus: [rl]", 1) + "arms: [rl, static]\n", "field pass_rule.versus"},
		{"pass rule measure", strings.Replace(base, "best_test", "mean", 1) + "arms: [rl, static]\n", "field pass_rule.measure"},
		{"pass rule paper", strings.Replace(base, "min_seeds: 1", "min_seeds: 1, paper: Qwen-RL", 1) + "arms: [rl, static]\n", `field pass_rule.paper: the paper's Table 1 has no "Qwen-RL" score`},
		{"pass rule medal", strings.Replace(base, "min_seeds: 1", "min_seeds: 1, medal: platinum", 1) + "arms: [rl, static]\n", `field pass_rule.medal: must be bronze, silver or gold, got "platinum"`},
		{"pass rule that cannot fail", strings.Replace(base, "versus: [static]", "versus: []", 1) + "arms: [rl, static]\n", "or the rule cannot fail"},
		{"pass rule needs more seeds than run", strings.Replace(base, "min_seeds: 1", "min_seeds: 3", 1) + "arms: [rl, static]\n", "field pass_rule.min_seeds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse([]byte(c.yaml)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

// A built-in arm limited to some tasks keeps its settings; a mapping with settings is the
// user's own.
func TestArmForms(t *testing.T) {
	s, err := Parse([]byte(base + "arms: [rl, {name: static, tasks: [leaf-classification]}, {name: mine, run: {batch: 2}, about: small batches}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Arms[1]; !slices.Equal(a.Run.SetKeys(), BuiltinArms["static"].Run.SetKeys()) || a.Run.String() != "ppo.learning_rate=0" || a.About == "" || !slices.Equal(a.Tasks, []string{"leaf-classification"}) {
		t.Errorf("limited built-in arm: %+v", a)
	}
	if a := s.Arms[2]; a.Run.String() != "batch=2" || a.About != "small batches" {
		t.Errorf("own arm: %+v", a)
	}
	if s.MaxConcurrent != 2 {
		t.Errorf("max_concurrent defaults to 2, got %d", s.MaxConcurrent)
	}
}

func TestPassRuleOfOneArmNamesAMedal(t *testing.T) {
	s, err := Parse([]byte(noRule + "arms: [rl]\npass_rule: {arm: rl, measure: answer_test, min_seeds: 2, medal: bronze}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.PassRule.Medal != "bronze" || len(s.PassRule.Versus) != 0 {
		t.Fatalf("pass rule %+v", s.PassRule)
	}
	s, err = Parse([]byte(noRule + "arms: [rl]\npass_rule: {arm: rl, measure: answer_test, min_seeds: 2, paper: Qwen2.5-3B RL}\n"))
	if err != nil || s.PassRule.Paper != "Qwen2.5-3B RL" {
		t.Fatalf("a rule of one arm naming the paper's system: %v %+v", err, s.PassRule)
	}
	if v, ok := PaperScore("leaf-classification", "Qwen2.5-3B RL"); !ok || v != 0.124 {
		t.Errorf("PaperScore(leaf, Qwen2.5-3B RL) = %v %v, want 0.124 from Table 1", v, ok)
	}
	for medal, rank := range map[string]int{"": 0, "none": 0, "bronze": 1, "silver": 2, "gold": 3} {
		if got := MedalRank(medal); got != rank {
			t.Errorf("MedalRank(%q) = %d, want %d", medal, got, rank)
		}
	}
}

// cellKeys are the keys a cell's layers set, sorted.
func cellKeys(t *testing.T, s Spec, c Cell) []string {
	t.Helper()
	layers, err := s.Layers(c)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, l := range layers {
		keys = append(keys, l.SetKeys()...)
	}
	slices.Sort(keys)
	return keys
}

func cellSettings(t *testing.T, s Spec, c Cell) settings.Settings {
	t.Helper()
	layers, err := s.Layers(c)
	if err != nil {
		t.Fatal(err)
	}
	got, err := settings.Resolve(layers...)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// A ledger recorded when settings were flags reads them as the run: sections they meant, and
// back out as those.
func TestLedgerFlagsOfOld(t *testing.T) {
	old := `{"name":"small","tasks":["leaf-classification"],"arms":[{"name":"rl"},{"name":"static","flags":["--learning-rate","0"]},
{"name":"ablate","flags":["--instrumenter","none"]}],"seeds":[5],"flags":["--iterations","2","--batch","2"],"max_concurrent":2,
"pass_rule":{"arm":"rl","versus":["static"],"measure":"best_test","min_seeds":1}}`
	var s Spec
	if err := json.Unmarshal([]byte(old), &s); err != nil {
		t.Fatal(err)
	}
	if s.Run.String() != "batch=2 iterations=2" || s.Arms[1].Run.String() != "ppo.learning_rate=0" || s.Arms[2].Run.String() != "instrumenter=none" || !s.Arms[0].Run.Empty() {
		t.Fatalf("spec %q, arms %q %q %q", s.Run, s.Arms[0].Run, s.Arms[1].Run, s.Arms[2].Run)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var again Spec
	if err := json.Unmarshal(b, &again); err != nil || again.Run.String() != s.Run.String() || again.Arms[1].Run.String() != "ppo.learning_rate=0" {
		t.Fatalf("again: %v %q", err, b)
	}
	bad := strings.Replace(old, `"--batch","2"`, `"--slots","2"`, 1)
	if err := json.Unmarshal([]byte(bad), &s); err == nil || !strings.Contains(err.Error(), "spec small (recorded flags)") {
		t.Fatalf("a flag that is no setting's: %v", err)
	}
}
