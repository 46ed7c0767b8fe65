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
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// textPairTopics are the phrase vocabularies of eight patent sections.
var textPairTopics = map[byte][]string{
	'A': strings.Fields("food shoe chair table bed garment medicine tooth brush bottle spoon cup glove cap seat pillow drug tablet capsule cream towel basket kitchen oven"),
	'B': strings.Fields("vehicle wheel brake axle press cutter blade conveyor roller wagon trailer hook crane lever clamp gear belt pulley spring frame tire chassis rail cart"),
	'C': strings.Fields("polymer resin acid catalyst solvent crystal alloy oxide salt ester fiber coating film glass cement ceramic enzyme protein sugar ink dye wax foam gel"),
	'D': strings.Fields("yarn thread fabric weave knit paper pulp cloth loom needle felt cord rope sheet carton label stitch seam twine mesh cotton silk wool linen"),
	'E': strings.Fields("wall roof door window brick beam column floor stair tunnel bridge pipe drain lock hinge panel tile fence gate shaft well anchor bolt plank"),
	'F': strings.Fields("engine pump valve piston turbine bearing cylinder nozzle boiler burner heater cooler fan duct motor seal coupling joint flange chamber compressor lamp weapon barrel"),
	'G': strings.Fields("sensor lens mirror laser signal clock meter display camera detector scanner circuit memory processor image screen probe gauge optic filter pixel computer printer monitor"),
	'H': strings.Fields("battery cable wire switch antenna transistor diode capacitor resistor magnet coil plug socket charger electrode terminal voltage current transmitter receiver amplifier inductor cell fuse"),
}

var textPairModifiers = strings.Fields("rotating flexible rigid hollow thin thick electric automatic portable adjustable heated cooled coated sealed movable fixed upper lower inner outer main auxiliary digital optical")

// textPairContexts are the CPC classes of each section; F41 is rare and only ever in train, as
// rare classes are in the real split.
var textPairContexts = map[byte][]string{
	'A': {"A01", "A47", "A61"}, 'B': {"B60", "B65", "B23"}, 'C': {"C08", "C07", "C12"}, 'D': {"D01", "D21", "D06"},
	'E': {"E04", "E05", "E21"}, 'F': {"F16", "F02", "F24"}, 'G': {"G01", "G06", "G02"}, 'H': {"H01", "H04", "H02"},
}

