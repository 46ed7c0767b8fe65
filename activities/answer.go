package activities

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/ensemble"
	"mlerl/grading"
	"mlerl/model"
	"mlerl/reward"
	"mlerl/settings"
	"mlerl/tasks"
)

// The final answer (issue: a run's output is the best submission it can justify without the
// test answers): the run's best programs are cross-validated on a k-fold partition of the full
// public train, greedy ensemble selection weighs them on their out-of-fold predictions, and
// the weighted blend of their refit test submissions is the answer.

// CandidatePrograms keeps the first in.Max programs of in.IDs whose code differs: the same
// program twice would only count double in the ensemble. With in.Guard a program written as
// code actions is replaced by its guarded one where they differ (codeactions.Library.Guarded),
// written as a sample of its own; copies are then told apart by the guarded code.
func (a *Activities) CandidatePrograms(ctx context.Context, in CandidatesInput) (CandidatesResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return CandidatesResult{}, badInput("%v", err)
	}
	var lib *codeactions.Library
	var schema codeactions.Schema
	if in.Guard {
		spec, err := a.Tasks.Get(in.Task)
		if err != nil {
			return CandidatesResult{}, badInput("%v", err)
		}
		// A modality without a library has no programs written as code actions to guard.
		lib, _ = codeactions.For(spec.Modality)
		schema = codeactions.SchemaOf(spec)
	}
	seen := map[[32]byte]bool{}
	var out CandidatesResult
	for _, id := range in.IDs {
		of := id
		if len(out.IDs) >= in.Max {
			break
		}
		code, err := store.Get(ctx, runstore.Sample(id).Program())
		if errors.Is(err, artifacts.ErrNotFound) {
			continue // a sample of a failed execution attempt that never stored its program
		}
		if err != nil {
			return CandidatesResult{}, err
		}
		var guarded *guardedSample
		if lib != nil {
			if guarded, err = guardedProgram(ctx, store, lib, schema, id); err != nil {
				return CandidatesResult{}, err
			}
		}
		if guarded != nil {
			code = []byte(guarded.code)
		}
		h := sha256.Sum256(code)
		if seen[h] {
			out.Duplicates++
			continue
		}
		seen[h] = true
		if guarded != nil {
			if err := putProgramSample(ctx, store, guarded.rec, guarded.plan, guarded.code); err != nil {
				return CandidatesResult{}, err
			}
			out.Guarded = append(out.Guarded, guarded.guard)
			id = guarded.rec.ID
		}
		out.IDs = append(out.IDs, id)
		out.Seconds = append(out.Seconds, runSeconds(ctx, store, of))
	}
	return out, nil
}

// runSeconds is sample id's run time on its validation split, one fold's where its reward
// averaged folds; 0 when it has no result to read (a cost the answer then estimates).
func runSeconds(ctx context.Context, store artifacts.Store, id string) float64 {
	var res ExecuteResult
	if err := getJSON(ctx, store, runstore.Sample(id).Result(), &res); err != nil {
		return 0
	}
	return res.DurationS / float64(max(1, len(res.FoldScores)))
}

// PurposeAnswerGuard marks a program the final answer wrote by guarding a candidate
// (codeactions.Library.Guarded); the policy never sampled it.
const PurposeAnswerGuard = "answer-guard"

// guardedSample is a candidate's guarded program, to be stored as a sample of its own.
type guardedSample struct {
	guard      Guard
	rec        sampleRecord
	plan, code string
}

