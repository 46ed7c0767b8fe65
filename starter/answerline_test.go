package main

import (
	"testing"

	"mlerl/activities"
	"mlerl/grading"
)

func TestAnswerLine(t *testing.T) {
	score, cv := 0.0123, 0.0150
	graded := func(r grading.Report) *activities.FinalGradeResult {
		r.Score, r.ValidSubmission = &score, true
		return &activities.FinalGradeResult{Report: r}
	}
	two := []activities.AnswerMember{{SampleID: "a"}, {SampleID: "b"}}
	for _, c := range []struct {
		name string
		a    *activities.FinalAnswer
		want string
	}{
		{"no answer", nil, ""},
		{"none, with the reason", &activities.FinalAnswer{Note: "no candidate wrote a valid submission"},
			"final answer: none (no candidate wrote a valid submission)"},
		{"bronze blend", &activities.FinalAnswer{Members: two, CVScore: &cv, Test: graded(grading.Report{BronzeMedal: true, AnyMedal: true})},
			"final answer (blend of 2 programs, out-of-fold 0.01500), graded on the private test answers: 0.01230, bronze medal"},
		{"one program, above median", &activities.FinalAnswer{Members: two[:1], Test: graded(grading.Report{AboveMedian: true})},
			"final answer (one program), graded on the private test answers: 0.01230, no medal, above the median"},
		{"invalid", &activities.FinalAnswer{Members: two, Test: &activities.FinalGradeResult{Reason: "3 rows missing"}},
			"final answer (blend of 2 programs), graded on the private test answers: invalid (3 rows missing)"},
	} {
		if got := answerLine(c.a); got != c.want {
			t.Errorf("%s:\n got %q\nwant %q", c.name, got, c.want)
		}
	}
}