// textPairData writes a synthetic prepared layout for us-patent-phrase-to-phrase-matching in
// dir: public train/test/sample and private answers in the preparer's columns. The score
// follows from how the target was made from the anchor (same words, a shared head word, one
// shared word, same topic, another topic), shifted up or down by the context's section, with
// some label noise; character variants (plurals) reward character n-grams.
func textPairData(t *testing.T, dir string, nTrain, nTest int) tasks.Dirs {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 11))
	pick := func(ws []string) string { return ws[rng.IntN(len(ws))] }
	variant := func(w string) string {
		if rng.Float64() < 0.5 {
			return w
		}
		if strings.HasSuffix(w, "s") || strings.HasSuffix(w, "h") || strings.HasSuffix(w, "x") {
			return w + "es"
		}
		return w + "s"
	}
	sections := []byte("ABCDEFGH")
	other := func(s byte) byte {
		for {
			if o := sections[rng.IntN(len(sections))]; o != s {
				return o
			}
		}
	}
	fresh := func(ws []string, avoid []string) string {
		for {
			w := pick(ws)
			ok := true
			for _, a := range avoid {
				if strings.TrimSuffix(strings.TrimSuffix(a, "es"), "s") == strings.TrimSuffix(strings.TrimSuffix(w, "es"), "s") || a == w {
					ok = false
				}
			}
			if ok {
				return w
			}
		}
	}
	row := func(i int, test bool) []string {
		sec := sections[rng.IntN(len(sections))]
		ctx := pick(textPairContexts[sec])
		if !test && i%400 == 3 {
			sec, ctx = 'F', "F41"
		}
		topic := sec
		if rng.Float64() < 0.2 {
			topic = other(sec)
		}
		nouns := textPairTopics[topic]
		// anchor: [modifier] noun [noun]
		var anchor []string
		if rng.Float64() < 0.6 {
			anchor = append(anchor, pick(textPairModifiers))
		}
		anchor = append(anchor, pick(nouns))
		if len(anchor) == 1 || rng.Float64() < 0.3 {
			anchor = append(anchor, fresh(nouns, anchor))
		}
		head := anchor[len(anchor)-1]
		var target []string
		var score float64
		switch u := rng.Float64(); {
		case u < 0.08: // the same words, varied
			score = 1
			for _, w := range anchor {
				target = append(target, variant(w))
			}
			if len(target) == 2 && rng.Float64() < 0.3 {
				target[0], target[1] = target[1], target[0]
			}
		case u < 0.28: // the head noun kept, the rest changed
			score = 0.75
			if rng.Float64() < 0.5 {
				target = append(target, pick(textPairModifiers))
			}
			target = append(target, variant(head))
		case u < 0.6: // one word kept, new nouns
			score = 0.5
			keep := anchor[rng.IntN(len(anchor))]
			target = []string{keep, fresh(nouns, anchor)}
			if rng.Float64() < 0.5 {
				target[0], target[1] = target[1], target[0]
			}
		case u < 0.88: // the same topic, no shared word
			score = 0.25
			target = []string{fresh(nouns, anchor)}
			if rng.Float64() < 0.5 {
				target = append([]string{fresh(textPairModifiers, anchor)}, target...)
			}
		default: // another topic
			target = []string{fresh(textPairTopics[other(topic)], anchor)}
		}
		switch sec {
		case 'D', 'E':
			if rng.Float64() < 0.5 {
				score += 0.25
			}
		case 'F', 'G', 'H':
			if rng.Float64() < 0.4 {
				score -= 0.25
			}
		}
		if rng.Float64() < 0.1 {
			score += 0.25 * float64(2*rng.IntN(2)-1)
		}
		score = min(1, max(0, score))
		id := fmt.Sprintf("%016x", rng.Uint64())
		return []string{id, strings.Join(anchor, " "), strings.Join(target, " "), ctx, fmt.Sprint(score)}
	}
	header := []string{"id", "anchor", "target", "context", "score"}
	var trainRows, testRows [][]string
	for i := 0; i < nTrain; i++ {
		trainRows = append(trainRows, row(i, false))
	}
	for i := 0; i < nTest; i++ {
		testRows = append(testRows, row(i, true))
	}
	dirs := tasks.Dirs{Public: filepath.Join(dir, "public"), Private: filepath.Join(dir, "private")}
	var publicTest, sample [][]string
	for _, r := range testRows {
		publicTest = append(publicTest, r[:4])
		sample = append(sample, []string{r[0], "0"})
	}
	textPairWriteCSV(t, filepath.Join(dirs.Public, "train.csv"), header, trainRows)
	textPairWriteCSV(t, filepath.Join(dirs.Public, "test.csv"), header[:4], publicTest)
	textPairWriteCSV(t, filepath.Join(dirs.Public, "sample_submission.csv"), []string{"id", "score"}, sample)
	textPairWriteCSV(t, filepath.Join(dirs.Private, "test.csv"), header, testRows)
	return dirs
}

