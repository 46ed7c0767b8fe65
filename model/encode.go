// Package model is the default policy: a small autoregressive network, written with gorgonia,
// that writes programs as sequences of code actions (package codeactions), conditioned on the
// task, the prompt kind and, for improve prompts, the previous solution and its outcome. It has
// token log-probabilities, a value head, temperature/top-p sampling and the duration-weighted
// PPO update (package model/ppo).
package model

import (
	"math"

	"mlerl/codeactions"
)

// Prompt kinds: half the prompts ask for a new solution, half to improve a previous one.
const (
	KindScratch = "scratch"
	KindImprove = "improve"
)

// Task describes a task to the network.
type Task struct {
	Modality      string `json:"modality"`
	LowerIsBetter bool   `json:"lower_is_better"`
	Classes       int    `json:"classes"`
	Features      int    `json:"features"`
	Rows          int    `json:"rows"`
}

// Previous is an improve prompt's previous solution and what happened when it ran.
type Previous struct {
	Tokens      []int    `json:"tokens"`
	Reward      float64  `json:"reward"`
	LastMarker  int      `json:"last_marker"` // markers reached, 0..7
	Valid       bool     `json:"valid"`
	Duration    float64  `json:"duration_s"`
	TestingLoss *float64 `json:"testing_loss"` // last printed "testing loss:", nil when none
}

// Prompt is what one sample is conditioned on.
type Prompt struct {
	Kind string    `json:"kind"`
	Prev *Previous `json:"prev,omitempty"`
}

var modalities = []string{"tabular-classification", "tabular-regression", "text-classification",
	"text-pair", "span-extraction", "ordinal", "preference", "image"}

const outcomeDim = 5

func contextDim(lib *codeactions.Library) int {
	return len(modalities) + 1 + 3 + 2 + lib.VocabSize() + outcomeDim
}

// InputDim is the width of one step's input row, bias included.
func InputDim(lib *codeactions.Library) int {
	return contextDim(lib) + lib.VocabSize() + len(lib.Slots) + 1
}

// encodeContext writes the prompt's features: task descriptor, kind, previous program and outcome.
func encodeContext(lib *codeactions.Library, t Task, p Prompt) []float64 {
	c := make([]float64, contextDim(lib))
	i := 0
	for k, m := range modalities {
		if m == t.Modality {
			c[k] = 1
		}
	}
	i += len(modalities)
	if t.LowerIsBetter {
		c[i] = 1
	}
	i++
	c[i], c[i+1], c[i+2] = math.Log1p(float64(t.Classes))/5, math.Log1p(float64(t.Features))/5, math.Log1p(float64(t.Rows))/10
	i += 3
	if p.Kind == KindImprove && p.Prev != nil {
		c[i+1] = 1
		i += 2
		for _, tok := range p.Prev.Tokens {
			if tok >= 0 && tok < lib.VocabSize() {
				c[i+tok] = 1
			}
		}
		i += lib.VocabSize()
		c[i] = math.Max(-1, math.Min(1, p.Prev.Reward/10))
		c[i+1] = float64(p.Prev.LastMarker) / 7
		if p.Prev.Valid {
			c[i+2] = 1
		}
		c[i+3] = math.Log1p(p.Prev.Duration) / 6
		if l := p.Prev.TestingLoss; l != nil && !math.IsNaN(*l) && !math.IsInf(*l, 0) {
			c[i+4] = math.Tanh(*l)
		}
	} else {
		c[i] = 1
	}
	return c
}

// stepInput is one autoregressive step: the context, the actions chosen so far, which slot is
// next, and a constant 1 for the bias.
func stepInput(lib *codeactions.Library, ctx []float64, prefix []int, slot int) []float64 {
	x := make([]float64, InputDim(lib))
	copy(x, ctx)
	off := len(ctx)
	for _, tok := range prefix {
		x[off+tok] = 1
	}
	off += lib.VocabSize()
	x[off+slot] = 1
	x[len(x)-1] = 1
	return x
}

// slotMask is 0 for the slot's own tokens and a large negative number elsewhere, so each step
// chooses among its slot's options only.
func slotMask(lib *codeactions.Library, slot int) []float64 {
	m := make([]float64, lib.VocabSize())
	first, n := lib.SlotRange(slot)
	for i := range m {
		if i < first || i >= first+n {
			m[i] = maskedLogit
		}
	}
	return m
}

const maskedLogit = -1e9
