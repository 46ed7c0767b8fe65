package tasks_test

import (
	"archive/zip"
	"context"
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// The raw Kaggle files of these eight tasks are not here, so their preparers are run on small,
// deterministic raw folders shaped like Kaggle's (same file names and columns) and the structure
// of what they write is checked against what MLE-bench's preparers write.

// synthTask is one task's synthetic raw folder and what MLE-bench's preparer makes of it.
type synthTask struct {
	id       string
	rows     int                         // rows of the synthetic raw train.csv
	testRows int                         // rows MLE-bench's rule moves to the test
	header   []string                    // Kaggle's train.csv columns
	row      func(i int) []string        // row i of the raw train (rows past `rows` feed Kaggle's test.csv)
	testDrop []string                    // train columns Kaggle's test.csv lacks
	classes  []string                    // one-hot answers: the class columns
	public   []string                    // files MLE-bench writes (the names in checksums.yaml)
	private  []string                    // and the private ones
	sample   string                      // the sample submission header the grader expects
	renamed  bool                        // the split renames the ids
	extra    func(*testing.T, *synthRun) // task-specific checks
}

// synthRun is one prepared synthetic task.
type synthRun struct {
	spec                         *tasks.Spec
	raw                          string
	full, val                    tasks.Dirs
	rawTrain                     *table
	train, test, answers, sample *table
}

// table is a CSV file read as strings.
type table struct {
	header []string
	rows   [][]string
}

func (tb *table) col(t *testing.T, name string) []string {
	t.Helper()
	j := slices.Index(tb.header, name)
	if j < 0 {
		t.Fatalf("no column %q in %v", name, tb.header)
	}
	out := make([]string, len(tb.rows))
	for i, r := range tb.rows {
		out[i] = r[j]
	}
	return out
}

// byKey maps the value of column key to its row.
func (tb *table) byKey(t *testing.T, key string) map[string][]string {
	t.Helper()
	j := slices.Index(tb.header, key)
	if j < 0 {
		t.Fatalf("no column %q in %v", key, tb.header)
	}
	m := map[string][]string{}
	for _, r := range tb.rows {
		m[r[j]] = r
	}
	return m
}

func readTable(t *testing.T, file string) *table {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	if len(all) == 0 {
		t.Fatalf("%s is empty", file)
	}
	return &table{header: all[0], rows: all[1:]}
}

func writeTable(t *testing.T, file string, header []string, rows [][]string) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(rows)
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// mix is a deterministic hash of i, for values that look random.
func mix(i, salt int) uint64 {
	x := uint64(i)*0x9E3779B97F4A7C15 + uint64(salt)*0xBF58476D1CE4E5B9
	x ^= x >> 31
	x *= 0x94D049BB133111EB
	return x ^ x>>29
}

func pick(i, salt int, from ...string) string { return from[mix(i, salt)%uint64(len(from))] }

func oneHot(k, n int) []string {
	out := make([]string, n)
	for j := range out {
		out[j] = "0"
		if j == k {
			out[j] = "1"
		}
	}
	return out
}

// Awkward text: a comma, quotes and a line break, which the CSV writer must quote.
var phrases = []string{"plain words", "a comma, here", `she said "no"`, "two\nlines", "ends with space "}

const kaggleTestRows = 5

var synthTasks = []synthTask{
	{
		id: "spooky-author-identification", rows: 37, testRows: 4,
		header: []string{"id", "text", "author"},
		row: func(i int) []string {
			return []string{fmt.Sprintf("id%05d", (i*7919+12345)%100000), fmt.Sprintf("Sentence %d: %s.", i, pick(i, 2, phrases...)), pick(i, 3, "EAP", "HPL", "MWS")}
		},
		testDrop: []string{"author"}, classes: []string{"EAP", "HPL", "MWS"},
		public:  []string{"train.csv", "test.csv", "sample_submission.csv"},
		private: []string{"test.csv"},
		sample:  "id,EAP,HPL,MWS",
		extra: func(t *testing.T, r *synthRun) {
			authors := r.rawTrain.byKey(t, "id")
			for _, row := range r.answers.rows {
				want := oneHot(slices.Index([]string{"EAP", "HPL", "MWS"}, authors[row[0]][2]), 3)
				if !slices.Equal(row[1:], want) {
					t.Errorf("answers row %v: the author of %s is %s", row, row[0], authors[row[0]][2])
				}
			}
			for _, row := range r.sample.rows {
				if !slices.Equal(row[1:], []string{"0.403493538995863", "0.287808366106543", "0.308698094897594"}) {
					t.Fatalf("sample submission row %v: want Kaggle's constant probabilities", row)
				}
			}
		},
	},
	{
		id: "tweet-sentiment-extraction", rows: 40, testRows: 4,
		header: []string{"textID", "text", "selected_text", "sentiment"},
		row: func(i int) []string {
			text, sel, sentiment := fmt.Sprintf("tweet %d %s", i, pick(i, 2, phrases...)), fmt.Sprintf("tweet %d", i), pick(i, 3, "neutral", "negative", "positive")
			switch i {
			case 5: // Kaggle's train has one tweet without text
				text, sel, sentiment = "", "", "neutral"
			case 11: // pandas >= 2 (MLE-bench's) reads a bare None as missing
				text, sel, sentiment = "None", "None", "negative"
			}
			return []string{fmt.Sprintf("%010x", mix(i, 1)>>24), text, sel, sentiment}
		},
		testDrop: []string{"selected_text"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"test.csv"},
		sample:   "textID,selected_text",
		extra: func(t *testing.T, r *synthRun) {
			none := r.rawTrain.rows[11][0]
			for _, tb := range []*table{r.train, r.test} {
				if row, ok := tb.byKey(t, "textID")[none]; ok && row[1] != "" {
					t.Errorf("the raw text None must be written as an empty field, as pandas >= 2 does: %q", row)
				}
			}
			raw := r.rawTrain.byKey(t, "textID")
			for _, row := range r.answers.rows {
				if want := raw[row[0]][2]; row[2] != want && want != "None" {
					t.Errorf("answers selected_text of %s: %q, the raw train has %q", row[0], row[2], want)
				}
			}
			for _, v := range r.sample.col(t, "selected_text") {
				if v != "" {
					t.Fatalf("sample submission selected_text %q, want empty", v)
				}
			}
		},
	},
	{
		id: "us-patent-phrase-to-phrase-matching", rows: 36, testRows: 4,
		header: []string{"id", "anchor", "target", "context", "score"},
		row: func(i int) []string {
			return []string{fmt.Sprintf("%016x", mix(i, 1)), pick(i, 2, "abatement", "acid absorption", "wood, article"), fmt.Sprintf("target phrase %d", i),
				pick(i, 3, "A47", "B60", "C07", "G06", "H04"), pick(i, 4, "0.0", "0.25", "0.5", "0.75", "1.0")}
		},
		testDrop: []string{"score"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"test.csv"},
		sample:   "id,score",
		extra: func(t *testing.T, r *synthRun) {
			for _, v := range r.sample.col(t, "score") {
				if v != "0" {
					t.Fatalf("sample submission score %q, want 0", v)
				}
			}
		},
	},
	{
		id: "learning-agency-lab-automated-essay-scoring-2", rows: 33, testRows: 4,
		header: []string{"essay_id", "full_text", "score"},
		row: func(i int) []string {
			return []string{fmt.Sprintf("%07x", mix(i, 1)>>36), fmt.Sprintf("Essay %d.\n\nIt says: %s", i, pick(i, 2, phrases...)), strconv.Itoa(1 + int(mix(i, 3)%6))}
		},
		testDrop: []string{"score"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"answers.csv"},
		sample:   "essay_id,score",
		extra: func(t *testing.T, r *synthRun) {
			if got := strings.Join(r.test.header, ","); got != "essay_id,full_text" {
				t.Errorf("public test header %q, MLE-bench's is essay_id,full_text", got)
			}
			for _, v := range r.sample.col(t, "score") {
				if n, err := strconv.Atoi(v); err != nil || n < 1 || n > 6 {
					t.Fatalf("sample submission score %q, want an integer from 1 to 6", v)
				}
			}
		},
	},
	{
		id: "lmsys-chatbot-arena", rows: 42, testRows: 5,
		header: []string{"id", "model_a", "model_b", "prompt", "response_a", "response_b", "winner_model_a", "winner_model_b", "winner_tie"},
		row: func(i int) []string {
			return append([]string{strconv.Itoa(30192 + 104729*i), pick(i, 2, "gpt-4-1106-preview", "claude-2.1", "llama-2-70b-chat"), pick(i, 3, "gpt-3.5-turbo-0613", "mistral-medium"),
				fmt.Sprintf(`["Question %d, %s"]`, i, pick(i, 4, phrases...)), fmt.Sprintf(`["Answer A to %d"]`, i), fmt.Sprintf(`["Answer B to %d"]`, i)},
				oneHot(int(mix(i, 5)%3), 3)...)
		},
		testDrop: []string{"model_a", "model_b", "winner_model_a", "winner_model_b", "winner_tie"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"answers.csv"},
		sample:   "id,winner_model_a,winner_model_b,winner_tie",
		extra: func(t *testing.T, r *synthRun) {
			if got := strings.Join(r.test.header, ","); got != "id,prompt,response_a,response_b" {
				t.Errorf("public test header %q, MLE-bench's is id,prompt,response_a,response_b", got)
			}
			for _, row := range r.sample.rows {
				if !slices.Equal(row[1:], []string{"0.3333333333333333", "0.3333333333333333", "0.3333333333333333"}) {
					t.Fatalf("sample submission row %v, want 1/3 each", row)
				}
			}
		},
	},
	{
		// MLE-bench keeps 100,000 of Kaggle's 900,000 rows as the test: a share of 1/9.
		id: "tabular-playground-series-may-2022", rows: 45, testRows: 5,
		header: mayHeader(),
		row: func(i int) []string {
			out := []string{strconv.Itoa(i)}
			for j := 0; j <= 30; j++ {
				switch {
				case j == 27: // a unique string of 10 letters, as Kaggle's f_27
					s := make([]byte, 10)
					for k, v := 0, i; k < 10; k, v = k+1, v/20 {
						s[9-k] = byte('A' + (v+7*k)%20)
					}
					out = append(out, string(s))
				case (j >= 7 && j <= 18) || j >= 29:
					out = append(out, strconv.Itoa(int(mix(i, j)%12)))
				default: // never integral nor tiny, so pandas writes it back as written
					k := 501 + int(mix(i, j)%2998)
					if k%1000 == 0 {
						k++
					}
					if mix(i, j+50)%2 == 0 {
						k = -k
					}
					out = append(out, strconv.FormatFloat(float64(k)/1000, 'f', -1, 64))
				}
			}
			return append(out, strconv.Itoa(int(mix(i, 99)%2)))
		},
		testDrop: []string{"target"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"test.csv", "gold_submission.csv"},
		sample:   "id,target",
		renamed:  true,
		extra: func(t *testing.T, r *synthRun) {
			nTrain := len(r.train.rows)
			for i, id := range r.train.col(t, "id") {
				if id != strconv.Itoa(i) {
					t.Fatalf("public train id %s at row %d: MLE-bench renumbers the train 0, 1, ...", id, i)
				}
			}
			for i, id := range r.test.col(t, "id") {
				if id != strconv.Itoa(nTrain+i) {
					t.Fatalf("public test id %s at row %d: MLE-bench numbers the test on from the train (%d, ...)", id, i, nTrain)
				}
			}
			// Each renumbered row is its raw row (found by the unique f_27) but for the id.
			raw, f27 := r.rawTrain.byKey(t, "f_27"), slices.Index(r.rawTrain.header, "f_27")
			for _, tb := range []*table{r.train, r.answers} {
				for _, row := range tb.rows {
					if want := raw[row[f27]]; !slices.Equal(row[1:], want[1:]) {
						t.Fatalf("row %v is not raw row %v with a new id", row[:3], want[:3])
					}
				}
			}
			gold := readTable(t, filepath.Join(r.full.Private, "gold_submission.csv"))
			if strings.Join(gold.header, ",") != "id,target" || !slices.Equal(gold.col(t, "id"), r.answers.col(t, "id")) || !slices.Equal(gold.col(t, "target"), r.answers.col(t, "target")) {
				t.Errorf("gold_submission.csv must be the private test's id and target")
			}
			for _, v := range r.sample.col(t, "target") {
				if v != "0.5" {
					t.Fatalf("sample submission target %q, want 0.5", v)
				}
			}
		},
	},
	{
		id: "tabular-playground-series-dec-2021", rows: 40, testRows: 4,
		header: decHeader(),
		row: func(i int) []string {
			out := []string{strconv.Itoa((7919*i + 101) % 4000000), strconv.Itoa(2000 + 17*i)}
			for j := 2; j < 11; j++ {
				out = append(out, strconv.Itoa(int(mix(i, j)%400)-50))
			}
			out = append(out, oneHot(int(mix(i, 10)%4), 4)...)
			out = append(out, oneHot(int(mix(i, 11)%40), 40)...)
			return append(out, strconv.Itoa(1+int(mix(i, 12)%7)))
		},
		testDrop: []string{"Cover_Type"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"test.csv"},
		sample:   "Id,Cover_Type",
		extra: func(t *testing.T, r *synthRun) {
			for _, v := range r.sample.col(t, "Cover_Type") {
				if v != "2" {
					t.Fatalf("sample submission Cover_Type %q, want 2", v)
				}
			}
		},
	},
	{
		id: "plant-pathology-2020-fgvc7", rows: 30, testRows: 3,
		header: []string{"image_id", "healthy", "multiple_diseases", "rust", "scab"},
		row: func(i int) []string {
			return append([]string{fmt.Sprintf("Train_%d", i)}, oneHot(int(mix(i, 1)%4), 4)...)
		},
		testDrop: []string{"healthy", "multiple_diseases", "rust", "scab"},
		public:   []string{"train.csv", "test.csv", "sample_submission.csv"},
		private:  []string{"test.csv"},
		sample:   "image_id,healthy,multiple_diseases,rust,scab",
		renamed:  true,
		extra:    checkPlantImages,
	},
}

func mayHeader() []string {
	h := []string{"id"}
	for j := 0; j <= 30; j++ {
		h = append(h, fmt.Sprintf("f_%02d", j))
	}
	return append(h, "target")
}

func decHeader() []string {
	h := []string{"Id", "Elevation", "Aspect", "Slope", "Horizontal_Distance_To_Hydrology", "Vertical_Distance_To_Hydrology",
		"Horizontal_Distance_To_Roadways", "Hillshade_9am", "Hillshade_Noon", "Hillshade_3pm", "Horizontal_Distance_To_Fire_Points"}
	for j := 1; j <= 4; j++ {
		h = append(h, fmt.Sprintf("Wilderness_Area%d", j))
	}
	for j := 1; j <= 40; j++ {
		h = append(h, fmt.Sprintf("Soil_Type%d", j))
	}
	return append(h, "Cover_Type")
}

// plantImage is the synthetic content of a raw image: it names the image, so a copy can be traced.
func plantImage(id string) []byte { return []byte("synthetic jpeg of " + id) }

// checkPlantImages: public/images holds one image per raw train row, renamed with its row (the
// new train's Train_i, the new test's Test_i), and none of Kaggle's unlabelled test images.
func checkPlantImages(t *testing.T, r *synthRun) {
	entries, err := os.ReadDir(filepath.Join(r.full.Public, "images"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(r.rawTrain.rows) {
		t.Fatalf("public/images holds %d files, want one per raw train row (%d)", len(entries), len(r.rawTrain.rows))
	}
	raw := r.rawTrain.byKey(t, "image_id")
	for prefix, tb := range map[string]*table{"Train_": r.train, "Test_": r.answers} {
		for i, row := range tb.rows {
			if want := fmt.Sprintf("%s%d", prefix, i); row[0] != want {
				t.Fatalf("row %d is named %s, MLE-bench names it %s", i, row[0], want)
			}
			b, err := os.ReadFile(filepath.Join(r.full.Public, "images", row[0]+".jpg"))
			if err != nil {
				t.Fatal(err)
			}
			old := strings.TrimPrefix(string(b), "synthetic jpeg of ")
			if !slices.Equal(row[1:], raw[old][1:]) {
				t.Errorf("images/%s.jpg is raw %s, whose labels %v differ from the row's %v", row[0], old, raw[old][1:], row[1:])
			}
		}
	}
	for _, e := range entries {
		if b, _ := os.ReadFile(filepath.Join(r.full.Public, "images", e.Name())); strings.Contains(string(b), "Test_") {
			t.Errorf("images/%s is one of Kaggle's unlabelled test images", e.Name())
		}
	}
}

// writeSynthRaw writes a raw folder like Kaggle's: train.csv, test.csv (more rows, without the
// labels), sample_submission.csv and, for plant-pathology, images/ with train and test images.
func writeSynthRaw(t *testing.T, c synthTask) string {
	t.Helper()
	dir := t.TempDir()
	var train, test, sample [][]string
	keep := []int{}
	for j, h := range c.header {
		if !slices.Contains(c.testDrop, h) {
			keep = append(keep, j)
		}
	}
	sampleHeader := strings.Split(c.sample, ",")
	for i := 0; i < c.rows+kaggleTestRows; i++ {
		r := c.row(i)
		if len(r) != len(c.header) {
			t.Fatalf("%s: synthetic row has %d fields, header %d", c.id, len(r), len(c.header))
		}
		if i < c.rows {
			train = append(train, r)
			continue
		}
		if c.id == "plant-pathology-2020-fgvc7" {
			r[0] = fmt.Sprintf("Test_%d", i-c.rows)
		}
		tr := []string{}
		for _, j := range keep {
			tr = append(tr, r[j])
		}
		test = append(test, tr)
		sample = append(sample, append([]string{r[0]}, slices.Repeat([]string{"0"}, len(sampleHeader)-1)...))
	}
	writeTable(t, filepath.Join(dir, "train.csv"), c.header, train)
	testHeader := []string{}
	for _, j := range keep {
		testHeader = append(testHeader, c.header[j])
	}
	writeTable(t, filepath.Join(dir, "test.csv"), testHeader, test)
	writeTable(t, filepath.Join(dir, "sample_submission.csv"), sampleHeader, sample)
	if c.id == "plant-pathology-2020-fgvc7" {
		os.Mkdir(filepath.Join(dir, "images"), 0o755)
		for _, r := range append(train, test...) {
			if err := os.WriteFile(filepath.Join(dir, "images", r[0]+".jpg"), plantImage(r[0]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func prepareSynth(t *testing.T, c synthTask, raw string) *synthRun {
	t.Helper()
	spec, err := tasks.Builtin().Get(c.id)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: dataDir}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), spec, raw); err != nil {
		t.Fatal(err)
	}
	l := tasks.Layout{DataDir: dataDir}
	if err := l.CheckPrepared(spec); err != nil {
		t.Fatal(err)
	}
	r := &synthRun{spec: spec, raw: raw, full: l.Dirs(c.id, tasks.SplitTest), val: l.Dirs(c.id, tasks.SplitValidation)}
	r.rawTrain = readTable(t, filepath.Join(raw, "train.csv"))
	r.train = readTable(t, filepath.Join(r.full.Public, spec.Files.Train))
	r.test = readTable(t, filepath.Join(r.full.Public, spec.Files.Test))
	r.answers = readTable(t, filepath.Join(r.full.Private, spec.Files.Answers))
	r.sample = readTable(t, filepath.Join(r.full.Public, spec.Files.SampleSubmission))
	return r
}

// checksumNames checks the table's file names against shared/'s checksums.yaml (skipping loudly
// without ../shared, failing under CI=true).
func checksumNames(t *testing.T, c synthTask) {
	t.Helper()
	file := filepath.Join(testenv.SharedDir(t, "mlebench"), c.id, "checksums.yaml")
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("no %s to check the file names against: %v", file, err)
	}
	var sums struct {
		Public  map[string]string `yaml:"public"`
		Private map[string]string `yaml:"private"`
	}
	if err := yaml.Unmarshal(b, &sums); err != nil {
		t.Fatal(err)
	}
	for _, side := range []struct {
		name string
		got  map[string]string
		want []string
	}{{"public", sums.Public, c.public}, {"private", sums.Private, c.private}} {
		names := []string{}
		for n := range side.got {
			names = append(names, n)
		}
		slices.Sort(names)
		want := slices.Sorted(slices.Values(side.want))
		if !slices.Equal(names, want) {
			t.Errorf("checksums.yaml names %s files %v, the test expects %v", side.name, names, want)
		}
	}
}

func TestSyntheticPreparersFollowMLEBench(t *testing.T) {
	testenv.RequirePython(t)
	for _, c := range synthTasks {
		t.Run(c.id, func(t *testing.T) {
			t.Parallel()
			// Its own subtest: without ../shared it skips (fails under CI=true), the rest still runs.
			t.Run("file names as in checksums.yaml", func(t *testing.T) { checksumNames(t, c) })
			r := prepareSynth(t, c, writeSynthRaw(t, c))
			spec := r.spec

			// Every file MLE-bench writes exists.
			for dir, names := range map[string][]string{r.full.Public: c.public, r.full.Private: c.private} {
				for _, n := range names {
					if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
						t.Errorf("MLE-bench writes %s/%s: %v", filepath.Base(dir), n, err)
					}
				}
			}

			// Rows follow the split rule, which the spec's test_size states.
			if want := int(math.Ceil(spec.Split.TestSize * float64(c.rows))); want != c.testRows {
				t.Errorf("the spec's test_size %v gives %d test rows of %d, MLE-bench's rule %d", spec.Split.TestSize, want, c.rows, c.testRows)
			}
			for name, got := range map[string]int{"public test": len(r.test.rows), "private answers": len(r.answers.rows), "sample submission": len(r.sample.rows)} {
				if got != c.testRows {
					t.Errorf("%s has %d rows, want %d", name, got, c.testRows)
				}
			}
			if len(r.train.rows) != c.rows-c.testRows {
				t.Errorf("public train has %d rows, want %d - %d", len(r.train.rows), c.rows, c.testRows)
			}

			// The answers hold the id and the answer columns; the public test has neither labels nor answers.
			answerCols := spec.Answers.Columns
			if spec.Answers.Format == "one-hot" {
				answerCols = c.classes
			}
			for _, col := range append([]string{spec.IDColumn}, answerCols...) {
				if !slices.Contains(r.answers.header, col) {
					t.Errorf("answers header %v lacks %q", r.answers.header, col)
				}
			}
			for _, col := range append(slices.Clone(spec.TargetColumns), answerCols...) {
				if slices.Contains(r.test.header, col) {
					t.Errorf("public test header %v has the answer column %q", r.test.header, col)
				}
			}
			if !slices.Equal(r.train.header, c.header) {
				t.Errorf("public train header %v, want the raw train's %v", r.train.header, c.header)
			}
			if got := strings.Join(r.sample.header, ","); got != c.sample {
				t.Errorf("sample submission header %q, the grader expects %q", got, c.sample)
			}

			// The answers, public test and sample submission list the same ids in the same order;
			// none is a train id, and no public test row is a train row.
			ids := r.test.col(t, spec.IDColumn)
			if !slices.Equal(r.answers.col(t, spec.IDColumn), ids) || !slices.Equal(r.sample.col(t, spec.IDColumn), ids) {
				t.Errorf("the answers, public test and sample submission must list the same ids in order")
			}
			trainIDs := r.train.byKey(t, spec.IDColumn)
			for _, id := range ids {
				if _, ok := trainIDs[id]; ok {
					t.Errorf("test id %s is also a train id", id)
				}
			}
			if !c.renamed {
				all := append(r.train.col(t, spec.IDColumn), ids...)
				slices.Sort(all)
				rawIDs := r.rawTrain.col(t, spec.IDColumn)
				slices.Sort(rawIDs)
				if !slices.Equal(all, rawIDs) {
					t.Errorf("the train and test ids are not a partition of the raw train's")
				}
			}
			project := func(tb *table, cols []string) map[string]bool {
				out := map[string]bool{}
				for _, row := range tb.rows {
					key := []string{}
					for _, col := range cols {
						key = append(key, row[slices.Index(tb.header, col)])
					}
					out[strings.Join(key, "\x00")] = true
				}
				return out
			}
			if content := slices.DeleteFunc(slices.Clone(r.test.header), func(s string) bool { return s == spec.IDColumn }); len(content) > 0 {
				inTrain := project(r.train, content)
				for row := range project(r.test, content) {
					if inTrain[row] {
						t.Errorf("public test row %q is also in the public train", row)
					}
				}
			}

			// The validation carve-out: a share of the public train with the real files' columns.
			vtrain, vtest := readTable(t, filepath.Join(r.val.Public, spec.Files.Train)), readTable(t, filepath.Join(r.val.Public, spec.Files.Test))
			vans, vsample := readTable(t, filepath.Join(r.val.Private, spec.Files.Answers)), readTable(t, filepath.Join(r.val.Public, spec.Files.SampleSubmission))
			k := int(math.Ceil(spec.Validation.Fraction * float64(len(r.train.rows))))
			if len(vtest.rows) != k || len(vans.rows) != k || len(vsample.rows) != k || len(vtrain.rows) != len(r.train.rows)-k {
				t.Errorf("validation rows: train %d, test %d, answers %d, sample %d; want %d, %d, %d, %d",
					len(vtrain.rows), len(vtest.rows), len(vans.rows), len(vsample.rows), len(r.train.rows)-k, k, k, k)
			}
			for name, pair := range map[string][2][]string{"test": {vtest.header, r.test.header}, "answers": {vans.header, r.answers.header}, "sample submission": {vsample.header, r.sample.header}, "train": {vtrain.header, r.train.header}} {
				if !slices.Equal(pair[0], pair[1]) {
					t.Errorf("validation %s header %v, the real one's %v", name, pair[0], pair[1])
				}
			}

			if c.extra != nil {
				c.extra(t, r)
			}
		})
	}
}

// The split is scikit-learn's train_test_split of the raw train with the spec's test_size and
// random_state: the same test rows in the same order. For may-2022 this also checks that the
// spec's share 0.1111111111 picks what MLE-bench's 100,000 rows pick (rows found by f_27, since
// the ids are renumbered).
func TestSyntheticSplitIsScikitLearns(t *testing.T) {
	testenv.RequirePython(t)
	const snippet = `import sys
import pandas as pd
from sklearn.model_selection import train_test_split
df = pd.read_csv(sys.argv[1], dtype=str, keep_default_na=False)
_, test = train_test_split(df, test_size=float(sys.argv[2]), random_state=int(sys.argv[3]))
sys.stdout.write("\n".join(test[sys.argv[4]]))
`
	for _, k := range []struct{ id, key string }{{"spooky-author-identification", "id"}, {"tabular-playground-series-may-2022", "f_27"}} {
		t.Run(k.id, func(t *testing.T) {
			t.Parallel()
			i := slices.IndexFunc(synthTasks, func(c synthTask) bool { return c.id == k.id })
			c := synthTasks[i]
			raw := writeSynthRaw(t, c)
			r := prepareSynth(t, c, raw)
			out, err := exec.Command(testenv.Python, "-c", snippet, filepath.Join(raw, "train.csv"),
				strconv.FormatFloat(r.spec.Split.TestSize, 'g', -1, 64), strconv.Itoa(r.spec.Split.RandomState), k.key).Output()
			if err != nil {
				t.Fatalf("train_test_split: %v", err)
			}
			want := strings.Split(string(out), "\n")
			if got := r.test.col(t, k.key); !slices.Equal(got, want) {
				t.Fatalf("public test %s: %v\nscikit-learn's test: %v", k.key, got, want)
			}
		})
	}
}

// A raw folder without its train file fails naming it: first the Go check of the spec's
// raw_files, and without that list the preparer's own check.
func TestSyntheticPreparersNameAMissingTrainFile(t *testing.T) {
	testenv.RequirePython(t)
	type miss struct{ id, file, goWant, pyWant string }
	cases := []miss{}
	for _, c := range synthTasks {
		cases = append(cases, miss{c.id, "train.csv", "lacks train", "raw file train.csv is missing"})
	}
	cases = append(cases, miss{"plant-pathology-2020-fgvc7", "images", "lacks images", "raw folder images/ is missing"})
	for _, m := range cases {
		t.Run(m.id+"/"+m.file, func(t *testing.T) {
			t.Parallel()
			i := slices.IndexFunc(synthTasks, func(c synthTask) bool { return c.id == m.id })
			raw := writeSynthRaw(t, synthTasks[i])
			if err := os.RemoveAll(filepath.Join(raw, m.file)); err != nil {
				t.Fatal(err)
			}
			spec, err := tasks.Builtin().Get(m.id)
			if err != nil {
				t.Fatal(err)
			}
			p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
			if err := p.Prepare(context.Background(), spec, raw); err == nil || !strings.Contains(err.Error(), m.goWant) {
				t.Fatalf("raw folder without %s: %v", m.file, err)
			}
			unchecked := *spec
			unchecked.RawFiles = nil
			if err := p.Prepare(context.Background(), &unchecked, raw); err == nil || !strings.Contains(err.Error(), m.pyWant) {
				t.Fatalf("the preparer itself must name the missing %s: %v", m.file, err)
			}
		})
	}
}

// Kaggle ships spooky's train.csv inside train.zip, which MLE-bench extracts: the preparer reads
// it from there when train.csv is absent, with the same result.
func TestSyntheticSpookyReadsTrainZip(t *testing.T) {
	testenv.RequirePython(t)
	c := synthTasks[slices.IndexFunc(synthTasks, func(c synthTask) bool { return c.id == "spooky-author-identification" })]
	raw := writeSynthRaw(t, c)
	plain := prepareSynth(t, c, raw)

	zipped := t.TempDir()
	f, err := os.Create(filepath.Join(zipped, "train.zip"))
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("train.csv")
	b, err := os.ReadFile(filepath.Join(raw, "train.csv"))
	if err != nil {
		t.Fatal(err)
	}
	w.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	spec := *plain.spec
	spec.RawFiles = nil // the spec asks for train.csv
	dataDir := t.TempDir()
	if err := (tasks.Preparer{Layout: tasks.Layout{DataDir: dataDir}, Python: testenv.Python}).Prepare(context.Background(), &spec, zipped); err != nil {
		t.Fatal(err)
	}
	d := tasks.Layout{DataDir: dataDir}.Dirs(c.id, tasks.SplitTest)
	for dir, names := range map[[2]string][]string{{plain.full.Public, d.Public}: c.public, {plain.full.Private, d.Private}: c.private} {
		for _, n := range names {
			want, _ := os.ReadFile(filepath.Join(dir[0], n))
			got, err := os.ReadFile(filepath.Join(dir[1], n))
			if err != nil || string(got) != string(want) {
				t.Errorf("%s from train.zip differs from the one from train.csv (%v)", n, err)
			}
		}
	}
}