// textPairWriteCSV writes a header and rows as pandas would (quoting only where needed).
func textPairWriteCSV(t *testing.T, path string, header []string, rows [][]string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	cw := csv.NewWriter(f)
	cw.Write(header)
	cw.WriteAll(rows)
	if err := cw.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func textPairBase() map[string]string {
	return map[string]string{"imports": "full", "load": "input", "preprocess": "stem", "context": "section",
		"features": "all", "target": "score", "model": "xgboost", "strength": "s2", "validation": "holdout",
		"postprocess": "clip", "submission": "frame"}
}

func textPairWith(kv ...string) map[string]string { return override(textPairBase(), kv...) }

// Programs of the text-pair library on a synthetic patent layout: boosting on many pair
// features and the context beats a linear fit on one cosine, and each failure mode fails where
// it should (the markers it reaches) or writes an invalid submission.
func TestTextPairPrograms(t *testing.T) {
	t.Parallel() // minutes of sandboxed Python: overlap with the other libraries' program tests
	testenv.RequirePython(t)
	spec, err := tasks.Builtin().Get("us-patent-phrase-to-phrase-matching")
	if err != nil {
		t.Fatal(err)
	}
	dirs := textPairData(t, t.TempDir(), 1500, 300)
	lib := codeactions.TextPair
	t.Run("strong beats weak", func(t *testing.T) {
		checkStrongBeatsWeak(t, lib, spec, dirs, textPairBase(),
			textPairWith("preprocess", "none", "context", "none", "features", "word-cosine",
				"model", "linear", "validation", "none", "postprocess", "none"), 0.8, 0.1)
	})
	checkPrograms(t, lib, spec, dirs, []programCase{
		{"nltk is not installed", textPairWith("preprocess", "nltk"), false, 0, 0},
		{"wrong data path fails while loading", textPairWith("load", "cwd"), false, 0, 1},
		{"a missing target column fails before the model", textPairWith("target", "wrong-column"), false, 0, 2},
		{"raw phrases fail at fit", textPairWith("features", "raw-text"), false, 0, 3},
		{"squared log error of a logit target fails at the training loss", textPairWith("target", "logit", "validation", "holdout-msle"), false, 0, 4},
		{"the square root of negative predictions is NaN: invalid", textPairWith("target", "square", "model", "linear", "postprocess", "none"), false, 0, 7},
		{"a removed scorer name fails at cross-validation", textPairWith("validation", "cv-old-scoring"), false, 0, 5},
		{"separate get_dummies fail at prediction", textPairWith("context", "onehot-separate"), false, 0, 6},
		{"dense-only boosting fails on sparse n-grams", textPairWith("features", "tfidf-product", "model", "hist-gbm"), false, 0, 3},
		{"a constant prediction is invalid", textPairWith("model", "mean"), false, 0, 7},
		{"no id column is invalid", textPairWith("submission", "no-id"), false, 0, 7},
		{"the id as index fails at the submission", textPairWith("load", "index-col"), false, 0, 7},
		{"sparse shared n-grams with ridge", textPairWith("features", "tfidf-product", "context", "onehot", "model", "ridge", "strength", "s1"), true, 0.6, 7},
	})
}

// blankCells empties column col of every n-th data row of a CSV file (pandas reads an empty
// cell as a missing value).
func blankCells(t *testing.T, path string, col, n int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(rows); i++ {
		if i%n == 0 {
			rows[i][col] = ""
		}
	}
	textPairWriteCSV(t, path, rows[0], rows[1:])
}

// On the synthetic patent layout with missing contexts, phrases and training scores: the
// programs drop the unscored pairs and read a missing phrase or context as empty, for every
// encoding of the context.
func TestTextPairProgramsOnMissingValues(t *testing.T) {
	t.Parallel()
	testenv.RequirePython(t)
	spec, err := tasks.Builtin().Get("us-patent-phrase-to-phrase-matching")
	if err != nil {
		t.Fatal(err)
	}
	dirs := textPairData(t, t.TempDir(), 1200, 300)
	for _, f := range []string{"train.csv", "test.csv"} {
		path := filepath.Join(dirs.Public, f)
		blankCells(t, path, 3, 23) // context
		blankCells(t, path, 2, 31) // target phrase
	}
	blankCells(t, filepath.Join(dirs.Public, "train.csv"), 4, 29) // score
	checkPrograms(t, codeactions.TextPair, spec, dirs, []programCase{
		{"the strong program, the context's section", textPairBase(), true, 0.8, 7},
		{"the context one-hot, ridge", textPairWith("context", "onehot", "model", "ridge", "strength", "s1"), true, 0.6, 7},
		{"the context as text", textPairWith("context", "as-text"), true, 0.75, 7},
	})
}
