package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"

	"mlerl/codeactions"
	"mlerl/model/ppo"
)

// Config is the network's architecture and sampling settings (a run's settings.Policy
// converts to it: the same fields, so model stays below the settings that configure it).
type Config struct {
	Hidden      int     `json:"hidden" yaml:"hidden"`
	Temperature float64 `json:"temperature" yaml:"temperature"`
	TopP        float64 `json:"top_p" yaml:"top_p"`
}

// DefaultConfig follows the paper's sampling (temperature 0.7, top-p 1).
func DefaultConfig() Config { return Config{Hidden: 64, Temperature: 0.7, TopP: 1.0} }

// Policy is the trainable program writer plus its frozen reference (the warm start) for the KL
// penalty and the optimiser state.
type Policy struct {
	Lib    *codeactions.Library
	Config Config
	Params *Params
	Ref    *Params
	Adam   [3]ppo.Adam // W1, Wo, Wv
}

// Sample is one written program with what PPO needs later.
type Sample struct {
	Tokens   []int     `json:"tokens"`
	LogProbs []float64 `json:"logprobs"` // per token, under the sampling distribution
	Values   []float64 `json:"values"`   // value estimate before each token
	// Kept marks tokens copied from an improve prompt's previous program (Edit), not sampled:
	// PPO learns only from the sampled ones. Empty when every token was sampled.
	Kept []bool `json:"kept,omitempty"`
}

// Sample writes one program for the prompt. rng makes it reproducible.
func (p *Policy) Sample(task Task, prompt Prompt, rng *rand.Rand) Sample {
	ctx := encodeContext(p.Lib, task, prompt)
	var s Sample
	for slot := range p.Lib.Slots {
		x := stepInput(p.Lib, ctx, s.Tokens, slot)
		logp, v := p.Params.step(x, slotMask(p.Lib, slot), 1/p.Config.Temperature)
		tok := sampleTopP(logp, p.Config.TopP, rng)
		s.Tokens = append(s.Tokens, tok)
		s.LogProbs = append(s.LogProbs, logp[tok])
		s.Values = append(s.Values, v)
	}
	return s
}

// Edit writes an improve prompt's program as an edit of the previous one: n of the slots that
// offer a choice, drawn uniformly, are sampled from the policy (conditioned, like every step,
// on the prompt and the tokens before it); the others keep the previous program's tokens. A
// rewrite from scratch rarely lands next to a good program; an edit searches its neighbourhood,
// as the answer's slot-by-slot tuning does. Without a usable previous program (none, or not one
// of this library's) it samples the whole program.
func (p *Policy) Edit(task Task, prompt Prompt, n int, rng *rand.Rand) Sample {
	if n <= 0 || prompt.Prev == nil || p.Check(prompt.Prev.Tokens) != nil {
		return p.Sample(task, prompt, rng)
	}
	var choices []int
	for slot := range p.Lib.Slots {
		if len(p.Lib.Slots[slot].Options) > 1 {
			choices = append(choices, slot)
		}
	}
	if len(choices) == 0 {
		return p.Sample(task, prompt, rng)
	}
	rng.Shuffle(len(choices), func(i, j int) { choices[i], choices[j] = choices[j], choices[i] })
	redraw := map[int]bool{}
	for _, slot := range choices[:min(n, len(choices))] {
		redraw[slot] = true
	}
	ctx := encodeContext(p.Lib, task, prompt)
	var s Sample
	for slot := range p.Lib.Slots {
		x := stepInput(p.Lib, ctx, s.Tokens, slot)
		logp, v := p.Params.step(x, slotMask(p.Lib, slot), 1/p.Config.Temperature)
		tok := prompt.Prev.Tokens[slot]
		if redraw[slot] {
			tok = sampleTopP(logp, p.Config.TopP, rng)
		}
		s.Tokens = append(s.Tokens, tok)
		s.LogProbs = append(s.LogProbs, logp[tok])
		s.Values = append(s.Values, v)
		s.Kept = append(s.Kept, !redraw[slot])
	}
	return s
}

// sampleTopP draws from the smallest set of tokens whose probability reaches topP.
func sampleTopP(logp []float64, topP float64, rng *rand.Rand) int {
	idx := make([]int, 0, len(logp))
	for i, l := range logp {
		if l > maskedLogit/2 {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool { return logp[idx[a]] > logp[idx[b]] })
	if topP < 1 {
		cum := 0.0
		for k, i := range idx {
			cum += math.Exp(logp[i])
			if cum >= topP {
				idx = idx[:k+1]
				break
			}
		}
	}
	total := 0.0
	for _, i := range idx {
		total += math.Exp(logp[i])
	}
	u := rng.Float64() * total
	for _, i := range idx {
		u -= math.Exp(logp[i])
		if u <= 0 {
			return i
		}
	}
	return idx[len(idx)-1]
}

// LogProbs scores given tokens under params: per-token log-probs, values and entropies.
func (p *Policy) logProbs(params *Params, task Task, prompt Prompt, tokens []int) (logp, values, ent []float64) {
	ctx := encodeContext(p.Lib, task, prompt)
	for slot := range p.Lib.Slots {
		x := stepInput(p.Lib, ctx, tokens[:slot], slot)
		lp, v := params.step(x, slotMask(p.Lib, slot), 1/p.Config.Temperature)
		logp = append(logp, lp[tokens[slot]])
		values = append(values, v)
		h := 0.0
		for _, l := range lp {
			if l > maskedLogit/2 {
				h -= math.Exp(l) * l
			}
		}
		ent = append(ent, h)
	}
	return logp, values, ent
}

// Check returns an error when tokens are not a program of this library.
func (p *Policy) Check(tokens []int) error {
	_, err := p.Lib.Choices(tokens)
	return err
}

// New makes a randomly initialised policy (use WarmStart for the reproducible initial policy).
func New(lib *codeactions.Library, cfg Config, seed uint64) (*Policy, error) {
	if cfg.Hidden <= 0 || cfg.Temperature <= 0 || cfg.TopP <= 0 || cfg.TopP > 1 {
		return nil, fmt.Errorf("policy config %+v: hidden and temperature must be positive and top_p in (0, 1]", cfg)
	}
	params := NewParams(lib, cfg.Hidden, seed)
	return &Policy{Lib: lib, Config: cfg, Params: params, Ref: params.Clone()}, nil
}
