package activities

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/ensemble"
	"mlerl/grading"
	"mlerl/internal/testenv"
	"mlerl/model"
	"mlerl/sandbox"
	"mlerl/settings"
	"mlerl/tasks"
)

// The final answer on real leaf data in the real sandbox: two programs cross-validated on the
// full public train, an ensemble chosen on their out-of-fold predictions, refit, blended and
// graded on the test answers.
// onLeaf is the activities on real leaf data in the local sandbox, with run "r"'s store and a
// call that runs one activity in the test environment.
type onLeaf struct {
	a      *Activities
	spec   *tasks.Spec
	layout tasks.Layout
	store  artifacts.FS
	env    *testsuite.TestActivityEnvironment
}

func newOnLeaf(t *testing.T) onLeaf {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	reg := tasks.Builtin()
	spec, _ := reg.Get("leaf-classification")
	layout := tasks.Layout{DataDir: dataDir}
	root := t.TempDir()
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb, Tasks: reg, Layout: layout, Python: testenv.Python, ScratchDir: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return onLeaf{a: a, spec: spec, layout: layout, store: artifacts.FS{Root: filepath.Join(root, "r")}, env: env}
}

// call runs activity fn on in and decodes its result into out.
func (l onLeaf) call(fn, in, out any) error {
	v, err := l.env.ExecuteActivity(fn, in)
	if err != nil {
		return err
	}
	return v.Get(out)
}

