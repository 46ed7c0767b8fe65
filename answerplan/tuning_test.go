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
