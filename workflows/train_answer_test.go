package workflows

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"testing"
	"time"

	"go.temporal.io/sdk/temporal"

	"mlerl/activities"
	"mlerl/answerplan"
	"mlerl/worker/queues"
)

func TestAddLeaderKeepsTheBestFirst(t *testing.T) {
	l := func(s string, v float64) activities.Leader { return activities.Leader{Sample: s, Score: v} }
	cases := []struct {
		name  string
		lower bool
		board []activities.Leader
		add   activities.Leader
		want  []string
	}{
		{"into an empty board", true, nil, l("a", 1), []string{"a"}},
		{"lower is better: goes first", true, []activities.Leader{l("a", 0.5), l("b", 0.7)}, l("c", 0.1), []string{"c", "a", "b"}},
		{"lower is better: goes between", true, []activities.Leader{l("a", 0.5), l("b", 0.7)}, l("c", 0.6), []string{"a", "c", "b"}},
		{"higher is better: goes last", false, []activities.Leader{l("a", 0.9), l("b", 0.7)}, l("c", 0.6), []string{"a", "b", "c"}},
		{"a tie keeps the earlier first", false, []activities.Leader{l("a", 0.9), l("b", 0.7)}, l("c", 0.9), []string{"a", "c", "b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, x := range addLeader(c.board, c.lower, c.add) {
				got = append(got, x.Sample)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
		})
	}
	// Full: a worse program is not kept, a better one pushes the worst out.
	var board []activities.Leader
	for i := range leadersKept {
		board = addLeader(board, true, l("s", float64(i)))
	}
	if got := addLeader(board, true, l("worse", 100)); len(got) != leadersKept || got[leadersKept-1].Score != leadersKept-1 {
		t.Fatalf("a worse program changed a full board: last %+v", got[len(got)-1])
	}
	if got := addLeader(board, true, l("best", -1)); len(got) != leadersKept || got[0].Sample != "best" || got[leadersKept-1].Score != leadersKept-2 {
		t.Fatalf("a better program must push the worst out: first %+v, last %+v", got[0], got[len(got)-1])
	}
}

// spread is a valid score in [0, 1) that differs between samples.
func spread(id string) *float64 {
	h := fnv.New32a()
	h.Write([]byte(id))
	v := float64(h.Sum32()%1000) / 1000
	return &v
}

// runWithAnswer runs a short training whose answer has 3 candidates on 4 folds.
func runWithAnswer(t *testing.T, f *fakeRun) (TrainInput, TrainResult) {
	t.Helper()
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, spread)
	in := input()
	in.FinalCandidates, in.FinalFolds = 3, 4
	res := trainResult(t, env, in)
	return in, res
}

