package codeactions_test

import (
	"encoding/csv"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/grading"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

var (
	spanFiller = strings.Fields("i my the to going today work just it is was and at for with this day now got lol home " +
		"lunch mom class weekend night go new phone again back all time tomorrow about you we they out up get " +
		"school car dinner movie friends game watching waiting bus coffee morning tonight still here there")
	spanPositive = strings.Fields("love good great happy awesome nice fun thanks best amazing excited glad cool beautiful " +
		"wonderful lovely enjoy yay perfect sweet")
	spanNegative = strings.Fields("sad hate bad miss sorry sucks tired sick hurts worst annoying bored ugh lost broke " +
		"awful crying stupid boring terrible")
	spanIntensifiers = strings.Fields("so really very soo totally")
	spanPunct        = []string{"!", "!!", "...", ",", "?", "."}
)

// spanData writes a synthetic prepared layout for tweet-sentiment-extraction in dir, in the
// preparer's columns (textID, text, selected_text, sentiment). Positive and negative tweets
// hide a short phrase (a sentiment word, maybe an intensifier before it or a second one after
// it, or "not" + a positive word in negative tweets) among filler words, sometimes with a word
// of the other polarity elsewhere; the phrase, often with a word or two around it, is the
// selected text. Neutral tweets select the whole text. Punctuation sticks to words, some texts
// hold commas and quotes, and one training tweet is empty (read as NaN), as in Kaggle's file.
func spanData(t *testing.T, dir string, nTrain, nTest int) tasks.Dirs {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 5))
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	punct := func(w string) string {
		switch u := rng.Float64(); {
		case u < 0.15:
			return w + pick(spanPunct)
		case u < 0.17:
			return "\"" + w + "\""
		}
		return w
	}
	row := func() []string {
		id := fmt.Sprintf("%010x", rng.Uint64()>>24)
		var sent string
		switch u := rng.Float64(); {
		case u < 0.4:
			sent = "neutral"
		case u < 0.71:
			sent = "positive"
		default:
			sent = "negative"
		}
		n := 4 + rng.IntN(14)
		toks := make([]string, n)
		for i := range toks {
			toks[i] = punct(pick(spanFiller))
		}
		if sent == "neutral" {
			if rng.Float64() < 0.15 {
				toks[rng.IntN(n)] = punct(pick(append(spanPositive, spanNegative...)))
			}
			text := strings.Join(toks, " ")
			sel := text
			if rng.Float64() < 0.1 {
				sel = strings.Join(toks[:1+rng.IntN(n)], " ")
			}
			return []string{id, text, sel, sent}
		}
		own, opposite := spanPositive, spanNegative
		if sent == "negative" {
			own, opposite = spanNegative, spanPositive
		}
		var phrase []string
		switch {
		case sent == "negative" && rng.Float64() < 0.15:
			phrase = []string{"not", pick(spanPositive)}
		case rng.Float64() < 0.3:
			phrase = []string{pick(spanIntensifiers), pick(own)}
		default:
			phrase = []string{pick(own)}
		}
		if rng.Float64() < 0.25 {
			phrase = append(phrase, pick(spanFiller), pick(own))
		}
		phrase[len(phrase)-1] = punct(phrase[len(phrase)-1])
		at := rng.IntN(n + 1)
		toks = append(toks[:at], append(append([]string{}, phrase...), toks[at:]...)...)
		if rng.Float64() < 0.3 { // a word of the other polarity, not selected
			k := rng.IntN(len(toks))
			if k < at || k >= at+len(phrase) {
				toks[k] = pick(opposite)
			}
		}
		lo, hi := at, at+len(phrase)
		if rng.Float64() < 0.35 { // annotators often take a word or two around the phrase
			lo, hi = max(0, lo-rng.IntN(3)), min(len(toks), hi+rng.IntN(3))
		}
		sel := strings.Join(toks[lo:hi], " ")
		if rng.Float64() < 0.1 {
			sel = strings.Join(toks, " ")
		}
		text := strings.Join(toks, " ")
		if rng.Float64() < 0.2 {
			text = " " + text // Kaggle's texts often start with a space
		}
		return []string{id, text, sel, sent}
	}
	var trainRows, testRows [][]string
	for i := 0; i < nTrain; i++ {
		trainRows = append(trainRows, row())
	}
	trainRows[nTrain/2] = []string{"fdb77c3752", "", "", "neutral"} // Kaggle's tweet without text
	for i := 0; i < nTest; i++ {
		testRows = append(testRows, row())
	}
	header := []string{"textID", "text", "selected_text", "sentiment"}
	dirs := tasks.Dirs{Public: filepath.Join(dir, "public"), Private: filepath.Join(dir, "private")}
	var publicTest, sample [][]string
	for _, r := range testRows {
		publicTest = append(publicTest, []string{r[0], r[1], r[3]})
		sample = append(sample, []string{r[0], ""})
	}
	textPairWriteCSV(t, filepath.Join(dirs.Public, "train.csv"), header, trainRows)
	textPairWriteCSV(t, filepath.Join(dirs.Public, "test.csv"), []string{"textID", "text", "sentiment"}, publicTest)
	textPairWriteCSV(t, filepath.Join(dirs.Public, "sample_submission.csv"), []string{"textID", "selected_text"}, sample)
	textPairWriteCSV(t, filepath.Join(dirs.Private, "test.csv"), header, testRows)
	return dirs
}

