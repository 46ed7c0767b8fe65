package activities

import (
	"strings"
	"testing"
)

// The report's tuning table says, for each pass, how many variants ran and, when the budget
// stopped it, why: none at all, or some and then no more.
func TestReportTuningRows(t *testing.T) {
	score := 0.5
	ans := &FinalAnswer{Folds: 5, Tuning: []TuneStep{
		{From: "a", Slot: "transform", Tried: 3, Kept: "b", Score: &score},
		{From: "b", Slot: "strength", Tried: 4, Kept: "b", Score: &score, Skipped: "2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30"},
		{From: "c", Slot: "strength", Kept: "c", Score: &score, Skipped: "5 variants would take about 50 sandbox-seconds, and the tuning had spent 17 of its 30"},
	}}
	var b strings.Builder
	writeAnswer(&b, ans)
	for _, row := range []string{
		"| `a` | transform | 3 | `b` | 0.50000 |",
		"| `b` | strength | 4, then stopped: 2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30 | `b` | 0.50000 |",
		"| `c` | strength | none: 5 variants would take about 50 sandbox-seconds, and the tuning had spent 17 of its 30 | `c` | 0.50000 |",
	} {
		if !strings.Contains(b.String(), row+"\n") {
			t.Errorf("the report has no row\n%s\nin\n%s", row, b.String())
		}
	}
}
