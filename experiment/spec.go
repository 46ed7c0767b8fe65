// Package experiment describes the paper's experiments as data: a spec names tasks, arms (run:
// sections of settings over a shared budget), seeds and the pass rule, fixed before anything
// runs; the grid of cells it expands to is what the Experiment workflow runs, and the ledger
// records what each cell did.
package experiment

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"mlerl/report"
	"mlerl/settings"
)

// Spec is an experiment, as written in its YAML file.
type Spec struct {
	Name        string   `yaml:"name" json:"name"`
	Description string   `yaml:"description,omitempty" json:"description,omitempty"`
	Tasks       []string `yaml:"tasks" json:"tasks"`
	Arms        []Arm    `yaml:"arms" json:"arms"`
	Seeds       []uint64 `yaml:"seeds" json:"seeds"`
	// Run is the settings every cell gets (the budget: iterations, batch, ...), a run: section
	// of the same keys as a task spec's and a preset's.
	Run settings.Overlay `yaml:"run,omitempty" json:"run"`
	// MaxConcurrent bounds the Train workflows running at once.
	MaxConcurrent int      `yaml:"max_concurrent,omitempty" json:"max_concurrent"`
	PassRule      PassRule `yaml:"pass_rule" json:"pass_rule"`
}

// Arm is one configuration compared across tasks and seeds.
type Arm struct {
	Name string `yaml:"name" json:"name"`
	// Run is the arm's settings, over the spec's.
	Run settings.Overlay `yaml:"run,omitempty" json:"run"`
	// MatchSandboxSeconds names another arm: this arm's cell runs after that arm's cell of the
	// same task and seed, with the sandbox-seconds it used as its training budget.
	MatchSandboxSeconds string `yaml:"match_sandbox_seconds,omitempty" json:"match_sandbox_seconds,omitempty"`
	// Tasks, when set, limits the arm to these of the spec's tasks (an ablation on a few).
	Tasks []string `yaml:"tasks,omitempty" json:"tasks,omitempty"`
	// About says what the arm is, for the report.
	About string `yaml:"about,omitempty" json:"about,omitempty"`
}

// Measures a pass rule can compare.
const (
	MeasureBestTest   = "best_test"   // the run's best training program, graded on test
	MeasureChosenTest = "chosen_test" // the final policy's best-of-K program, graded on test
	MeasureAnswerTest = "answer_test" // the run's final answer (cross-validated ensemble), graded on test
)

// PassRule is decided before the runs: Arm passes on a task when it beats every arm of Versus
// on Measure in at least MinSeeds of the task's seeds (a paired comparison by seed) and, when
// Medal is set, its Measure program wins at least that medal in at least MinSeeds seeds.
type PassRule struct {
	Arm      string   `yaml:"arm" json:"arm"`
	Versus   []string `yaml:"versus" json:"versus"`
	Measure  string   `yaml:"measure" json:"measure"`
	MinSeeds int      `yaml:"min_seeds" json:"min_seeds"`
	// Medal (bronze, silver or gold) makes the rule an absolute goal too: an experiment of one
	// arm names no Versus and a medal.
	Medal string `yaml:"medal,omitempty" json:"medal,omitempty"`
	// Paper names a system of the paper's Table 1 (e.g. "Qwen2.5-3B RL"): the Measure program
	// must also score at or better than that system's mean on the task in at least MinSeeds
	// seeds. Like Medal, it is an absolute goal an experiment of one arm can name.
	Paper string `yaml:"paper,omitempty" json:"paper,omitempty"`
}

// MedalRank orders medals: 0 for none (or an unknown name), then bronze, silver, gold.
func MedalRank(medal string) int {
	return map[string]int{"bronze": 1, "silver": 2, "gold": 3}[medal]
}

// BuiltinArms are the arms a spec may name without settings.
var BuiltinArms = map[string]Arm{
	"rl":                 {Name: "rl", About: "the platform's defaults: PPO with the duration-aware update and instrumented partial credit"},
	"static":             {Name: "static", Run: builtin("static", map[string]any{"ppo.learning_rate": 0}), About: "the same warm start, never updated"},
	"random":             {Name: "random", Run: builtin("random", map[string]any{"init": settings.InitUniform, "ppo.learning_rate": 0}), About: "every code action equally likely, never updated"},
	"no-duration-weight": {Name: "no-duration-weight", Run: builtin("no-duration-weight", map[string]any{"ppo.duration_weight": false}), About: "rl without the duration-aware gradient weight (Figure 8's ablation)"},
	"no-instrumentation": {Name: "no-instrumentation", Run: builtin("no-instrumentation", map[string]any{"instrumenter": settings.InstrumenterNone}), About: "rl without progress prints: a failure earns -10 flat (Figure 9's ablation)"},
	"scratch-only":       {Name: "scratch-only", Run: builtin("scratch-only", map[string]any{"improve_fraction": 0}), About: "rl that never asks to improve a previous solution (Table 4)"},
	"static-matched":     {Name: "static-matched", Run: builtin("static-matched", map[string]any{"ppo.learning_rate": 0}), MatchSandboxSeconds: "rl", About: "static, trained until it has used rl's sandbox-seconds"},
}

