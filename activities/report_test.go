package activities

import (
	"strings"
	"testing"

	"mlerl/grading"
	"mlerl/tasks"
)

// The report's tuning table says, for each pass, its round, how many variants ran and, when the
// budget stopped it, why: none at all, or some and then no more; then why each candidate's
// tuning stopped.
func TestReportTuningRows(t *testing.T) {
	score := 0.5
	ans := &FinalAnswer{Folds: 5, Tuning: []TuneStep{
		{From: "a", Slot: "transform", Tried: 3, Kept: "b", Score: &score, Round: 1},
		{From: "b", Slot: "strength", Tried: 4, Kept: "b", Score: &score, Round: 1, Skipped: "2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30"},
		{From: "c", Slot: "strength", Kept: "c", Score: &score, Skipped: "5 variants would take about 50 sandbox-seconds, and the tuning had spent 17 of its 30"},
	}, TuneStops: []TuneStop{{From: "a", Kept: "b", Why: "round 1: at the caps: 2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30"}}}
	var b strings.Builder
	writeAnswer(&b, ans)
	for _, row := range []string{
		"| 1 | `a` | transform | 3 | `b` | 0.50000 |",
		"| 1 | `b` | strength | 4, then stopped: 2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30 | `b` | 0.50000 |",
		"| - | `c` | strength | none: 5 variants would take about 50 sandbox-seconds, and the tuning had spent 17 of its 30 | `c` | 0.50000 |", // a run before the rounds
		"- tuning of `a` stopped at `b`: round 1: at the caps: 2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30",
	} {
		if !strings.Contains(b.String(), row+"\n") {
			t.Errorf("the report has no row\n%s\nin\n%s", row, b.String())
		}
	}
}

// The answer chosen without the tuned variants is reported beside the answer, or why it has
// no test score.
func TestReportUntunedAnswer(t *testing.T) {
	cv, test := 0.061, 0.0598
	for _, tc := range []struct {
		name string
		u    *UntunedAnswer
		want string // "" when there is no line
	}{
		{"not measured", nil, ""},
		{"graded", &UntunedAnswer{Members: []AnswerMember{{SampleID: "a", Weight: 0.75}, {SampleID: "b", Weight: 0.25}}, CVScore: &cv,
			Test: &FinalGradeResult{Report: grading.Report{Score: &test}}, SandboxSeconds: 12},
			"CV 0.06100, test 0.05980; members `a` 0.75, `b` 0.25; its own refits used 12 sandbox-seconds."},
		{"same", &UntunedAnswer{SameAsAnswer: true, Members: []AnswerMember{{SampleID: "a", Weight: 1}}, CVScore: &cv,
			Test: &FinalGradeResult{Report: grading.Report{Score: &test}}},
			"members `a` 1.00 (the answer's own choice)"},
		{"refit failed", &UntunedAnswer{Note: "member a's refit on the full public train wrote no submission"},
			"no test score, member a's refit on the full public train wrote no submission."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			writeAnswer(&b, &FinalAnswer{Folds: 5, Untuned: tc.u})
			got := b.String()
			if has := strings.Contains(got, "Without the tuning"); has != (tc.want != "") || !strings.Contains(got, tc.want) {
				t.Fatalf("report\n%s\nwant a line with %q", got, tc.want)
			}
		})
	}
}

// An answer the time budget chose says so and still reports its member; a note without an
// answer is the reason there is none.
func TestReportAnswerNote(t *testing.T) {
	test := 0.0153
	fallback := &FinalAnswer{Folds: 5, Note: "the run's time budget ended before a candidate was cross-validated: the answer is eval-scratch-002",
		Candidates: []CrossValidateResult{{SampleID: "it0001-s020", Reason: "cut at the run's time budget"}},
		Members:    []AnswerMember{{SampleID: "eval-scratch-002", Weight: 1, Test: &FinalGradeResult{Report: grading.Report{Score: &test}}}},
		Test:       &FinalGradeResult{Report: grading.Report{Score: &test}}}
	var b strings.Builder
	writeAnswer(&b, fallback)
	if got := b.String(); strings.Contains(got, "No final answer") || !strings.Contains(got, "Note: the run's time budget ended") || !strings.Contains(got, "eval-scratch-002") {
		t.Fatalf("report of an answer chosen at the time budget:\n%s", got)
	}
	b.Reset()
	writeAnswer(&b, &FinalAnswer{Folds: 5, Note: "no candidate made valid out-of-fold predictions"})
	if got := b.String(); !strings.Contains(got, "No final answer: no candidate made valid out-of-fold predictions.") {
		t.Fatalf("report of no answer:\n%s", got)
	}
}

// Blends average where the metric grades: log(1+x) for RMSLE (nomad), the values themselves
// for probabilities and scores, a vote for labels and texts.
func TestAlignFollowsTheMetric(t *testing.T) {
	for _, tc := range []struct {
		task        string
		log1p, vote bool
	}{
		{"nomad2018-predict-transparent-conductors", true, false},
		{"leaf-classification", false, false},
		{"detecting-insults-in-social-commentary", false, false},
		{"tweet-sentiment-extraction", false, true},
	} {
		spec, err := tasks.Builtin().Get(tc.task)
		if err != nil {
			t.Fatal(err)
		}
		if al := align(spec); al.Log1p != tc.log1p || al.Vote != tc.vote {
			t.Errorf("%s (%s): %+v, want log1p %v and vote %v", tc.task, spec.Metric, al, tc.log1p, tc.vote)
		}
	}
}

// A guarded candidate is reported with the program it guards and the change.
func TestReportGuardedCandidates(t *testing.T) {
	score := 0.05
	ans := &FinalAnswer{Folds: 10, Guarded: []Guard{{From: "it003-004", To: "guard-it003-004", Change: "postprocess=none -> clip0"},
		{From: "it009-001", To: "guard-it009-001", Change: "postprocess=none -> clip0"}}, // not among the candidates
		Candidates: []CrossValidateResult{{SampleID: "guard-it003-004", Score: &score}, {SampleID: "it001-000", Score: &score}}}
	var b strings.Builder
	writeAnswer(&b, ans)
	for _, want := range []string{
		"Candidates cross-validated guarded (the program with an option that fails on some data replaced by one that makes the same predictions wherever it does not; on RMSLE tasks, predictions clipped at 0): 1, each noted below.",
		"| `guard-it003-004` | 0.05000 |  | - | - | `it003-004` guarded: postprocess=none -> clip0 |\n",
		"| `it001-000` | 0.05000 |  | - | - |  |\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report has no %q in\n%s", want, b.String())
		}
	}
}
