package model

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"mlerl/codeactions"
	"mlerl/model/ppo"
)

var leafTask = Task{Modality: "tabular-classification", LowerIsBetter: true, Classes: 99, Features: 192, Rows: 891}

func testPolicy(t *testing.T) *Policy {
	t.Helper()
	p, err := New(codeactions.TabularClassification, Config{Hidden: 8, Temperature: 0.7, TopP: 1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func testRows(p *Policy, n int, rng *rand.Rand) []row {
	var rows []row
	for i := 0; i < n; i++ {
		prompt := Prompt{Kind: KindScratch}
		if i%2 == 1 {
			prev := p.Sample(leafTask, prompt, rng)
			prompt = Prompt{Kind: KindImprove, Prev: &Previous{Tokens: prev.Tokens, Reward: -9.6, LastMarker: 4, Duration: 3, TestingLoss: nil}}
		}
		s := p.Sample(leafTask, prompt, rng)
		ctx := encodeContext(p.Lib, leafTask, prompt)
		for t := range s.Tokens {
			rows = append(rows, row{x: stepInput(p.Lib, ctx, s.Tokens[:t], t), mask: slotMask(p.Lib, t), action: s.Tokens[t]})
		}
	}
	return rows
}

// The cost sum(a*logp) + sum(b*v) - c*sum(entropy) evaluated in plain Go, for finite differences.
func plainCost(p *Policy, rows []row, a, b []float64, c float64) float64 {
	o, _ := p.forward(rows)
	s := 0.0
	for i := range rows {
		s += a[i]*o.logp[i] + b[i]*o.value[i] - c*o.entropy[i]
	}
	return s
}

func TestGorgoniaGradientsMatchFiniteDifferences(t *testing.T) {
	p := testPolicy(t)
	rng := rand.New(rand.NewPCG(3, 4))
	rows := testRows(p, 4, rng)
	a, b := make([]float64, len(rows)), make([]float64, len(rows))
	for i := range rows {
		a[i], b[i] = rng.NormFloat64(), rng.NormFloat64()
	}
	const c = 0.3
	grads, err := p.backward(rows, a, b, c)
	if err != nil {
		t.Fatal(err)
	}
	const h = 1e-6
	for k, w := range [][]float64{p.Params.W1, p.Params.Wo, p.Params.Wv} {
		for trial := 0; trial < 25; trial++ {
			i := rng.IntN(len(w))
			if k == 0 && i/p.Params.Hidden >= len(rows[0].x) {
				continue
			}
			orig := w[i]
			w[i] = orig + h
			up := plainCost(p, rows, a, b, c)
			w[i] = orig - h
			down := plainCost(p, rows, a, b, c)
			w[i] = orig
			num := (up - down) / (2 * h)
			if math.Abs(num-grads[k][i]) > 1e-5*math.Max(1, math.Abs(num)) {
				t.Fatalf("weight set %d index %d: gorgonia gradient %v, finite difference %v", k, i, grads[k][i], num)
			}
		}
	}
}

func TestSampledLogProbsMatchScoring(t *testing.T) {
	p := testPolicy(t)
	rng := rand.New(rand.NewPCG(5, 6))
	s := p.Sample(leafTask, Prompt{Kind: KindScratch}, rng)
	logp, values, _ := p.logProbs(p.Params, leafTask, Prompt{Kind: KindScratch}, s.Tokens)
	for i := range logp {
		if math.Abs(logp[i]-s.LogProbs[i]) > 1e-12 || math.Abs(values[i]-s.Values[i]) > 1e-12 {
			t.Fatalf("token %d: sampled logp %v value %v, scored %v %v", i, s.LogProbs[i], s.Values[i], logp[i], values[i])
		}
	}
	if err := p.Check(s.Tokens); err != nil {
		t.Fatalf("a sample must be a program of the library: %v", err)
	}
}

// tokenShare is how often 400 scratch samples choose tok at slot.
func tokenShare(p *Policy, slot, tok int, rng *rand.Rand) float64 {
	n := 0
	for i := 0; i < 400; i++ {
		if p.Sample(leafTask, Prompt{Kind: KindScratch}, rng).Tokens[slot] == tok {
			n++
		}
	}
	return float64(n) / 400
}

// trainBandit runs PPO updates on batches of 32 scratch samples rewarded by reward(i, tokens),
// i being the sample's place in its batch.
func trainBandit(t *testing.T, p *Policy, cfg ppo.Config, updates int, rng *rand.Rand, reward func(i int, tokens []int) float64) {
	t.Helper()
	for it := 0; it < updates; it++ {
		var batch []Experience
		for i := 0; i < 32; i++ {
			s := p.Sample(leafTask, Prompt{Kind: KindScratch}, rng)
			batch = append(batch, Experience{Task: leafTask, Prompt: Prompt{Kind: KindScratch}, Tokens: s.Tokens, LogProbs: s.LogProbs, Values: s.Values, Reward: reward(i, s.Tokens), Duration: 1})
		}
		if _, err := p.Update(batch, cfg, rng); err != nil {
			t.Fatal(err)
		}
	}
}

// A bandit over programs: the reward is +1 when the model slot picks logreg. PPO must raise the
// probability of logreg well above its initial share.
func TestUpdateLearnsARewardedChoice(t *testing.T) {
	p := testPolicy(t)
	const modelSlot = 5
	logreg, _ := p.Lib.SlotRange(modelSlot)
	rng := rand.New(rand.NewPCG(7, 8))
	before := tokenShare(p, modelSlot, logreg, rng)
	cfg := ppo.Paper()
	cfg.LearningRate = 1e-2
	trainBandit(t, p, cfg, 30, rng, func(_ int, tokens []int) float64 {
		if tokens[modelSlot] == logreg {
			return 1
		}
		return 0
	})
	after := tokenShare(p, modelSlot, logreg, rng)
	if after < 0.5 || after < before+0.3 {
		t.Fatalf("logreg share %.2f before, %.2f after 30 updates: PPO did not learn", before, after)
	}
}

// A batch where crashes (-10, half the runs whatever the program, as when failures persist)
// dominate the spread: under the raw rewards, whitening squeezes the gap between a good valid
// program (-0.05) and a poor one (-0.5) to almost nothing, so the policy learns slowly which
// option is better; rank shaping keeps that gap as wide as any other step in the order. Over
// five seeds and 8 updates (before either saturates) rank shaping must lead in at least four
// and by a margin on average: one seed over 20 updates depended on the library's option count,
// both reaching the better option, and one seed's 400-draw shares are noisy.
func TestRankShapingLearnsQualityAmongValidPrograms(t *testing.T) {
	reward := func(i int, good bool, _ *rand.Rand) float64 {
		switch {
		case i%2 == 0:
			return -10
		case good:
			return -0.05
		}
		return -0.5
	}
	const seeds, updates = 5, 8
	var gap, gain float64
	led := 0
	for seed := uint64(1); seed <= seeds; seed++ {
		cfg := ppo.Paper()
		cfg.LearningRate = 1e-2
		_, none := firstOptionShareAfter(t, cfg, seed, updates, reward)
		cfg.RewardShaping = ppo.ShapingRank
		before, rank := firstOptionShareAfter(t, cfg, seed, updates, reward)
		t.Logf("seed %d: share of the better option %.2f; after %d updates raw rewards %.2f, rank shaping %.2f", seed, before, updates, none, rank)
		if rank > none {
			led++
		}
		gap += (rank - none) / seeds
		gain += (rank - before) / seeds
	}
	if led < seeds-1 || gap < 0.1 || gain < 0.2 {
		t.Fatalf("rank shaping led raw rewards in %d of %d seeds, by %.2f on average, and gained %.2f: want at least %d seeds, 0.1 and 0.2", led, seeds, gap, gain, seeds-1)
	}
}

// Two ways to write the program: the first option usually crashes (-10) but is the best program
// when it runs (-0.01, one run in four), the others are reliably mediocre (-0.5). The expected
// reward prefers the mediocre ones, the best program found the risky one: GAE, which maximises
// the mean, must move away from the risky option, risk-seeking toward it.
func TestRiskSeekingLearnsTheBestCaseWhereGAELearnsTheMean(t *testing.T) {
	reward := func(_ int, risky bool, rng *rand.Rand) float64 {
		switch {
		case !risky:
			return -0.5
		case rng.IntN(4) == 0:
			return -0.01
		}
		return -10
	}
	cfg := ppo.Paper()
	cfg.LearningRate = 1e-2
	cfg.RewardShaping = ppo.ShapingRank
	g0, gae := firstOptionShare(t, cfg, 5, reward)
	cfg.Advantage = ppo.AdvantageRiskSeeking
	r0, risk := firstOptionShare(t, cfg, 5, reward)
	t.Logf("share of the risky option: gae %.2f -> %.2f, risk-seeking %.2f -> %.2f", g0, gae, r0, risk)
	if gae > g0-0.05 || risk < r0+0.2 {
		t.Fatalf("share of the risky option: gae %.2f -> %.2f, risk-seeking %.2f -> %.2f: want gae down and risk-seeking up", g0, gae, r0, risk)
	}
}

// firstOptionShare trains a fresh test policy with 20 updates under cfg, rewarding each sample
// by whether it picks the first option of the validation slot (four options), and returns that
// option's share before and after.
func firstOptionShare(t *testing.T, cfg ppo.Config, seed uint64, reward func(i int, first bool, rng *rand.Rand) float64) (before, after float64) {
	t.Helper()
	return firstOptionShareAfter(t, cfg, seed, 20, reward)
}

// firstOptionShareAfter is firstOptionShare after the given number of updates.
func firstOptionShareAfter(t *testing.T, cfg ppo.Config, seed uint64, updates int, reward func(i int, first bool, rng *rand.Rand) float64) (before, after float64) {
	t.Helper()
	const slot = 7
	p := testPolicy(t)
	first, _ := p.Lib.SlotRange(slot)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	before = tokenShare(p, slot, first, rng)
	trainBandit(t, p, cfg, updates, rng, func(i int, tokens []int) float64 { return reward(i, tokens[slot] == first, rng) })
	return before, tokenShare(p, slot, first, rng)
}

func TestWarmStartIsReproducibleAndImitatesTheCorpus(t *testing.T) {
	a, err := WarmStart(codeactions.TabularClassification, DefaultConfig(), leafTask, 11)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := WarmStart(codeactions.TabularClassification, DefaultConfig(), leafTask, 11)
	for i := range a.Params.W1 {
		if a.Params.W1[i] != b.Params.W1[i] {
			t.Fatal("the same seed must give the same warm start")
		}
	}
	// Sampled at temperature 1, the warm start writes each option about as often as the prior
	// does: within 0.1 of its share, where a corpus of 256 draws left text options 0.24 off.
	cfg := DefaultConfig()
	cfg.Temperature = 1
	p, _ := WarmStart(codeactions.TabularClassification, cfg, leafTask, 11)
	rng := rand.New(rand.NewPCG(1, 2))
	const n = 1000
	counts := map[int]int{}
	for range n {
		for _, tok := range p.Sample(leafTask, Prompt{Kind: KindScratch}, rng).Tokens {
			counts[tok]++
		}
	}
	for i, slot := range p.Lib.Slots {
		first, _ := p.Lib.SlotRange(i)
		total := 0.0
		for _, o := range slot.Options {
			total += o.Weight()
		}
		for j, o := range slot.Options {
			if got, want := float64(counts[first+j])/n, o.Weight()/total; math.Abs(got-want) > 0.1 {
				t.Errorf("%s=%s: the warm start writes it %.3f of the time, the prior %.3f", slot.Name, o.Name, got, want)
			}
		}
	}
}

func TestCheckpointRoundTripGivesTheSameSamples(t *testing.T) {
	p := testPolicy(t)
	data, err := p.Checkpoint(ppo.Paper(), 3, 42).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	q, c, err := LoadCheckpoint(data)
	if err != nil || c.Iteration != 3 || c.Seed != 42 {
		t.Fatalf("load: %v %+v", err, c)
	}
	s1 := p.Sample(leafTask, Prompt{Kind: KindScratch}, rand.New(rand.NewPCG(9, 9)))
	s2 := q.Sample(leafTask, Prompt{Kind: KindScratch}, rand.New(rand.NewPCG(9, 9)))
	for i := range s1.Tokens {
		if s1.Tokens[i] != s2.Tokens[i] || s1.LogProbs[i] != s2.LogProbs[i] {
			t.Fatalf("resumed policy samples differently at token %d", i)
		}
	}
	if _, _, err := LoadCheckpoint([]byte(`{"version": 99}`)); err == nil {
		t.Fatal("a checkpoint of another version must be refused")
	}
}

func TestUniformPolicyIsUniform(t *testing.T) {
	p, err := Uniform(codeactions.TabularClassification, DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	s := p.Sample(leafTask, Prompt{Kind: KindScratch}, rand.New(rand.NewPCG(1, 1)))
	for i, lp := range s.LogProbs {
		_, n := p.Lib.SlotRange(i)
		if math.Abs(lp+math.Log(float64(n))) > 1e-12 {
			t.Fatalf("slot %d: log-prob %v, want log(1/%d)", i, lp, n)
		}
	}
}

// An edit keeps every slot of the previous program but n of those with a choice; it is
// reproducible, its log-probs are the policy's for the whole program (so PPO's ratio starts at
// 1), and without a previous program it is a scratch sample.
func TestEditRedrawsNSlotsAndKeepsTheRest(t *testing.T) {
	p := testPolicy(t)
	rng := rand.New(rand.NewPCG(11, 12))
	prev := p.Sample(leafTask, Prompt{Kind: KindScratch}, rng)
	prompt := Prompt{Kind: KindImprove, Prev: &Previous{Tokens: prev.Tokens, Reward: -0.3, LastMarker: 7, Valid: true, Duration: 2}}
	choices := 0
	for _, s := range p.Lib.Slots {
		if len(s.Options) > 1 {
			choices++
		}
	}
	for _, n := range []int{1, 2, choices, choices + 5} {
		for k := 0; k < 20; k++ {
			seed := uint64(100*n + k)
			s := p.Edit(leafTask, prompt, n, rand.New(rand.NewPCG(seed, 1)))
			again := p.Edit(leafTask, prompt, n, rand.New(rand.NewPCG(seed, 1)))
			if len(s.Kept) != len(s.Tokens) || len(s.LogProbs) != len(s.Tokens) || len(s.Values) != len(s.Tokens) {
				t.Fatalf("n=%d: %d tokens, %d kept flags, %d log-probs, %d values", n, len(s.Tokens), len(s.Kept), len(s.LogProbs), len(s.Values))
			}
			redrawn := 0
			for i, kept := range s.Kept {
				if kept && s.Tokens[i] != prev.Tokens[i] {
					t.Fatalf("n=%d: slot %d is marked kept but changed %d -> %d", n, i, prev.Tokens[i], s.Tokens[i])
				}
				if !kept {
					redrawn++
					if len(p.Lib.Slots[i].Options) < 2 {
						t.Fatalf("n=%d: slot %d has no choice but was redrawn", n, i)
					}
				}
				if s.Tokens[i] != again.Tokens[i] || s.Kept[i] != again.Kept[i] {
					t.Fatalf("n=%d: the same seed edited differently at slot %d", n, i)
				}
			}
			if redrawn != min(n, choices) {
				t.Fatalf("n=%d: %d slots redrawn, want %d", n, redrawn, min(n, choices))
			}
			logp, values, _ := p.logProbs(p.Params, leafTask, prompt, s.Tokens)
			for i := range logp {
				if math.Abs(logp[i]-s.LogProbs[i]) > 1e-12 || math.Abs(values[i]-s.Values[i]) > 1e-12 {
					t.Fatalf("n=%d token %d: recorded logp %v value %v, scored %v %v", n, i, s.LogProbs[i], s.Values[i], logp[i], values[i])
				}
			}
		}
	}
	for name, c := range map[string]struct {
		prompt Prompt
		n      int
	}{
		"no previous program": {Prompt{Kind: KindScratch}, 1},
		"n = 0":               {prompt, 0},
		"a foreign program":   {Prompt{Kind: KindImprove, Prev: &Previous{Tokens: []int{1, 2}}}, 1},
	} {
		s := p.Edit(leafTask, c.prompt, c.n, rand.New(rand.NewPCG(5, 5)))
		want := p.Sample(leafTask, c.prompt, rand.New(rand.NewPCG(5, 5)))
		if len(s.Kept) != 0 || !slices.Equal(s.Tokens, want.Tokens) {
			t.Errorf("%s: Edit = %v (kept %v), want the scratch sample %v", name, s.Tokens, s.Kept, want.Tokens)
		}
	}
}

// Tokens an edit kept were not the policy's choice, so PPO must not credit them: rewarding
// logreg at the model slot teaches nothing when that slot is always marked kept (the same
// bandit without the marks learns it: TestUpdateLearnsARewardedChoice). A batch whose tokens
// are all kept takes no step at all, and kept flags of the wrong length are refused.
func TestUpdateLearnsNothingFromKeptTokens(t *testing.T) {
	p := testPolicy(t)
	const modelSlot = 5
	logreg, _ := p.Lib.SlotRange(modelSlot)
	rng := rand.New(rand.NewPCG(7, 8))
	before := tokenShare(p, modelSlot, logreg, rng)
	cfg := ppo.Paper()
	cfg.LearningRate = 1e-2
	experience := func(keep func(slot int) bool) []Experience {
		var batch []Experience
		for i := 0; i < 32; i++ {
			s := p.Sample(leafTask, Prompt{Kind: KindScratch}, rng)
			kept := make([]bool, len(s.Tokens))
			for slot := range kept {
				kept[slot] = keep(slot)
			}
			r := 0.0
			if s.Tokens[modelSlot] == logreg {
				r = 1
			}
			batch = append(batch, Experience{Task: leafTask, Prompt: Prompt{Kind: KindScratch}, Tokens: s.Tokens, LogProbs: s.LogProbs, Values: s.Values, Reward: r, Duration: 1, Kept: kept})
		}
		return batch
	}
	for it := 0; it < 30; it++ {
		if _, err := p.Update(experience(func(slot int) bool { return slot == modelSlot }), cfg, rng); err != nil {
			t.Fatal(err)
		}
	}
	if after := tokenShare(p, modelSlot, logreg, rng); after > before+0.15 {
		t.Fatalf("logreg share %.2f before, %.2f after 30 updates that kept the model slot: PPO learnt from tokens it did not sample", before, after)
	}

	w := append([]float64(nil), p.Params.W1...)
	st, err := p.Update(experience(func(int) bool { return true }), cfg, rng)
	if err != nil || st.GradientSteps != 0 {
		t.Fatalf("all tokens kept: %d gradient steps, err %v; want none", st.GradientSteps, err)
	}
	for i := range w {
		if w[i] != p.Params.W1[i] {
			t.Fatal("all tokens kept: the weights changed")
		}
	}
	bad := experience(func(int) bool { return false })
	bad[3].Kept = bad[3].Kept[:2]
	if _, err := p.Update(bad, cfg, rng); err == nil {
		t.Fatal("kept flags of the wrong length must be refused")
	}
}
