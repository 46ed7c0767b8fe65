package answerplan

import (
	"testing"

	"mlerl/grading"
	"mlerl/runrecord"
)

func gradedOf(valid map[string]bool) map[string]*runrecord.FinalGradeResult {
	g := map[string]*runrecord.FinalGradeResult{}
	for id, ok := range valid {
		g[id] = &runrecord.FinalGradeResult{SampleID: id, Report: grading.Report{ValidSubmission: ok}}
	}
	return g
}

func TestBestRefitLeader(t *testing.T) {
	leaders := []string{"it0003-s001", "eval-scratch-002", "it0001-s004"}
	for _, c := range []struct {
		name   string
		graded map[string]bool
		want   string
	}{
		{"the best leader refit", map[string]bool{"eval-scratch-002": true, "it0001-s004": true}, "eval-scratch-002"},
		{"an invalid refit is passed over", map[string]bool{"it0003-s001": false, "it0001-s004": true}, "it0001-s004"},
		{"none refit", nil, ""},
		{"a graded program that is no leader is not chosen", map[string]bool{"eval-improve-000": true}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := BestRefitLeader(leaders, gradedOf(c.graded)); got != c.want {
				t.Fatalf("got %q, want %q", got, c.want)
			}
		})
	}
}
