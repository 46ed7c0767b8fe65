package answerplan

import (
	"math"
	"slices"
	"testing"

	"mlerl/runrecord"
)

func TestCrossValidationWall(t *testing.T) {
	for _, c := range []struct {
		name         string
		seconds      []float64
		folds, slots int
		want         float64
	}{
		{"one program: its folds one after another", []float64{3}, 5, 2, 15},
		{"two equal programs on two slots: side by side", []float64{3, 3}, 5, 2, 15},
		{"three on two slots: the sum spread", []float64{2, 2, 2}, 5, 2, 15},
		{"one slow program bounds the wall", []float64{10, 1, 1}, 5, 2, 50},
		{"one slot: the sum", []float64{1, 2}, 5, 1, 15},
		{"no programs", nil, 5, 2, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CrossValidationWall(c.seconds, c.folds, c.slots); math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("CrossValidationWall(%v, %d, %d) = %v, want %v", c.seconds, c.folds, c.slots, got, c.want)
			}
		})
	}
}

func TestPickByTime(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		name         string
		seconds      []float64
		fallback     float64
		n            int
		wall         float64
		take, passed []int
	}{
		{"no budget: the first n", []float64{100, 100, 100}, 0, 2, inf, []int{0, 1}, nil},
		{"cheap programs all fit", []float64{3, 3, 3, 3}, 0, 8, 60, []int{0, 1, 2, 3}, nil},
		// leaf-like: the best program is cheap, a slow one is passed over, cheaper ones after it still fit
		{"a slow program is passed over for cheaper ones", []float64{3, 130, 5, 4}, 0, 8, 240, []int{0, 2, 3}, []int{1}},
		{"n bounds the take; programs after it are neither", []float64{1, 100, 1, 1}, 0, 2, 20, []int{0, 2}, []int{1}},
		{"unknown cost: the fallback", []float64{0, 0, 0}, 30, 8, 200, []int{0, 1}, []int{2}},
		{"nothing fits", []float64{100, 100}, 0, 8, 10, nil, []int{0, 1}},
	} {
		t.Run(c.name, func(t *testing.T) {
			take, passed := PickByTime(c.seconds, c.fallback, 5, c.n, c.wall)
			if !slices.Equal(take, c.take) || !slices.Equal(passed, c.passed) {
				t.Fatalf("PickByTime(%v, %v, 5, %d, %v) = %v, %v; want %v, %v", c.seconds, c.fallback, c.n, c.wall, take, passed, c.take, c.passed)
			}
		})
	}
}

func TestRefitReserve(t *testing.T) {
	cv := func(d float64) runrecord.CrossValidateResult { return runrecord.CrossValidateResult{DurationS: d} }
	for _, c := range []struct {
		name   string
		scored []runrecord.CrossValidateResult
		folds  int
		want   float64
	}{
		{"the slowest program's fold, on a quarter more rows", []runrecord.CrossValidateResult{cv(20), cv(100)}, 5, 25},
		{"nothing scored", nil, 5, 0},
		{"one fold: no fold time to scale", []runrecord.CrossValidateResult{cv(20)}, 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := RefitReserve(c.scored, c.folds); math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("RefitReserve = %v, want %v", got, c.want)
			}
		})
	}
}

func TestCandidatesThatFit(t *testing.T) {
	for _, c := range []struct {
		name                 string
		asked, folds         int
		programSeconds, left float64
		want                 int
	}{
		{"no budget", 8, 5, 10, math.Inf(1), 8},
		{"unknown cost", 8, 5, 0, 100, 8},
		{"room for three", 8, 5, 10, 160, 3},
		{"room for none: still one", 8, 5, 132, 480, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := CandidatesThatFit(c.asked, c.folds, c.programSeconds, c.left); got != c.want {
				t.Fatalf("CandidatesThatFit = %d, want %d", got, c.want)
			}
		})
	}
}
