package expreport

import (
	"math"
	"testing"

	"mlerl/runrecord"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name     string
		xs       []float64
		n        int
		mean, se float64
		text     string
	}{
		{"none", nil, 0, 0, 0, "-"},
		{"one seed: no ±", []float64{0.25}, 1, 0.25, 0, "0.250"},
		{"three seeds", []float64{0.1, 0.2, 0.3}, 3, 0.2, 0.1 / math.Sqrt(3), "0.200 ± 0.058"},
		{"two seeds", []float64{1, 2}, 2, 1.5, 0.5, "1.500 ± 0.500"},
		{"equal", []float64{0.6, 0.6, 0.6}, 3, 0.6, 0, "0.600 ± 0.000"},
		{"negative", []float64{-0.2, 0.1, -0.2}, 3, -0.1, 0.1, "-0.100 ± 0.100"},
		{"negative zero is printed as zero", []float64{-0.0001, 0.00005}, 2, -0.000025, 0.000075, "0.000 ± 0.000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := Summarize(tc.xs)
			if s.N != tc.n || math.Abs(s.Mean-tc.mean) > 1e-12 || math.Abs(s.SE-tc.se) > 1e-12 {
				t.Fatalf("Summarize(%v) = %+v, want n %d mean %g se %g", tc.xs, s, tc.n, tc.mean, tc.se)
			}
			if got := s.Format(3); got != tc.text {
				t.Fatalf("Format = %q, want %q", got, tc.text)
			}
		})
	}
}

func TestSummarizeUsesNMinusOne(t *testing.T) {
	s := Summarize([]float64{2, 4, 4, 4, 5, 5, 7, 9}) // population sd 2, sample sd sqrt(32/7)
	if math.Abs(s.SD-math.Sqrt(32.0/7)) > 1e-12 || math.Abs(s.SE-math.Sqrt(32.0/7)/math.Sqrt(8)) > 1e-12 {
		t.Fatalf("sd %g se %g", s.SD, s.SE)
	}
}

func TestPairedDiffAndWins(t *testing.T) {
	seeds := []uint64{1, 2, 3}
	m := func(vs ...*float64) map[uint64]*float64 {
		out := map[uint64]*float64{}
		for i, v := range vs {
			if v != nil {
				out[seeds[i]] = v
			}
		}
		return out
	}
	higher, lower := Direction{}, Direction{LowerIsBetter: true}
	for _, tc := range []struct {
		name   string
		a, b   map[uint64]*float64
		d      Direction
		diff   string
		better int
		pairs  int
		wins   int
	}{
		{"higher is better", m(f64(0.7), f64(0.6), f64(0.65)), m(f64(0.6), f64(0.65), f64(0.7)), higher, "0.000 ± 0.050", 1, 3, 1},
		{"lower is better: the same numbers flip", m(f64(0.7), f64(0.6), f64(0.65)), m(f64(0.6), f64(0.65), f64(0.7)), lower, "0.000 ± 0.050", 2, 3, 2},
		{"lower is better, a always lower", m(f64(0.1), f64(0.2), f64(0.3)), m(f64(0.5), f64(0.4), f64(0.6)), lower, "-0.300 ± 0.058", 3, 3, 3},
		{"b invalid on a seed: no pair, but a wins it", m(f64(0.1), f64(0.2), f64(0.3)), m(f64(1), f64(2), nil), lower, "-1.350 ± 0.450", 2, 2, 3},
		{"a invalid on a seed: a loses it", m(nil, f64(0.2), f64(0.3)), m(f64(0.5), f64(0.4), f64(0.6)), lower, "-0.250 ± 0.050", 2, 2, 2},
		{"both invalid: a loses", m(nil, nil, nil), m(nil, nil, nil), higher, "-", 0, 0, 0},
		{"ties are not wins", m(f64(1), f64(1), f64(1)), m(f64(1), f64(1), f64(1)), higher, "0.000 ± 0.000", 0, 3, 0},
		{"one pair: no ±", m(f64(3), nil, nil), m(f64(1), nil, nil), higher, "2.000", 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := PairedDiff(seeds, tc.a, tc.b, tc.d)
			if got := p.Format(3); got != tc.diff || p.Better != tc.better || p.N != tc.pairs {
				t.Fatalf("PairedDiff = %q better %d pairs %d, want %q %d %d", got, p.Better, p.N, tc.diff, tc.better, tc.pairs)
			}
			if w := Wins(seeds, tc.a, tc.b, tc.d); w != tc.wins {
				t.Fatalf("Wins = %d, want %d", w, tc.wins)
			}
		})
	}
}

func TestStepMeanEvaluatesEachSeedOnTheCommonGrid(t *testing.T) {
	curves := [][]stepPoint{
		{{0, f64(1)}, {10, f64(3)}},
		{{5, f64(2)}, {10, nil}, {20, f64(4)}}, // invalid on test from 10 to 20
	}
	s := stepMean("rl", 0, curves)
	want := "rl: 0=1[1,1] 5=1.5[1,2] 10=3[3,3] 20=3.5[3,4]"
	if s.String() != want {
		t.Fatalf("got  %s\nwant %s", s, want)
	}
	if !s.Step || len(s.N) != 4 || s.N[1] != 2 || s.N[2] != 1 {
		t.Fatalf("step %v, seeds per point %v", s.Step, s.N)
	}
	// the band follows the steps: upper edge (0,1) (5,1) (5,2) (10,2) (10,3) (20,3) (20,4)
	b := s.band()
	if len(b) != 14 || b[1].X != 5 || b[1].Y != 1 || b[2].Y != 2 {
		t.Fatalf("band %v", b)
	}
}

func TestLastPerIterationKeepsTheResumedLine(t *testing.T) {
	ms := lastPerIteration([]runrecord.IterationMetrics{
		{Iteration: 1, ValidRate: 0.1}, {Iteration: 2, ValidRate: 0.2}, {Iteration: 3, ValidRate: 0.3},
		{Iteration: 2, ValidRate: 0.9}, {Iteration: 3, ValidRate: 0.8},
	})
	if len(ms) != 3 || ms[0].ValidRate != 0.1 || ms[1].ValidRate != 0.9 || ms[2].ValidRate != 0.8 {
		t.Fatalf("%+v", ms)
	}
}