func TestFinalAnswerCrossValidatesTheBestProgramsOfTheWholeRun(t *testing.T) {
	f := &fakeRun{}
	in, res := runWithAnswer(t, f)
	if len(f.candidates) != 1 {
		t.Fatalf("candidates asked for %d times, want once", len(f.candidates))
	}
	// The leader board holds training and evaluation programs, best (lowest) first.
	board := f.candidates[0]
	// Only as many programs are asked for (guarded and stored) as the answer may cross-validate.
	if want := answerplan.DistinctTries * in.FinalCandidates; len(board) <= want || f.askedMax[0] != want {
		t.Fatalf("asked for %d of a board of %d, want %d (answerplan.DistinctTries x candidates) of a longer board", f.askedMax[0], len(board), want)
	}
	var training, eval bool
	for i, id := range board {
		training = training || strings.HasPrefix(id, "it")
		eval = eval || strings.HasPrefix(id, "eval")
		if i > 0 && *spread(board[i-1]) > *spread(id) {
			t.Fatalf("leader board not best first: %s (%v) before %s (%v)", board[i-1], *spread(board[i-1]), id, *spread(id))
		}
	}
	if !training || !eval {
		t.Fatalf("the candidates must come from training and evaluation, got %v", board)
	}
	if got := slices.Sorted(slices.Values(f.crossVal)); !slices.Equal(got, slices.Sorted(slices.Values(board[:3]))) {
		t.Fatalf("cross-validated %v, want the 3 best %v", f.crossVal, board[:3])
	}
	// One activity runs the program on every fold in turn.
	if want := 4 * in.ExecTimeout; f.cvTimeout < want-time.Minute || f.cvTimeout > want {
		t.Fatalf("cross-validation timeout %v, want folds times the execution timeout (%v)", f.cvTimeout, want)
	}
	if !slices.Equal(f.ensembled, board[:3]) {
		t.Fatalf("ensembled %v, want the candidates by cross-validation score %v", f.ensembled, board[:3])
	}
	a := res.Answer
	if a == nil || a.Test == nil || f.blended == nil || len(a.Members) != 2 || len(a.Candidates) != 3 || a.Untuned != nil {
		t.Fatalf("answer %+v, blended %+v", a, f.blended)
	}
	// Guarded programs are asked for, and the answer lists those it cross-validated.
	if len(f.guarded) != 1 || f.guarded[0] != in.Task {
		t.Fatalf("candidates guarded for tasks %q, want the run's %q", f.guarded, in.Task)
	}
	if len(a.Guarded) != 1 || a.Guarded[0].To != board[0] {
		t.Fatalf("guarded %+v: want only the best program's guard, %s, of the two given", a.Guarded, board[0])
	}
	// Every member is refit and graded alone, once, by the answer (the report's grades of
	// best-of-K's and the best training program follow it and reuse a member's).
	seen := map[string]bool{}
	for _, id := range f.graded {
		if seen[id] {
			t.Fatalf("%s graded twice: %v", id, f.graded)
		}
		seen[id] = true
	}
	refits := 0.0
	for _, m := range f.blended.Members {
		if m.Test == nil || m.Test.SampleID != m.SampleID || !seen[m.SampleID] {
			t.Fatalf("member %s reached the blend without its test grade: %+v", m.SampleID, m.Test)
		}
		refits++
	}
	// The report-only grades (best-of-K's choice, the best training program) follow the
	// answer: before it, a slow program's refit spent the answer's share of the time budget.
	for _, g := range []*activities.FinalGradeResult{res.Final, res.Best} {
		member := slices.ContainsFunc(a.Members, func(m activities.AnswerMember) bool { return m.SampleID == g.SampleID })
		if !member && !slices.Contains(f.gradedAfterBlend, g.SampleID) {
			t.Fatalf("%s was graded for the report before the answer was blended (graded %v)", g.SampleID, f.graded)
		}
	}
	if want := 3*2 + refits; a.SandboxSeconds != want {
		t.Fatalf("sandbox seconds %v, want the cross-validations' 6 plus %v of refits", a.SandboxSeconds, refits)
	}
}

// The execution hosts' steps that take no sandbox slot go to their own queue, so they never wait
// behind programs running in the sandbox, which may hold every slot for minutes.
func TestHostStepsHaveAQueueOfTheirOwn(t *testing.T) {
	f := &fakeRun{}
	runWithAnswer(t, f)
	for activity, want := range map[string]string{
		"InstrumentPrograms": queues.ExecHost, "SelectEnsemble": queues.ExecHost, "BlendAnswer": queues.ExecHost,
		"ExecuteProgram": queues.Exec, "CrossValidate": queues.Exec, "FinalGrade": queues.Exec,
		"SamplePrograms": queues.GPU, "UpdatePolicy": queues.GPU,
	} {
		if got := f.queues[activity]; !slices.Equal(got, []string{want}) {
			t.Errorf("%s ran on %v, want only %s", activity, got, want)
		}
	}
}