// guardedProgram is sample id's guarded program, nil when id was not written as code actions
// or guarding changes nothing.
func guardedProgram(ctx context.Context, store artifacts.Store, lib *codeactions.Library, schema codeactions.Schema, id string) (*guardedSample, error) {
	var of sampleRecord
	if err := getJSON(ctx, store, runstore.Sample(id).Record(), &of); errors.Is(err, artifacts.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("guarding %s: %w", id, err)
	}
	if of.LLM != nil || len(of.Sample.Tokens) == 0 {
		return nil, nil
	}
	tokens, err := lib.Guarded(of.Sample.Tokens, schema)
	if err != nil {
		return nil, badInput("guarding %s: %v", id, err)
	}
	if slices.Equal(tokens, of.Sample.Tokens) {
		return nil, nil
	}
	prog, err := lib.Render(tokens, schema)
	if err != nil {
		return nil, badInput("guarding %s: %v", id, err)
	}
	var change []string
	was := strings.Fields(lib.Describe(of.Sample.Tokens))
	for i, part := range strings.Fields(lib.Describe(tokens)) {
		if part != was[i] {
			change = append(change, was[i]+" -> "+strings.SplitN(part, "=", 2)[1])
		}
	}
	g := Guard{From: id, To: "guard-" + id, Change: strings.Join(change, ", ")}
	rec := sampleRecord{ID: g.To, Iteration: of.Iteration, Purpose: PurposeAnswerGuard, Checkpoint: of.Checkpoint,
		Task: of.Task, PrevID: id, Actions: lib.Describe(tokens), Sample: model.Sample{Tokens: tokens}} // no log-probs: the policy did not write it
	plan := fmt.Sprintf("# Plan (%s of %s: %s)\n\n%s\n", PurposeAnswerGuard, id, g.Change, prog.Plan)
	return &guardedSample{guard: g, rec: rec, plan: plan, code: prog.Code}, nil
}

// CrossValidate runs a program on each fold of the k-fold partition of the public train (carved
// on first use) and grades its joined out-of-fold predictions. The first fold without a valid
// submission ends it, as with reward folds.
func (a *Activities) CrossValidate(ctx context.Context, in CrossValidateInput) (CrossValidateResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return CrossValidateResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return CrossValidateResult{}, err
	}
	folds, err := tasks.CarveCrossValidation(ctx, spec, a.Layout, a.python(), in.Folds)
	if err != nil {
		return CrossValidateResult{}, badInput("cross-validation of %s: %v", in.Task, err)
	}
	paper, _ := reward.Scheme(reward.SchemePaper) // the score is what counts here, not the reward
	sample := runstore.Sample(in.SampleID)
	out := CrossValidateResult{SampleID: in.SampleID}
	var parts [][]byte
	for f, dirs := range folds.Folds {
		res, err := a.execute(ctx, store, in.Task, in.SampleID, dirs, sample.CV(f+1), paper)
		if err != nil {
			return CrossValidateResult{}, err
		}
		out.DurationS += res.DurationS
		if !res.Valid || res.Score == nil {
			out.Reason = fmt.Sprintf("cross-validation fold %d: %s", f+1, res.Reason)
			return out, nil
		}
		out.FoldScores = append(out.FoldScores, *res.Score)
		stop := keepAlive(ctx) // the folds' own runs heartbeat their progress; this part does not
		b, err := store.Get(ctx, sample.CV(f+1).Submission())
		stop()
		if err != nil {
			return CrossValidateResult{}, err
		}
		parts = append(parts, b)
	}
	defer keepAlive(ctx)()
	csv, err := ensemble.ConcatCSV(parts)
	if err != nil {
		out.Reason = "its folds' submissions cannot be joined: " + err.Error()
		return out, nil
	}
	parts = nil
	if err := store.Put(ctx, sample.OOF(), csv); err != nil {
		return CrossValidateResult{}, err
	}
	g, err := a.gradeCSV(spec, csv, folds.Answers)
	if err != nil {
		return CrossValidateResult{}, err
	}
	if !g.Valid {
		out.Reason = "its out-of-fold predictions are not a valid submission: " + g.Reason
		return out, nil
	}
	out.Score = g.Score
	out.PredictionsSHA256 = fmt.Sprintf("%x", sha256.Sum256(csv))
	return out, nil
}

