// Package ppo holds the maths of the duration-aware PPO update as small pure functions, each
// returning its loss and the loss's derivative with respect to the network output it depends
// on; the network code back-propagates those derivatives. Names follow cleanrl's ppo.py.
package ppo

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// Config holds PPO's coefficients. Paper() gives the paper's values.
type Config struct {
	Gamma          float64 `yaml:"gamma"`
	Lambda         float64 `yaml:"lambda"`
	ClipRatio      float64 `yaml:"clip_ratio"` // surrogate clip epsilon
	ValueClip      float64 `yaml:"value_clip"` // critic value clip
	ValueCoef      float64 `yaml:"value_coef"`
	EntropyCoef    float64 `yaml:"entropy_coef"`
	KLCoef         float64 `yaml:"kl_coef"`
	KLEstimator    string  `yaml:"kl_estimator"` // "k1" or "k3" (low variance)
	MaxGradNorm    float64 `yaml:"max_grad_norm"`
	LearningRate   float64 `yaml:"learning_rate"`
	Epochs         int     `yaml:"epochs"`
	Minibatches    int     `yaml:"minibatches"`
	DurationWeight bool    `yaml:"duration_weight"` // weight each sample's policy gradient by dt/mean(dt)
	WhitenAdv      bool    `yaml:"whiten_advantages"`
	// RewardShaping is what the update does to the batch's rewards before GAE, by name:
	// "none" (or empty) uses them as they are, "rank" replaces them by centred ranks (Ranks).
	RewardShaping Shaping `yaml:"reward_shaping"`
	// Advantage is the advantage estimator, by name: "gae" (or empty) for GAE against the value
	// head, "risk-seeking" for RiskSeeking with RiskEpsilon.
	Advantage   AdvantageEstimator `yaml:"advantage"`
	RiskEpsilon float64            `yaml:"risk_epsilon"` // risk-seeking: the top fraction of each batch that is learnt from
}

// Shaping is what the update does to a batch's rewards before its advantages.
type Shaping string

// Reward shapings by name (Config.RewardShaping).
const (
	ShapingNone Shaping = "none"
	ShapingRank Shaping = "rank"
)

// Shapings lists the names Config.RewardShaping takes.
var Shapings = []Shaping{ShapingNone, ShapingRank}

// AdvantageEstimator names how advantages are estimated.
type AdvantageEstimator string

// Advantage estimators by name (Config.Advantage).
const (
	AdvantageGAE         AdvantageEstimator = "gae"
	AdvantageRiskSeeking AdvantageEstimator = "risk-seeking"
)

// Advantages lists the names Config.Advantage takes.
var Advantages = []AdvantageEstimator{AdvantageGAE, AdvantageRiskSeeking}

// Paper returns the paper's settings where they apply to a small network; the learning rate is
// larger than the paper's 1e-5 because our network is trained from a small warm start rather
// than a 3B-parameter model. 1e-3 was chosen by the learning benchmark (benchmarks/RESULTS.md):
// 3e-3 made the policy concentrate before it found strong programs.
func Paper() Config {
	return Config{
		Gamma: 1.0, Lambda: 1.0, ClipRatio: 0.2, ValueClip: 0.5, ValueCoef: 0.5,
		EntropyCoef: 0.001, KLCoef: 0.001, KLEstimator: "k3", MaxGradNorm: 1.0,
		LearningRate: 1e-3, Epochs: 4, Minibatches: 2, DurationWeight: true, WhitenAdv: true,
		RewardShaping: ShapingNone, Advantage: AdvantageGAE, RiskEpsilon: 0.25,
	}
}

// GAE computes advantages and returns for one sequence of per-step rewards and values
// (values[t] estimates the return from step t; the value after the last step is 0).
func GAE(rewards, values []float64, gamma, lambda float64) (adv, ret []float64) {
	n := len(rewards)
	adv, ret = make([]float64, n), make([]float64, n)
	next, last := 0.0, 0.0
	for t := n - 1; t >= 0; t-- {
		delta := rewards[t] + gamma*next - values[t]
		last = delta + gamma*lambda*last
		adv[t] = last
		ret[t] = adv[t] + values[t]
		next = values[t]
	}
	return adv, ret
}

// Whiten rescales x to mean 0 and standard deviation 1 (unchanged when constant).
func Whiten(x []float64) []float64 {
	mean, std := MeanStd(x)
	out := make([]float64, len(x))
	for i, v := range x {
		if std < 1e-8 {
			out[i] = v - mean
		} else {
			out[i] = (v - mean) / std
		}
	}
	return out
}

