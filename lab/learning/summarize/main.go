// Command summarize compares the arms of the learning benchmark's runs (made by a script the
// built-in learning spec has replaced; see lab/learning/README.md): for each run directory
// <arm>-seed<k> it reads every sample's result and reports, per arm, the mean and standard
// error over seeds of the executed and distinct training programs, the best validation score
// among all executed programs, the final policy's evaluation samples (their best, the paper's
// measure; valid rate, mean score of the valid ones, mean reward), the training samples' mean
// reward and valid rate, and the chosen program's test score; then per seed, against the
// static arm seed by seed, and the best training score as the run goes.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mlerl/artifacts/runstore"
	"mlerl/runrecord"
)

type runStats struct {
	seed                              string
	executed                          int
	distinct                          int     // distinct program texts among the executed training programs
	best                              float64 // lowest validation log loss seen (leaf: lower is better)
	evalBest                          float64 // lowest among the final policy's evaluation samples (the paper's "best of K samples")
	evalValid, evalScore, evalReward  float64
	trainValid, trainReward, meanSecs float64
	testScore                         float64 // the chosen program's score on the private test answers
	// trainBest[k] is the lowest validation log loss among training programs sampled in
	// iteration k (NaN when none was valid); bestBy folds it into a curve.
	trainBest map[int]float64
}

// bestBy is the lowest validation log loss among the training programs sampled up to and
// including iteration it (NaN when none was valid yet).
func (r runStats) bestBy(it int) float64 {
	best := math.NaN()
	for k, v := range r.trainBest {
		if k <= it && (math.IsNaN(best) || v < best) {
			best = v
		}
	}
	return best
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: summarize OUT_DIR")
		os.Exit(2)
	}
	dirs, _ := filepath.Glob(filepath.Join(os.Args[1], "*-seed*"))
	arms := map[string][]runStats{}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, runstore.ReportKey)); err != nil {
			fmt.Fprintf(os.Stderr, "%s: not finished (no report.md), left out\n", d)
			continue
		}
		parts := strings.SplitN(filepath.Base(d), "-seed", 2)
		arm := parts[0]
		st, err := read(d)
		st.seed = parts[1]
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			continue
		}
		arms[arm] = append(arms[arm], st)
	}
	names := make([]string, 0, len(arms))
	for a := range arms {
		names = append(names, a)
	}
	sort.Strings(names)
	fmt.Println("| arm | seeds | programs executed | distinct programs | best validation log loss | final policy: best of its evaluation samples | training mean reward | training valid rate | final policy: valid rate | final policy: mean valid log loss | final policy: mean reward | chosen program: test log loss | mean exec s |")
	fmt.Println("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, a := range names {
		rs := arms[a]
		col := func(f func(runStats) float64) string {
			var v []float64
			for _, r := range rs {
				if x := f(r); !math.IsNaN(x) {
					v = append(v, x)
				}
			}
			m, se := meanSE(v)
			return fmt.Sprintf("%.4f ± %.4f", m, se)
		}
		fmt.Printf("| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", a, len(rs),
			col(func(r runStats) float64 { return float64(r.executed) }), col(func(r runStats) float64 { return float64(r.distinct) }), col(func(r runStats) float64 { return r.best }),
			col(func(r runStats) float64 { return r.evalBest }),
			col(func(r runStats) float64 { return r.trainReward }), col(func(r runStats) float64 { return r.trainValid }),
			col(func(r runStats) float64 { return r.evalValid }), col(func(r runStats) float64 { return r.evalScore }),
			col(func(r runStats) float64 { return r.evalReward }), col(func(r runStats) float64 { return r.testScore }),
			col(func(r runStats) float64 { return r.meanSecs }))
	}
	perSeed(names, arms)
	pairedWithStatic(names, arms)
	curve(names, arms)
}

func read(dir string) (runStats, error) {
	files, _ := filepath.Glob(filepath.Join(dir, runstore.Sample("*").Result()))
	if len(files) == 0 {
		return runStats{}, fmt.Errorf("%s: no results", dir)
	}
	st := runStats{best: math.NaN(), evalBest: math.NaN(), evalScore: math.NaN(), testScore: math.NaN(), trainBest: map[int]float64{}}
	var choice runrecord.FinalGradeResult
	if b, err := os.ReadFile(filepath.Join(dir, runstore.ChoiceKey)); err == nil && json.Unmarshal(b, &choice) == nil && choice.Report.Score != nil {
		st.testScore = *choice.Report.Score
	} else if finals, _ := filepath.Glob(filepath.Join(dir, runstore.Sample("*").Final().GradeReport())); len(finals) == 1 {
		// Runs from before ChoiceKey, without a final answer: the one final grade is the choice.
		var rep struct {
			Score *float64 `json:"score"`
		}
		if b, err := os.ReadFile(finals[0]); err == nil && json.Unmarshal(b, &rep) == nil && rep.Score != nil {
			st.testScore = *rep.Score
		}
	}
	var evalN, evalValid, evalScoreN, trainN, trainValid float64
	programs := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return st, err
		}
		var r runrecord.ExecuteResult
		if err := json.Unmarshal(b, &r); err != nil {
			return st, err
		}
		if r.Score != nil && (math.IsNaN(st.best) || *r.Score < st.best) {
			st.best = *r.Score
		}
		if strings.HasPrefix(r.SampleID, "eval-") && r.Score != nil && (math.IsNaN(st.evalBest) || *r.Score < st.evalBest) {
			st.evalBest = *r.Score
		}
		if strings.HasPrefix(r.SampleID, "eval-scratch") {
			evalN++
			st.evalReward += r.Reward
			if r.Valid {
				evalValid++
				if math.IsNaN(st.evalScore) {
					st.evalScore = 0
				}
				st.evalScore += *r.Score
				evalScoreN++
			}
			continue
		}
		if strings.HasPrefix(r.SampleID, "it") {
			var it int
			if _, err := fmt.Sscanf(r.SampleID, "it%d-", &it); err != nil {
				return st, fmt.Errorf("%s: sample id %q is not it<iteration>-s<n>", f, r.SampleID)
			}
			if b, ok := st.trainBest[it]; r.Score != nil && (!ok || *r.Score < b) {
				st.trainBest[it] = *r.Score
			}
			code, err := os.ReadFile(filepath.Join(dir, runstore.Sample(filepath.Base(filepath.Dir(f))).Program()))
			if err != nil {
				return st, err
			}
			programs[string(code)] = true
			st.executed++
			trainN++
			st.trainReward += r.Reward
			st.meanSecs += r.DurationS
			if r.Valid {
				trainValid++
			}
		}
	}
	st.distinct = len(programs)
	st.evalValid = evalValid / evalN
	st.evalReward /= evalN
	if evalScoreN > 0 {
		st.evalScore /= evalScoreN
	}
	st.trainValid = trainValid / trainN
	st.trainReward /= trainN
	st.meanSecs /= trainN
	return st, nil
}

