package ppo

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// nearAll is near for every element of two slices of the same length.
func nearAll(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !near(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestGAE(t *testing.T) {
	cases := []struct {
		name          string
		rewards, vals []float64
		gamma, lambda float64
		adv, ret      []float64
	}{
		{"terminal reward, gamma=lambda=1: A_t = R - V_t", []float64{0, 0, 2}, []float64{0.5, 1, 1.5}, 1, 1, []float64{1.5, 1, 0.5}, []float64{2, 2, 2}},
		{"lambda=0 is one-step TD", []float64{0, 0, 2}, []float64{0.5, 1, 1.5}, 1, 0, []float64{0.5, 0.5, 0.5}, []float64{1, 1.5, 2}},
		{"discounting", []float64{1, 1}, []float64{0, 0}, 0.5, 1, []float64{1.5, 1}, []float64{1.5, 1}},
	}
	for _, c := range cases {
		adv, ret := GAE(c.rewards, c.vals, c.gamma, c.lambda)
		for i := range adv {
			if !near(adv[i], c.adv[i]) || !near(ret[i], c.ret[i]) {
				t.Fatalf("%s: adv %v ret %v, want %v %v", c.name, adv, ret, c.adv, c.ret)
			}
		}
	}
}

func TestDurationWeights(t *testing.T) {
	cases := []struct {
		name string
		dt   []float64
		on   bool
		want []float64
	}{
		{"mean one", []float64{1, 3}, true, []float64{0.5, 1.5}},
		{"off", []float64{1, 3}, false, []float64{1, 1}},
		{"all zero", []float64{0, 0}, true, []float64{1, 1}},
	}
	for _, c := range cases {
		got := DurationWeights(c.dt, c.on)
		for i := range got {
			if !near(got[i], c.want[i]) {
				t.Fatalf("%s: %v want %v", c.name, got, c.want)
			}
		}
	}
}

func TestPGLoss(t *testing.T) {
	cases := []struct {
		name                    string
		logp, old, adv, w, clip float64
		wantLoss, wantD         float64
		wantClipped             bool
	}{
		{"ratio 1", 0, 0, 2, 1, 0.2, -2, -2, false},
		{"weight scales", 0, 0, 2, 0.5, 0.2, -1, -1, false},
		{"positive adv, ratio above 1+eps is clipped", math.Log(1.5), 0, 1, 1, 0.2, -1.2, 0, true},
		{"negative adv, ratio above 1+eps is not clipped", math.Log(1.5), 0, -1, 1, 0.2, 1.5, 1.5, false},
		{"negative adv, ratio below 1-eps is clipped", math.Log(0.5), 0, -1, 1, 0.2, 0.8, 0, true},
	}
	for _, c := range cases {
		l, d, cl := PGLoss(c.logp, c.old, c.adv, c.w, c.clip)
		if !near(l, c.wantLoss) || !near(d, c.wantD) || cl != c.wantClipped {
			t.Fatalf("%s: got %v %v %v want %v %v %v", c.name, l, d, cl, c.wantLoss, c.wantD, c.wantClipped)
		}
	}
}

func TestVLoss(t *testing.T) {
	cases := []struct {
		name                string
		v, old, ret, clip   float64
		wantLoss, wantDeriv float64
	}{
		{"inside the clip: plain squared error", 1.2, 1.0, 2.0, 0.5, 0.32, -0.8},
		{"moved past the clip toward the return: the clipped error is larger and constant", 2.0, 1.0, 3.0, 0.5, 1.125, 0},
		{"moved past the clip away from the return: the unclipped error is larger", 0.0, 1.0, 2.0, 0.5, 2.0, -2.0},
		{"at the return: no loss", 2.0, 1.8, 2.0, 0.5, 0, 0},
	}
	for _, c := range cases {
		l, d := VLoss(c.v, c.old, c.ret, c.clip)
		if !near(l, c.wantLoss) || !near(d, c.wantDeriv) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, l, d, c.wantLoss, c.wantDeriv)
		}
	}
}

func TestKL(t *testing.T) {
	cases := []struct {
		name, est           string
		logp, ref           float64
		wantKL, wantDerived float64
	}{
		{"k1: the log-ratio", "k1", -0.5, -1.0, 0.5, 1},
		{"k1 can be negative on one sample", "k1", -1.0, -0.5, -0.5, 1},
		{"k3: zero when equal", "k3", -0.7, -0.7, 0, 0},
		{"k3: non-negative where k1 is negative", "k3", -1.0, -0.5, math.Exp(0.5) - 0.5 - 1, 1 - math.Exp(0.5)},
	}
	for _, c := range cases {
		k, d := KL(c.logp, c.ref, c.est)
		if !near(k, c.wantKL) || !near(d, c.wantDerived) {
			t.Errorf("%s: got %v %v, want %v %v", c.name, k, d, c.wantKL, c.wantDerived)
		}
	}
}