// MeanStd returns the mean and population standard deviation.
func MeanStd(x []float64) (float64, float64) {
	if len(x) == 0 {
		return 0, 0
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= float64(len(x))
	s := 0.0
	for _, v := range x {
		s += (v - m) * (v - m)
	}
	return m, math.Sqrt(s / float64(len(x)))
}

// ShapeRewards applies the named shaping to one batch's rewards.
func ShapeRewards(rewards []float64, shaping Shaping) []float64 {
	if shaping == ShapingRank {
		return Ranks(rewards)
	}
	return append([]float64(nil), rewards...)
}

// Ranks replaces each reward by its centred rank in the batch: evenly spaced from -0.5 (worst)
// to 0.5 (best), ties sharing their mean rank, 0 for a batch of one. This is evolution
// strategies' fitness shaping: only the order counts, so a crash at -10 no longer shrinks the
// gaps between valid programs to nothing after whitening, and a log loss of 30 cannot outweigh
// the rest of the batch.
func Ranks(rewards []float64) []float64 {
	n := len(rewards)
	out := make([]float64, n)
	if n < 2 {
		return out
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return rewards[idx[a]] < rewards[idx[b]] })
	for lo := 0; lo < n; {
		hi := lo
		for hi+1 < n && rewards[idx[hi+1]] == rewards[idx[lo]] {
			hi++
		}
		r := float64(lo+hi)/2/float64(n-1) - 0.5
		for k := lo; k <= hi; k++ {
			out[idx[k]] = r
		}
		lo = hi + 1
	}
	return out
}

// RiskSeeking returns one advantage per sample for the risk-seeking policy gradient (Petersen
// et al., "Deep symbolic regression", ICLR 2021): the reward minus the batch's (1-epsilon)
// quantile for the samples above it, 0 for the rest. Standard PPO maximises the expected reward,
// so a policy that writes reliably valid, mediocre programs scores well; a platform that keeps
// the best program wants the top of the distribution instead, and this objective learns only
// from the batch's best epsilon and never pushes down the others.
func RiskSeeking(rewards []float64, epsilon float64) []float64 {
	out := make([]float64, len(rewards))
	if len(rewards) == 0 {
		return out
	}
	q := Quantile(rewards, 1-epsilon)
	for i, r := range rewards {
		out[i] = math.Max(0, r-q)
	}
	return out
}

// Quantile is the q-quantile of x, interpolating linearly between order statistics (numpy's
// default): 0 gives the minimum, 1 the maximum. x must not be empty.
func Quantile(x []float64, q float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	pos := math.Max(0, math.Min(1, q)) * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (pos-float64(lo))*(s[lo+1]-s[lo])
}

// DurationWeights returns dt_k / mean(dt), so that a sample's share of the gradient no longer
// shrinks with its execution time; all ones when disabled or when durations are all zero.
func DurationWeights(durations []float64, enabled bool) []float64 {
	w := make([]float64, len(durations))
	mean, _ := MeanStd(durations)
	for i, d := range durations {
		if !enabled || mean <= 0 {
			w[i] = 1
		} else {
			w[i] = d / mean
		}
	}
	return w
}

// PGLoss is the clipped surrogate for one token: -w * min(r*A, clip(r)*A) with r the ratio of
// new to old probability. It returns the loss, its derivative with respect to the new log-prob,
// and whether the clip was active.
func PGLoss(logp, oldLogp, adv, weight, clip float64) (loss, dLogp float64, clipped bool) {
	ratio := math.Exp(logp - oldLogp)
	unclipped := ratio * adv
	c := math.Max(math.Min(ratio, 1+clip), 1-clip) * adv
	if unclipped <= c {
		return -weight * unclipped, -weight * unclipped, false // d(r*A)/dlogp = r*A
	}
	return -weight * c, 0, true
}

// VLoss is the clipped value loss 0.5*max((v-R)^2, (clip(v, old±c)-R)^2) and d/dv.
func VLoss(v, oldV, ret, clip float64) (loss, dV float64) {
	a := v - ret
	vc := math.Max(math.Min(v, oldV+clip), oldV-clip)
	b := vc - ret
	if a*a >= b*b {
		return 0.5 * a * a, a
	}
	// Only a clipped value (vc != v) can make the clipped error larger, and it is constant in v.
	return 0.5 * b * b, 0
}

// ApproxKL is cleanrl's approx_kl for one token: the k3 estimate (r-1) - log r of KL(old || new),
// with r = exp(logp - oldLogp); a diagnostic of how far an update moved the policy.
func ApproxKL(logp, oldLogp float64) float64 {
	logRatio := logp - oldLogp
	return math.Expm1(logRatio) - logRatio
}

// ClipFrac counts one token toward cleanrl's clipfrac: its ratio left [1-clip, 1+clip],
// whichever the advantage's sign.
func ClipFrac(logp, oldLogp, clip float64) float64 {
	if math.Abs(math.Exp(logp-oldLogp)-1) > clip {
		return 1
	}
	return 0
}

