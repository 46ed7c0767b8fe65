// Package rankcorr is the rank correlation the experiment analyses use to ask how well one
// score (validation) orders programs or cells by another (test).
package rankcorr

import (
	"math"

	"mlerl/model/ppo"
)

// Spearman is the Pearson correlation of the two samples' ranks (ties share their mean rank);
// NaN when a sample is constant or there are fewer than two pairs.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	rx, ry := ppo.Ranks(x), ppo.Ranks(y) // centred ranks: the correlation needs no means
	var sxy, sxx, syy float64
	for i := range rx {
		sxy += rx[i] * ry[i]
		sxx += rx[i] * rx[i]
		syy += ry[i] * ry[i]
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}
