package grading

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"mlerl/tasks"
)

// LeaderboardThresholds applies MLE-bench's medal rule (Kaggle's progression rules) to a Kaggle
// private leaderboard, scores in file order. N teams; position k is the k-th row:
//
//	N < 100:        gold max(1, floor(0.1N)), silver floor(0.2N), bronze floor(0.4N)
//	100 <= N < 250: gold 10, silver floor(0.2N), bronze floor(0.4N)
//	250 <= N < 1000: gold 10+floor(0.002N), silver 50, bronze 100
//	N >= 1000:      gold 10+floor(0.002N), silver floor(0.05N), bronze floor(0.1N)
//
// with every position at least 1. The median is over all scores. As in MLE-bench, positions are
// rows of the file as given (a leaderboard is in rank order) and lower-is-better is read off it:
// the first row scores better than the last.
func LeaderboardThresholds(scores []float64) (tasks.Thresholds, bool, error) {
	n := len(scores)
	if n == 0 {
		return tasks.Thresholds{}, false, fmt.Errorf("the leaderboard is empty")
	}
	lower := scores[0] < scores[n-1]
	var gold, silver, bronze int
	f := func(x float64) int { return int(math.Floor(x)) }
	switch {
	case n < 100:
		gold, silver, bronze = f(0.1*float64(n)), f(0.2*float64(n)), f(0.4*float64(n))
	case n < 250:
		gold, silver, bronze = 10, f(0.2*float64(n)), f(0.4*float64(n))
	case n < 1000:
		gold, silver, bronze = 10+f(0.002*float64(n)), 50, 100
	default:
		gold, silver, bronze = 10+f(0.002*float64(n)), f(0.05*float64(n)), f(0.1*float64(n))
	}
	at := func(k int) float64 { return scores[max(k, 1)-1] }
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

// ThresholdsFor is LeaderboardThresholds with the metric's direction given ("min", "max", or ""
// to read it off the leaderboard as MLE-bench does). A leaderboard whose first and last rows
// contradict the given direction is refused; one not in rank order is sorted best first (MLE-bench
// would take its rows as they are), with a note saying so.
func ThresholdsFor(scores []float64, direction string) (th tasks.Thresholds, lower bool, note string, err error) {
	n := len(scores)
	if n == 0 {
		return th, false, "", fmt.Errorf("the leaderboard is empty")
	}
	switch direction {
	case "":
		lower = scores[0] < scores[n-1]
	case "min", "max":
		lower = direction == "min"
		if scores[0] != scores[n-1] && (scores[0] < scores[n-1]) != lower {
			return th, false, "", fmt.Errorf("the leaderboard's first row scores %v and its last %v, so it ranks %s scores first, but the direction is %s: check the metric's direction (or the file)",
				scores[0], scores[n-1], map[bool]string{true: "lower", false: "higher"}[!lower], direction)
		}
	default:
		return th, false, "", fmt.Errorf("direction %q must be min (lower is better) or max", direction)
	}
	better := func(a, b float64) bool { return a < b == lower && a != b }
	sorted := true
	for i := 1; i < n && sorted; i++ {
		sorted = !better(scores[i], scores[i-1])
	}
	if !sorted {
		scores = append([]float64(nil), scores...)
		sort.SliceStable(scores, func(i, j int) bool { return better(scores[i], scores[j]) })
		note = "the leaderboard is not in rank order: its scores were sorted best first (MLE-bench takes the rows as they are)"
	}
	th, _, err = LeaderboardThresholds(scores)
	if !lower && direction == "" && scores[0] == scores[n-1] {
		note = "every score is the same: the direction cannot be read off the leaderboard (give it)"
	}
	return th, lower, note, err
}

// ReadLeaderboard reads the score column of a Kaggle leaderboard CSV (MLE-bench's format:
// teamName, score, and other columns) in file order.
func ReadLeaderboard(r io.Reader) ([]float64, error) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	head, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("the leaderboard is empty: want a CSV with a score column, one row per team")
	}
	if err != nil {
		return nil, err
	}
	col := -1
	for i, h := range head {
		if strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")) == "score" {
			col = i
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("the leaderboard has no score column (header %v): want MLE-bench's leaderboard.csv (teamName, score, ...)", head)
	}
	var out []float64
	for line := 2; ; line++ {
		r, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if col >= len(r) {
			return nil, fmt.Errorf("leaderboard row %d has no score field", line)
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(r[col]), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("leaderboard row %d: score %q is not a finite number", line, r[col])
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("the leaderboard has no rows")
	}
	return out, nil
}
