package ensemble

import (
	"errors"
	"fmt"
)

// Scorer scores the blend of the candidates with these counts as weights; ok is false when
// the blend is not a valid submission.
type Scorer func(counts []int) (score float64, ok bool, err error)

// Step is one round of greedy selection: the candidate added and the ensemble's score after.
type Step struct {
	Added int     `json:"added"`
	Score float64 `json:"score"`
}

// Selection is greedy selection's outcome: Counts[i] copies of candidate i (the weights are
// Counts[i]/sum), the best ensemble found (Score) and every round.
type Selection struct {
	Counts []int   `json:"counts"`
	Score  float64 `json:"score"`
	Steps  []Step  `json:"steps"`
}

// Weights are the counts as fractions of their sum.
func (s Selection) Weights() []float64 {
	total := 0
	for _, c := range s.Counts {
		total += c
	}
	w := make([]float64, len(s.Counts))
	for i, c := range s.Counts {
		if total > 0 {
			w[i] = float64(c) / float64(total)
		}
	}
	return w
}

// Greedy is Caruana et al.'s ensemble selection with replacement: start empty, and for up to
// rounds rounds add the candidate (again, possibly) whose addition scores best; the answer is
// the best ensemble of any round, so it is never worse than the best single candidate on the
// data it was chosen on. Ties go to the lower index, so the result is deterministic.
func Greedy(n, rounds int, lowerIsBetter bool, score Scorer) (Selection, error) {
	if n < 1 || rounds < 1 {
		return Selection{}, fmt.Errorf("greedy selection needs candidates and rounds, got %d and %d", n, rounds)
	}
	better := func(a, b float64) bool {
		if lowerIsBetter {
			return a < b
		}
		return a > b
	}
	counts := make([]int, n)
	var best Selection
	found := false
	for r := 0; r < rounds; r++ {
		add, addScore := -1, 0.0
		for i := 0; i < n; i++ {
			counts[i]++
			s, ok, err := score(counts)
			counts[i]--
			if err != nil {
				return Selection{}, err
			}
			if ok && (add < 0 || better(s, addScore)) {
				add, addScore = i, s
			}
		}
		if add < 0 {
			if r == 0 {
				return Selection{}, errors.New("no candidate alone makes a valid submission")
			}
			break
		}
		counts[add]++
		best.Steps = append(best.Steps, Step{Added: add, Score: addScore})
		if !found || better(addScore, best.Score) {
			best.Counts, best.Score, found = append([]int(nil), counts...), addScore, true
		}
	}
	return best, nil
}