func spanBase() map[string]string {
	return map[string]string{"imports": "full", "load": "input", "labels": "in-span", "features": "word-sentiment",
		"vectorizer": "dict", "model": "logreg", "strength": "s3", "decode": "best-window", "neutral": "whole",
		"validation": "holdout-jaccard", "submission": "frame"}
}

func spanWith(kv ...string) map[string]string { return override(spanBase(), kv...) }

// Programs of the span-extraction library on a synthetic tweet layout: a word classifier with
// sentiment-crossed and neighbour features, decoded as the best window, beats the whole-text
// baseline, and each failure mode fails where it should or writes an invalid submission.
func TestSpanExtractionPrograms(t *testing.T) {
	t.Parallel() // minutes of sandboxed Python: overlap with the other libraries' program tests
	testenv.RequirePython(t)
	spec, err := tasks.Builtin().Get("tweet-sentiment-extraction")
	if err != nil {
		t.Fatal(err)
	}
	dirs := spanData(t, t.TempDir(), 2000, 300)
	lib := codeactions.SpanExtraction
	t.Run("strong beats weak", func(t *testing.T) {
		checkStrongBeatsWeak(t, lib, spec, dirs, spanBase(),
			spanWith("decode", "whole", "validation", "none"), 0.8, 0.15)
	})
	checkPrograms(t, lib, spec, dirs, []programCase{
		{"wrong data path fails while loading", spanWith("load", "cwd"), false, 0, 1},
		{"the empty tweet crashes split without fillna", spanWith("load", "no-fillna"), false, 0, 2},
		{"a missing span column fails before the model", spanWith("labels", "wrong-column"), false, 0, 2},
		{"gaussian naive Bayes fails on sparse words at fit", spanWith("model", "gaussian-nb", "validation", "none"), false, 0, 3},
		{"a linear SVC has no probabilities for the training loss", spanWith("model", "linear-svc", "validation", "none"), false, 0, 4},
		{"squared error between texts fails at validation", spanWith("validation", "holdout-mse-text"), false, 0, 5},
		{"test vectorised on its own fails at prediction", spanWith("vectorizer", "refit-test", "validation", "holdout-words"), false, 0, 6},
		{"a hand-written CSV breaks on commas and quotes", spanWith("submission", "manual"), false, 0, 7},
		{"no id column is invalid", spanWith("submission", "no-id"), false, 0, 7},
	})
	// The sentiment word instead of the span: valid, and worse than the trivial baseline of
	// predicting the whole tweet (its Jaccard is graded here from the test's texts).
	t.Run("the sentiment instead of the span is valid and bad", func(t *testing.T) {
		whole := wholeTextJaccard(t, spec, dirs)
		if whole < 0.3 {
			t.Fatalf("the whole-text baseline scores %.5f: the synthetic data no longer has neutral tweets", whole)
		}
		checkValidWithin(t, lib, spec, dirs, spanWith("submission", "sentiment"), 7, 0, whole-0.1)
	})
}

// wholeTextJaccard grades the trivial baseline that predicts each test tweet's whole text.
func wholeTextJaccard(t *testing.T, spec *tasks.Spec, dirs tasks.Dirs) float64 {
	t.Helper()
	f, err := os.Open(filepath.Join(dirs.Public, spec.Files.Test))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sub := [][]string{{"textID", "selected_text"}}
	for _, r := range rows[1:] {
		sub = append(sub, []string{r[0], r[1]})
	}
	path := filepath.Join(t.TempDir(), "submission.csv")
	textPairWriteCSV(t, path, sub[0], sub[1:])
	g, err := grading.Grade(spec, path, filepath.Join(dirs.Private, spec.Files.Answers))
	if err != nil || !g.Valid {
		t.Fatalf("the whole-text baseline: %v %+v", err, g)
	}
	return *g.Score
}

// On the synthetic tweets with some sentiments (train and test) and test texts missing: a
// missing sentiment or text is read as empty, so the strong program and the ranker stay valid
// and score as the strong program must on the clean layout.
func TestSpanExtractionProgramsOnMissingValues(t *testing.T) {
	t.Parallel()
	testenv.RequirePython(t)
	spec, err := tasks.Builtin().Get("tweet-sentiment-extraction")
	if err != nil {
		t.Fatal(err)
	}
	dirs := spanData(t, t.TempDir(), 1500, 300)
	blankCells(t, filepath.Join(dirs.Public, "train.csv"), 3, 37) // sentiment
	blankCells(t, filepath.Join(dirs.Public, "test.csv"), 2, 41)  // sentiment
	blankCells(t, filepath.Join(dirs.Public, "test.csv"), 1, 43)  // text
	checkPrograms(t, codeactions.SpanExtraction, spec, dirs, []programCase{
		{"the strong program", spanBase(), true, 0.8, 7},
		{"the ranker", spanWith("decode", "ranker", "strength", "s1"), true, 0.8, 7},
	})
}
