// Package answerplan holds the final answer's decisions, apart from the workflow that runs
// them: which leaders are distinct candidates, how many candidates the time left holds, which
// tuning variants a pass tries next and which it keeps, when a candidate's tuning stops, and
// what a failed refit leaves to choose from. Everything here is a pure function of what the
// activities returned, so the workflow stays deterministic and these rules are tested without
// one.
package answerplan

import (
	"fmt"
	"slices"
	"sort"

	"mlerl/runrecord"
)

// DistinctTries bounds the programs the final answer cross-validates, as a multiple of its
// candidates, while it looks for ones whose predictions differ.
const DistinctTries = 3

// TuneWave is how many of a pass's variants are cross-validated at once: one per sandbox, and
// each wave's costs refine the estimate for the next.
const TuneWave = Slots

// Better is the one rule for "s beats than" on the task's metric; nothing beats a score and
// anything beats none.
func Better(lowerIsBetter bool, s float64, than *float64) bool {
	switch {
	case than == nil:
		return true
	case lowerIsBetter:
		return s < *than
	default:
		return s > *than
	}
}

// SortBest orders scored cross-validations best first (every one has a Score); ties keep
// their order, so greedy selection's ties go to the earlier candidate.
func SortBest(scored []runrecord.CrossValidateResult, lowerIsBetter bool) {
	sort.SliceStable(scored, func(i, j int) bool { return Better(lowerIsBetter, *scored[i].Score, scored[j].Score) })
}

// Distinct remembers, per digest of out-of-fold predictions, the first program that made
// them: programs that differ only where the model does not (a hold-out check before a refit
// on everything) make the same predictions and are one candidate.
type Distinct map[string]string

// DistinctOf remembers the scored, not left out candidates already cross-validated.
func DistinctOf(cands []runrecord.CrossValidateResult) Distinct {
	d := Distinct{}
	for _, c := range cands {
		if c.Score != nil && c.SameAs == "" && c.PredictionsSHA256 != "" {
			d[c.PredictionsSHA256] = c.SampleID
		}
	}
	return d
}

// LeftOutAsRepeat marks cv left out when its out-of-fold predictions repeat those of an
// earlier program, and otherwise records cv as the first to make them.
func (d Distinct) LeftOutAsRepeat(cv *runrecord.CrossValidateResult) bool {
	if cv.Score == nil || cv.PredictionsSHA256 == "" {
		return false
	}
	if f, ok := d[cv.PredictionsSHA256]; ok {
		cv.SameAs, cv.Reason = f, fmt.Sprintf("the same out-of-fold predictions as `%s`: left out", f)
		return true
	}
	d[cv.PredictionsSHA256] = cv.SampleID
	return false
}

// NextCosts estimates what the next n variants of a tuning pass cost, given the program's own
// cost and the costs of the pass's variants run so far, cheapest options first. Costs grow
// with the option (strength s0..s5 adds rounds and trees), so the estimate extrapolates the
// last step's growth geometrically from the larger of the program's cost and the last one
// seen; it never assumes a variant cheaper than the program it varies.
func NextCosts(parent float64, seen []float64, n int) float64 {
	total := 0.0
	for _, c := range nextCostsEach(parent, seen, n) {
		total += c
	}
	return total
}

// nextCostsEach is NextCosts variant by variant.
func nextCostsEach(parent float64, seen []float64, n int) []float64 {
	base, growth := parent, 1.0
	if k := len(seen); k > 0 {
		base = max(parent, seen[k-1])
		if k > 1 && seen[k-2] > 0 && seen[k-1] > seen[k-2] {
			growth = seen[k-1] / seen[k-2]
		}
	}
	out, c := make([]float64, n), base
	for i := range out {
		c *= growth
		out[i] = c
	}
	return out
}

// FailedRefits are the members whose refit on the full public train wrote no submission (a
// crash the folds did not meet): the blend would lack their share, so the ensemble is chosen
// again without them. Whether a program wrote a submission needs no test answers.
func FailedRefits(members []runrecord.AnswerMember) []string {
	var failed []string
	for _, m := range members {
		if m.Test == nil || !m.Test.Report.SubmissionExist {
			failed = append(failed, m.SampleID)
		}
	}
	return failed
}

// Untuned are the candidates (best first) an answer without the tuning chooses from: the
// scored ones that are no tuned variant and whose refit did not fail. tuned says whether
// any variant was kept among the scored, i.e. whether there is a tuning effect to measure.
func Untuned(scored []runrecord.CrossValidateResult, refitFailed []runrecord.FinalGradeResult) (ids []string, tuned bool) {
	for _, cv := range scored {
		switch {
		case cv.TunedFrom != "":
			tuned = true
		case !slices.ContainsFunc(refitFailed, func(f runrecord.FinalGradeResult) bool { return f.SampleID == cv.SampleID }):
			ids = append(ids, cv.SampleID)
		}
	}
	return ids, tuned
}

// Plural counts things in the lines a user reads: "1 variant", "2 variants".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