// Candidates that repeat a better one's out-of-fold predictions (programs differing only in
// a hold-out check, say) are left out and the next leaders cross-validated in their place,
// until the answer holds its candidates or has tried three times as many.
func TestFinalAnswerLeavesOutCandidatesThatRepeatABetterOnesPredictions(t *testing.T) {
	for _, tc := range []struct {
		name string
		same map[int]string // leader rank -> predictions shared with the other ranks of the name
		// cross-validated and kept, as leader ranks
		tried, kept []int
	}{
		{"three batches", map[int]string{0: "A", 1: "A", 2: "A", 3: "B", 4: "A", 5: "C"}, []int{0, 1, 2, 3, 4, 5}, []int{0, 3, 5}},
		{"every program the same", map[int]string{0: "A", 1: "A", 2: "A", 3: "A", 4: "A", 5: "A", 6: "A", 7: "A", 8: "A", 9: "A", 10: "A"},
			[]int{0, 1, 2, 3, 4, 5, 6, 7, 8}, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeRun{}
			f.predictions = func(id string) string {
				i := slices.Index(f.candidates[0], id)
				if p, ok := tc.same[i]; ok {
					return p
				}
				return "own-" + id
			}
			env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, spread)
			in := input()
			in.FinalCandidates, in.FinalFolds = 3, 4
			res := trainResult(t, env, in)
			board := f.candidates[0]
			if len(board) < 11 {
				t.Fatalf("the fake run's leader board is too short for the test: %v", board)
			}
			ranks := func(ids []string) []int {
				var out []int
				for _, id := range ids {
					out = append(out, slices.Index(board, id))
				}
				slices.Sort(out)
				return out
			}
			if got := ranks(f.crossVal); !slices.Equal(got, tc.tried) {
				t.Fatalf("cross-validated leaders %v, want %v", got, tc.tried)
			}
			if got := ranks(f.ensembled); !slices.Equal(got, tc.kept) {
				t.Fatalf("ensembled leaders %v, want %v", got, tc.kept)
			}
			a := res.Answer
			if len(a.Candidates) != len(tc.tried) || a.SandboxSeconds < 2*float64(len(tc.tried)) {
				t.Fatalf("every cross-validation must be recorded and paid for: %d candidates, %v sandbox-seconds", len(a.Candidates), a.SandboxSeconds)
			}
			for _, c := range a.Candidates {
				left := !slices.Contains(tc.kept, slices.Index(board, c.SampleID))
				if left != (c.SameAs == board[0]) || left != strings.Contains(c.Reason, "same out-of-fold predictions") {
					t.Fatalf("candidate %s: same as %q, reason %q", c.SampleID, c.SameAs, c.Reason)
				}
			}
		})
	}
}

// A member whose refit on the full train writes nothing (it passed every fold, then crashed)
// must not sink the answer: the ensemble is chosen again without it.
func TestFinalAnswerChoosesAgainWithoutAMemberWhoseRefitFailed(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, spread)
	in := input()
	in.FinalCandidates, in.FinalFolds, in.EvalSamples = 3, 4, 1
	var crashed string
	f.noSubmission = func(id string) bool {
		// The first member refit after the ensemble is chosen (not best-of-K's program,
		// graded before it).
		if crashed == "" && len(f.ensembled) > 0 {
			crashed = id
		}
		return id == crashed
	}
	res := trainResult(t, env, in)
	a := res.Answer
	if a == nil || f.blended == nil || len(a.RefitFailed) != 1 || a.RefitFailed[0].SampleID != crashed {
		t.Fatalf("want the crashed member %s recorded and the answer blended without it, got %+v", crashed, a)
	}
	if len(f.ensembled) != 2 || slices.Contains(f.ensembled, crashed) {
		t.Fatalf("the second selection must run over the other candidates, got %v", f.ensembled)
	}
	for _, m := range f.blended.Members {
		if m.SampleID == crashed || !m.Test.Report.SubmissionExist {
			t.Fatalf("the blend got a member without a submission: %+v", f.blended.Members)
		}
	}
}