func TestFinalAnswerOnLeaf(t *testing.T) {
	leaf := newOnLeaf(t)
	a, spec, layout, store, reg, env := leaf.a, leaf.spec, leaf.layout, leaf.store, leaf.a.Tasks, leaf.env
	var err error
	call := func(fn, in, out any) {
		t.Helper()
		if err := leaf.call(fn, in, out); err != nil {
			t.Fatal(err)
		}
	}
	// A confident nearest neighbour (0.99 on its class: a wrong neighbour costs -log(0.0001)) and
	// the uniform prior (log 99): mixing some prior in caps the neighbour's wrong answers, so
	// their blend must beat both.
	nearest := `import numpy as np, pandas as pd
from sklearn.neighbors import KNeighborsClassifier
train, test = pd.read_csv('input/train.csv'), pd.read_csv('input/test.csv')
sub = pd.read_csv('input/sample_submission.csv')
X = train.drop(columns=['id', 'species']).values
pred = KNeighborsClassifier(1).fit(X, train['species']).predict(test.drop(columns=['id']).values)
classes = list(sub.columns[1:])
p = np.full((len(test), len(classes)), 0.01 / (len(classes) - 1))
for i, c in enumerate(pred):
    p[i, classes.index(c)] = 0.99
out = pd.DataFrame(p, columns=classes)
out.insert(0, 'id', test['id'])
out.to_csv('submission.csv', index=False)
`
	uniform := `import pandas as pd
test, sub = pd.read_csv('input/test.csv'), pd.read_csv('input/sample_submission.csv')
classes = list(sub.columns[1:])
out = pd.DataFrame({c: [1 / len(classes)] * len(test) for c in classes})
out.insert(0, 'id', test['id'])
out.to_csv('submission.csv', index=False)
`
	twin := "# The same model, written differently.\n" + nearest
	for id, code := range map[string]string{"nearest": nearest, "nearest-copy": nearest, "nearest-twin": twin, "uniform": uniform, "crash": "raise SystemExit(1)\n"} {
		store.Put(context.Background(), runstore.Sample(id).Program(), []byte(code))
	}
	// nearest's reward averaged three validation folds in 6 s: a run takes 2 s; uniform's run
	// took 0.5 s; crash has no result (its cost is unknown).
	putJSON(context.Background(), store, runstore.Sample("nearest").Result(), ExecuteResult{SampleID: "nearest", DurationS: 6, FoldScores: []float64{1, 1, 1}})
	putJSON(context.Background(), store, runstore.Sample("uniform").Result(), ExecuteResult{SampleID: "uniform", DurationS: 0.5})
	var cands CandidatesResult
	call(a.CandidatePrograms, CandidatesInput{Run: "r", IDs: []string{"nearest", "nearest-copy", "missing", "uniform", "crash"}, Max: 3}, &cands)
	if strings.Join(cands.IDs, ",") != "nearest,uniform,crash" || cands.Duplicates != 1 {
		t.Fatalf("candidates %+v: want the copy and the missing program skipped", cands)
	}
	if !slices.Equal(cands.Seconds, []float64{2, 0.5, 0}) {
		t.Fatalf("candidates' run seconds %v, want [2 0.5 0]: one fold's run each, unknown without a result", cands.Seconds)
	}

	const folds = 3
	cv := map[string]CrossValidateResult{}
	for _, id := range cands.IDs {
		var r CrossValidateResult
		call(a.CrossValidate, CrossValidateInput{Run: "r", Task: spec.ID, SampleID: id, Folds: folds}, &r)
		cv[id] = r
	}
	if c := cv["crash"]; c.Score != nil || !strings.Contains(c.Reason, "cross-validation fold 1") || len(c.FoldScores) != 0 {
		t.Fatalf("a crash must end its cross-validation at fold 1 without a score: %+v", c)
	}
	// The out-of-fold predictions cover every train row once, and their grade is the score.
	answers := layout.CVFolds(spec, folds).Answers
	for _, id := range []string{"nearest", "uniform"} {
		r := cv[id]
		if r.Score == nil || len(r.FoldScores) != folds || r.DurationS <= 0 {
			t.Fatalf("%s: %+v", id, r)
		}
		oof := filepath.Join(store.Root, runstore.Sample(id).OOF())
		g, err := grading.Grade(spec, oof, answers)
		if err != nil || g.Score == nil || math.Abs(*g.Score-*r.Score) > 1e-9 {
			t.Fatalf("%s: its stored out-of-fold predictions grade %v (%v), result %v", id, g.Score, err, *r.Score)
		}
	}
	// A program whose code differs but whose predictions do not (a comment here; in the
	// libraries, a hold-out check before a refit on everything) has the same digest, which is
	// how the workflow leaves it out.
	var tw CrossValidateResult
	call(a.CrossValidate, CrossValidateInput{Run: "r", Task: spec.ID, SampleID: "nearest-twin", Folds: folds}, &tw)
	if d := cv["nearest"].PredictionsSHA256; d == "" || tw.PredictionsSHA256 != d || cv["uniform"].PredictionsSHA256 == d || cv["crash"].PredictionsSHA256 != "" {
		t.Fatalf("predictions' digests: nearest %q, its twin %q, uniform %q, crash %q", d, tw.PredictionsSHA256, cv["uniform"].PredictionsSHA256, cv["crash"].PredictionsSHA256)
	}
	if u := *cv["uniform"].Score; math.Abs(u-math.Log(99)) > 1e-6 {
		t.Fatalf("the uniform prior's log loss is log 99 = %v, got %v", math.Log(99), u)
	}

	var ens EnsembleResult
	call(a.SelectEnsemble, EnsembleInput{Run: "r", Task: spec.ID, Folds: folds, SampleIDs: []string{"nearest", "uniform"}, Rounds: 20}, &ens)
	if len(ens.Members) != 2 || ens.CVScore >= *cv["nearest"].Score || ens.CVScore >= *cv["uniform"].Score {
		t.Fatalf("the blend of both must beat each alone (%v, %v): %+v", *cv["nearest"].Score, *cv["uniform"].Score, ens)
	}
	if ens.Members[0].CVScore == nil || math.Abs(*ens.Members[0].CVScore-*cv["nearest"].Score) > 1e-9 {
		t.Fatalf("a member's own CV score %v, want %v", ens.Members[0].CVScore, *cv["nearest"].Score)
	}

	// Log loss: the blend's probabilities are calibrated on the out-of-fold predictions, and the
	// reported CV score is the calibrated blend's grade.
	if ens.CVScore > ens.BlendCVScore || (ens.Calibration.IsIdentity() != (ens.CVScore == ens.BlendCVScore)) {
		t.Fatalf("calibration %+v: CV %v, before it %v", ens.Calibration, ens.CVScore, ens.BlendCVScore)
	}
	t.Logf("calibration %+v: out-of-fold %.4f -> %.4f", ens.Calibration, ens.BlendCVScore, ens.CVScore)
	var oofs []ensemble.Table
	var oofWeights []float64
	for _, m := range ens.Members {
		b, _ := os.ReadFile(filepath.Join(store.Root, runstore.Sample(m.SampleID).OOF()))
		tb, _ := ensemble.ReadCSV(b)
		oofs, oofWeights = append(oofs, tb), append(oofWeights, m.Weight)
	}
	oofBlend, _ := ensemble.Blend(oofs, oofWeights, ensemble.Align{IDColumn: "id"})
	// Selection blended the predictions as numbers; the blend written as text grades the same.
	if g, err := a.gradeTable(spec, oofBlend, answers); err != nil || g.Score == nil || math.Abs(*g.Score-ens.BlendCVScore) > 1e-5 {
		t.Fatalf("the out-of-fold blend grades %v (%v), selection scored it %v", g.Score, err, ens.BlendCVScore)
	}
	if oofBlend, err = ens.Calibration.Apply(oofBlend, 0); err != nil {
		t.Fatal(err)
	}
	if g, err := a.gradeTable(spec, oofBlend, answers); err != nil || g.Score == nil || math.Abs(*g.Score-ens.CVScore) > 1e-6 {
		t.Fatalf("the calibrated out-of-fold blend grades %v (%v), reported %v", g.Score, err, ens.CVScore)
	}

	ans := FinalAnswer{Folds: folds, Members: ens.Members, CVScore: &ens.CVScore, Calibration: &ens.Calibration}
	tables := make([]ensemble.Table, len(ans.Members))
	weights := make([]float64, len(ans.Members))
	for i := range ans.Members {
		var fg FinalGradeResult
		call(a.FinalGrade, FinalGradeInput{Run: "r", Task: spec.ID, SampleID: ans.Members[i].SampleID, Protocol: settings.LeakFree}, &fg)
		ans.Members[i].Test = &fg
		b, _ := os.ReadFile(filepath.Join(store.Root, runstore.Sample(ans.Members[i].SampleID).Final().Submission()))
		tables[i], _ = ensemble.ReadCSV(b)
		weights[i] = ans.Members[i].Weight
	}
	var test FinalGradeResult
	call(a.BlendAnswer, BlendInput{Run: "r", Task: spec.ID, Protocol: settings.LeakFree, Answer: ans}, &test)
	if !test.Report.ValidSubmission || test.Report.Score == nil || *test.Report.Score >= *ans.Members[0].Test.Report.Score {
		t.Fatalf("the blended answer must be valid and beat the neighbour alone on the test (%v): %+v", *ans.Members[0].Test.Report.Score, test.Report)
	}
	// What was stored is the calibrated weighted blend of the refits, and grades as reported.
	want, _ := ensemble.Blend(tables, weights, ensemble.Align{IDColumn: "id"})
	want, _ = ens.Calibration.Apply(want, 0)
	got, _ := os.ReadFile(filepath.Join(store.Root, runstore.AnswerSubmissionKey))
	if string(got) != string(want.CSV()) {
		t.Fatal("the stored answer is not the calibrated weighted blend of the members' test submissions")
	}
	var stored FinalAnswer
	if err := getJSON(context.Background(), store, runstore.AnswerKey, &stored); err != nil || stored.Test == nil || len(stored.Members) != 2 {
		t.Fatalf("answer.json: %+v %v", stored, err)
	}
	// The untuned answer's blend, here of the first member alone, is graded to its own key and
	// leaves the stored answer as it was.
	ans.Test, ans.Untuned = &test, &UntunedAnswer{Members: []AnswerMember{ans.Members[0]}}
	ans.Untuned.Members[0].Weight = 1
	var untuned FinalGradeResult
	call(a.BlendAnswer, BlendInput{Run: "r", Task: spec.ID, Protocol: settings.LeakFree, Answer: ans, Untuned: true}, &untuned)
	if untuned.SampleID != "untuned-answer" || untuned.Report.Score == nil || math.Abs(*untuned.Report.Score-*ans.Members[0].Test.Report.Score) > 1e-9 {
		t.Fatalf("the untuned blend of one member must grade as that member alone (%v): %+v", *ans.Members[0].Test.Report.Score, untuned)
	}
	alone, _ := ensemble.Blend(tables[:1], []float64{1}, ensemble.Align{IDColumn: "id"})
	if got, err := os.ReadFile(filepath.Join(store.Root, runstore.UntunedSubmissionKey)); err != nil || string(got) != string(alone.CSV()) {
		t.Fatalf("the untuned submission is not the member's own: %v", err)
	}
	var after FinalAnswer
	if err := getJSON(context.Background(), store, runstore.AnswerKey, &after); err != nil || after.Untuned != nil || *after.Test.Report.Score != *stored.Test.Report.Score {
		t.Fatalf("the untuned blend changed answer.json: %+v %v", after, err)
	}

	// A task whose data is not prepared is bad input naming the command that prepares it.
	b := &Activities{Runs: a.Runs, Sandbox: a.Sandbox, Tasks: reg, Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python, ScratchDir: t.TempDir()}
	env.RegisterActivity(b)
	if _, err := env.ExecuteActivity(b.CrossValidate, CrossValidateInput{Run: "r", Task: spec.ID, SampleID: "nearest", Folds: folds}); err == nil || !contains(err.Error(), ErrBadInput) || !contains(err.Error(), "starter tasks prepare") {
		t.Fatalf("unprepared data: %v", err)
	}
}