// Every derivative the update relies on is checked against a central finite difference.
func TestDerivativesMatchFiniteDifferences(t *testing.T) {
	const h = 1e-6
	fd := func(f func(float64) float64, x float64) float64 { return (f(x+h) - f(x-h)) / (2 * h) }
	for _, x := range []float64{-0.7, -0.1, 0.05, 0.3} {
		for _, adv := range []float64{-1.3, 0.8} {
			_, d, _ := PGLoss(x, 0, adv, 1.7, 0.2)
			num := fd(func(v float64) float64 { l, _, _ := PGLoss(v, 0, adv, 1.7, 0.2); return l }, x)
			if math.Abs(d-num) > 1e-5 {
				t.Fatalf("PGLoss'(%v, adv %v) = %v, finite difference %v", x, adv, d, num)
			}
		}
		for _, old := range []float64{-0.5, 0.2} {
			_, d := VLoss(x, old, 0.4, 0.5)
			num := fd(func(v float64) float64 { l, _ := VLoss(v, old, 0.4, 0.5); return l }, x)
			if math.Abs(d-num) > 1e-5 {
				t.Fatalf("VLoss'(%v, old %v) = %v, finite difference %v", x, old, d, num)
			}
		}
		for _, est := range []string{"k1", "k3"} {
			_, d := KL(x, -0.2, est)
			num := fd(func(v float64) float64 { k, _ := KL(v, -0.2, est); return k }, x)
			if math.Abs(d-num) > 1e-5 {
				t.Fatalf("KL %s'(%v) = %v, finite difference %v", est, x, d, num)
			}
		}
	}
}

func TestClipGradNorm(t *testing.T) {
	g := [][]float64{{3}, {4}}
	if n := ClipGradNorm(g, 1); !near(n, 5) || !near(g[0][0], 0.6) || !near(g[1][0], 0.8) {
		t.Fatalf("norm %v grads %v", n, g)
	}
	g = [][]float64{{0.3}, {0.4}}
	ClipGradNorm(g, 1)
	if !near(g[0][0], 0.3) {
		t.Fatalf("a small gradient must be left alone: %v", g)
	}
}

func TestAdamMovesAgainstGradient(t *testing.T) {
	p := []float64{1, -1}
	var st Adam
	for i := 0; i < 100; i++ {
		AdamStep(p, []float64{2 * p[0], 2 * p[1]}, &st, 0.05) // minimise x^2
	}
	if math.Abs(p[0]) > 0.1 || math.Abs(p[1]) > 0.1 {
		t.Fatalf("Adam did not minimise x^2: %v", p)
	}
}

func TestWhiten(t *testing.T) {
	w := Whiten([]float64{1, 2, 3})
	m, s := MeanStd(w)
	if !near(m, 0) || !near(s, 1) {
		t.Fatalf("mean %v std %v", m, s)
	}
}

func TestRanks(t *testing.T) {
	cases := []struct {
		name    string
		rewards []float64
		want    []float64
	}{
		{"empty", nil, []float64{}},
		{"one sample has no order", []float64{-3}, []float64{0}},
		{"evenly spaced from -0.5 to 0.5", []float64{-10, -0.1, -0.5}, []float64{-0.5, 0.5, 0}},
		{"only the order counts", []float64{-30, -10, -0.02, -0.03}, []float64{-0.5, -1.0 / 6, 0.5, 1.0 / 6}},
		{"ties share their mean rank", []float64{-10, -10, -1, -10}, []float64{-1.0 / 6, -1.0 / 6, 0.5, -1.0 / 6}},
		{"all equal", []float64{2, 2}, []float64{0, 0}},
	}
	for _, c := range cases {
		if got := Ranks(c.rewards); !nearAll(got, c.want) {
			t.Fatalf("%s: %v want %v", c.name, got, c.want)
		}
	}
}

func TestShapeRewards(t *testing.T) {
	in := []float64{-10, -0.5, -0.1}
	cases := []struct {
		shaping Shaping
		want    []float64
	}{
		{"", in},
		{ShapingNone, in},
		{ShapingRank, []float64{-0.5, 0, 0.5}},
	}
	for _, c := range cases {
		if got := ShapeRewards(in, c.shaping); !nearAll(got, c.want) {
			t.Fatalf("%q: %v want %v", c.shaping, got, c.want)
		}
	}
	if in[0] != -10 {
		t.Fatal("ShapeRewards changed its input")
	}
}

