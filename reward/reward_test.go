package reward

import (
	"math"
	"strings"
	"testing"
)

// Each outcome under both schemes: they differ only where a valid submission scores below the
// best failure.
func TestRewardSchemes(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	all := Markers
	cases := []struct {
		name           string
		o              Outcome
		paper, bounded float64
	}{
		{"crash before any marker", Outcome{}, -10, -10},
		{"crash after three markers", Outcome{Markers: all[:3]}, -9.7, -9.7},
		{"ran, all markers, invalid submission", Outcome{Ran: true, Markers: all}, -9.3, -9.3},
		{"valid, lower is better: sign flipped", Outcome{Ran: true, Markers: all, Score: f(0.25), LowerIsBetter: true}, -0.25, -0.25},
		{"valid, higher is better", Outcome{Ran: true, Markers: all, Score: f(0.8)}, 0.8, 0.8},
		{"a terrible valid log loss: below a crash, or no worse than the best failure", Outcome{Ran: true, Score: f(11.5), LowerIsBetter: true}, -11.5, -9.3},
		{"a score without a clean exit does not count", Outcome{Ran: false, Markers: all[:1], Score: f(30)}, -9.9, -9.9},
	}
	for _, c := range cases {
		if got := Paper(c.o); math.Abs(got-c.paper) > 1e-12 {
			t.Errorf("paper, %s: %v, want %v", c.name, got, c.paper)
		}
		if got := Bounded(c.o); math.Abs(got-c.bounded) > 1e-12 {
			t.Errorf("bounded, %s: %v, want %v", c.name, got, c.bounded)
		}
	}
}

func TestFoundMarkersNeedLineStarts(t *testing.T) {
	out := "imported packages\nloaded data\nsaid defined model mid-line\ntraining loss: 0.5\ntesting loss: 0.25\ntesting loss: 0.125\n"
	got := FoundMarkers(out)
	want := []string{"imported packages", "loaded data", "training loss:", "testing loss:"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
	if LastMarker(got) != "testing loss:" {
		t.Fatal(LastMarker(got))
	}
	if l := Losses(out, "testing loss:"); len(l) != 2 || l[1] != 0.125 {
		t.Fatalf("losses %v", l)
	}
}

func TestSchemeByName(t *testing.T) {
	for name, want := range map[SchemeName]float64{"": -11.5, SchemePaper: -11.5, SchemeBounded: -9.3} {
		f, err := Scheme(name)
		if err != nil {
			t.Fatal(err)
		}
		v := 11.5
		if got := f(Outcome{Ran: true, Score: &v, LowerIsBetter: true}); math.Abs(got-want) > 1e-12 {
			t.Errorf("%q: %v, want %v", name, got, want)
		}
	}
	if _, err := Scheme("clipped"); err == nil || !strings.Contains(err.Error(), "paper or bounded") {
		t.Fatalf("an unknown reward must name the choices: %v", err)
	}
}
