package ensemble

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Calibration reshapes a blend's class probabilities: each row is raised to Power and
// renormalised (temperature scaling with T = 1/Power), then mixed with the uniform
// distribution by Smoothing. Log loss punishes confidence far more than it rewards it, and a
// blend of programs is over- or under-confident as a whole; one or two numbers fitted on
// out-of-fold predictions correct that without touching the ranking of classes.
type Calibration struct {
	Power     float64 `json:"power"`
	Smoothing float64 `json:"smoothing"`
}

// Identity is no calibration.
var Identity = Calibration{Power: 1}

// IsIdentity says the calibration changes nothing (a zero value, from a run recorded before
// calibration existed, is treated as the identity too).
func (c Calibration) IsIdentity() bool {
	return (c.Power == 1 || c.Power == 0) && c.Smoothing == 0
}

// Apply calibrates the probability columns (every column but skip, which is -1 for none) of
// each row.
func (c Calibration) Apply(t Table, skip int) (Table, error) {
	if c.IsIdentity() {
		return t, nil
	}
	if c.Power <= 0 || math.IsNaN(c.Power) || c.Smoothing < 0 || c.Smoothing >= 1 || math.IsNaN(c.Smoothing) {
		return Table{}, fmt.Errorf("calibration %+v: power must be positive and smoothing in [0, 1)", c)
	}
	k := len(t.Header)
	if skip >= 0 {
		k--
	}
	if k < 2 {
		return Table{}, errors.New("calibration needs at least two probability columns")
	}
	out := Table{Header: t.Header, Rows: make([][]string, len(t.Rows))}
	p := make([]float64, len(t.Header))
	for i, r := range t.Rows {
		if len(r) != len(t.Header) {
			return Table{}, fmt.Errorf("row %d has %d cells, the header %d", i+1, len(r), len(t.Header))
		}
		sum := 0.0
		for j, s := range r {
			if j == skip {
				continue
			}
			v, err := strconv.ParseFloat(s, 64)
			if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return Table{}, fmt.Errorf("row %d, column %q: %q is not a probability", i+1, t.Header[j], s)
			}
			p[j] = math.Pow(v, c.Power)
			sum += p[j]
		}
		row := make([]string, len(r))
		for j := range r {
			if j == skip {
				row[j] = r[j]
				continue
			}
			q := 1 / float64(k) // a row of zeros stays a guess
			if sum > 0 {
				q = (1-c.Smoothing)*p[j]/sum + c.Smoothing/float64(k)
			}
			row[j] = strconv.FormatFloat(q, 'g', 12, 64)
		}
		out.Rows[i] = row
	}
	return out, nil
}

// Grid is the calibrations FitCalibration tries: powers from 1/4 to 4, evenly spaced in
// log scale and including 1, times a few smoothing weights including 0.
func Grid() []Calibration {
	var out []Calibration
	for _, s := range []float64{0, 1e-4, 1e-3, 1e-2, 3e-2} {
		for i := -12; i <= 12; i++ {
			out = append(out, Calibration{Power: math.Pow(4, float64(i)/12), Smoothing: s})
		}
	}
	return out
}

// FitCalibration scores every calibration of the grid (lower is better) and returns the best,
// which is the identity unless another strictly beats it.
func FitCalibration(grid []Calibration, score func(Calibration) (float64, bool, error)) (Calibration, float64, error) {
	best := Identity
	bestScore, ok, err := score(Identity)
	if err != nil {
		return Calibration{}, 0, err
	}
	if !ok {
		return Calibration{}, 0, errors.New("the uncalibrated blend is not a valid submission")
	}
	for _, c := range grid {
		if c.IsIdentity() {
			continue
		}
		s, ok, err := score(c)
		if err != nil {
			return Calibration{}, 0, err
		}
		if ok && s < bestScore {
			best, bestScore = c, s
		}
	}
	return best, bestScore, nil
}