func TestFinalAnswerOfATaskThatCannotBeCrossValidatedIsANote(t *testing.T) {
	f := &fakeRun{cvErr: temporal.NewNonRetryableApplicationError("the public test has columns the train lacks", activities.ErrBadInput, nil)}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, spread)
	env.ExecuteWorkflow(Train, input())
	if err := env.GetWorkflowError(); err != nil {
		t.Fatalf("a task without cross-validation must still finish its run: %v", err)
	}
	var res TrainResult
	env.GetWorkflowResult(&res)
	if res.Answer == nil || !strings.Contains(res.Answer.Note, "columns the train lacks") || res.Final == nil || f.blended != nil {
		t.Fatalf("want best-of-K graded and the reason there is no answer, got answer %+v final %+v", res.Answer, res.Final)
	}
}

func TestNoFinalAnswerWhenTurnedOff(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, spread)
	in := input()
	in.FinalCandidates = 0
	res := trainResult(t, env, in)
	if res.Answer != nil || len(f.candidates) != 0 || len(f.crossVal) != 0 {
		t.Fatalf("--final-candidates 0 ran the final answer: %+v", res.Answer)
	}
}

// The best candidates that are different programs apart from their tunable slots are tuned
// by rounds over their slots: each slot's variants are cross-validated, the best kept when it
// beats the program it varies, and the next slot varies the kept one; a second round passes
// again the slots whose program changed since their last pass. Every new variant joins the
// ensemble's candidates; one repeating a candidate's predictions is left out.
func TestFinalAnswerTunesTheBestCandidatesSlotBySlot(t *testing.T) {
	f, res, board := runTuning(t, func(id string) float64 {
		if strings.HasPrefix(id, "tune-") {
			return 1
		}
		return 10 // the three candidates: a budget of 30 s for the ten variants' 10
	})
	a := res.Answer
	var steps []string
	for _, s := range a.Tuning {
		steps = append(steps, fmt.Sprintf("%d %s %s -> %s", s.Round, s.From, s.Slot, s.Kept))
	}
	power := func(of string) string { return "tune-" + of + "-transform-power" }
	s4 := func(of string) string { return "tune-" + power(of) + "-strength-s4" }
	// Round 2 varies the transform of the strength s4 program, which keeps it; the strength
	// slot last kept that program, so its variants would be the ones already run.
	var want []string
	for _, c := range []string{board[0], board[2]} {
		want = append(want, "1 "+c+" transform -> "+power(c), "1 "+power(c)+" strength -> "+s4(c), "2 "+s4(c)+" transform -> "+s4(c))
	}
	if !slices.Equal(steps, want) {
		t.Fatalf("tuning steps\n%v\nwant\n%v", strings.Join(steps, "\n"), strings.Join(want, "\n"))
	}
	wantStops := []activities.TuneStop{
		{From: board[0], Kept: s4(board[0]), Why: "round 2: no pass kept a variant"},
		{From: board[2], Kept: s4(board[2]), Why: "round 2: no pass kept a variant"},
	}
	if !slices.Equal(a.TuneStops, wantStops) {
		t.Fatalf("tuning stops %+v, want %+v", a.TuneStops, wantStops)
	}
	// Three candidates and five variants each for the two kinds tuned; the standard-scaled
	// ones repeat their program's predictions and stay out of the ensemble.
	if len(a.Candidates) != 3+2*5 {
		t.Fatalf("%d candidates, want 3 and 10 variants: %+v", len(a.Candidates), a.Candidates)
	}
	for _, c := range a.Candidates[3:] {
		if c.TunedFrom == "" || c.Tuned == "" {
			t.Fatalf("variant %s does not say what it varies: %+v", c.SampleID, c)
		}
		if strings.HasSuffix(c.SampleID, "-standard") != (c.SameAs != "") || slices.Contains(f.ensembles[0], c.SampleID) == (c.SameAs != "") {
			t.Fatalf("variant %s: same as %q, ensembled %v", c.SampleID, c.SameAs, f.ensembles[0])
		}
	}
	if ens := f.ensembles[0]; len(ens) != 3+6 || !strings.HasSuffix(ens[0], "-strength-s4") || !strings.HasSuffix(ens[2], "-transform-power") {
		t.Fatalf("ensembled %v, want the 9 programs with new predictions, best first", ens)
	}
	// Every cross-validation is counted: 3 candidates' 30 s and 10 variants' 10, plus refits.
	if a.SandboxSeconds < 40 {
		t.Fatalf("sandbox seconds %v, want at least the cross-validations' 40", a.SandboxSeconds)
	}
}

