package answerplan

import (
	"fmt"

	"mlerl/runrecord"
)

// Descent is one candidate's tuning: rounds of coordinate descent over its tunable slots.
// Each slot is a coordinate, so one slot's pass keeping its program says nothing about the
// next slot's; the noise rule (ShouldContinue) therefore judges a whole round, from the
// program that started it to the one that ended it. Round 1 passes every slot; a later round
// passes a slot only when the program has changed since that slot's last pass kept it (its
// variants would otherwise be the very programs already cross-validated). Tuning stops after
// a round whose gain is within its fold-to-fold noise, that kept no variant, or that a cap
// (the tuning's budget, the run's time budget) cut short, and when a round finds no slot
// with new variants; Stopped then says why.
type Descent struct {
	slots         int
	lowerIsBetter bool
	cur, start    runrecord.CrossValidateResult // the program kept so far; the round's first
	round, next   int                           // the round (from 1); the next slot it considers
	lastKept      []string                      // per slot, what its last pass kept ("": none yet)
	passes        int                           // the round's passes that ran a variant
	capped        string                        // why a cap cut one of the round's passes
	stopped       string
}

// NewDescent starts the tuning of from, a program with slots tunable slots.
func NewDescent(from runrecord.CrossValidateResult, slots int, lowerIsBetter bool) *Descent {
	return &Descent{slots: slots, lowerIsBetter: lowerIsBetter, cur: from, start: from, round: 1, lastKept: make([]string, slots)}
}

// Next is the slot whose pass runs next, on Program; false when the tuning is over (Stopped
// says why).
func (d *Descent) Next() (int, bool) {
	for d.stopped == "" {
		for d.next < d.slots {
			s := d.next
			d.next++
			if d.lastKept[s] != d.cur.SampleID {
				return s, true
			}
		}
		d.stopped = d.judge()
		if d.stopped == "" {
			d.round, d.next, d.start, d.passes, d.capped = d.round+1, 0, d.cur, 0, ""
		}
	}
	return -1, false
}

// judge is why the round just ended stops the tuning, or "" to go on to the next round.
// Every score only ever improves, so the rounds end: a program once left is not met again.
func (d *Descent) judge() string {
	switch {
	case d.capped != "":
		return fmt.Sprintf("round %d: at the caps: %s", d.round, d.capped)
	case d.passes == 0:
		return fmt.Sprintf("round %d: no slot has new variants", d.round)
	case d.cur.SampleID == d.start.SampleID:
		return fmt.Sprintf("round %d: no pass kept a variant", d.round)
	}
	if ok, gain, noise := ShouldContinue(d.start.FoldScores, d.cur.FoldScores, !d.lowerIsBetter); !ok {
		return fmt.Sprintf("round %d: gain %.4g within fold noise %.4g (%s over %s)", d.round, gain, noise, d.cur.SampleID, d.start.SampleID)
	}
	return ""
}

// Passed takes the pass of slot (the one Next gave) once it is over, and returns its step
// marked with its round; the next slot varies what it kept.
func (d *Descent) Passed(slot int, p *Pass) runrecord.TuneStep {
	step := p.Step()
	step.Round = d.round
	if step.Tried > 0 {
		d.passes++
	}
	if step.Skipped != "" && d.capped == "" {
		d.capped = step.Skipped
	}
	d.cur = p.Kept()
	d.lastKept[slot] = d.cur.SampleID
	return step
}

// End stops the tuning in the current round, for why (a step that failed).
func (d *Descent) End(why string) { d.stopped = fmt.Sprintf("round %d: %s", d.round, why) }

// Program is the program kept so far: the one the next pass varies.
func (d *Descent) Program() runrecord.CrossValidateResult { return d.cur }

// Round is the current round, from 1.
func (d *Descent) Round() int { return d.round }

// Stopped says why the tuning stopped; "" while it goes on.
func (d *Descent) Stopped() string { return d.stopped }
