package answerplan

import (
	"fmt"

	"mlerl/runrecord"
)

// Pass is one tuning pass: every variant of a program along one tunable slot, cross-validated
// in waves, cheapest options first, the best kept when it beats the program.
type Pass struct {
	from          runrecord.CrossValidateResult
	kept          runrecord.CrossValidateResult
	ids, options  []string
	next          int       // the first variant not yet run
	seen          []float64 // the variants' costs, in the order run
	lowerIsBetter bool
	step          runrecord.TuneStep
}

// NewPass starts the pass of from along slot, whose variants are ids with options.
func NewPass(from runrecord.CrossValidateResult, slot string, ids, options []string, lowerIsBetter bool) *Pass {
	return &Pass{from: from, kept: from, ids: ids, options: options, lowerIsBetter: lowerIsBetter,
		step: runrecord.TuneStep{From: from.SampleID, Slot: slot, Kept: from.SampleID, Score: from.Score}}
}

// NextWave is the next wave of variants to cross-validate, or none when the pass is over: every
// variant ran, or the next wave's cost (extrapolated from the costs seen: variants' costs grow
// with their strength, which the program's own cost times their count misses) does not fit
// what is left of the tuning's budget of sandbox-seconds or of the run's time budget
// (timeLeft, +Inf without one); the step then says why. The wave's wall time is its variants'
// cross-validations side by side on slots sandboxes (CrossValidationWall; with one slot, their
// sandbox-seconds, which bound it), so a wave that fits ends within the run's budget.
func (p *Pass) NextWave(spent, budget, timeLeft float64, slots int) []string {
	if p.next >= len(p.ids) || p.step.Skipped != "" {
		return nil
	}
	left := len(p.ids) - p.next
	wave := min(left, TuneWave)
	each := nextCostsEach(p.from.DurationS, p.seen, wave)
	cost := 0.0
	for _, c := range each {
		cost += c
	}
	if spent+cost > budget {
		if left > wave {
			cost = NextCosts(p.from.DurationS, p.seen, left)
		}
		p.step.Skipped = fmt.Sprintf("%s would take about %.0f sandbox-seconds, and the tuning had spent %.0f of its %.0f", Plural(left, "variant"), cost, spent, budget)
		return nil
	}
	if wall := CrossValidationWall(each, 1, slots); wall > timeLeft {
		p.step.Skipped = fmt.Sprintf("%s would take up to %.0f s, and the run's time budget has %.0f s left", Plural(left, "variant"), wall, max(timeLeft, 0))
		return nil
	}
	return p.ids[p.next : p.next+wave]
}

// Record takes the wave NextWave gave, cross-validated in order, and returns its results
// marked as the variants they are. The best that beats the program kept so far is kept: a
// variant that is another candidate's program may still be the one to tune on.
func (p *Pass) Record(results []runrecord.CrossValidateResult) []runrecord.CrossValidateResult {
	out := make([]runrecord.CrossValidateResult, len(results))
	for i, cv := range results {
		cv.TunedFrom, cv.Tuned = p.from.SampleID, p.step.Slot+"="+p.options[p.next+i]
		p.seen = append(p.seen, cv.DurationS)
		if cv.Score != nil && Better(p.lowerIsBetter, *cv.Score, p.step.Score) {
			p.step.Kept, p.step.Score, p.kept = cv.SampleID, cv.Score, cv
		}
		out[i] = cv
	}
	p.step.Tried += len(results)
	p.next += len(results)
	return out
}

// Progress says where the pass stands: variants cross-validated of all.
func (p *Pass) Progress() (done, all int) { return p.next, len(p.ids) }

// Step is the pass's record so far.
func (p *Pass) Step() runrecord.TuneStep { return p.step }

// Kept is the program the pass keeps: its best variant when one beat the program, else the
// program itself.
func (p *Pass) Kept() runrecord.CrossValidateResult { return p.kept }