func builtin(arm string, values map[string]any) settings.Overlay {
	return settings.MustOverlay("built-in arm "+arm, values)
}

// UnmarshalYAML takes an arm as a built-in's name or as a mapping (which may extend a
// built-in of the same name).
func (a *Arm) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		b, ok := BuiltinArms[n.Value]
		if !ok {
			return fmt.Errorf("line %d: unknown arm %q: built-in arms are %s; or write {name: NAME, run: {SETTING: VALUE, ...}}", n.Line, n.Value, strings.Join(BuiltinArmNames(), ", "))
		}
		*a = b
		return nil
	}
	if err := refuseFlags(n); err != nil {
		return err
	}
	type plain Arm
	var p plain
	if err := n.Decode(&p); err != nil {
		return err
	}
	if b, ok := BuiltinArms[p.Name]; ok && p.Run.Empty() && p.MatchSandboxSeconds == "" { // a built-in, perhaps limited to some tasks
		p.Run, p.MatchSandboxSeconds = b.Run, b.MatchSandboxSeconds
		if p.About == "" {
			p.About = b.About
		}
	}
	*a = Arm(p)
	return nil
}

// BuiltinArmNames lists the built-in arms, sorted.
func BuiltinArmNames() []string {
	var names []string
	for n := range BuiltinArms {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

//go:embed specs/*.yaml
var builtinSpecs embed.FS

// BuiltinNames lists the built-in specs (table1, ablations, learning, ...).
func BuiltinNames() []string {
	entries, _ := builtinSpecs.ReadDir("specs")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return names
}

// Load reads a built-in spec by name or a YAML file by path.
func Load(nameOrPath string) (Spec, []byte, error) {
	var b []byte
	var err error
	where := nameOrPath
	if slices.Contains(BuiltinNames(), nameOrPath) {
		b, err = builtinSpecs.ReadFile("specs/" + nameOrPath + ".yaml")
		where = "built-in spec " + nameOrPath
	} else {
		b, err = os.ReadFile(nameOrPath)
		if errors.Is(err, os.ErrNotExist) && filepath.Ext(nameOrPath) == "" {
			return Spec{}, nil, fmt.Errorf("%s: no such spec file, and not a built-in spec (%s)", nameOrPath, strings.Join(BuiltinNames(), ", "))
		}
	}
	if err != nil {
		return Spec{}, nil, err
	}
	s, err := parse(where, b)
	if err != nil {
		return Spec{}, nil, fmt.Errorf("%s: %w", where, err)
	}
	return s, b, nil
}

// Parse decodes and checks a spec; unknown keys are refused, so a misspelt one is not ignored.
func Parse(b []byte) (Spec, error) { return parse("", b) }

// parse is Parse for a spec read from where (a file, or "" for bytes), which its layers name.
func parse(where string, b []byte) (Spec, error) {
	var s Spec
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return Spec{}, err
	}
	if len(root.Content) > 0 {
		if err := refuseFlags(root.Content[0]); err != nil {
			return Spec{}, err
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&s); err != nil {
		return Spec{}, err
	}
	if s.MaxConcurrent == 0 {
		s.MaxConcurrent = 2
	}
	s.name(where)
	return s, s.Validate()
}

// name gives the spec's layers their sources, for errors: the file (or the spec's name) and
// the section.
func (s *Spec) name(where string) {
	if where == "" {
		where = "experiment spec " + s.Name
	}
	s.Run.Source = where + " (run:)"
	for i := range s.Arms {
		a := &s.Arms[i]
		if !strings.HasPrefix(a.Run.Source, "built-in arm ") {
			a.Run.Source = where + ", arm " + a.Name + " (run:)"
		}
	}
}

// refuseFlags turns a spec or arm written before settings were run: sections (flags: [--k, v])
// away with the run: section that says the same.
func refuseFlags(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k, v := n.Content[i], n.Content[i+1]; k.Value == "flags" {
			var args []string
			_ = v.Decode(&args)
			hint := "run: {SETTING: VALUE, ...} (docs/experiments.md)"
			if o, err := settings.FromArgs("flags", args); err == nil && !o.Empty() {
				hint = "run: " + flowYAML(o)
			}
			return fmt.Errorf("flags (line %d): settings are a run: section of the same keys as a task spec's: write %s", k.Line, hint)
		}
	}
	return nil
}

// flowYAML writes a layer as a spec would: run: {iterations: 4, ppo: {learning_rate: 0}}.
func flowYAML(o settings.Overlay) string {
	b, _ := json.Marshal(o)
	var n yaml.Node
	if yaml.Unmarshal(b, &n) != nil || len(n.Content) == 0 {
		return string(b)
	}
	var flow func(*yaml.Node)
	flow = func(n *yaml.Node) {
		n.Style = yaml.FlowStyle
		if n.Kind == yaml.ScalarNode {
			n.Style = 0
		}
		for _, c := range n.Content {
			flow(c)
		}
	}
	flow(n.Content[0])
	out, _ := yaml.Marshal(n.Content[0])
	return strings.TrimSpace(string(out))
}

// ownedKeys are the settings the experiment sets per cell (seed) or for all cells at once
// (backend: the policy servers are `starter experiment run`'s): an arm or the budget giving
// them would be overridden or would break the grid.
var ownedKeys = []string{"seed", "backend"}

// Validate names the first problem and its fix.
func (s Spec) Validate() error {
	switch {
	case s.Name == "" || strings.ContainsAny(s.Name, "/ \t"):
		return fmt.Errorf("field name: %q must be a non-empty name without spaces or slashes", s.Name)
	case len(s.Tasks) == 0:
		return errors.New("field tasks: list at least one task id (see `starter tasks list`)")
	case len(s.Arms) == 0:
		return fmt.Errorf("field arms: list at least one arm (built-in: %s)", strings.Join(BuiltinArmNames(), ", "))
	case len(s.Seeds) == 0:
		return errors.New("field seeds: list the seeds, fixed before the runs (e.g. [21, 22, 23])")
	case s.MaxConcurrent < 1 || s.MaxConcurrent > 64:
		return fmt.Errorf("field max_concurrent: %d is out of range: it must be between 1 and 64", s.MaxConcurrent)
	}
	if d := dup(s.Tasks); d != "" {
		return fmt.Errorf("field tasks: %s is listed twice", d)
	}
	seen := map[uint64]bool{}
	for _, sd := range s.Seeds {
		if seen[sd] {
			return fmt.Errorf("field seeds: %d is listed twice", sd)
		}
		seen[sd] = true
	}
	if err := checkRun("run", s.Run); err != nil {
		return err
	}
	arms := map[string]Arm{}
	for _, a := range s.Arms {
		if a.Name == "" || strings.ContainsAny(a.Name, "/ \t") {
			return fmt.Errorf("field arms: name %q must be non-empty, without spaces or slashes", a.Name)
		}
		if _, ok := arms[a.Name]; ok {
			return fmt.Errorf("field arms: %s is listed twice", a.Name)
		}
		arms[a.Name] = a
		for _, t := range a.Tasks {
			if !slices.Contains(s.Tasks, t) {
				return fmt.Errorf("field arms.%s.tasks: %q is not in the spec's tasks: add it there or remove it here", a.Name, t)
			}
		}
		if err := checkRun("arms."+a.Name+".run", s.Run, a.Run); err != nil {
			return err
		}
	}
	for _, a := range s.Arms {
		if m := a.MatchSandboxSeconds; m != "" {
			ref, ok := arms[m]
			if !ok {
				return fmt.Errorf("field arms.%s.match_sandbox_seconds: arm %q is not in the spec: add it to arms", a.Name, m)
			}
			if len(ref.Tasks) > 0 && !subset(a.Tasks, ref.Tasks) {
				return fmt.Errorf("field arms.%s.tasks: arm %q, which it is matched to, does not run on all of them", a.Name, m)
			}
			if ref.MatchSandboxSeconds != "" {
				return fmt.Errorf("field arms.%s.match_sandbox_seconds: arm %q is itself matched: match an arm that runs on its own budget", a.Name, m)
			}
		}
	}
	r := s.PassRule
	switch {
	case r.Arm == "":
		return errors.New("field pass_rule.arm: name the arm that must win, fixed before the runs")
	case arms[r.Arm].Name == "":
		return fmt.Errorf("field pass_rule.arm: %q is not one of the spec's arms", r.Arm)
	case r.Measure != MeasureBestTest && r.Measure != MeasureChosenTest && r.Measure != MeasureAnswerTest:
		return fmt.Errorf("field pass_rule.measure: must be %s, %s or %s, got %q", MeasureBestTest, MeasureChosenTest, MeasureAnswerTest, r.Measure)
	case r.MinSeeds < 1 || r.MinSeeds > len(s.Seeds):
		return fmt.Errorf("field pass_rule.min_seeds: %d must be between 1 and the number of seeds (%d)", r.MinSeeds, len(s.Seeds))
	case r.Medal != "" && MedalRank(r.Medal) == 0:
		return fmt.Errorf("field pass_rule.medal: must be bronze, silver or gold, got %q", r.Medal)
	case len(r.Versus) == 0 && r.Medal == "" && r.Paper == "":
		return errors.New("field pass_rule: name the arms to beat (versus), a medal to win (medal) or the paper's system to match (paper), or the rule cannot fail")
	case r.Paper != "" && !paperHasSystem(r.Paper, s.Tasks):
		return fmt.Errorf("field pass_rule.paper: the paper's Table 1 has no %q score for any of the spec's tasks: name a system as paper_tables.csv spells it, e.g. %q", r.Paper, "Qwen2.5-3B RL")
	}
	for _, v := range r.Versus {
		if arms[v].Name == "" || v == r.Arm {
			return fmt.Errorf("field pass_rule.versus: %q must be another of the spec's arms", v)
		}
	}
	return nil
}

// checkRun refuses a key the experiment owns in the last layer, and settings no run could
// start with (the task's own run: section and the cells' common settings come later, in
// `starter experiment run`).
func checkRun(field string, layers ...settings.Overlay) error {
	last := layers[len(layers)-1]
	for _, k := range ownedKeys {
		if last.Sets(k) {
			return fmt.Errorf("field %s: %s is set by the experiment (per cell, or by `starter experiment run`'s own flags): remove it", field, k)
		}
	}
	if _, err := settings.Resolve(layers...); err != nil {
		return fmt.Errorf("field %s: %w", field, err)
	}
	return nil
}

// subset says whether every element of xs is in ys (an empty xs means every task).
func subset(xs, ys []string) bool {
	if len(xs) == 0 {
		return false
	}
	for _, x := range xs {
		if !slices.Contains(ys, x) {
			return false
		}
	}
	return true
}

func dup(xs []string) string {
	seen := map[string]bool{}
	for _, x := range xs {
		if seen[x] {
			return x
		}
		seen[x] = true
	}
	return ""
}

// Cell is one run of the grid.
type Cell struct {
	Task string `json:"task"`
	Arm  string `json:"arm"`
	Seed uint64 `json:"seed"`
	// Run names the cell's run directory and its Train workflow (train-<run>).
	Run string `json:"run"`
	// Match is the run whose sandbox-seconds are this cell's budget ("" for none).
	Match string `json:"match,omitempty"`
}

// Cells expands the grid: seed by seed (so an interrupted experiment has whole seeds first),
// then task, then arm; a matched arm comes after the arm it is matched to.
func (s Spec) Cells() []Cell {
	var out []Cell
	arms := slices.Clone(s.Arms)
	sort.SliceStable(arms, func(i, j int) bool {
		return arms[i].MatchSandboxSeconds == "" && arms[j].MatchSandboxSeconds != ""
	})
	for _, seed := range s.Seeds {
		for _, task := range s.Tasks {
			for _, a := range arms {
				if len(a.Tasks) > 0 && !slices.Contains(a.Tasks, task) {
					continue
				}
				c := Cell{Task: task, Arm: a.Name, Seed: seed, Run: RunName(task, a.Name, seed)}
				if a.MatchSandboxSeconds != "" {
					c.Match = RunName(task, a.MatchSandboxSeconds, seed)
				}
				out = append(out, c)
			}
		}
	}
	return out
}

// Layers are a cell's settings over its task's (settings.Resolve, after the task spec's run:
// section and the experiment's own): the spec's run: section, its arm's, then its seed.
func (s Spec) Layers(c Cell) ([]settings.Overlay, error) {
	i := slices.IndexFunc(s.Arms, func(a Arm) bool { return a.Name == c.Arm })
	if i < 0 {
		return nil, fmt.Errorf("cell %s: arm %q is not in spec %s", c.Run, c.Arm, s.Name)
	}
	seed, err := settings.NewOverlay("cell "+c.Run+" (its seed)", map[string]any{"seed": c.Seed})
	if err != nil {
		return nil, err
	}
	return []settings.Overlay{s.Run, s.Arms[i].Run, seed}, nil
}

// RunName is a cell's run name.
func RunName(task, arm string, seed uint64) string {
	return fmt.Sprintf("%s-%s-s%d", task, arm, seed)
}

// paperHasSystem says whether the paper's Table 1 scores system on at least one of tasks.
func paperHasSystem(system string, tasks []string) bool {
	for _, task := range tasks {
		if _, ok := PaperScore(task, system); ok {
			return true
		}
	}
	return false
}

// PaperScore is system's mean on task in the paper's Table 1.
func PaperScore(task, system string) (float64, bool) {
	bs, err := report.Baselines(task)
	if err != nil {
		return 0, false
	}
	for _, b := range bs {
		if b.Table == "table1" && b.System == system && b.Mean != nil {
			return *b.Mean, true
		}
	}
	return 0, false
}
