package answerplan

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"mlerl/runrecord"
)

// variant is what a fake pass tries: one variant, kept when its score beats the program's;
// the id "cap" stands for a pass the tuning's budget cuts before it runs anything.
type variant struct {
	id    string
	score float64
	folds []float64
}

// descend drives d to its end over two slots, a and b, whose passes try variants[program/slot]
// (a pass with no entry has no variants), and returns the steps as "round slot from->kept".
func descend(t *testing.T, d *Descent, variants map[string]variant, lower bool) []string {
	t.Helper()
	var steps []string
	for slot, ok := d.Next(); ok; slot, ok = d.Next() {
		cur := d.Program()
		name := []string{"a", "b"}[slot]
		v, has := variants[cur.SampleID+"/"+name]
		var ids, options []string
		if has {
			ids, options = []string{v.id}, []string{"x"}
		}
		budget := math.Inf(1)
		if v.id == "cap" {
			budget = 0
		}
		p := NewPass(cur, name, ids, options, lower)
		if wave := p.NextWave(0, budget, math.Inf(1), Slots); len(wave) > 0 {
			p.Record([]runrecord.CrossValidateResult{{SampleID: v.id, Score: &v.score, FoldScores: v.folds, DurationS: 1}})
		}
		s := d.Passed(slot, p)
		steps = append(steps, fmt.Sprintf("%d %s %s->%s", s.Round, s.Slot, s.From, s.Kept))
		if len(steps) > 20 {
			t.Fatalf("the descent does not end: %v", steps)
		}
	}
	return steps
}

// A candidate's tuning is rounds of coordinate descent: round 1 passes every slot, whatever
// each pass keeps; the noise rule judges the round as a whole; a later round passes only the
// slots whose program changed since they last kept it, and a round with no such slot, no
// variant kept, or a pass cut by a cap ends the tuning.
func TestDescent(t *testing.T) {
	for _, c := range []struct {
		name     string
		start    variant
		variants map[string]variant
		lower    bool
		steps    []string
		stopped  string
	}{
		{"a clear gain goes on to a round with no new variants",
			variant{"p", 0, []float64{0, 0, 0}},
			map[string]variant{"p/a": {"pa", 1, []float64{1, 1, 1}}, "pa/b": {"pab", 1, []float64{1, 1, 1}}}, false,
			[]string{"1 a p->pa", "1 b pa->pa"}, "round 2: no slot has new variants"},
		{"a slot that keeps its program does not end the round; the next round passes it again",
			variant{"p", 0, []float64{0, 0, 0}},
			map[string]variant{
				"p/a": {"pa", -1, []float64{-1, -1, -1}}, "p/b": {"pb", 1, []float64{1, 1.1, 0.9}},
				"pb/a": {"pba", 2, []float64{2, 2, 2}}, "pba/b": {"pbab", 2.1, []float64{2.1, 2.1, 2.1}},
				"pbab/a": {"pbaba", 1, []float64{1, 1, 1}},
			}, false,
			[]string{"1 a p->p", "1 b p->pb", "2 a pb->pba", "2 b pba->pbab", "3 a pbab->pbab"},
			"round 3: no pass kept a variant"},
		{"a round's gain within its fold noise stops, though each pass kept a variant",
			variant{"p", 0, []float64{0, 0, 0, 0}},
			map[string]variant{"p/a": {"pa", 0.1, []float64{1.1, -0.9, 1.1, -0.9}}, "pa/b": {"pab", 0.2, []float64{1.2, -0.8, 1.2, -0.8}}}, false,
			[]string{"1 a p->pa", "1 b pa->pab"}, "round 1: gain 0.2 within fold noise 0.5774 (pab over p)"},
		{"lower is better: a drop is the gain; a slot is not passed again on what it kept (pa/a never runs)",
			variant{"p", 0, []float64{0, 0}},
			map[string]variant{"p/a": {"pa", -1, []float64{-1, -1}}, "pa/a": {"paa", -2, []float64{-2, -2}}}, true,
			[]string{"1 a p->pa", "1 b pa->pa"}, "round 2: no slot has new variants"},
		{"folds that do not pair leave the rule silent: the rounds go on",
			variant{"p", 0, nil},
			map[string]variant{"p/b": {"pb", 1, nil}, "pb/a": {"pba", 2, nil}},
			false,
			[]string{"1 a p->p", "1 b p->pb", "2 a pb->pba", "2 b pba->pba"}, "round 3: no slot has new variants"},
		{"a pass cut by a cap ends the tuning after its round",
			variant{"p", 0, []float64{0, 0}},
			map[string]variant{"p/a": {id: "cap"}, "p/b": {"pb", 1, []float64{1, 1}}}, false,
			[]string{"1 a p->p", "1 b p->pb"},
			"round 1: at the caps: 1 variant would take about 1 sandbox-seconds, and the tuning had spent 0 of its 0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := NewDescent(runrecord.CrossValidateResult{SampleID: c.start.id, Score: &c.start.score, FoldScores: c.start.folds, DurationS: 1}, 2, c.lower)
			steps := descend(t, d, c.variants, c.lower)
			if !slices.Equal(steps, c.steps) || d.Stopped() != c.stopped {
				t.Fatalf("steps %q, stopped %q\nwant %q, %q", steps, d.Stopped(), c.steps, c.stopped)
			}
		})
	}
}

// A step that fails ends the tuning in its round; Next then has no slot.
func TestDescentEnd(t *testing.T) {
	d := NewDescent(runrecord.CrossValidateResult{SampleID: "p"}, 2, false)
	if slot, ok := d.Next(); !ok || slot != 0 || d.Round() != 1 {
		t.Fatalf("Next() = %d, %v in round %d; want slot 0 of round 1", slot, ok, d.Round())
	}
	d.End("the variants failed")
	if slot, ok := d.Next(); ok || d.Stopped() != "round 1: the variants failed" {
		t.Fatalf("after End: Next() = %d, %v, stopped %q", slot, ok, d.Stopped())
	}
}