// A run that tuned also chooses, refits and blends an answer from its candidates before the
// tuning, so one run measures what the tuning added; the answer itself is unchanged.
func TestFinalAnswerMeasuresTheAnswerWithoutTheTuning(t *testing.T) {
	f, res, board := runTuning(t, func(string) float64 { return 1 })
	a := res.Answer
	if len(f.ensembles) != 2 || len(f.blends) != 2 {
		t.Fatalf("selections %v and %d blends, want the answer's and the untuned one's", f.ensembles, len(f.blends))
	}
	// The candidates in cross-validation order, the tuned variants left out.
	if !slices.Equal(f.ensembles[1], board) {
		t.Fatalf("untuned selection over %v, want the candidates %v", f.ensembles[1], board)
	}
	if !strings.HasPrefix(a.Members[0].SampleID, "tune-") || a.Test == nil || a.Test.SampleID != "final-answer" {
		t.Fatalf("the answer changed: members %+v, test %+v", a.Members, a.Test)
	}
	u := a.Untuned
	if u == nil || u.Note != "" || u.SameAsAnswer || u.Test == nil || u.Test.SampleID != "untuned-answer" || len(u.Members) != 2 {
		t.Fatalf("untuned answer %+v", u)
	}
	for i, m := range u.Members {
		if m.SampleID != board[i] || m.Test == nil || !slices.Contains(f.graded, m.SampleID) {
			t.Fatalf("untuned member %d %+v: want %s refit and graded (graded %v)", i, m, board[i], f.graded)
		}
	}
	// The untuned blend is asked for by flag, and the answer blended last is the run's own.
	if b := f.blends[0]; !b.Untuned || b.Answer.Untuned == nil || len(b.Answer.Untuned.Members) != 2 || f.blends[1].Untuned {
		t.Fatalf("blends %+v", f.blends)
	}
	if f.blended.Untuned == nil || f.blended.Untuned.Test == nil {
		t.Fatalf("the stored answer does not hold the untuned one: %+v", f.blended.Untuned)
	}
}

// Tuning spends at most the candidates' own cross-validation time: a pass whose variants would
// cost more than is left (their number times the program's cost) is skipped, and says so.
func TestFinalAnswerTuningKeepsToItsBudget(t *testing.T) {
	// The candidates took 6 s: the first kind's first round costs 2 * 2 s and 1 * 2 s, which
	// leaves nothing for its second round nor for the second kind's passes.
	_, res, board := runTuning(t, func(string) float64 { return 2 })
	s4 := "tune-tune-" + board[0] + "-transform-power-strength-s4"
	var ran, skipped []string
	for _, s := range res.Answer.Tuning {
		if s.Skipped != "" {
			skipped = append(skipped, s.From+" "+s.Slot)
			if s.Tried != 0 || s.Kept != s.From || !strings.Contains(s.Skipped, "the tuning had spent 6 of its 6") {
				t.Fatalf("skipped pass %+v", s)
			}
		} else {
			ran = append(ran, s.From+" "+s.Slot)
		}
	}
	if len(ran) != 2 || !strings.HasPrefix(ran[0], board[0]+" ") || !slices.Equal(skipped, []string{s4 + " transform", board[2] + " transform", board[2] + " strength"}) {
		t.Fatalf("passes run %v, skipped %v", ran, skipped)
	}
	// A cap ends a candidate's tuning after the round it cut.
	if len(res.Answer.TuneStops) != 2 {
		t.Fatalf("tuning stops %+v, want one per kind", res.Answer.TuneStops)
	}
	for i, st := range res.Answer.TuneStops {
		if want := fmt.Sprintf("round %d: at the caps: ", 2-i); !strings.HasPrefix(st.Why, want) || !strings.HasSuffix(st.Why, "the tuning had spent 6 of its 6") {
			t.Fatalf("tuning stop %+v, want %q and the budget", st, want)
		}
	}
	for _, c := range res.Answer.Candidates {
		if c.TunedFrom == board[2] {
			t.Fatalf("a skipped pass's variant %s was cross-validated", c.SampleID)
		}
	}
}

