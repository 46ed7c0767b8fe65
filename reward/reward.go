// Package reward turns a program's outcome into the scalar PPO maximises.
package reward

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Markers are the instrumenter's progress prints, in the order a working program reaches them.
var Markers = []string{
	"imported packages", "loaded data", "defined model", "training loss:",
	"trained model", "testing loss:", "predicted test labels",
}

// markerLines match a marker at the start of a line, as the instrumenter prints them.
var markerLines = func() []*regexp.Regexp {
	out := make([]*regexp.Regexp, len(Markers))
	for i, m := range Markers {
		out[i] = regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(m))
	}
	return out
}()

// FoundMarkers lists the markers present in output, in Markers order.
func FoundMarkers(output string) []string {
	var found []string
	for i, re := range markerLines {
		if re.MatchString(output) {
			found = append(found, Markers[i])
		}
	}
	return found
}

// LastMarker is the furthest stage reached ("" when none).
func LastMarker(found []string) string {
	if len(found) == 0 {
		return ""
	}
	return found[len(found)-1]
}

// Losses extracts the numbers printed after the loss markers (for improve prompts).
func Losses(output, marker string) []float64 {
	var out []float64
	for _, line := range strings.Split(output, "\n") {
		if rest, ok := strings.CutPrefix(line, marker); ok {
			if v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64); err == nil {
				out = append(out, v)
			}
		}
	}
	return out
}

// Outcome is what the reward depends on.
type Outcome struct {
	Ran           bool     // exited 0 within its limits
	Markers       []string // markers found in the output
	Score         *float64 // grader's score when the submission is valid
	LowerIsBetter bool
}

// Paper is the paper's reward: the grader's score (sign flipped when lower is better) for a
// program that ran and produced a valid submission; otherwise -10 plus 0.1 per marker found.
func Paper(o Outcome) float64 {
	if o.Ran && o.Score != nil {
		if o.LowerIsBetter {
			return -*o.Score
		}
		return *o.Score
	}
	return -10 + 0.1*float64(len(o.Markers))
}

// Bounded is the paper's reward except that a program that ran and wrote a valid submission
// never earns less than a failed program that reached every marker (-9.3). Under the paper's
// reward a valid but poor submission on a lower-is-better metric (a log loss of 30 from hard
// labels) scores far below a crash, so the policy learns to avoid valid-but-poor programs more
// than failing ones; here a valid submission is at worst as good as the best failure.
func Bounded(o Outcome) float64 {
	r := Paper(o)
	if o.Ran && o.Score != nil {
		return math.Max(r, Paper(Outcome{Markers: Markers}))
	}
	return r
}

// SchemeName names a reward a run can optimise (--reward).
type SchemeName string

// The reward schemes.
const (
	SchemePaper   SchemeName = "paper"   // a failure -10 + 0.1 per marker, a valid program its signed score
	SchemeBounded SchemeName = "bounded" // the same, but a valid program never below the best failure
)

// Schemes are the rewards by name.
var Schemes = map[SchemeName]func(Outcome) float64{SchemePaper: Paper, SchemeBounded: Bounded}

// Scheme returns the named reward; "" is the paper's.
func Scheme(name SchemeName) (func(Outcome) float64, error) {
	if name == "" {
		return Paper, nil
	}
	if f, ok := Schemes[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("reward must be paper or bounded, got %q", name)
}