func TestValidateNamesABadShaping(t *testing.T) {
	c := Paper()
	c.RewardShaping = "ranked"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "reward_shaping") {
		t.Fatalf("got %v, want an error naming reward_shaping", err)
	}
	for _, ok := range []Shaping{"", ShapingNone, ShapingRank} {
		c.RewardShaping = ok
		if err := c.Validate(); err != nil {
			t.Fatalf("%q: %v", ok, err)
		}
	}
}

func TestQuantile(t *testing.T) {
	cases := []struct {
		name string
		x    []float64
		q    float64
		want float64
	}{
		{"one value", []float64{3}, 0.75, 3},
		{"minimum", []float64{4, 1, 3}, 0, 1},
		{"maximum", []float64{4, 1, 3}, 1, 4},
		{"median of an odd count", []float64{4, 1, 3}, 0.5, 3},
		{"interpolated like numpy", []float64{1, 2, 3, 4}, 0.75, 3.25},
		{"out of range is clamped", []float64{1, 2}, 1.5, 2},
	}
	for _, c := range cases {
		if got := Quantile(c.x, c.q); !near(got, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRiskSeeking(t *testing.T) {
	cases := []struct {
		name    string
		rewards []float64
		eps     float64
		want    []float64
	}{
		// The 0.75 quantile of 8 values is a quarter of the way from the 6th to the 7th smallest
		// (-0.9 to -0.5: -0.8), so the two best samples are learnt from.
		{"top quarter of eight", []float64{-10, -10, -9.5, -0.9, -10, -0.5, -0.1, -9.6}, 0.25, []float64{0, 0, 0, 0, 0, 0.3, 0.7, 0}},
		{"ties at the top share the quantile: nothing to learn", []float64{-1, -0.5, -0.5, -0.5}, 0.25, []float64{0, 0, 0, 0}},
		{"epsilon 1 learns from all above the minimum", []float64{-3, -1, -2}, 1, []float64{0, 2, 1}},
		{"empty batch", nil, 0.25, []float64{}},
	}
	for _, c := range cases {
		if got := RiskSeeking(c.rewards, c.eps); !nearAll(got, c.want) {
			t.Fatalf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestValidateNamesABadAdvantage(t *testing.T) {
	cases := []struct {
		advantage AdvantageEstimator
		eps       float64
		wantErr   string
	}{
		{"", 0.25, ""},
		{AdvantageGAE, 0, ""}, // epsilon matters only to risk-seeking
		{AdvantageRiskSeeking, 0.25, ""},
		{AdvantageRiskSeeking, 1, ""},
		{"risky", 0.25, "advantage must be gae or risk-seeking"},
		{AdvantageRiskSeeking, 0, "risk_epsilon"},
		{AdvantageRiskSeeking, 1.5, "risk_epsilon"},
	}
	for _, c := range cases {
		cfg := Paper()
		cfg.Advantage, cfg.RiskEpsilon = c.advantage, c.eps
		err := cfg.Validate()
		if (c.wantErr == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.wantErr)) {
			t.Fatalf("%q, epsilon %v: got %v, want an error containing %q", c.advantage, c.eps, err, c.wantErr)
		}
	}
}

// The diagnostics as cleanrl's ppo.py computes them: approx_kl = mean((ratio-1) - log ratio),
// clipfrac = mean(|ratio-1| > clip).
func TestApproxKLAndClipFrac(t *testing.T) {
	for _, c := range []struct {
		name           string
		logp, oldLogp  float64
		wantKL, wantCF float64
	}{
		{"unchanged", -1, -1, 0, 0},
		{"ratio 1.1 inside the clip", math.Log(1.1) - 1, -1, 0.1 - math.Log(1.1), 0},
		{"ratio 1.3 outside", math.Log(1.3) - 2, -2, 0.3 - math.Log(1.3), 1},
		{"ratio 0.7 outside below", math.Log(0.7), 0, -0.3 - math.Log(0.7), 1},
		{"ratio 0.85 inside below", math.Log(0.85), 0, -0.15 - math.Log(0.85), 0},
	} {
		kl := ApproxKL(c.logp, c.oldLogp)
		if math.Abs(kl-c.wantKL) > 1e-12 || kl < 0 {
			t.Errorf("%s: approx_kl %v, want %v (never negative)", c.name, kl, c.wantKL)
		}
		if cf := ClipFrac(c.logp, c.oldLogp, 0.2); cf != c.wantCF {
			t.Errorf("%s: clipfrac %v, want %v", c.name, cf, c.wantCF)
		}
	}
}