// A pass runs its variants in waves, cheapest options first, and stops when the next wave's
// cost, extrapolated from the costs seen, would not fit: strength variants grow with the
// strength, so counting them at the cost of the program they vary would overspend the budget.
func TestFinalAnswerTuningStopsAPassWhoseCostsGrow(t *testing.T) {
	strengths := []string{"s0", "s1", "s2", "s3", "s4", "s5"}
	f, res, board := runTuningWith(t, []tunableSlot{{"transform", []string{"power", "standard"}}, {"strength", strengths}},
		func(id string) float64 {
			if !strings.HasPrefix(id, "tune-") {
				return 10 // the three candidates: a budget of 30 s
			}
			for i, s := range strengths {
				if strings.HasSuffix(id, "-strength-"+s) {
					return float64(int(1) << i) // 1, 2, 4, ... 32 s
				}
			}
			return 1
		})
	a := res.Answer
	// The first kind: transform (2 s), then strength's s0-s1 (3 s) and s2-s3 (an estimate of
	// 12 s, run for 12 s); s4-s5 would take about 48 s more, over the 30 s. The old estimate,
	// six variants at the power-transformed program's 1 s, would have run all six for 63 s.
	// The second kind: nothing fits the 13 s left at its program's 10 s a variant.
	type pass struct {
		from, slot, kept, skipped string
		tried                     int
	}
	var got []pass
	for _, s := range a.Tuning {
		got = append(got, pass{s.From, s.Slot, s.Kept, s.Skipped, s.Tried})
	}
	power := "tune-" + board[0] + "-transform-power"
	want := []pass{
		{board[0], "transform", power, "", 2},
		{power, "strength", power, "2 variants would take about 48 sandbox-seconds, and the tuning had spent 17 of its 30", 4},
		{board[2], "transform", board[2], "2 variants would take about 20 sandbox-seconds, and the tuning had spent 17 of its 30", 0},
		{board[2], "strength", board[2], "6 variants would take about 60 sandbox-seconds, and the tuning had spent 17 of its 30", 0},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tuning passes\n%+v\nwant\n%+v", got, want)
	}
	var ran []string
	for _, c := range a.Candidates {
		if c.TunedFrom != "" {
			ran = append(ran, c.SampleID)
		}
	}
	wantRan := []string{power, "tune-" + board[0] + "-transform-standard"}
	for _, s := range strengths[:4] {
		wantRan = append(wantRan, "tune-"+power+"-strength-"+s)
	}
	if !slices.Equal(ran, wantRan) {
		t.Fatalf("variants cross-validated %v, want %v", ran, wantRan)
	}
	// The waves ran one after another: s2 and s3 were scheduled after s0 and s1 had finished.
	var order []string
	for _, id := range f.crossVal {
		if strings.Contains(id, "-strength-") {
			order = append(order, id[strings.LastIndex(id, "-")+1:])
		}
	}
	if len(order) == 4 {
		slices.Sort(order[:2]) // a wave's two may start in either order
		slices.Sort(order[2:])
	}
	if !slices.Equal(order, strengths[:4]) {
		t.Fatalf("strength variants cross-validated in the order %v, want %v", order, strengths[:4])
	}
}