// SelectEnsemble weighs the cross-validated programs by greedy ensemble selection on their
// out-of-fold predictions.
func (a *Activities) SelectEnsemble(ctx context.Context, in EnsembleInput) (EnsembleResult, error) {
	defer keepAlive(ctx)() // it works in the worker: candidates' out-of-fold tables, rounds of blends
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return EnsembleResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return EnsembleResult{}, err
	}
	if len(in.SampleIDs) == 0 {
		return EnsembleResult{}, badInput("no cross-validated program to build an ensemble of")
	}
	answers := a.Layout.CVFolds(spec, in.Folds).Answers
	al := align(spec)
	score, err := a.blendScorer(ctx, store, spec, in.SampleIDs, answers, al)
	if err != nil {
		return EnsembleResult{}, err
	}
	n := len(in.SampleIDs)
	single := make([]*float64, n)
	for i := range n { // each program alone, for the report
		counts := make([]int, n)
		counts[i] = 1
		if s, ok, err := score(counts); err != nil {
			return EnsembleResult{}, err
		} else if ok {
			single[i] = &s
		}
	}
	sel, err := ensemble.Greedy(n, in.Rounds, spec.LowerIsBetter(), score)
	if err != nil {
		return EnsembleResult{}, badInput("ensemble selection: %v", err)
	}
	out := EnsembleResult{CVScore: sel.Score, BlendCVScore: sel.Score, Rounds: len(sel.Steps), Calibration: ensemble.Identity, BlendLog1p: al.Log1p}
	if calibrates(spec) {
		tables, err := readOOF(ctx, store, in.SampleIDs)
		if err != nil {
			return EnsembleResult{}, err
		}
		blend, err := ensemble.Blend(tables, sel.Weights(), al)
		if err != nil {
			return EnsembleResult{}, badInput("the chosen ensemble cannot be blended: %v", err)
		}
		skip := index(blend.Header, spec.IDColumn)
		cal, s, err := ensemble.FitCalibration(ensemble.Grid(), func(c ensemble.Calibration) (float64, bool, error) {
			activity.RecordHeartbeat(ctx, nil)
			t, err := c.Apply(blend, skip)
			if err != nil {
				return 0, false, nil // a blend that is not probabilities: graded invalid anyway
			}
			g, err := a.gradeTable(spec, t, answers)
			if err != nil || !g.Valid {
				return 0, false, err
			}
			return *g.Score, true, nil
		})
		if err != nil {
			return EnsembleResult{}, badInput("calibrating the ensemble: %v", err)
		}
		out.Calibration, out.CVScore = cal, s
	}
	for i, w := range sel.Weights() {
		if w > 0 {
			out.Members = append(out.Members, AnswerMember{SampleID: in.SampleIDs[i], Weight: w, CVScore: single[i]})
		}
	}
	return out, nil
}

