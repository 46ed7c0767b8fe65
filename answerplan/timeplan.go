package answerplan

import "mlerl/runrecord"

// Slots is how many programs the default worker runs side by side: its sandboxes.
const Slots = 2

// CandidateShare is the part of the time left when the answer starts that cross-validating its
// candidates may take; the tuning and the members' refits have the rest. The candidates are
// what the ensemble weighs and the tuning varies, so they come first, but not at the cost of
// all tuning: an even split, by time.
const CandidateShare = 0.5

// CrossValidationWall estimates the wall seconds of cross-validating at once programs whose
// runs take seconds each, on folds folds, with slots sandboxes: a program's folds run one
// after another in one activity, the programs side by side. With one slot it is their sum.
func CrossValidationWall(seconds []float64, folds, slots int) float64 {
	sum, longest := 0.0, 0.0
	for _, s := range seconds {
		c := float64(folds) * s
		sum, longest = sum+c, max(longest, c)
	}
	return max(sum/float64(max(slots, 1)), longest)
}

// PickByTime picks, in order, up to n of the programs whose runs take seconds each (a run on
// its validation split: a fold of the full public train is about as large; 0, unknown, is
// costed at fallback) whose cross-validation on folds folds, all at once on Slots sandboxes,
// ends within wall seconds. A program that does not fit is passed over for a cheaper one after
// it. take and passed are indices into seconds, in order; programs after the n-th taken are
// neither. No time budget (wall +Inf) takes the first n.
func PickByTime(seconds []float64, fallback float64, folds, n int, wall float64) (take, passed []int) {
	var costs []float64
	for i, s := range seconds {
		if len(take) >= n {
			break
		}
		if s <= 0 {
			s = fallback
		}
		if CrossValidationWall(append(costs, s), folds, Slots) > wall {
			passed = append(passed, i)
			continue
		}
		costs = append(costs, s)
		take = append(take, i)
	}
	return take, passed
}

// RefitReserve is the wall seconds the ensemble's refits need after the tuning: a refit is one
// run on the full public train, folds/(folds-1) of a fold's training rows, and the members
// refit side by side, so the slowest scored program bounds it. A cross-validation's duration
// is its folds' sum.
func RefitReserve(scored []runrecord.CrossValidateResult, folds int) float64 {
	if folds < 2 {
		return 0
	}
	r := 0.0
	for _, cv := range scored {
		r = max(r, cv.DurationS/float64(folds-1))
	}
	return r
}

// CandidatesThatFit is how many of asked candidates the answer cross-validates when left
// seconds of the run's time budget remain, as answers that began before PickByTime decided
// it (kept so that they resume alike): as many as that holds, at least one, each costed at its
// folds run one after another at programSeconds. An unknown cost or no budget (left +Inf)
// leaves asked.
func CandidatesThatFit(asked, folds int, programSeconds, left float64) int {
	each := float64(folds) * programSeconds
	if each <= 0 || left > float64(asked)*each {
		return asked
	}
	return max(1, min(asked, int(left/each)))
}