// runTuning runs a workflow whose answer tunes two kinds of program: the three candidates are
// a logistic regression, another of the same kind and a forest; each has a power-transformed
// variant that is better, a standard-scaled one making the candidate's own predictions and a
// strength s4 variant better still.
func runTuning(t *testing.T, cvSeconds func(id string) float64) (*fakeRun, TrainResult, []string) {
	t.Helper()
	return runTuningWith(t, []tunableSlot{{"transform", []string{"power", "standard"}}, {"strength", []string{"s4"}}}, cvSeconds)
}

// tunableSlot is a slot the fake TuneVariants varies and its options, cheapest first.
type tunableSlot struct {
	name    string
	options []string
}

// runTuningWith is runTuning with the tunable slots given.
func runTuningWith(t *testing.T, slots []tunableSlot, cvSeconds func(id string) float64, adjust ...func(*fakeRun, *TrainInput)) (*fakeRun, TrainResult, []string) {
	t.Helper()
	bases := []string{"logreg", "logreg", "forest"} // the second candidate is a kind already tuned
	f := &fakeRun{}
	f.tune = func(in activities.TuneInput) activities.TuneResult {
		if in.Slot < 0 {
			kinds := 0
			for _, x := range f.tunes {
				if x.Slot < 0 {
					kinds++
				}
			}
			return activities.TuneResult{Base: bases[kinds-1], Slots: len(slots)}
		}
		out := activities.TuneResult{Base: "any", Slots: len(slots), Slot: slots[in.Slot].name}
		for _, o := range slots[in.Slot].options {
			out.IDs = append(out.IDs, "tune-"+in.Of+"-"+out.Slot+"-"+o)
			out.Options = append(out.Options, o)
		}
		return out
	}
	// Lower is better: the power transform and then strength s4 each improve on their program;
	// the standard-scaled variant makes its program's own predictions.
	score := func(id string) *float64 {
		v := *spread(id)
		switch {
		case strings.HasSuffix(id, "-strength-s4"):
			v = -2 + v/10
		case strings.HasSuffix(id, "-transform-power"):
			v = -1 + v/10
		case strings.HasPrefix(id, "tune-"):
			v = 5
		}
		return &v
	}
	f.predictions = func(id string) string {
		if of, ok := strings.CutSuffix(id, "-transform-standard"); ok {
			return "oof-" + strings.TrimPrefix(of, "tune-")
		}
		return "oof-" + id
	}
	f.cvSeconds = cvSeconds
	in := input()
	// A budget of once the candidates' time: the tests below count what it leaves.
	in.FinalCandidates, in.FinalFolds, in.FinalTune, in.FinalTuneBudget = 3, 4, 2, 1
	for _, a := range adjust {
		a(f, &in)
	}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, score)
	res := trainResult(t, env, in)
	return f, res, f.candidates[0][:3]
}

