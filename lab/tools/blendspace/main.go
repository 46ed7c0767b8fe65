// Command blendspace measures, on finished runs, what the space of the answer's blend does on
// a metric graded in log(1+x) (RMSLE): the answer's greedy ensemble selection is rerun on the
// run's own out-of-fold predictions with the arithmetic mean and with the mean of log(1+x),
// and the answer's members' refit test submissions are blended both ways and graded. Nothing
// runs in the sandbox: it reads what the runs stored.
//
//	go run ./lab/tools/blendspace [-data-dir DIR] [-rounds 25] RUN_DIR...
//
// A RUN_DIR is a finished run's folder (starter run's --out, or an experiment's runs/<cell>/)
// holding final-answer/answer.json; the task is the one its answer was graded on.
package main

import (
	"cmp"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"mlerl/artifacts/runstore"
	"mlerl/ensemble"
	"mlerl/grading"
	"mlerl/runrecord"
	"mlerl/tasks"
)

func main() {
	dataDir := flag.String("data-dir", filepath.Join(os.Getenv("HOME"), ".cache", "mle-bench", "data"), "prepared task data (the runs' --data-dir)")
	rounds := flag.Int("rounds", 25, "greedy selection's rounds (the runs' --ensemble-rounds)")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: blendspace [-data-dir DIR] [-rounds N] RUN_DIR...")
		os.Exit(2)
	}
	layout := tasks.Layout{DataDir: *dataDir}
	fmt.Println("| run | candidates | CV arithmetic | CV log1p | members' test, arithmetic | members' test, log1p |")
	fmt.Println("|---|---|---|---|---|---|")
	for _, dir := range flag.Args() {
		row, err := measure(layout, dir, *rounds)
		if err != nil {
			fail(fmt.Errorf("%s: %w", dir, err))
		}
		fmt.Println(row)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "blendspace:", err)
	os.Exit(1)
}

// measure reruns one run's selection both ways and blends its answer's members both ways.
func measure(layout tasks.Layout, dir string, rounds int) (string, error) {
	var ans runrecord.FinalAnswer
	if err := readJSON(filepath.Join(dir, runstore.AnswerKey), &ans); err != nil {
		return "", fmt.Errorf("%w: give the folder of a run that finished its final answer", err)
	}
	if ans.Note != "" || len(ans.Members) == 0 || ans.Test == nil {
		return "", fmt.Errorf("the run has no graded answer to measure (%q): give a run whose answer was built", ans.Note)
	}
	spec, err := tasks.Builtin().Get(ans.Test.Report.CompetitionID)
	if err != nil {
		return "", err
	}
	// The candidates the answer's selection saw: scored, not a repeat, refit not failed.
	var kept []runrecord.CrossValidateResult
	for _, c := range ans.Candidates {
		failed := slices.ContainsFunc(ans.RefitFailed, func(f runrecord.FinalGradeResult) bool { return f.SampleID == c.SampleID })
		if c.Score != nil && c.SameAs == "" && !failed {
			kept = append(kept, c)
		}
	}
	// Best cross-validation score first, as the run ordered them: ties go to the earlier.
	slices.SortStableFunc(kept, func(a, b runrecord.CrossValidateResult) int {
		if spec.LowerIsBetter() {
			return cmp.Compare(*a.Score, *b.Score)
		}
		return cmp.Compare(*b.Score, *a.Score)
	})
	ids := make([]string, len(kept))
	for i, c := range kept {
		ids[i] = c.SampleID
	}
	oof := make([]ensemble.Table, len(ids))
	for i, id := range ids {
		t, err := readTable(filepath.Join(dir, runstore.Sample(id).OOF()))
		if err != nil {
			return "", err
		}
		oof[i] = t
	}
	cvAnswers := layout.CVFolds(spec, ans.Folds).Answers
	testAnswers := filepath.Join(layout.Dirs(spec.ID, tasks.SplitTest).Private, spec.Files.Answers)
	var base ensemble.Align
	if spec.Answers.MatchBy != "position" {
		base.IDColumn = spec.IDColumn
	}
	var cv [2]float64
	var test [2]*float64
	for k, log := range []bool{false, true} {
		al := base
		al.Log1p = log
		sel, err := ensemble.Greedy(len(oof), rounds, spec.LowerIsBetter(), func(counts []int) (float64, bool, error) {
			w := make([]float64, len(counts))
			for i, c := range counts {
				w[i] = float64(c)
			}
			return grade(spec, oof, w, al, cvAnswers)
		})
		if err != nil {
			return "", err
		}
		cv[k] = sel.Score
		var tables []ensemble.Table
		var weights []float64
		for _, m := range ans.Members {
			t, err := readTable(filepath.Join(dir, runstore.Sample(m.SampleID).Final().Submission()))
			if err != nil {
				return "", err
			}
			tables, weights = append(tables, t), append(weights, m.Weight)
		}
		if s, ok, err := grade(spec, tables, weights, al, testAnswers); err != nil {
			return "", err
		} else if ok {
			test[k] = &s
		}
	}
	num := func(v *float64) string {
		if v == nil {
			return "invalid"
		}
		return fmt.Sprintf("%.5f", *v)
	}
	return fmt.Sprintf("| %s | %d | %.5f | %.5f | %s | %s |", filepath.Base(filepath.Clean(dir)), len(ids), cv[0], cv[1], num(test[0]), num(test[1])), nil
}

// grade blends tables with weights and grades the blend; ok is false when it is not valid.
func grade(spec *tasks.Spec, tables []ensemble.Table, w []float64, al ensemble.Align, answers string) (float64, bool, error) {
	blend, err := ensemble.Blend(tables, w, al)
	if err != nil {
		return 0, false, nil
	}
	f, err := os.CreateTemp("", "blendspace-*.csv")
	if err != nil {
		return 0, false, err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(blend.CSV()); err != nil {
		return 0, false, err
	}
	f.Close()
	g, err := grading.Grade(spec, f.Name(), answers)
	if err != nil || !g.Valid {
		return 0, false, err
	}
	return *g.Score, true, nil
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

func readTable(path string) (ensemble.Table, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return ensemble.Table{}, err
	}
	return ensemble.ReadCSV(b)
}
