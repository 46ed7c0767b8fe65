package rankcorr

import (
	"math"
	"testing"
)

func TestSpearman(t *testing.T) {
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{0.4, 0.3, 0.2, 0.1}, -1},
		{"monotone, not linear", []float64{1, 2, 3}, []float64{1, 8, 1000}, 1},
		// ranks x: 0,1,2,3; y: 1,0,3,2 -> rho = 1 - 6*(1+1+1+1)/(4*15) = 0.6
		{"two swaps", []float64{1, 2, 3, 4}, []float64{2, 1, 4, 3}, 0.6},
		{"ties share their rank", []float64{1, 1, 2}, []float64{5, 5, 9}, 1},
	} {
		if got := Spearman(c.x, c.y); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: spearman = %v, want %v", c.name, got, c.want)
		}
	}
	if got := Spearman([]float64{1, 1}, []float64{1, 2}); !math.IsNaN(got) {
		t.Errorf("a constant sample: %v, want NaN", got)
	}
}
