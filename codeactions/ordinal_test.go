package codeactions_test

import (
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// preparedSynthetic writes rows (a header first) as the task's raw train.csv, runs the task's
// own preparer and validation carving on it, and returns the validation split: the layout,
// columns and answers format are exactly what the real data would give.
func preparedSynthetic(t *testing.T, spec *tasks.Spec, rows [][]string) tasks.Dirs {
	t.Helper()
	raw := t.TempDir()
	f, err := os.Create(filepath.Join(raw, "train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	cw := csv.NewWriter(f)
	if err := cw.WriteAll(rows); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: dir}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), spec, raw); err != nil {
		t.Fatal(err)
	}
	return tasks.Layout{DataDir: dir}.Dirs(spec.ID, tasks.SplitValidation)
}

var (
	essayBasic = strings.Fields("the a people think school students car cars good bad many because they would should could " +
		"like make time life help other want need important things idea world way day work see know it is was and to of in " +
		"that for on with this be are have not you can get go more some when what so do")
	// Words of good and of weak essays, of ordinary length so that only their identity (TF-IDF)
	// tells them apart, not the mean word length.
	essayAdvanced = strings.Fields("thus hence vital sound clear moral civic prove argue claim valid merit rigor nuance " +
		"reform trait ethic cite logic aware")
	essayMisspelled = strings.Fields("stuff lol gonna kinda u ur dunno cuz yeah wanna alot dont thier wich")
)

// essayRows are synthetic essays whose score (1-6, skewed as Kaggle's) shows in their length,
// paragraphs and vocabulary, with noise: a length regression does fairly, TF-IDF with length
// statistics does better.
func essayRows(n int) [][]string {
	rng := rand.New(rand.NewPCG(7, 11))
	weights := []float64{0.07, 0.27, 0.36, 0.22, 0.06, 0.02}
	rows := [][]string{{"essay_id", "full_text", "score"}}
	for i := 0; i < n; i++ {
		u, score := rng.Float64(), 6
		for k, p := range weights {
			if u < p {
				score = k + 1
				break
			}
			u -= p
		}
		// Length and vocabulary show the score through separate noise, so combining them helps.
		l := float64(score) + 1.2*rng.NormFloat64()
		v := float64(score) + 0.5*rng.NormFloat64()
		words := max(25, int(80+45*l+30*rng.NormFloat64()))
		pars := max(1, int(math.Round(0.7*l+0.8*rng.NormFloat64())))
		pAdv := math.Max(0, 0.025*v-0.01)
		pMis := math.Max(0.002, 0.10-0.018*v)
		pRare := 0.03 // names and rare words: a long tail of vocabulary, as in real essays
		var sb strings.Builder
		sentence := 0
		for w := 0; w < words; w++ {
			var word string
			switch u := rng.Float64(); {
			case u < pAdv:
				word = essayAdvanced[rng.IntN(len(essayAdvanced))]
			case u < pAdv+pMis:
				word = essayMisspelled[rng.IntN(len(essayMisspelled))]
			case u < pAdv+pMis+pRare:
				word = "zq" + strconv.FormatInt(int64(math.Exp(8*rng.Float64())), 36)
			default:
				word = essayBasic[rng.IntN(len(essayBasic))]
			}
			if sentence == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			sb.WriteString(word)
			sentence++
			switch {
			case w == words-1:
				sb.WriteString(".")
			case (w+1)%max(1, words/pars) == 0:
				sb.WriteString(".\n\n")
				sentence = 0
			case sentence > 7+rng.IntN(8):
				sb.WriteString(". ")
				sentence = 0
			default:
				sb.WriteString(" ")
			}
		}
		rows = append(rows, []string{fmt.Sprintf("%07x", 0x1000000+i*7919), sb.String(), strconv.Itoa(score)})
	}
	return rows
}

func ordinalBase() map[string]string {
	return map[string]string{"imports": "full", "load": "input", "target": "score", "framing": "regression",
		"features": "tfidf-length", "transform": "none", "model": "ridge", "strength": "s4", "validation": "oof5",
		"postprocess": "thresholds", "submission": "aligned"}
}