// A candidate's tuning goes on round after round while a round of passes over its slots beats
// the program it started from by more than their fold-to-fold noise. A pass within the noise
// does not stop the round (the next slot is another coordinate); a round within it ends the
// candidate's tuning, which the answer records with the reason. The next candidate is tuned
// afresh.
func TestFinalAnswerTuningStopsWhenItsGainIsWithinFoldNoise(t *testing.T) {
	// Lower is better. The first kind's round gains 3 on every fold (no noise), so a second
	// round runs. The second kind's transform gains 0.1 on average, its folds disagreeing by
	// about 1, and its strength pass still runs; the round gains 0.2 within that noise: no
	// second round.
	_, res, board := runTuningWith(t, []tunableSlot{{"transform", []string{"power", "standard"}}, {"strength", []string{"s4"}}},
		func(string) float64 { return 1 },
		func(f *fakeRun, in *TrainInput) {
			in.FinalTuneBudget = 100 // the caps leave room: only the noise rule stops the rounds
			f.foldScores = func(id string) []float64 {
				switch forest := f.candidates[0][2]; {
				case id == "tune-tune-"+forest+"-transform-power-strength-s4":
					return []float64{-1.2, 0.8, -1.2, 0.8}
				case strings.HasSuffix(id, "-strength-s4"):
					return []float64{-3, -3, -3, -3}
				case id == "tune-"+forest+"-transform-power":
					return []float64{-1.1, 0.9, -1.1, 0.9}
				case strings.HasSuffix(id, "-transform-power"):
					return []float64{-1, -1, -1, -1}
				case strings.HasPrefix(id, "tune-"):
					return []float64{5, 5, 5, 5}
				}
				return []float64{0, 0, 0, 0}
			}
		})
	power := func(of string) string { return "tune-" + of + "-transform-power" }
	s4 := func(of string) string { return "tune-" + power(of) + "-strength-s4" }
	type pass struct {
		round                     int
		from, slot, kept, skipped string
	}
	var got []pass
	for _, s := range res.Answer.Tuning {
		got = append(got, pass{s.Round, s.From, s.Slot, s.Kept, s.Skipped})
	}
	want := []pass{
		{1, board[0], "transform", power(board[0]), ""},
		{1, power(board[0]), "strength", s4(board[0]), ""},
		{2, s4(board[0]), "transform", s4(board[0]), ""},
		{1, board[2], "transform", power(board[2]), ""},
		{1, power(board[2]), "strength", s4(board[2]), ""},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("tuning passes\n%+v\nwant\n%+v", got, want)
	}
	wantStops := []activities.TuneStop{
		{From: board[0], Kept: s4(board[0]), Why: "round 2: no pass kept a variant"},
		{From: board[2], Kept: s4(board[2]), Why: "round 1: gain 0.2 within fold noise 0.5774 (" + s4(board[2]) + " over " + board[2] + ")"},
	}
	if !slices.Equal(res.Answer.TuneStops, wantStops) {
		t.Fatalf("tuning stops\n%+v\nwant\n%+v", res.Answer.TuneStops, wantStops)
	}
	for _, c := range res.Answer.Candidates {
		if c.TunedFrom == s4(board[2]) {
			t.Fatalf("variant %s ran after the noise rule stopped its candidate's tuning", c.SampleID)
		}
	}
}

// The answer runs as a child workflow: the run's progress names it, and its own progress
// query says where it stands (what `starter status` shows during the answer's phase).
func TestFinalAnswerReportsItsProgressFromItsOwnWorkflow(t *testing.T) {
	f := &fakeRun{}
	env := newEnv(t, f, func(string) time.Duration { return 10 * time.Millisecond }, spread)
	in := input()
	in.FinalCandidates, in.FinalFolds = 3, 4
	res := trainResult(t, env, in)
	if res.Answer == nil || res.Answer.Test == nil {
		t.Fatalf("no answer: %+v", res.Answer)
	}
	var p Progress
	if v, err := env.QueryWorkflow(ProgressQuery); err != nil || v.Get(&p) != nil {
		t.Fatalf("progress query: %v", err)
	}
	want := answerWorkflowID("default-test-workflow-id") // the test environment's workflow id
	if p.AnswerWorkflow != want {
		t.Fatalf("progress names the answer's workflow %q, want %q", p.AnswerWorkflow, want)
	}
	var a AnswerProgress
	if v, err := env.QueryWorkflowByID(p.AnswerWorkflow, AnswerProgressQuery); err != nil || v.Get(&a) != nil {
		t.Fatalf("the answer's progress query: %v", err)
	}
	if !strings.Contains(a.Detail, "choosing the ensemble from 3 candidates") {
		t.Fatalf("the answer's progress %q: want its last step, the ensemble", a.Detail)
	}
}
