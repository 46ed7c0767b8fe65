package durationbias

import (
	"math"
	"sync"
)

// Summary aggregates one arm's final policies over seeds.
type Summary struct {
	Seeds                       int
	BestProb, BestProbSE        float64   // final probability of the best action
	ExpDuration, ExpDurationSE  float64   // final expected duration, seconds
	Updates, UpdatesSE          float64   // PPO updates within the horizon
	EndsOn                      []float64 // share of seeds whose most probable final action is a
	Curve, CurveSE              []float64 // expected duration at the requested times
	BatchCurve, BatchCurveSE    []float64 // mean batch duration over updates since the previous time
	TimeToHalf, TimeToHalfSE    float64   // first time P(best) >= 0.5 (Horizon if never)
	ExpReward, ExpRewardSE      float64   // final sum_a pi_a * Reward_a
	LateBatchDur, LateBatchDurS float64   // mean duration of the last update's batch
}

// Summarize runs cfg over seeds 1..seeds and aggregates; times picks the curve's points.
func Summarize(cfg Config, seeds int, times []float64) (Summary, []Trace) {
	s := Summary{Seeds: seeds, EndsOn: make([]float64, len(cfg.Actions))}
	var best, dur, upd, rew, late, half []float64
	curve, bcurve := make([][]float64, len(times)), make([][]float64, len(times))
	traces := make([]Trace, seeds)
	var wg sync.WaitGroup
	for i := range traces {
		wg.Go(func() { traces[i] = Run(cfg, uint64(i+1)) }) // seeds are independent
	}
	wg.Wait()
	for _, tr := range traces {
		best = append(best, tr.Final[cfg.Best()])
		dur = append(dur, cfg.ExpectedDuration(tr.Final))
		upd = append(upd, float64(len(tr.Points)))
		e := 0.0
		for a, act := range cfg.Actions {
			e += tr.Final[a] * act.Reward
		}
		rew = append(rew, e)
		if n := len(tr.Points); n > 0 {
			late = append(late, tr.Points[n-1].BatchDuration)
		}
		s.EndsOn[argmax(tr.Final)] += 1 / float64(seeds)
		half = append(half, tr.TimeToProb(cfg.Best(), 0.5, cfg.Horizon))
		for j, t := range times {
			curve[j] = append(curve[j], tr.ExpDurationAt(cfg, t))
			from := 0.0
			if j > 0 {
				from = times[j-1]
			}
			bcurve[j] = append(bcurve[j], tr.BatchDurationIn(from, t))
		}
	}
	s.BestProb, s.BestProbSE = meanSE(best)
	s.ExpDuration, s.ExpDurationSE = meanSE(dur)
	s.Updates, s.UpdatesSE = meanSE(upd)
	s.ExpReward, s.ExpRewardSE = meanSE(rew)
	s.LateBatchDur, s.LateBatchDurS = meanSE(late)
	s.TimeToHalf, s.TimeToHalfSE = meanSE(half)
	s.Curve, s.CurveSE = make([]float64, len(times)), make([]float64, len(times))
	s.BatchCurve, s.BatchCurveSE = make([]float64, len(times)), make([]float64, len(times))
	for j := range times {
		s.Curve[j], s.CurveSE[j] = meanSE(curve[j])
		s.BatchCurve[j], s.BatchCurveSE[j] = meanSE(bcurve[j])
	}
	return s, traces
}

// meanSE is the mean and its standard error (sample sd / sqrt(n)).
func meanSE(x []float64) (float64, float64) {
	n := float64(len(x))
	if n == 0 {
		return 0, 0
	}
	m := 0.0
	for _, v := range x {
		m += v
	}
	m /= n
	if n < 2 {
		return m, 0
	}
	ss := 0.0
	for _, v := range x {
		ss += (v - m) * (v - m)
	}
	return m, math.Sqrt(ss/(n-1)) / math.Sqrt(n)
}
