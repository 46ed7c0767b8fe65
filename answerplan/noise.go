package answerplan

import "math"

// ShouldContinue is the tuning's noise rule: after a round of tuning (Descent), the gain is
// the mean of the per-fold score differences between the program the round ended on and the
// one it started from (paired by fold: both ran on the same partition, so the folds' own
// difficulty cancels), signed so that an improvement is positive, and the noise is their
// standard error. Tuning goes on only while the gain is larger than one standard error: a
// smaller gain is what reshuffling which folds a program happens to suit produces, and
// chasing it spends the budget on noise. The rule is stated in the data's own spread, so it
// needs no constant tuned on any task. Folds that do not pair (a different count, or fewer
// than two: no spread to measure) leave the rule silent: gain and noise are NaN, and the caps
// (the tuning budget, the time budget) decide.
func ShouldContinue(prevFolds, newFolds []float64, higherIsBetter bool) (cont bool, gain, noise float64) {
	n := len(prevFolds)
	if n < 2 || len(newFolds) != n {
		return true, math.NaN(), math.NaN()
	}
	d := make([]float64, n)
	for i := range d {
		d[i] = newFolds[i] - prevFolds[i]
		if !higherIsBetter {
			d[i] = -d[i]
		}
		gain += d[i]
	}
	gain /= float64(n)
	ss := 0.0
	for _, x := range d {
		ss += (x - gain) * (x - gain)
	}
	noise = math.Sqrt(ss/float64(n-1)) / math.Sqrt(float64(n))
	return gain > noise, gain, noise
}