// blendScorer scores the blend of the programs' out-of-fold predictions with given counts as
// weights. A numeric metric's predictions are read and matched to the answers once and blended
// as numbers (image-output tasks have millions of rows, and greedy selection scores dozens of
// blends); a vote's are blended and graded as text.
func (a *Activities) blendScorer(ctx context.Context, store artifacts.Store, spec *tasks.Spec, ids []string, answers string, al ensemble.Align) (ensemble.Scorer, error) {
	weights := func(counts []int) []float64 {
		activity.RecordHeartbeat(ctx, nil)
		w := make([]float64, len(counts))
		for i, c := range counts {
			w[i] = float64(c)
		}
		return w
	}
	if !grading.NumericMetric(spec.Metric) || al.Vote {
		tables, err := readOOF(ctx, store, ids)
		if err != nil {
			return nil, err
		}
		return func(counts []int) (float64, bool, error) {
			blend, err := ensemble.Blend(tables, weights(counts), al)
			if err != nil {
				return 0, false, nil // members that cannot be blended make no valid ensemble
			}
			g, err := a.gradeTable(spec, blend, answers)
			if err != nil || !g.Valid {
				return 0, false, err
			}
			return *g.Score, true, nil
		}, nil
	}
	num, err := grading.NewNumeric(spec, answers)
	if err != nil {
		return nil, err
	}
	preds := make([][][]float64, len(ids))
	for i, id := range ids {
		b, err := store.Get(ctx, runstore.Sample(id).OOF())
		if err != nil {
			return nil, fmt.Errorf("out-of-fold predictions of %s: %w", id, err)
		}
		activity.RecordHeartbeat(ctx, nil)
		if preds[i], _, err = readNumeric(num, b); err != nil {
			return nil, err
		}
	}
	return func(counts []int) (float64, bool, error) {
		for i, c := range counts {
			if c > 0 && preds[i] == nil {
				return 0, false, nil // a member that is no valid submission alone
			}
		}
		blend, err := ensemble.BlendColumns(preds, weights(counts), al)
		if err != nil {
			return 0, false, nil
		}
		g, err := num.Score(blend)
		if err != nil || !g.Valid {
			return 0, false, err
		}
		return *g.Score, true, nil
	}, nil
}

// readNumeric grades a submission held in memory with num and returns its predictions (nil
// when it is not valid).
func readNumeric(num *grading.Numeric, b []byte) ([][]float64, grading.Result, error) {
	path, remove, err := tempCSV(b)
	if err != nil {
		return nil, grading.Result{}, err
	}
	defer remove()
	return num.Read(path)
}

// readOOF reads the programs' out-of-fold predictions as tables.
func readOOF(ctx context.Context, store artifacts.Store, ids []string) ([]ensemble.Table, error) {
	tables := make([]ensemble.Table, len(ids))
	for i, id := range ids {
		b, err := store.Get(ctx, runstore.Sample(id).OOF())
		if err != nil {
			return nil, fmt.Errorf("out-of-fold predictions of %s: %w", id, err)
		}
		if tables[i], err = ensemble.ReadCSV(b); err != nil {
			return nil, badInput("out-of-fold predictions of %s: %v", id, err)
		}
	}
	return tables, nil
}

// BlendAnswer blends the members' test submissions (leak-free: their refit on the full public
// train, which FinalGrade ran; paper protocol: their runs on the test split) with the chosen
// weights, stores the answer and grades it on the test answers. With in.Untuned it blends the
// untuned answer's members instead, to its own key, and stores no answer.
func (a *Activities) BlendAnswer(ctx context.Context, in BlendInput) (FinalGradeResult, error) {
	defer keepAlive(ctx)() // it works in the worker: the members' test submissions, blended and graded
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return FinalGradeResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return FinalGradeResult{}, err
	}
	// The test submissions are blended as the out-of-fold predictions were when the members
	// were chosen, which the answer records.
	al := align(spec)
	members, cal, key := in.Answer.Members, in.Answer.Calibration, runstore.AnswerSubmissionKey
	al.Log1p = in.Answer.BlendLog1p
	if in.Untuned {
		if in.Answer.Untuned == nil {
			return FinalGradeResult{}, badInput("an untuned blend was asked for an answer without an untuned choice")
		}
		members, cal, key = in.Answer.Untuned.Members, in.Answer.Untuned.Calibration, runstore.UntunedSubmissionKey
		al.Log1p = in.Answer.Untuned.BlendLog1p
	}
	finish := func(g grading.Result, duration float64) (FinalGradeResult, error) {
		rep := grading.NewReport(spec, g, store.Location(key), time.Now())
		res := FinalGradeResult{SampleID: "final-answer", Report: rep, Reason: g.Reason, DurationS: duration}
		if in.Untuned {
			res.SampleID = "untuned-answer"
			return res, nil
		}
		ans := in.Answer
		ans.Test = &res
		if err := putJSON(ctx, store, runstore.AnswerKey, ans); err != nil {
			return FinalGradeResult{}, err
		}
		return res, nil
	}
	var tables []ensemble.Table
	var weights []float64
	duration := 0.0
	for _, m := range members {
		dir := runstore.Sample(m.SampleID)
		if in.Protocol != settings.Paper {
			dir = dir.Final()
		}
		if m.Test != nil {
			duration += m.Test.DurationS
		}
		b, err := store.Get(ctx, dir.Submission())
		var t ensemble.Table
		if err == nil {
			t, err = ensemble.ReadCSV(b)
		}
		if err != nil {
			// A member whose refit wrote nothing usable: the answer is not valid, and says why.
			return finish(grading.Result{Exists: false,
				Reason: fmt.Sprintf("member %s has no readable test submission (%v)", m.SampleID, err)}, duration)
		}
		tables, weights = append(tables, t), append(weights, m.Weight)
	}
	blend, err := ensemble.Blend(tables, weights, al)
	if err == nil && cal != nil {
		blend, err = cal.Apply(blend, index(blend.Header, spec.IDColumn))
	}
	if err != nil {
		return finish(grading.Result{Exists: false, Reason: "the members' test submissions cannot be blended: " + err.Error()}, duration)
	}
	if err := store.Put(ctx, key, blend.CSV()); err != nil {
		return FinalGradeResult{}, err
	}
	g, err := a.gradeTable(spec, blend, filepath.Join(a.Layout.Dirs(spec.ID, tasks.SplitTest).Private, spec.Files.Answers))
	if err != nil {
		return FinalGradeResult{}, err
	}
	return finish(g, duration)
}

