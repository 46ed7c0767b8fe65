package model

import (
	"math/rand/v2"

	"mlerl/codeactions"
	"mlerl/model/ppo"
)

// Corpus draws n programs from the library's prior (codeactions.Option.Prior: what a small
// pretrained model tends to write, plausible but imperfect, so the initial policy runs
// sometimes and scores poorly, as Qwen2.5-3B did); half are improve examples whose target is the previous
// program with one or two slots changed (the habit of editing rather than rewriting).
func Corpus(lib *codeactions.Library, task Task, n int, seed uint64) []Experience {
	rng := rand.New(rand.NewPCG(seed, 0xc0))
	draw := func() []int {
		toks := make([]int, len(lib.Slots))
		for i, s := range lib.Slots {
			first, k := lib.SlotRange(i)
			total := 0.0
			for _, o := range s.Options {
				total += o.Weight()
			}
			u := rng.Float64() * total
			j := 0
			for ; j < k-1; j++ {
				u -= s.Options[j].Weight()
				if u <= 0 {
					break
				}
			}
			toks[i] = first + j
		}
		return toks
	}
	out := make([]Experience, 0, n)
	for i := 0; i < n; i++ {
		if i%2 == 0 {
			out = append(out, Experience{Task: task, Prompt: Prompt{Kind: KindScratch}, Tokens: draw()})
			continue
		}
		prev := draw()
		next := append([]int(nil), prev...)
		fresh := draw()
		for e := 0; e < 1+rng.IntN(2); e++ {
			s := rng.IntN(len(next))
			next[s] = fresh[s]
		}
		prompt := Prompt{Kind: KindImprove, Prev: &Previous{Tokens: prev, Reward: -10 + 0.1*float64(rng.IntN(8)), LastMarker: rng.IntN(8), Duration: 1 + 30*rng.Float64(), TestingLoss: ptr(rng.Float64() * 3)}}
		out = append(out, Experience{Task: task, Prompt: prompt, Tokens: next})
	}
	return out
}

// WarmStart builds the reproducible initial policy: random weights then behaviour cloning on the
// seeded corpus. The result is also the reference policy for the KL penalty.
//
// It must write what the prior writes on every seed, since the share of its programs that fail
// is set by the prior's clash options: a corpus of a few hundred draws and a constant step size
// left the policy's clash rate 15 points either side of the prior's, seed by seed. So the corpus
// is large enough that a rare option's share in it is its prior's, and the step size decays to 0,
// so the weights settle instead of ending on the last batches' noise.
func WarmStart(lib *codeactions.Library, cfg Config, task Task, seed uint64) (*Policy, error) {
	p, err := New(lib, cfg, seed)
	if err != nil {
		return nil, err
	}
	corpus := Corpus(lib, task, 4096, seed)
	rng := rand.New(rand.NewPCG(seed, 0xbc))
	const steps, batch, lr = 300, 32, 1e-2
	for s := 0; s < steps; s++ {
		var rows []row
		for b := 0; b < batch; b++ {
			e := corpus[rng.IntN(len(corpus))]
			ctx := encodeContext(lib, e.Task, e.Prompt)
			for t := range e.Tokens {
				rows = append(rows, row{x: stepInput(lib, ctx, e.Tokens[:t], t), mask: slotMask(lib, t), action: e.Tokens[t]})
			}
		}
		// Maximise the corpus log-likelihood: d(cost)/d(logp) = -1/n per token.
		dLogp := make([]float64, len(rows))
		for i := range dLogp {
			dLogp[i] = -1 / float64(len(rows))
		}
		grads, err := p.backward(rows, dLogp, make([]float64, len(rows)), 0)
		if err != nil {
			return nil, err
		}
		ppo.ClipGradNorm(grads[:], 1)
		p.applyGrads(grads, lr*(1-float64(s)/steps))
	}
	p.Ref = p.Params.Clone()
	p.Adam = [3]ppo.Adam{} // the RL optimiser starts fresh
	return p, nil
}

func ptr(v float64) *float64 { return &v }

// Uniform is the policy that picks every option of every slot with equal probability (all
// weights zero): the random-search baseline over the same action space.
func Uniform(lib *codeactions.Library, cfg Config) (*Policy, error) {
	p, err := New(lib, cfg, 0)
	if err != nil {
		return nil, err
	}
	for _, w := range [][]float64{p.Params.W1, p.Params.Wo, p.Params.Wv} {
		clear(w)
	}
	p.Ref = p.Params.Clone()
	return p, nil
}
