package answerplan

import (
	"math"
	"testing"
)

// NextCosts extrapolates a pass's costs: the program's cost until a variant is seen, then the
// last step's growth from the larger of the program's and the last variant's costs.
func TestNextCosts(t *testing.T) {
	for _, c := range []struct {
		name   string
		parent float64
		seen   []float64
		n      int
		want   float64
	}{
		{"nothing seen: the program's cost each", 3, nil, 4, 12},
		{"one seen, cheaper: never below the program", 3, []float64{1}, 2, 6},
		{"one seen, dearer: its cost each", 3, []float64{5}, 2, 10},
		{"doubling: 8 then 16", 1, []float64{2, 4}, 2, 24},
		{"shrinking costs: the last one's each, no extrapolation down", 1, []float64{4, 2}, 2, 4},
		{"growth from below the program starts at the program's cost", 10, []float64{1, 3}, 1, 30},
		{"a zero cost seen (a failed run) does not divide", 1, []float64{0, 2}, 1, 2},
		{"no variants", 5, []float64{1, 2}, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := NextCosts(c.parent, c.seen, c.n); math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("NextCosts(%v, %v, %d) = %v, want %v", c.parent, c.seen, c.n, got, c.want)
			}
		})
	}
}

func TestShouldContinue(t *testing.T) {
	nan := math.NaN()
	for _, c := range []struct {
		name           string
		prev, next     []float64
		higherIsBetter bool
		cont           bool
		gain, noise    float64
	}{
		{"the same gain on every fold: no noise, go on", []float64{0.5, 0.6, 0.7}, []float64{0.6, 0.7, 0.8}, true, true, 0.1, 0},
		{"lower is better: a drop is the gain", []float64{0.5, 0.6, 0.7}, []float64{0.4, 0.5, 0.6}, false, true, 0.1, 0},
		{"worse on every fold: stop", []float64{0.5, 0.6}, []float64{0.4, 0.5}, true, false, -0.1, 0},
		{"gain within one standard error: stop", []float64{0, 0, 0, 0}, []float64{1.1, -0.9, 1.1, -0.9}, true, false, 0.1, 1 / math.Sqrt(3)},
		{"gain beyond one standard error: go on", []float64{0, 0, 0, 0}, []float64{1.1, 0.9, 1.1, 0.9}, true, true, 1, 0.1 / math.Sqrt(3)},
		{"no gain at all: stop", []float64{0.3, 0.4}, []float64{0.3, 0.4}, true, false, 0, 0},
		{"folds that do not pair: the rule is silent", []float64{0.3, 0.4}, []float64{0.3, 0.4, 0.5}, true, true, nan, nan},
		{"one fold: no spread to measure", []float64{0.3}, []float64{0.9}, true, true, nan, nan},
		{"no fold scores", nil, nil, true, true, nan, nan},
	} {
		t.Run(c.name, func(t *testing.T) {
			cont, gain, noise := ShouldContinue(c.prev, c.next, c.higherIsBetter)
			same := func(a, b float64) bool { return math.IsNaN(a) && math.IsNaN(b) || math.Abs(a-b) < 1e-12 }
			if cont != c.cont || !same(gain, c.gain) || !same(noise, c.noise) {
				t.Fatalf("ShouldContinue = %v, %v, %v; want %v, %v, %v", cont, gain, noise, c.cont, c.gain, c.noise)
			}
		})
	}
}

func TestPlural(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 variants"}, {1, "1 variant"}, {2, "2 variants"}} {
		if got := Plural(c.n, "variant"); got != c.want {
			t.Errorf("Plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}
