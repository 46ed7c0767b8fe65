package expreport

import (
	"math"
	"strconv"
	"strings"
)

// Stat is a mean over seeds with its sample standard deviation (n-1) and standard error.
type Stat struct {
	N            int
	Mean, SD, SE float64
}

// Summarize computes mean, standard deviation (n-1) and standard error (sd/sqrt(n)); with one
// value SD and SE are 0, with none the Stat is zero (N 0).
func Summarize(xs []float64) Stat {
	s := Stat{N: len(xs)}
	if s.N == 0 {
		return s
	}
	for _, x := range xs {
		s.Mean += x
	}
	s.Mean /= float64(s.N)
	if s.N > 1 {
		var ss float64
		for _, x := range xs {
			ss += (x - s.Mean) * (x - s.Mean)
		}
		s.SD = math.Sqrt(ss / float64(s.N-1))
		s.SE = s.SD / math.Sqrt(float64(s.N))
	}
	return s
}

// Format prints "mean ± se" with prec decimals, only the mean for one value, "-" for none.
func (s Stat) Format(prec int) string {
	switch s.N {
	case 0:
		return "-"
	case 1:
		return num(s.Mean, prec)
	}
	return num(s.Mean, prec) + " ± " + num(s.SE, prec)
}

// num formats x with prec decimals, never as "-0.000".
func num(x float64, prec int) string {
	s := strconv.FormatFloat(x, 'f', prec, 64)
	if strings.Trim(s, "-0.") == "" {
		s = strings.TrimPrefix(s, "-")
	}
	return s
}

// Direction says which way a task's score improves.
type Direction struct {
	LowerIsBetter bool
}

// Better says whether a beats b (strictly).
func (d Direction) Better(a, b float64) bool {
	if d.LowerIsBetter {
		return a < b
	}
	return a > b
}

// Word is "lower" or "higher".
func (d Direction) Word() string {
	if d.LowerIsBetter {
		return "lower"
	}
	return "higher"
}

// Paired is the difference a - b over the seeds where both have a score.
type Paired struct {
	Stat
	// Better counts the seeds where a beats b (in the task's direction); Stat.N is the pairs.
	Better int
}

// PairedDiff pairs a and b by seed: a[seed] - b[seed] over seeds where both are set.
func PairedDiff(seeds []uint64, a, b map[uint64]*float64, d Direction) Paired {
	var diffs []float64
	better := 0
	for _, s := range seeds {
		x, y := a[s], b[s]
		if x == nil || y == nil {
			continue
		}
		diffs = append(diffs, *x-*y)
		if d.Better(*x, *y) {
			better++
		}
	}
	return Paired{Stat: Summarize(diffs), Better: better}
}

// Wins counts the seeds where a beats b: a must have a score, and b either none (a missing or
// invalid score loses) or a worse one.
func Wins(seeds []uint64, a, b map[uint64]*float64, d Direction) int {
	n := 0
	for _, s := range seeds {
		x, y := a[s], b[s]
		if x != nil && (y == nil || d.Better(*x, *y)) {
			n++
		}
	}
	return n
}

// values lists the set scores of m in seed order.
func values(seeds []uint64, m map[uint64]*float64) []float64 {
	var out []float64
	for _, s := range seeds {
		if v := m[s]; v != nil {
			out = append(out, *v)
		}
	}
	return out
}
