package model

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"mlerl/model/ppo"
)

// Experience is one executed sample: its prompt, its tokens with their sampling-time log-probs
// and values, its reward and how long it ran.
type Experience struct {
	Task     Task      `json:"task"`
	Prompt   Prompt    `json:"prompt"`
	Tokens   []int     `json:"tokens"`
	LogProbs []float64 `json:"logprobs"`
	Values   []float64 `json:"values"`
	Reward   float64   `json:"reward"`
	Duration float64   `json:"duration_s"`
	// Kept marks tokens copied from the previous program by an edit (Sample.Kept): they were
	// not sampled, so no loss is computed on them. Empty: every token was sampled.
	Kept []bool `json:"kept,omitempty"`
}

// Stats are PPO's diagnostics for one update (cleanrl's names).
type Stats struct {
	PGLoss        float64 `json:"pg_loss"`
	VLoss         float64 `json:"v_loss"`
	Entropy       float64 `json:"entropy"`
	KL            float64 `json:"kl_ref"`
	ApproxKL      float64 `json:"approx_kl"`
	ClipFrac      float64 `json:"clipfrac"`
	GradNorm      float64 `json:"grad_norm"`
	MeanWeight    float64 `json:"mean_duration_weight"`
	MaxWeight     float64 `json:"max_duration_weight"`
	Samples       int     `json:"samples"`
	GradientSteps int     `json:"gradient_steps"`
}

// row is one token of one sample, flattened for the network.
type row struct {
	x, mask          []float64
	action           int
	oldLogp, oldV    float64
	adv, ret, weight float64
	refLogp          float64
}

// Update runs PPO on a batch: the rewards shaped as cfg names, advantages from the terminal
// reward (GAE with optional whitening, or risk-seeking), the duration weight per sample, then
// epochs of shuffled minibatches with clipped surrogate, clipped value loss, entropy bonus and
// KL to the reference, gradient-norm clipping and Adam.
func (p *Policy) Update(batch []Experience, cfg ppo.Config, rng *rand.Rand) (Stats, error) {
	if len(batch) == 0 {
		return Stats{}, fmt.Errorf("PPO update needs at least one sample")
	}
	durations := make([]float64, len(batch))
	for i, e := range batch {
		if err := p.Check(e.Tokens); err != nil {
			return Stats{}, fmt.Errorf("sample %d: %w", i, err)
		}
		if len(e.LogProbs) != len(e.Tokens) || len(e.Values) != len(e.Tokens) {
			return Stats{}, fmt.Errorf("sample %d: %d tokens but %d log-probs and %d values", i, len(e.Tokens), len(e.LogProbs), len(e.Values))
		}
		if len(e.Kept) != 0 && len(e.Kept) != len(e.Tokens) {
			return Stats{}, fmt.Errorf("sample %d: %d tokens but %d kept flags", i, len(e.Tokens), len(e.Kept))
		}
		durations[i] = e.Duration
	}
	weights := ppo.DurationWeights(durations, cfg.DurationWeight)
	batchRewards := make([]float64, len(batch))
	for i, e := range batch {
		batchRewards[i] = e.Reward
	}
	shaped := ppo.ShapeRewards(batchRewards, cfg.RewardShaping)
	riskSeeking := cfg.Advantage == ppo.AdvantageRiskSeeking
	var elite []float64
	if riskSeeking {
		elite = ppo.RiskSeeking(shaped, cfg.RiskEpsilon)
	}
	perSample := make([][]row, len(batch))
	var allAdv []float64
	for i, e := range batch {
		rewards := make([]float64, len(e.Tokens))
		rewards[len(rewards)-1] = shaped[i]
		adv, ret := ppo.GAE(rewards, e.Values, cfg.Gamma, cfg.Lambda)
		if riskSeeking {
			// Every token shares its sample's advantage (no critic baseline: the quantile is the
			// baseline); the value head still learns the returns, for the diagnostics.
			for t := range adv {
				adv[t] = elite[i]
			}
		}
		refLogp, _, _ := p.logProbs(p.Ref, e.Task, e.Prompt, e.Tokens)
		ctx := encodeContext(p.Lib, e.Task, e.Prompt)
		for t := range e.Tokens {
			if len(e.Kept) > 0 && e.Kept[t] {
				continue
			}
			perSample[i] = append(perSample[i], row{
				x: stepInput(p.Lib, ctx, e.Tokens[:t], t), mask: slotMask(p.Lib, t), action: e.Tokens[t],
				oldLogp: e.LogProbs[t], oldV: e.Values[t], adv: adv[t], ret: ret[t], weight: weights[i], refLogp: refLogp[t],
			})
			allAdv = append(allAdv, adv[t])
		}
	}
	// Risk-seeking advantages are not whitened: the samples below the quantile must keep 0.
	if cfg.WhitenAdv && !riskSeeking && len(allAdv) > 1 {
		w := ppo.Whiten(allAdv)
		k := 0
		for i := range perSample {
			for t := range perSample[i] {
				perSample[i][t].adv = w[k]
				k++
			}
		}
	}
	var st Stats
	st.Samples = len(batch)
	st.MeanWeight, _ = ppo.MeanStd(weights)
	for _, w := range weights {
		st.MaxWeight = math.Max(st.MaxWeight, w)
	}
	nmb := max(1, min(cfg.Minibatches, len(batch)))
	var count float64
	for epoch := 0; epoch < max(1, cfg.Epochs); epoch++ {
		order := rng.Perm(len(batch))
		for m := 0; m < nmb; m++ {
			var rows []row
			for k := m; k < len(order); k += nmb {
				rows = append(rows, perSample[order[k]]...)
			}
			if len(rows) == 0 { // its samples' tokens were all kept: nothing was sampled
				continue
			}
			s, err := p.ppoStep(rows, cfg)
			if err != nil {
				return st, err
			}
			st.PGLoss += s.PGLoss
			st.VLoss += s.VLoss
			st.Entropy += s.Entropy
			st.KL += s.KL
			st.ApproxKL += s.ApproxKL
			st.ClipFrac += s.ClipFrac
			st.GradNorm += s.GradNorm
			st.GradientSteps++
			count++
		}
	}
	if count == 0 {
		return st, nil
	}
	st.PGLoss /= count
	st.VLoss /= count
	st.Entropy /= count
	st.KL /= count
	st.ApproxKL /= count
	st.ClipFrac /= count
	st.GradNorm /= count
	return st, nil
}

