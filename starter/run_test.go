package main

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
	"mlerl/grading"
	"mlerl/internal/testenv"
	"mlerl/reward"
	"mlerl/tasks"
)

// TestRunEndToEnd trains for 2 iterations with B=4 on the real leaf data, through a real
// Temporal dev server, the real bubblewrap sandbox and the real grader, then checks the run's
// artifacts and that every reward follows the paper's rule.
func TestRunEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: end-to-end run (about a minute) in -short mode")
	}
	dataDir := testenv.PreparedData(t, "leaf-classification")
	cli := testenv.TemporalCLI(t)
	ctx := context.Background()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: cli, LogLevel: "error"})
	if err != nil {
		t.Fatalf("starting the dev server: %v", err)
	}
	defer srv.Stop()

	runDir := filepath.Join(t.TempDir(), "run")
	var out bytes.Buffer
	// Three candidates on 2 folds, and one of them tuned within 4 times their cross-validation
	// time: the defaults (8 candidates on 5 folds, 3 tuned) would take several times this
	// test's time, and an unbounded tuning of a slow candidate once ran the package past its
	// timeout.
	err = runCommand(ctx, []string{"--task", "leaf-classification", "--iterations", "2", "--batch", "4",
		"--final-candidates", "3", "--final-folds", "2", "--final-tune", "1", "--final-tune-budget", "4",
		"--eval-samples", "2", "--data-dir", dataDir, "--out", runDir, "--temporal-address", srv.FrontendHostPort()}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatalf("run failed: %v", err)
	}
	// "final answer": the run closes on its product, the answer, with its test grade or why none.
	for _, want := range []string{"iteration 1/2", "iteration 2/2", "Qwen2.5-3B RL", "final answer", "report: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the run's output lacks %q", want)
		}
	}
	// The final grade: either the best-of-K choice and its MLE-bench report (other samples'
	// final/ hold the answer's refit members), or the plain statement that no evaluated program
	// was valid (possible for an untrained policy with K=2).
	var choice activities.FinalGradeResult
	b, choiceErr := os.ReadFile(filepath.Join(runDir, runstore.ChoiceKey))
	if choiceErr == nil {
		choiceErr = json.Unmarshal(b, &choice)
	}
	switch {
	case strings.Contains(out.String(), "graded on the private test answers") && choiceErr == nil:
		report := filepath.Join(runDir, runstore.Sample(choice.SampleID).Final().GradeReport())
		var rep grading.Report
		b, _ := os.ReadFile(report)
		if err := json.Unmarshal(b, &rep); err != nil || rep.CompetitionID != "leaf-classification" || !rep.IsLowerBetter || !strings.HasPrefix(choice.SampleID, "eval-") {
			t.Errorf("best-of-K choice %s, its report %s: %+v %v", choice.SampleID, report, rep, err)
		}
		if !rep.ValidSubmission || rep.Score == nil || math.IsNaN(*rep.Score) || math.IsInf(*rep.Score, 0) || *rep.Score < 0 {
			t.Errorf("the output says the final program was graded, but its report has no finite log loss: %+v", rep)
		}
		if choice.Report.Score == nil || *choice.Report.Score != *rep.Score {
			t.Errorf("%s says %+v, the sample's report %+v", runstore.ChoiceKey, choice.Report, rep)
		}
	case strings.Contains(out.String(), "no evaluated program wrote a valid submission") && os.IsNotExist(choiceErr):
	default:
		t.Errorf("want either a graded best-of-K choice in %s or the no-valid-program line; %s: %v", runstore.ChoiceKey, runstore.ChoiceKey, choiceErr)
	}
	for _, f := range []string{runstore.MetricsKey, runstore.ReportKey, runstore.BufferKey, runstore.CheckpointKey(0),
		runstore.CheckpointKey(1), runstore.CheckpointKey(2)} {
		if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
			t.Errorf("missing artifact %s", f)
		}
	}
	metrics, _ := os.ReadFile(filepath.Join(runDir, runstore.MetricsKey))
	if n := strings.Count(string(metrics), "\n"); n != 2 {
		t.Errorf("metrics.jsonl has %d lines, want 2", n)
	}

	// Leaf carves three validation folds, so by default a program's reward is the mean of its
	// scores on them; a failing fold ends the program there and its outcome is the result.
	var info runInfo
	if b, err := os.ReadFile(filepath.Join(runDir, runInfoFile)); err != nil || json.Unmarshal(b, &info) != nil {
		t.Fatalf("reading %s: %v", runInfoFile, err)
	}
	const folds = 3
	if info.Input.RewardFolds != folds {
		t.Errorf("the run averaged %d validation folds, want leaf's %d by default", info.Input.RewardFolds, folds)
	}
	spec, _ := tasks.Builtin().Get("leaf-classification")
	layout := tasks.Layout{DataDir: dataDir}
	results, _ := filepath.Glob(filepath.Join(runDir, runstore.Sample("it*").Result()))
	if len(results) < 8 {
		t.Fatalf("want at least 8 executed training samples (2 updates of B=4), found %d", len(results))
	}
	valid := 0
	for _, rf := range results {
		dir := filepath.Dir(rf)
		s := runstore.Sample(filepath.Base(dir))
		for _, f := range []string{s.Plan(), s.Program(), s.Instrumented(), s.Output(), s.Record()} {
			if _, err := os.Stat(filepath.Join(runDir, f)); err != nil {
				t.Errorf("%s: missing %s", dir, filepath.Base(f))
			}
		}
		var res activities.ExecuteResult
		b, _ := os.ReadFile(rf)
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		// The fold whose record the result carries: the failing one, or fold 1 when all are valid.
		last := len(res.FoldScores) + 1
		if res.Valid {
			valid++
			last = 1
			if len(res.FoldScores) != folds {
				t.Fatalf("%s: a valid program with %d fold scores, want %d", dir, len(res.FoldScores), folds)
			}
			mean := 0.0
			for f := 1; f <= folds; f++ {
				answers := filepath.Join(layout.FoldDirs(spec.ID, f).Private, spec.Files.Answers)
				g, err := grading.Grade(spec, filepath.Join(runDir, s.Fold(f).Submission()), answers)
				if err != nil || !g.Valid || math.Abs(*g.Score-res.FoldScores[f-1]) > 1e-12 {
					t.Errorf("%s: fold %d's stored score %v, regraded %+v %v", dir, f, res.FoldScores[f-1], g, err)
					continue
				}
				mean += *g.Score / folds
			}
			if math.Abs(mean-*res.Score) > 1e-9 {
				t.Errorf("%s: stored score %v, the mean of the regraded folds %v", dir, *res.Score, mean)
			}
		}
		output, _ := os.ReadFile(filepath.Join(runDir, s.Fold(last).Output()))
		markers := reward.FoundMarkers(string(output))
		want := -10 + 0.1*float64(len(markers))
		if res.Valid {
			want = -*res.Score // log loss: lower is better, so the reward is its negation
		}
		if math.Abs(res.Reward-want) > 1e-9 || res.Markers != len(markers) {
			t.Errorf("%s: reward %v with %d markers (valid %v); the rule gives %v with %d (fold %d's output)", dir, res.Reward, res.Markers, res.Valid, want, len(markers), last)
		}
	}
	t.Logf("%d of %d training samples were valid", valid, len(results))
	// The final answer: a blend of cross-validated programs, graded on the test
	// answers, first in the table, its members and weights in the report.
	if valid > 0 {
		var ans activities.FinalAnswer
		b, err := os.ReadFile(filepath.Join(runDir, runstore.AnswerKey))
		if err != nil || json.Unmarshal(b, &ans) != nil {
			t.Fatalf("no final answer stored: %v", err)
		}
		sum := 0.0
		for _, m := range ans.Members {
			sum += m.Weight
		}
		if ans.Folds != 2 || ans.Test == nil || !ans.Test.Report.ValidSubmission || ans.CVScore == nil || math.Abs(sum-1) > 1e-9 {
			t.Fatalf("final answer: %+v", ans)
		}
		g, err := grading.Grade(spec, filepath.Join(runDir, runstore.AnswerSubmissionKey), filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs(spec.ID, tasks.SplitTest).Private, spec.Files.Answers))
		if err != nil || g.Score == nil || math.Abs(*g.Score-*ans.Test.Report.Score) > 1e-12 {
			t.Fatalf("the answer's submission regrades %+v %v, the run says %v", g, err, *ans.Test.Report.Score)
		}
		// The best candidate was tuned along leaf's three tunable slots, model, transform, then
		// strength in its first round, and in later rounds (while a round beat its fold noise
		// and the budget held) along those whose program changed, each pass varying what the
		// last kept, each variant a stored program cross-validated like the candidates; a pass
		// stops before variants that would cost more than the budget has left and says so, and
		// the answer says why the candidate's tuning stopped.
		if len(ans.Tuning) < 3 || ans.Tuning[0].Slot != "model" || ans.Tuning[1].Slot != "transform" || ans.Tuning[2].Slot != "strength" {
			t.Fatalf("tuning: %+v", ans.Tuning)
		}
		for i, step := range ans.Tuning {
			first := i < 3 // round 1 passes every slot
			if first != (step.Round == 1) || i > 0 && (step.Round < ans.Tuning[i-1].Round || step.From != ans.Tuning[i-1].Kept) {
				t.Fatalf("tuning pass %d %+v: want round 1 for the first three, later rounds after, each varying what the pass before kept: %+v", i, step, ans.Tuning)
			}
		}
		if len(ans.TuneStops) != 1 || ans.TuneStops[0].From != ans.Tuning[0].From || !strings.HasPrefix(ans.TuneStops[0].Why, "round ") {
			t.Fatalf("tuning stops %+v", ans.TuneStops)
		}
		tried := 0
		for _, step := range ans.Tuning {
			if step.Tried == 0 && step.Skipped == "" {
				t.Errorf("tuning pass %+v: it must either try variants or say why it tried none", step)
			}
			tried += step.Tried
		}
		t.Logf("tuning: %+v", ans.Tuning)
		variants := 0
		for _, c := range ans.Candidates {
			if c.TunedFrom == "" {
				continue
			}
			variants++
			if _, err := os.Stat(filepath.Join(runDir, runstore.Sample(c.SampleID).Program())); err != nil || c.DurationS <= 0 {
				t.Errorf("variant %s (%s of %s): no stored program or no run: %v", c.SampleID, c.Tuned, c.TunedFrom, err)
			}
		}
		if variants != tried {
			t.Errorf("%d variants among the candidates, the tuning tried %d", variants, tried)
		}
		rep, _ := os.ReadFile(filepath.Join(runDir, runstore.ReportKey))
		if !strings.Contains(string(rep), "were tuned along them") {
			t.Errorf("the report must show the tuning")
		}
		// A tuning that kept a variant is measured: the answer chosen without the variants is
		// refit, blended to its own submission and graded like the answer.
		kept := slices.ContainsFunc(ans.Candidates, func(c activities.CrossValidateResult) bool {
			return c.TunedFrom != "" && c.Score != nil && c.SameAs == ""
		})
		if u := ans.Untuned; kept != (u != nil) {
			t.Fatalf("the tuning kept a variant: %v, but the untuned answer is %+v", kept, u)
		} else if u != nil && u.Note == "" {
			g, err := grading.Grade(spec, filepath.Join(runDir, runstore.UntunedSubmissionKey), filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs(spec.ID, tasks.SplitTest).Private, spec.Files.Answers))
			if err != nil || g.Score == nil || u.Test == nil || u.Test.Report.Score == nil || math.Abs(*g.Score-*u.Test.Report.Score) > 1e-12 {
				t.Fatalf("the untuned submission regrades %+v %v, the run says %+v", g, err, u.Test)
			}
			if !strings.Contains(string(rep), "Without the tuning") {
				t.Errorf("the report must show the answer without the tuning")
			}
		}
		if !strings.Contains(string(rep), "## Final answer") || !strings.Contains(out.String(), "mlerl final answer (2-fold CV ensemble)") {
			t.Errorf("the report and the table must show the final answer")
		}
	}
	// The warm-started policy writes valid leaf programs (3 of 10 with seed 1): a run where none
	// is valid means the sandbox, the data or the grader broke, not bad luck.
	if valid == 0 {
		t.Errorf("none of the %d training samples wrote a valid submission", len(results))
	}
}

func TestRunRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	empty := t.TempDir()
	badSpec := filepath.Join(empty, "spec.yaml")
	os.WriteFile(badSpec, []byte("id: my-task\ndirectin: min\n"), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"unknown task", []string{"--task", "leaf-classificaton"}, `unknown task "leaf-classificaton"`},
		{"missing data", []string{"--task", "leaf-classification", "--data-dir", empty}, "starter tasks prepare --task leaf-classification"},
		{"zero batch", []string{"--task", "leaf-classification", "--batch", "0"}, "--batch must be at least 1"},
		{"bad protocol", []string{"--task", "leaf-classification", "--protocol", "test"}, "--protocol must be leak-free or paper"},
		{"not a number", []string{"--task", "leaf-classification", "--iterations", "many"}, "invalid value"},
		{"stray argument", []string{"--task", "leaf-classification", "now"}, `unexpected argument "now"`},
		{"a task spec with a typo", []string{"--task", "my-task", "--task-spec", badSpec}, "field directin not found"},
		{"unknown worker role", []string{"--task", "leaf-classification", "--worker-roles", "workflows,cpu"}, `unknown role "cpu"`},
		{"unknown preset", []string{"--task", "leaf-classification", "--preset", "papr"}, "not a built-in preset (paper)"},
		{"llm policy without a server", []string{"--task", "leaf-classification", "--policy", "llm"}, "--policy llm needs --policy-url and --policy-model"},
		{"learning llm policy without a trainer", []string{"--task", "leaf-classification", "--policy", "llm", "--policy-url", "http://127.0.0.1:1/v1", "--policy-model", "m"}, "give --trainer-url"},
		{"unknown policy", []string{"--task", "leaf-classification", "--policy", "gpt"}, "--policy must be network or llm"},
		{"unknown reward", []string{"--task", "leaf-classification", "--reward", "clipped"}, "--reward must be paper or bounded"},
		{"unknown reward shaping", []string{"--task", "leaf-classification", "--reward-shaping", "ranked"}, "--reward-shaping (ppo.reward_shaping) must be none or rank"},
		{"unknown advantage", []string{"--task", "leaf-classification", "--advantage", "risky"}, "--advantage (ppo.advantage) must be gae or risk-seeking"},
		{"risk-seeking with no share", []string{"--task", "leaf-classification", "--advantage", "risk-seeking", "--risk-epsilon", "0"}, "--risk-epsilon (ppo.risk_epsilon) must be in (0, 1]"},
		{"negative reward folds", []string{"--task", "leaf-classification", "--reward-folds", "-1"}, "--reward-folds must be 0 (automatic"},
		{"negative redraw repeats", []string{"--task", "leaf-classification", "--redraw-repeats", "-1"}, "--redraw-repeats must be 0"},
		{"redraws with an llm policy", []string{"--task", "leaf-classification", "--policy", "llm", "--redraw-repeats", "2"}, "drop it with --policy llm"},
		{"reward folds on the test split", []string{"--task", "leaf-classification", "--reward-folds", "2", "--protocol", "paper"}, "only the leak-free protocol uses"},
		{"more reward folds than carved", []string{"--task", "leaf-classification", "--reward-folds", "4"}, "carves 3 validation folds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := runCommand(ctx, c.args, &bytes.Buffer{})
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestRunReportsUnreachableTemporal(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	err := runCommand(context.Background(), []string{"--task", "leaf-classification", "--data-dir", dataDir,
		"--out", t.TempDir(), "--temporal-address", "127.0.0.1:1"}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "Temporal is unreachable at 127.0.0.1:1") {
		t.Fatalf("got %v", err)
	}
}