// align is how the task's rows are matched when submissions are blended.
func align(spec *tasks.Spec) ensemble.Align {
	// Labels (accuracy) and texts (word Jaccard) are voted on; probabilities and values averaged.
	al := ensemble.Align{Integer: spec.Answers.Integer, Vote: spec.Metric == "accuracy" || spec.Metric == "mean-word-jaccard"}
	// RMSLE grades log(1+x): the blend averages there (nomad's two targets, say).
	al.Log1p = spec.Metric == "mean-column-rmsle"
	if spec.Answers.MatchBy != "position" {
		al.IDColumn = spec.IDColumn
	} else {
		al.Carry = spec.IDColumn // a member may leave the id out: the grader matches by position
	}
	return al
}

// calibrates says the blend's probabilities are worth calibrating: log loss is the metric
// that punishes over- and under-confidence (AUC and the others rank or threshold).
func calibrates(spec *tasks.Spec) bool {
	return spec.Metric == "multi-class-log-loss"
}

// index is the position of column name in a header, or -1.
func index(header []string, name string) int {
	for i, h := range header {
		if h == name {
			return i
		}
	}
	return -1
}

// gradeTable grades a submission held in memory with the task's grader.
func (a *Activities) gradeTable(spec *tasks.Spec, t ensemble.Table, answers string) (grading.Result, error) {
	return a.gradeCSV(spec, t.CSV(), answers)
}

// gradeCSV grades a submission's bytes with the task's grader.
func (a *Activities) gradeCSV(spec *tasks.Spec, csv []byte, answers string) (grading.Result, error) {
	path, remove, err := tempCSV(csv)
	if err != nil {
		return grading.Result{}, err
	}
	defer remove()
	return grading.Grade(spec, path, answers)
}

// tempCSV writes b to a temporary .csv file (the grader reads files) and returns its path and
// the function that removes it.
func tempCSV(b []byte) (path string, remove func(), err error) {
	f, err := os.CreateTemp("", "answer-*.csv")
	if err != nil {
		return "", nil, err
	}
	remove = func() { os.Remove(f.Name()) }
	if _, err := f.Write(b); err != nil {
		f.Close()
		remove()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		remove()
		return "", nil, err
	}
	return f.Name(), remove, nil
}

func (a *Activities) python() string {
	if a.Python == "" {
		return "python3"
	}
	return a.Python
}
