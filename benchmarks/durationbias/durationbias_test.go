package durationbias

import (
	"math"
	"math/rand/v2"
	"reflect"
	"testing"
)

func TestRunIsDeterministic(t *testing.T) {
	cfg := Default()
	cfg.Horizon = 2000
	a, b := Run(cfg, 7), Run(cfg, 7)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different traces")
	}
	if c := Run(cfg, 8); reflect.DeepEqual(a.Final, c.Final) {
		t.Fatal("different seeds, identical final policies")
	}
}

// With one action there is nothing to learn: the policy stays put, every batch holds that
// action's duration, and the event queue yields exactly Actors * floor(Horizon/Duration) runs.
func TestOneAction(t *testing.T) {
	cfg := Default()
	cfg.Actions = []Action{{Name: "only", Duration: 10, Reward: 0.5}}
	cfg.Actors, cfg.Batch, cfg.Jitter, cfg.Horizon = 4, 8, 0, 100
	tr := Run(cfg, 1)
	if tr.Completions != 40 || len(tr.Points) != 5 || tr.Counts[0] != 40 {
		t.Fatalf("completions %d, updates %d, counts %v; want 40, 5, [40]", tr.Completions, len(tr.Points), tr.Counts)
	}
	for _, p := range tr.Points {
		if p.Probs[0] != 1 || p.BatchDuration != 10 || p.ExpDuration != 10 || p.BatchReward != 0.5 {
			t.Fatalf("point %+v", p)
		}
	}
	if tr.Points[0].Time != 20 || tr.Points[4].Time != 100 {
		t.Fatalf("update times %v .. %v, want 20 .. 100", tr.Points[0].Time, tr.Points[4].Time)
	}
}

// The gradient chained from ppo.PGLoss through the softmax matches finite differences of the loss.
func TestSurrogateGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	logits := []float64{0.3, -0.2, 0.5, 0.1}
	probs := softmax(logits)
	var batch []sample
	var adv, w []float64
	for i := 0; i < 12; i++ {
		a := draw(rng, probs)
		// old log-probs near the current ones, so ratios stay inside the clip (no kink)
		batch = append(batch, sample{action: a, oldLogp: math.Log(probs[a]) + 0.05*(rng.Float64()-0.5)})
		adv = append(adv, rng.NormFloat64())
		w = append(w, 0.5+rng.Float64())
	}
	_, grad, clipped := surrogate(logits, batch, adv, w, 0.2)
	if clipped != 0 {
		t.Fatalf("%d clipped; the test wants the smooth branch", clipped)
	}
	const h = 1e-6
	for j := range logits {
		up, down := append([]float64(nil), logits...), append([]float64(nil), logits...)
		up[j] += h
		down[j] -= h
		lu, _, _ := surrogate(up, batch, adv, w, 0.2)
		ld, _, _ := surrogate(down, batch, adv, w, 0.2)
		if fd := (lu - ld) / (2 * h); math.Abs(fd-grad[j]) > 1e-6 {
			t.Fatalf("logit %d: analytic %g, finite difference %g", j, grad[j], fd)
		}
	}
}

// The premise of method.md's Problem 1 is that an action drawn with probability pi and lasting dt
// is collected pi*T/dt times. In a free-running pool it is not: each actor's runs are draws from
// pi, so the learner sees each action in proportion to pi. With a frozen uniform policy the
// premise would give boosting (60 s) 1.3% of the collected runs; the pool gives it 25%.
func TestPoolCollectsInProportionToPolicy(t *testing.T) {
	cfg := Default()
	cfg.LearningRate = 0 // policy stays uniform
	tr := Run(cfg, 1)
	for a, n := range tr.Counts {
		if share := float64(n) / float64(tr.Completions); math.Abs(share-0.25) > 0.02 {
			t.Fatalf("%s: %.3f of %d runs, want 0.25 +- 0.02", cfg.Actions[a].Name, share, tr.Completions)
		}
	}
}

// The brief's claim, first half: with the weight the policy ends on the best action.
func TestWeightedPoolEndsOnBest(t *testing.T) {
	s := summary("pool", true)
	if s.EndsOn[Default().Best()] < 0.8 {
		t.Fatalf("weighted pool ends on the best action in %.0f%% of seeds, want >= 80%%", 100*s.EndsOn[Default().Best()])
	}
}

// The brief's claim, second half, is NOT reproduced: without the weight the pool does not
// collapse onto the fast action (see TestPoolCollectsInProportionToPolicy for why). This test pins
// the finding; if a change makes it fail, RESULTS.md's "Duration bias" section needs redoing.
func TestUnweightedPoolDoesNotCollapse(t *testing.T) {
	s := summary("pool", false)
	if s.EndsOn[Default().Best()] < 0.8 || s.ExpDuration < 30 {
		t.Fatalf("unweighted pool: ends on best in %.0f%% of seeds, final E[dt] %.1f s", 100*s.EndsOn[Default().Best()], s.ExpDuration)
	}
}

// Control: make the FAST action the best. Since the pool has no bias to correct, the weight is a
// tilt toward long runs, and here it slows learning down several-fold.
func TestWeightTiltsTowardLongRuns(t *testing.T) {
	on, off := summary("pool, fast best", true), summary("pool, fast best", false)
	if off.EndsOn[0] < 0.8 {
		t.Fatalf("unweighted: ends on the fast best action in %.0f%% of seeds, want >= 80%%", 100*off.EndsOn[0])
	}
	if on.TimeToHalf < 5*off.TimeToHalf || on.EndsOn[0] >= off.EndsOn[0] {
		t.Fatalf("weighted reached P(best) >= 0.5 at %.0f s vs %.0f s, ends on best %.2f vs %.2f; expected it to be slower and worse",
			on.TimeToHalf, off.TimeToHalf, on.EndsOn[0], off.EndsOn[0])
	}
}

// Where the collapse does happen: Algorithm 1 with stragglers cancelled. Launching 64 runs and
// learning from the first 32 never shows the learner a 60 s run, so the unweighted policy settles
// on the fast action, and the weight cannot help, as it can only re-weight runs that arrive.
func TestWavesCollapse(t *testing.T) {
	on, off := summary("waves 64, first 32", true), summary("waves 64, first 32", false)
	if off.EndsOn[Default().Fastest()] < 0.8 || off.ExpDuration > 10 {
		t.Fatalf("unweighted waves: ends on fast in %.0f%% of seeds, final E[dt] %.1f s; want a collapse", 100*off.EndsOn[Default().Fastest()], off.ExpDuration)
	}
	if on.EndsOn[Default().Best()] > 0.2 {
		t.Fatalf("weighted waves end on the best action in %.0f%% of seeds; expected the cut-off runs to be lost", 100*on.EndsOn[Default().Best()])
	}
}