// ppoStep computes the losses' derivatives with respect to each token's log-prob and value (the
// pure functions in ppo), back-propagates them through the network with gorgonia, clips the
// gradient norm and takes an Adam step.
func (p *Policy) ppoStep(rows []row, cfg ppo.Config) (Stats, error) {
	n := float64(len(rows))
	out, err := p.forward(rows)
	if err != nil {
		return Stats{}, err
	}
	dLogp := make([]float64, len(rows))
	dV := make([]float64, len(rows))
	var st Stats
	for i, r := range rows {
		pg, dpg, _ := ppo.PGLoss(out.logp[i], r.oldLogp, r.adv, r.weight, cfg.ClipRatio)
		kl, dkl := ppo.KL(out.logp[i], r.refLogp, cfg.KLEstimator)
		vl, dv := ppo.VLoss(out.value[i], r.oldV, r.ret, cfg.ValueClip)
		dLogp[i] = (dpg + cfg.KLCoef*dkl) / n
		dV[i] = cfg.ValueCoef * dv / n
		st.PGLoss += pg / n
		st.VLoss += vl / n
		st.KL += kl / n
		st.Entropy += out.entropy[i] / n
		st.ApproxKL += ppo.ApproxKL(out.logp[i], r.oldLogp) / n
		st.ClipFrac += ppo.ClipFrac(out.logp[i], r.oldLogp, cfg.ClipRatio) / n
	}
	grads, err := p.backward(rows, dLogp, dV, cfg.EntropyCoef/n)
	if err != nil {
		return Stats{}, err
	}
	st.GradNorm = ppo.ClipGradNorm(grads[:], cfg.MaxGradNorm)
	p.applyGrads(grads, cfg.LearningRate)
	return st, nil
}

func (p *Policy) applyGrads(grads [3][]float64, lr float64) {
	ppo.AdamStep(p.Params.W1, grads[0], &p.Adam[0], lr)
	ppo.AdamStep(p.Params.Wo, grads[1], &p.Adam[1], lr)
	ppo.AdamStep(p.Params.Wv, grads[2], &p.Adam[2], lr)
}

type forwardOut struct{ logp, value, entropy []float64 }

// forward scores rows with the current weights (the same maths as sampling).
func (p *Policy) forward(rows []row) (forwardOut, error) {
	var o forwardOut
	inv := 1 / p.Config.Temperature
	for _, r := range rows {
		lp, v := p.Params.step(r.x, r.mask, inv)
		o.logp = append(o.logp, lp[r.action])
		o.value = append(o.value, v)
		h := 0.0
		for _, l := range lp {
			if l > maskedLogit/2 {
				h -= math.Exp(l) * l
			}
		}
		o.entropy = append(o.entropy, h)
	}
	return o, nil
}