func ordinalWith(kv ...string) map[string]string { return override(ordinalBase(), kv...) }

// Programs of the ordinal library on synthetic essays prepared as the real task: the strong
// program (TF-IDF and length statistics, ridge, kappa-tuned cut points on out-of-fold
// predictions) clearly beats predicting the mode, and each failure mode fails at its stage.
func TestOrdinalPrograms(t *testing.T) {
	testenv.RequirePython(t)
	t.Parallel()
	spec, err := tasks.Builtin().Get("learning-agency-lab-automated-essay-scoring-2")
	if err != nil {
		t.Fatal(err)
	}
	dirs := preparedSynthetic(t, spec, essayRows(2500))
	lib := codeactions.Ordinal
	t.Run("strong beats weak", func(t *testing.T) {
		checkStrongBeatsWeak(t, lib, spec, dirs, ordinalBase(),
			ordinalWith("features", "length", "model", "mode", "validation", "holdout", "postprocess", "round-clip"), 0.75, 0.5)
	})
	checkPrograms(t, lib, spec, dirs, []programCase{
		{"length statistics with a linear regression are valid (no hold-out: 6 markers)", ordinalWith("features", "length", "model", "linear", "validation", "none", "postprocess", "round-clip"), true, 0.5, 6},
		{"wrong data path fails while loading", ordinalWith("load", "cwd"), false, 0, 1},
		{"a missing label column fails after loading", ordinalWith("target", "label-column"), false, 0, 2},
		{"PCA refuses sparse TF-IDF", ordinalWith("transform", "pca", "validation", "none"), false, 0, 2},
		{"text fed to ridge fails at fit", ordinalWith("features", "raw-text", "validation", "none"), false, 0, 3},
		{"XGBoost classes must start at 0", ordinalWith("features", "length", "model", "xgboost", "strength", "s0", "framing", "classification", "validation", "none"), false, 0, 3},
		{"a ridge classifier has no probabilities", ordinalWith("framing", "expected-value", "validation", "none"), false, 0, 4},
		// "trained model" follows the last fit, the refit after the hold-out, so it is not reached.
		{"kappa of continuous predictions fails", ordinalWith("validation", "holdout-raw-kappa"), false, 0, 4},
		{"refitting TF-IDF on the test fails at prediction", ordinalWith("features", "tfidf-refit", "validation", "holdout"), false, 0, 6},
		{"an id index leaves no id for the submission", ordinalWith("load", "index-col", "validation", "holdout"), false, 0, 7},
		{"unrounded scores make an invalid submission", ordinalWith("postprocess", "none", "validation", "holdout"), false, 0, 7},
	})
}

// On the synthetic essays scored 0-5 instead of 1-6, with some essays missing their text: the
// programs take the scores' range from the training data (clipping, cut points, the shift for
// XGBoost's classes, the log's origin) and read a missing essay as empty, so they stay valid and
// strong.
func TestOrdinalProgramsOnOddScores(t *testing.T) {
	testenv.RequirePython(t)
	t.Parallel()
	spec, err := tasks.Builtin().Get("learning-agency-lab-automated-essay-scoring-2")
	if err != nil {
		t.Fatal(err)
	}
	rows := essayRows(1500)
	for i, r := range rows[1:] {
		s, _ := strconv.Atoi(r[2])
		r[2] = strconv.Itoa(s - 1)
		if i%37 == 5 {
			r[1] = ""
		}
	}
	dirs := preparedSynthetic(t, spec, rows)
	checkPrograms(t, codeactions.Ordinal, spec, dirs, []programCase{
		{"the strong program", ordinalBase(), true, 0.7, 7},
		{"rounded and clipped to the range", ordinalWith("postprocess", "round-clip"), true, 0.6, 7},
		{"the log of a score counted from 1 (log(0) would be -inf)", ordinalWith("target", "log"), true, 0.6, 7},
		{"XGBoost classes shifted to start at 0", ordinalWith("features", "length", "model", "xgboost", "strength", "s1", "framing", "classification", "target", "shifted", "validation", "none", "postprocess", "round-clip"), true, 0.4, 6},
	})
}