// KL estimates KL(pi || ref) for a sampled token from the two log-probs and returns d/dlogp.
// k1 is logp-ref; k3 is exp(ref-logp) - (ref-logp) - 1, unbiased and always non-negative.
func KL(logp, refLogp float64, estimator string) (kl, dLogp float64) {
	switch estimator {
	case "k1":
		return logp - refLogp, 1
	default:
		d := refLogp - logp
		return math.Exp(d) - d - 1, -math.Exp(d) + 1
	}
}

// ClipGradNorm scales the gradients in place so their global L2 norm is at most max, and returns
// the norm before clipping.
func ClipGradNorm(grads [][]float64, max float64) float64 {
	s := 0.0
	for _, g := range grads {
		for _, v := range g {
			s += v * v
		}
	}
	norm := math.Sqrt(s)
	if max > 0 && norm > max {
		k := max / norm
		for _, g := range grads {
			for i := range g {
				g[i] *= k
			}
		}
	}
	return norm
}

// Adam is the optimiser's state for one parameter vector.
type Adam struct {
	M, V []float64
	Step int
}

// AdamStep updates params in place (beta1 0.9, beta2 0.999, eps 1e-8).
func AdamStep(params, grad []float64, st *Adam, lr float64) {
	const b1, b2, eps = 0.9, 0.999, 1e-8
	if st.M == nil {
		st.M, st.V = make([]float64, len(params)), make([]float64, len(params))
	}
	st.Step++
	c1 := 1 - math.Pow(b1, float64(st.Step))
	c2 := 1 - math.Pow(b2, float64(st.Step))
	for i, g := range grad {
		st.M[i] = b1*st.M[i] + (1-b1)*g
		st.V[i] = b2*st.V[i] + (1-b2)*g*g
		params[i] -= lr * (st.M[i] / c1) / (math.Sqrt(st.V[i]/c2) + eps)
	}
}

// FieldError names the setting (by its YAML key) PPO cannot run with and why.
type FieldError struct {
	Field, Problem string
}

func (e *FieldError) Error() string { return e.Field + " " + e.Problem }

// Validate names the first setting PPO cannot run with.
func (c Config) Validate() error {
	bad := func(field, format string, a ...any) error {
		return &FieldError{Field: field, Problem: fmt.Sprintf(format, a...)}
	}
	switch {
	case c.Gamma < 0 || c.Gamma > 1:
		return bad("gamma", "must be in [0, 1], got %v", c.Gamma)
	case c.Lambda < 0 || c.Lambda > 1:
		return bad("lambda", "must be in [0, 1], got %v", c.Lambda)
	case c.ClipRatio <= 0 || c.ClipRatio >= 1:
		return bad("clip_ratio", "must be in (0, 1), got %v", c.ClipRatio)
	case c.ValueClip < 0:
		return bad("value_clip", "must not be negative, got %v", c.ValueClip)
	case c.ValueCoef < 0:
		return bad("value_coef", "must not be negative, got %v", c.ValueCoef)
	case c.EntropyCoef < 0:
		return bad("entropy_coef", "must not be negative, got %v", c.EntropyCoef)
	case c.KLCoef < 0:
		return bad("kl_coef", "must not be negative, got %v", c.KLCoef)
	case c.KLEstimator != "k1" && c.KLEstimator != "k3":
		return bad("kl_estimator", "must be k1 or k3, got %q", c.KLEstimator)
	case c.MaxGradNorm <= 0:
		return bad("max_grad_norm", "must be positive, got %v", c.MaxGradNorm)
	case c.LearningRate < 0:
		return bad("learning_rate", "must not be negative (0: never update), got %v", c.LearningRate)
	case c.RewardShaping != "" && !slices.Contains(Shapings, c.RewardShaping):
		return bad("reward_shaping", "must be %s, got %q", joinNames(Shapings), c.RewardShaping)
	case c.Advantage != "" && !slices.Contains(Advantages, c.Advantage):
		return bad("advantage", "must be %s, got %q", joinNames(Advantages), c.Advantage)
	case c.Advantage == AdvantageRiskSeeking && (c.RiskEpsilon <= 0 || c.RiskEpsilon > 1):
		return bad("risk_epsilon", "must be in (0, 1] for the risk-seeking advantage, got %v", c.RiskEpsilon)
	case c.Epochs < 1:
		return bad("epochs", "must be at least 1, got %d", c.Epochs)
	case c.Minibatches < 1:
		return bad("minibatches", "must be at least 1, got %d", c.Minibatches)
	}
	return nil
}

func joinNames[T ~string](names []T) string {
	s := make([]string, len(names))
	for i, n := range names {
		s[i] = string(n)
	}
	return strings.Join(s, " or ")
}
