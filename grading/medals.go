package grading

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"

	"mlerl/tasks"
)

// LeaderboardThresholds applies MLE-bench's medal rule to a Kaggle private leaderboard (scores
// in leaderboard order, best first). N teams; position k is the k-th best score:
//
//	N < 100:        gold max(1, floor(0.1N)), silver floor(0.2N), bronze floor(0.4N)
//	100 <= N < 250: gold 10, silver floor(0.2N), bronze floor(0.4N)
//	250 <= N < 1000: gold 10+floor(0.002N), silver 50, bronze 100
//	N >= 1000:      gold 10+floor(0.002N), silver floor(0.05N), bronze floor(0.1N)
//
// The median is over all scores. Lower-is-better is read off the leaderboard: the first row
// scores better than the last.
func LeaderboardThresholds(scores []float64) (tasks.Thresholds, bool, error) {
	n := len(scores)
	if n == 0 {
		return tasks.Thresholds{}, false, fmt.Errorf("the leaderboard is empty")
	}
	lower := scores[0] < scores[n-1]
	sorted := append([]float64(nil), scores...)
	sort.Float64s(sorted)
	if !lower {
		for i, j := 0, n-1; i < j; i, j = i+1, j-1 {
			sorted[i], sorted[j] = sorted[j], sorted[i]
		}
	}
	var gold, silver, bronze int
	f := func(x float64) int { return int(math.Floor(x)) }
	switch {
	case n < 100:
		gold, silver, bronze = max(1, f(0.1*float64(n))), f(0.2*float64(n)), f(0.4*float64(n))
	case n < 250:
		gold, silver, bronze = 10, f(0.2*float64(n)), f(0.4*float64(n))
	case n < 1000:
		gold, silver, bronze = 10+f(0.002*float64(n)), 50, 100
	default:
		gold, silver, bronze = 10+f(0.002*float64(n)), f(0.05*float64(n)), f(0.1*float64(n))
	}
	at := func(k int) float64 { return sorted[min(max(k, 1), n)-1] }
	var median float64
	asc := append([]float64(nil), scores...)
	sort.Float64s(asc)
	if n%2 == 1 {
		median = asc[n/2]
	} else {
		median = (asc[n/2-1] + asc[n/2]) / 2
	}
	return tasks.Thresholds{Gold: at(gold), Silver: at(silver), Bronze: at(bronze), Median: median}, lower, nil
}

// ReadLeaderboard reads the score column of a Kaggle leaderboard CSV in file order.
func ReadLeaderboard(r io.Reader) ([]float64, error) {
	rows, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(rows) < 2 {
		return nil, fmt.Errorf("the leaderboard has no rows")
	}
	col := -1
	for i, h := range rows[0] {
		if h == "score" {
			col = i
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("the leaderboard has no score column (header %v)", rows[0])
	}
	var out []float64
	for i, r := range rows[1:] {
		v, err := strconv.ParseFloat(r[col], 64)
		if err != nil {
			return nil, fmt.Errorf("leaderboard row %d: score %q: %w", i+2, r[col], err)
		}
		out = append(out, v)
	}
	return out, nil
}