// With Guard, a candidate written as code actions that fails on some data (raw XGBoost on an
// RMSLE task, which may predict below 0) is replaced by its guarded program, written as a
// sample of its own; a candidate that is already that program is then its copy, and programs
// without code actions are kept as they are. Needs the task's spec, not its data.
func TestCandidateProgramsGuard(t *testing.T) {
	reg := tasks.Builtin()
	spec, err := reg.Get("nomad2018-predict-transparent-conductors")
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: reg}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	ctx := context.Background()

	lib, schema := codeactions.TabularRegression, codeactions.SchemaOf(spec)
	names := map[string]string{"setup": "full", "features": "all", "categorical": "raw", "transform": "none", "target": "none",
		"outputs": "per-target", "model": "xgboost", "strength": "s2", "validation": "holdout", "postprocess": "none", "submission": "aligned"}
	put := func(id, post string) {
		names["postprocess"] = post
		toks, err := lib.TokensFor(names)
		if err != nil {
			t.Fatal(err)
		}
		prog, err := lib.Render(toks, schema)
		if err != nil {
			t.Fatal(err)
		}
		if err := putProgramSample(ctx, store, sampleRecord{ID: id, Purpose: PurposeTrain, Sample: model.Sample{Tokens: toks}}, "", prog.Code); err != nil {
			t.Fatal(err)
		}
	}
	put("raw", "none")
	put("clipped", "clip0")
	put("rounded", "round1")
	store.Put(ctx, runstore.Sample("llm").Program(), []byte("print('an LLM wrote this')\n"))
	ids := []string{"raw", "clipped", "llm", "rounded"}

	candidates := func(guard bool) CandidatesResult {
		t.Helper()
		v, err := env.ExecuteActivity(a.CandidatePrograms, CandidatesInput{Run: "r", IDs: ids, Max: 3, Guard: guard, Task: spec.ID})
		if err != nil {
			t.Fatal(err)
		}
		var out CandidatesResult
		if err := v.Get(&out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if off := candidates(false); strings.Join(off.IDs, ",") != "raw,clipped,llm" || len(off.Guarded) != 0 {
		t.Fatalf("without Guard: %+v, want the programs as they are", off)
	}
	on := candidates(true)
	if strings.Join(on.IDs, ",") != "guard-raw,llm,rounded" || on.Duplicates != 1 {
		t.Fatalf("with Guard: %+v, want raw guarded, clipped its copy, the rest as they are", on)
	}
	if want := (Guard{From: "raw", To: "guard-raw", Change: "postprocess=none -> clip0"}); !slices.Equal(on.Guarded, []Guard{want}) {
		t.Fatalf("guarded %+v, want %+v", on.Guarded, want)
	}
	got, _ := store.Get(ctx, runstore.Sample("guard-raw").Program())
	want, _ := store.Get(ctx, runstore.Sample("clipped").Program())
	if len(got) == 0 || string(got) != string(want) {
		t.Fatal("the guarded program must be the clipped one, stored under its own id")
	}
	var rec sampleRecord
	if err := getJSON(ctx, store, runstore.Sample("guard-raw").Record(), &rec); err != nil || rec.Purpose != PurposeAnswerGuard || rec.PrevID != "raw" {
		t.Fatalf("the guarded sample's record %+v (%v): want purpose %s from raw", rec, err, PurposeAnswerGuard)
	}
	if _, err := env.ExecuteActivity(a.CandidatePrograms, CandidatesInput{Run: "r", IDs: ids, Max: 3, Guard: true, Task: "no-such-task"}); err == nil {
		t.Fatal("an unknown task: want an error")
	}
}