// graph is the network as a gorgonia expression over a batch of rows, whose scalar output is
//
//	sum_i dLogp_i * logp_i + sum_i dV_i * v_i - entCoef * sum_i entropy_i
//
// so its gradient with respect to the weights is the chain rule applied to the PPO losses.
type graph struct {
	g             *G.ExprGraph
	w1, wo, wv    *G.Node
	logp, v, cost *G.Node
	chosenLogp    *G.Node
	entropy       *G.Node
}

func (p *Policy) build(rows []row, dLogp, dV []float64, entCoef float64) (*graph, error) {
	n, in, hid, voc := len(rows), p.Params.In, p.Params.Hidden, p.Params.Vocab
	xs := make([]float64, 0, n*in)
	masks := make([]float64, 0, n*voc)
	onehot := make([]float64, n*voc)
	for i, r := range rows {
		xs = append(xs, r.x...)
		masks = append(masks, r.mask...)
		onehot[i*voc+r.action] = 1
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	entC := make([]float64, n)
	for i := range entC {
		entC[i] = entCoef
	}
	g := G.NewGraph()
	mat := func(name string, r, c int, data []float64) *G.Node {
		return G.NewMatrix(g, tensor.Float64, G.WithShape(r, c), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(r, c), tensor.WithBacking(append([]float64(nil), data...)))))
	}
	vec := func(name string, data []float64) *G.Node {
		return G.NewVector(g, tensor.Float64, G.WithShape(len(data)), G.WithName(name),
			G.WithValue(tensor.New(tensor.WithShape(len(data)), tensor.WithBacking(append([]float64(nil), data...)))))
	}
	gr := &graph{g: g}
	gr.w1 = mat("w1", in, hid, p.Params.W1)
	gr.wo = mat("wo", hid+1, voc, p.Params.Wo)
	gr.wv = mat("wv", hid+1, 1, p.Params.Wv)
	x := mat("x", n, in, xs)
	mask := mat("mask", n, voc, masks)
	act := mat("action", n, voc, onehot)
	one := mat("ones", n, 1, ones)

	var err error
	must := func(nd *G.Node, e error) *G.Node {
		if e != nil && err == nil {
			err = e
		}
		return nd
	}
	h := must(G.Tanh(must(G.Mul(x, gr.w1))))
	h1 := must(G.Concat(1, h, one))
	logits := must(G.Mul(h1, gr.wo))
	scaled := must(G.Mul(logits, G.NewConstant(1/p.Config.Temperature)))
	gr.logp = must(G.LogSoftMax(must(G.Add(scaled, mask)), 1))
	gr.chosenLogp = must(G.Sum(must(G.HadamardProd(gr.logp, act)), 1))
	v := must(G.Mul(h1, gr.wv))
	gr.v = must(G.Reshape(v, tensor.Shape{n}))
	probs := must(G.Exp(gr.logp))
	gr.entropy = must(G.Neg(must(G.Sum(must(G.HadamardProd(probs, gr.logp)), 1))))
	pgTerm := must(G.Sum(must(G.HadamardProd(gr.chosenLogp, vec("dlogp", dLogp)))))
	vTerm := must(G.Sum(must(G.HadamardProd(gr.v, vec("dv", dV)))))
	entTerm := must(G.Sum(must(G.HadamardProd(gr.entropy, vec("entcoef", entC)))))
	gr.cost = must(G.Sub(must(G.Add(pgTerm, vTerm)), entTerm))
	if err != nil {
		return nil, fmt.Errorf("building the policy graph: %w", err)
	}
	if _, err := G.Grad(gr.cost, gr.w1, gr.wo, gr.wv); err != nil {
		return nil, fmt.Errorf("differentiating the policy graph: %w", err)
	}
	return gr, nil
}

// backward returns d(cost)/d(W1, Wo, Wv) for the given per-row coefficients.
func (p *Policy) backward(rows []row, dLogp, dV []float64, entCoef float64) ([3][]float64, error) {
	gr, err := p.build(rows, dLogp, dV, entCoef)
	if err != nil {
		return [3][]float64{}, err
	}
	vm := G.NewTapeMachine(gr.g)
	defer vm.Close()
	if err := vm.RunAll(); err != nil {
		return [3][]float64{}, fmt.Errorf("running the policy graph: %w", err)
	}
	var out [3][]float64
	for k, w := range []*G.Node{gr.w1, gr.wo, gr.wv} {
		gv, err := w.Grad()
		if err != nil {
			return out, err
		}
		out[k] = append([]float64(nil), gv.Data().([]float64)...)
	}
	return out, nil
}