func meanSE(v []float64) (float64, float64) {
	if len(v) == 0 {
		return math.NaN(), math.NaN()
	}
	m := 0.0
	for _, x := range v {
		m += x
	}
	m /= float64(len(v))
	if len(v) < 2 {
		return m, math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += (x - m) * (x - m)
	}
	return m, math.Sqrt(s/float64(len(v)-1)) / math.Sqrt(float64(len(v)))
}

// perSeed lists each arm's runs: the best validation log loss, the final policy's best
// evaluation sample, then the chosen program's test log loss ("none" when no evaluated program
// was valid).
func perSeed(names []string, arms map[string][]runStats) {
	fmt.Println()
	fmt.Println("| arm | per seed: best validation log loss / final policy's best of its evaluation samples / chosen program's test log loss |")
	fmt.Println("|---|---|")
	for _, a := range names {
		rs := arms[a]
		sort.Slice(rs, func(i, j int) bool { return rs[i].seed < rs[j].seed })
		var cells []string
		for _, r := range rs {
			test := "none"
			if !math.IsNaN(r.testScore) {
				test = fmt.Sprintf("%.3f", r.testScore)
			}
			cells = append(cells, fmt.Sprintf("seed %s: %.3f / %.3f / %s", r.seed, r.best, r.evalBest, test))
		}
		fmt.Printf("| %s | %s |\n", a, strings.Join(cells, "; "))
	}
}

// pairedWithStatic compares each arm with the static arm seed by seed: both start from the same
// warm start, so a seed's pair differs only by what the arm does with it. For the best
// validation log loss of the run and the final policy's best evaluation sample it prints in how
// many seeds the arm's is lower, and the median of each.
func pairedWithStatic(names []string, arms map[string][]runStats) {
	static := map[string]runStats{}
	for _, r := range arms["static"] {
		static[r.seed] = r
	}
	if len(static) == 0 {
		return
	}
	fmt.Println()
	fmt.Println("| arm | best validation log loss below static's, same seed | median best: arm / static | final policy's best below static's | median: arm / static |")
	fmt.Println("|---|---|---|---|---|")
	for _, a := range names {
		if a == "static" {
			continue
		}
		row := "| " + a + " |"
		for _, of := range []func(runStats) float64{
			func(r runStats) float64 { return r.best },
			func(r runStats) float64 { return r.evalBest },
		} {
			var wins, n int
			var mine, theirs []float64
			for _, r := range arms[a] {
				s, ok := static[r.seed]
				if !ok || math.IsNaN(of(r)) || math.IsNaN(of(s)) {
					continue
				}
				n++
				if of(r) < of(s) {
					wins++
				}
				mine, theirs = append(mine, of(r)), append(theirs, of(s))
			}
			row += fmt.Sprintf(" %d of %d | %.3f / %.3f |", wins, n, median(mine), median(theirs))
		}
		fmt.Println(row)
	}
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// curve prints each arm's best validation log loss among the training programs sampled by the
// end of each quarter of the run (mean ± standard error over seeds; the evaluation samples are
// left out): whether an arm pulls away from another as the budget grows, or only starts ahead.
func curve(names []string, arms map[string][]runStats) {
	last := 0
	for _, a := range names {
		for _, r := range arms[a] {
			for k := range r.trainBest {
				last = max(last, k)
			}
		}
	}
	if last < 4 {
		return
	}
	// Programs are sampled in iterations 1 to N-1 of an N-iteration run (the last update's
	// replacements are never run), so the quarters are of N.
	n := last + 1
	marks := []int{n / 4, n / 2, 3 * n / 4, last}
	fmt.Println()
	head := "| arm |"
	for _, k := range marks {
		head += fmt.Sprintf(" best training log loss, sampled by iteration %d |", k)
	}
	fmt.Println(head)
	fmt.Println("|---|" + strings.Repeat("---|", len(marks)))
	for _, a := range names {
		row := "| " + a + " |"
		for _, k := range marks {
			var v []float64
			for _, r := range arms[a] {
				if x := r.bestBy(k); !math.IsNaN(x) {
					v = append(v, x)
				}
			}
			m, se := meanSE(v)
			row += fmt.Sprintf(" %.3f ± %.3f (%d seeds) |", m, se, len(v))
		}
		fmt.Println(row)
	}
}
