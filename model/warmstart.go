package model

import (
	"math/rand/v2"

	"mlerl/codeactions"
	"mlerl/model/ppo"
)

// priors are the warm start's corpus distribution: what a small pretrained model tends to write
// for a tabular task, plausible but imperfect (wrong paths, mismatched label handling, default
// hyper-parameters, no scaling), so the initial policy runs sometimes and scores poorly, as
// Qwen2.5-3B did. Weights are relative, per option in library order.
var priors = map[string]map[string][]float64{
	"tabular-classification": {
		"imports":     {8, 1, 1},
		"load":        {6, 3, 1},
		"target":      {5, 4, 1},
		"features":    {6, 2, 1, 1, 1, 1},
		"transform":   {6, 2, 1, 1, 1, 1, 1},
		"model":       {2, 2, 4, 1, 1, 1, 2, 1, 1, 1, 2},
		"strength":    {2, 4, 4, 2, 1, 1},
		"validation":  {5, 2, 2, 1},
		"postprocess": {7, 1, 1, 1, 1, 1},
		"submission":  {3, 4, 2, 2},
	},
}

// Corpus draws n programs from the prior; half are improve examples whose target is the previous
// program with one or two slots changed (the habit of editing rather than rewriting).
func Corpus(lib *codeactions.Library, task Task, n int, seed uint64) []Experience {
	rng := rand.New(rand.NewPCG(seed, 0xc0))
	pri := priors[lib.Modality]
	draw := func() []int {
		toks := make([]int, len(lib.Slots))
		for i, s := range lib.Slots {
			first, k := lib.SlotRange(i)
			w := pri[s.Name]
			if len(w) != k {
				w = make([]float64, k)
				for j := range w {
					w[j] = 1
				}
			}
			total := 0.0
			for _, v := range w {
				total += v
			}
			u := rng.Float64() * total
			j := 0
			for ; j < k-1; j++ {
				u -= w[j]
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
func WarmStart(lib *codeactions.Library, cfg Config, task Task, seed uint64) (*Policy, error) {
	p, err := New(lib, cfg, seed)
	if err != nil {
		return nil, err
	}
	corpus := Corpus(lib, task, 256, seed)
	rng := rand.New(rand.NewPCG(seed, 0xbc))
	const steps, batch, lr = 150, 32, 1e-2
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
		p.applyGrads(grads, lr)
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
