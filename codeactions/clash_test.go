package codeactions_test

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/model"
	"mlerl/tasks"
)

// At the warm start most programs must write a valid submission: failures that only teach the
// policy to avoid a combination are the minority. The warm start's scratch programs are drawn
// from the options' priors by model.Corpus itself; on every task fewer than half may meet a
// clash rule, counting the data-dependent ones as failures too.
func TestWarmStartClashRate(t *testing.T) {
	reg := tasks.Builtin()
	for _, id := range reg.IDs() {
		spec, _ := reg.Get(id)
		lib, err := codeactions.For(spec.Modality)
		if err != nil {
			t.Fatal(err)
		}
		schema := codeactions.SchemaOf(spec)
		var n, must, may int
		reasons := map[string]int{}
		for _, e := range model.Corpus(lib, model.Task{Modality: lib.Modality}, 8000, 1) {
			if e.Prompt.Kind != model.KindScratch {
				continue
			}
			n++
			if lib.Clash(e.Tokens, schema) != "" {
				must++
			}
			if r := lib.MayClash(e.Tokens, schema); r != "" {
				may++
				reasons[r]++
			}
		}
		rate := float64(may) / float64(n)
		t.Logf("%-46s %4.1f%% certain clashes, %4.1f%% with the data-dependent ones; most often: %s",
			id, 100*float64(must)/float64(n), 100*rate, topReasons(reasons, 3))
		if rate >= 0.5 {
			t.Errorf("%s: %.1f%% of the warm start's programs meet a clash rule, want under half", id, 100*rate)
		}
	}
}

// The policy a run starts from is the network cloned from that corpus, sampled at the run's
// temperature: on every task, at a seed of its own, fewer than half of its scratch programs may
// meet a clash rule. A warm start that strayed from its prior failed 57% of its first programs
// on insults at seed 602 while the prior's rate was 43%.
func TestWarmStartPolicyClashRate(t *testing.T) {
	reg := tasks.Builtin()
	for i, id := range reg.IDs() {
		spec, _ := reg.Get(id)
		lib, err := codeactions.For(spec.Modality)
		if err != nil {
			t.Fatal(err)
		}
		schema := codeactions.SchemaOf(spec)
		task := model.Task{Modality: lib.Modality, Classes: 2, Features: 10, Rows: 1000}
		seed := uint64(600 + i)
		p, err := model.WarmStart(lib, model.DefaultConfig(), task, seed)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(seed, 1))
		const n = 1000
		may := 0
		for range n {
			if lib.MayClash(p.Sample(task, model.Prompt{Kind: model.KindScratch}, rng).Tokens, schema) != "" {
				may++
			}
		}
		rate := float64(may) / n
		t.Logf("%-46s seed %d: %4.1f%% of the warm start's programs meet a clash rule", id, seed, 100*rate)
		if rate >= 0.5 {
			t.Errorf("%s, seed %d: %.1f%% of the warm start's programs meet a clash rule, want under half", id, seed, 100*rate)
		}
	}
}

func topReasons(counts map[string]int, k int) string {
	type rc struct {
		r string
		n int
	}
	var all []rc
	for r, n := range counts {
		all = append(all, rc{r, n})
	}
	sort.Slice(all, func(i, j int) bool { return all[i].n > all[j].n || all[i].n == all[j].n && all[i].r < all[j].r })
	var out []string
	for _, x := range all[:min(k, len(all))] {
		out = append(out, fmt.Sprintf("%q (%d)", x.r, x.n))
	}
	return strings.Join(out, ", ")
}

// schemaVariants are a task's schema and the same shape graded otherwise (rows matched the other
// way, whole-number answers or not, another metric): tasks a library must serve beyond the
// built-in ones.
func schemaVariants(s codeactions.Schema) []codeactions.Schema {
	byPosition, integer, metric := s, s, s
	byPosition.ByPosition = !s.ByPosition
	integer.Integer = !s.Integer
	metric.Metric = "another-metric"
	return []codeactions.Schema{s, byPosition, integer, metric}
}

// Every clash rule of every library names some program of some task of its modality (a rule
// that can never fire is misspelt or dead), and Clash names no program MayClash does not.
func TestClashRulesAreReachable(t *testing.T) {
	reg := tasks.Builtin()
	rng := rand.New(rand.NewPCG(3, 4))
	for _, m := range codeactions.Modalities() {
		lib, _ := codeactions.For(m)
		if len(lib.Clashes) == 0 {
			t.Errorf("%s: no clash rules", m)
			continue
		}
		fired := make([]bool, len(lib.Clashes))
		for _, id := range reg.IDs() {
			spec, _ := reg.Get(id)
			if spec.Modality != m {
				continue
			}
			for _, schema := range schemaVariants(codeactions.SchemaOf(spec)) {
				for k := 0; k < 5000; k++ {
					toks := randomChoices(lib, rng)
					must, may := lib.Clash(toks, schema), lib.MayClash(toks, schema)
					if must != "" && may != must {
						t.Fatalf("%s: Clash says %q but MayClash %q", id, must, may)
					}
					for i, r := range lib.Clashes {
						if !fired[i] && (r.Reason == must || r.Reason == may) {
							fired[i] = true
						}
					}
				}
			}
		}
		for i, r := range lib.Clashes {
			if !fired[i] {
				t.Errorf("%s: the clash rule %q names no program of any task", m, r.Reason)
			}
		}
	}
}
