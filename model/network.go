package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	"mlerl/codeactions"
)

// Params are the network's weights, row-major: a tanh hidden layer over the step input, a
// policy head over the vocabulary and a value head, both reading the hidden layer plus a bias.
type Params struct {
	In, Hidden, Vocab int
	W1                []float64 // In x Hidden
	Wo                []float64 // (Hidden+1) x Vocab
	Wv                []float64 // (Hidden+1) x 1
}

// NewParams initialises weights with a seeded scaled-uniform draw.
func NewParams(lib *codeactions.Library, hidden int, seed uint64) *Params {
	p := &Params{In: InputDim(lib), Hidden: hidden, Vocab: lib.VocabSize()}
	rng := rand.New(rand.NewPCG(seed, 0x77))
	init := func(n, fanIn int) []float64 {
		w := make([]float64, n)
		s := 1 / math.Sqrt(float64(fanIn))
		for i := range w {
			w[i] = (2*rng.Float64() - 1) * s
		}
		return w
	}
	p.W1 = init(p.In*p.Hidden, p.In)
	p.Wo = init((p.Hidden+1)*p.Vocab, p.Hidden+1)
	p.Wv = make([]float64, p.Hidden+1)
	return p
}

// Clone copies the weights.
func (p *Params) Clone() *Params {
	q := *p
	q.W1 = append([]float64(nil), p.W1...)
	q.Wo = append([]float64(nil), p.Wo...)
	q.Wv = append([]float64(nil), p.Wv...)
	return &q
}

func (p *Params) check(lib *codeactions.Library) error {
	if p.In != InputDim(lib) || p.Vocab != lib.VocabSize() || len(p.W1) != p.In*p.Hidden ||
		len(p.Wo) != (p.Hidden+1)*p.Vocab || len(p.Wv) != p.Hidden+1 {
		return fmt.Errorf("checkpoint weights (%d inputs, %d tokens) do not fit the %s action library (%d inputs, %d tokens): was it written by another version?",
			p.In, p.Vocab, lib.Modality, InputDim(lib), lib.VocabSize())
	}
	return nil
}

// step runs one input row forward: temperature-scaled masked log-probs and the value.
func (p *Params) step(x, mask []float64, invTemp float64) (logp []float64, value float64) {
	h := make([]float64, p.Hidden+1)
	for j := 0; j < p.Hidden; j++ {
		s := 0.0
		for i, xi := range x {
			if xi != 0 {
				s += xi * p.W1[i*p.Hidden+j]
			}
		}
		h[j] = math.Tanh(s)
	}
	h[p.Hidden] = 1
	logits := make([]float64, p.Vocab)
	for k := 0; k < p.Vocab; k++ {
		s := 0.0
		for j, hj := range h {
			s += hj * p.Wo[j*p.Vocab+k]
		}
		logits[k] = s*invTemp + mask[k]
	}
	for j, hj := range h {
		value += hj * p.Wv[j]
	}
	return logSoftmax(logits), value
}

func logSoftmax(z []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range z {
		m = math.Max(m, v)
	}
	s := 0.0
	for _, v := range z {
		s += math.Exp(v - m)
	}
	lse := m + math.Log(s)
	out := make([]float64, len(z))
	for i, v := range z {
		out[i] = v - lse
	}
	return out
}
