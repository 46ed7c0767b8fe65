package tasks_test

import (
	"archive/zip"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// genericSpec is a user's spec for a small competition of the generic kind, written outside the
// repository; edit replaces text in it first.
const genericSpec = `id: toy-sentiment
name: Toy Sentiment
modality: text-classification
metric: accuracy
direction: max
id_column: PhraseId
target_columns: [Sentiment]
files: {train: train.csv, test: test.csv, sample_submission: sampleSubmission.csv, answers: answers.csv}
answers: {format: columns, columns: [Sentiment], match_by: id}
raw_files: [train.tsv.zip]
split:
  raw: train.tsv.zip
  test_size: 0.25
  random_state: 0
  stratify: Sentiment
  sample_submission: {Sentiment: 2}
validation: {fraction: 0.2, seed: 7, folds: 2}
limits: {wall_seconds: 60, memory_mb: 1024, processes: 16, output_kb: 64}
prompt: {summary: "Predict each phrase's sentiment.", snippet_rows: 2}
inputs: {text: [Phrase]}
`

// writeZip writes files (name to content) into a new zip.
func writeZip(t *testing.T, file string, files map[string][]byte) {
	t.Helper()
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	z := zip.NewWriter(f)
	for name, b := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(b); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// toyRaw writes a raw folder with train.tsv.zip: 40 phrases with commas and quotes, 8 of each
// of the 5 classes.
func toyRaw(t *testing.T) string {
	t.Helper()
	raw := t.TempDir()
	var b strings.Builder
	b.WriteString("PhraseId\tSentenceId\tPhrase\tSentiment\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&b, "%d\t%d\tphrase, number \"%d\"\t%d\n", i, 1+i/5, i, i%5)
	}
	writeZip(t, filepath.Join(raw, "train.tsv.zip"), map[string][]byte{"train.tsv": []byte(b.String())})
	return raw
}

// userSpec writes the spec (with edits, pairs of old and new text) into a folder of its own and
// loads it as `--task-spec FILE` does.
func userSpec(t *testing.T, edits ...string) (*tasks.Spec, string, error) {
	t.Helper()
	text := genericSpec
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("the spec no longer contains %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "toy.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := tasks.Builtin().AddFile(file)
	return s, dir, err
}

func readFile(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A spec file outside the repository prepares its task by the generic split alone: a zipped TSV
// split stratified into MLE-bench's four files, then the validation folds.
func TestGenericSplitFromAUserSpec(t *testing.T) {
	testenv.RequirePython(t)
	s, _, err := userSpec(t)
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: data}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), s, toyRaw(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.Layout.CheckPrepared(s); err != nil {
		t.Fatal(err)
	}
	d := p.Layout.Dirs(s.ID, tasks.SplitTest)
	// 40 rows, test_size 0.25: 10 test rows, 2 of each class (stratified).
	answers := readFile(t, filepath.Join(d.Private, "answers.csv"))
	if !strings.HasPrefix(answers, "PhraseId,SentenceId,Phrase,Sentiment\n") || csvRows(t, filepath.Join(d.Private, "answers.csv")) != 10 {
		t.Fatalf("answers:\n%s", answers)
	}
	for c := 0; c < 5; c++ {
		if n := strings.Count(answers, fmt.Sprintf("\",%d\n", c)); n != 2 {
			t.Errorf("class %d: %d test rows, want 2 (stratified)\n%s", c, n, answers)
		}
	}
	if got := firstLine(t, filepath.Join(d.Public, "test.csv")); got != "PhraseId,SentenceId,Phrase" {
		t.Errorf("public test header %q: want the raw columns without the target", got)
	}
	if n := csvRows(t, filepath.Join(d.Public, "train.csv")); n != 30 {
		t.Errorf("public train has %d rows, want 30", n)
	}
	sample := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(d.Public, "sampleSubmission.csv"))), "\n")
	if sample[0] != "PhraseId,Sentiment" || len(sample) != 11 || !strings.HasSuffix(sample[1], ",2") {
		t.Errorf("sample submission:\n%s", strings.Join(sample, "\n"))
	}
	for f := 1; f <= 2; f++ {
		fd := p.Layout.FoldDirs(s.ID, f)
		if n := csvRows(t, filepath.Join(fd.Private, "answers.csv")); n != 6 { // ceil(0.2 * 30)
			t.Errorf("fold %d answers: %d rows, want 6", f, n)
		}
	}
}

// A test split prepared elsewhere (by MLE-bench) is gradable as it is; `prepare` without raw
// files carves the validation folds that training needs.
func TestFoldsCarvedFromAPreparedTestSplit(t *testing.T) {
	testenv.RequirePython(t)
	s, _, err := userSpec(t)
	if err != nil {
		t.Fatal(err)
	}
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), s, toyRaw(t)); err != nil {
		t.Fatal(err)
	}
	for f := 1; f <= 2; f++ {
		if err := os.RemoveAll(filepath.Dir(p.Layout.FoldDirs(s.ID, f).Public)); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Layout.CheckTestSplit(s); err != nil {
		t.Fatalf("the test split alone must be enough to grade: %v", err)
	}
	err = p.Layout.CheckPrepared(s)
	if err == nil || !strings.Contains(err.Error(), "validation folds are not carved") || !strings.Contains(err.Error(), "without --raw") {
		t.Fatalf("missing folds: %v", err)
	}
	if err := p.CarveFolds(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	if err := p.Layout.CheckPrepared(s); err != nil {
		t.Fatal(err)
	}
}

// A Python preparer beside the spec prepares what the generic split cannot; it runs after
// preparers/common.py, so its helpers are there.
func TestPreparerFileBesideTheSpec(t *testing.T) {
	testenv.RequirePython(t)
	s, dir, err := userSpec(t, "split:\n  raw: train.tsv.zip\n  test_size: 0.25\n  random_state: 0\n  stratify: Sentiment\n  sample_submission: {Sentiment: 2}\n",
		"split: {test_size: 0.5, random_state: 0}\npreparer: prep.py\n")
	if err != nil {
		t.Fatal(err)
	}
	prep := `import zipfile, io
raw, public, private = args()
with zipfile.ZipFile(raw_file(raw, "train.tsv.zip")) as z:
    rows = pd.read_csv(io.BytesIO(z.read("train.tsv")), sep="\t")
train, test = split(rows, 0.5)
write_prepared(public, private, train=train, test=test.drop(columns=["Sentiment"]),
               sample=constant_sample(test, "PhraseId", {"Sentiment": 4}), answers=test, answers_name="answers.csv")
(public / "sampleSubmission.csv").write_text((public / "sample_submission.csv").read_text())
`
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), s, toyRaw(t)); err == nil || !strings.Contains(err.Error(), "field preparer") || !strings.Contains(err.Error(), "prep.py") {
		t.Fatalf("a missing preparer file: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "prep.py"), []byte(prep), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Prepare(context.Background(), s, toyRaw(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.Layout.CheckPrepared(s); err != nil {
		t.Fatal(err)
	}
	d := p.Layout.Dirs(s.ID, tasks.SplitTest)
	if n := csvRows(t, filepath.Join(d.Private, "answers.csv")); n != 20 {
		t.Errorf("the preparer's answers have %d rows, want 20", n)
	}
	if got := readFile(t, filepath.Join(d.Public, "sampleSubmission.csv")); !strings.Contains(got, ",4\n") {
		t.Errorf("the sample submission is not the preparer's:\n%s", got)
	}
}

// A spec whose preparation cannot work is refused naming the field and the fix.
func TestGenericSpecErrorsNameTheField(t *testing.T) {
	cases := []struct{ name, from, to, want string }{
		{"raw not a table", "raw: train.tsv.zip", "raw: train.json", "field split.raw: \"train.json\" is not a table"},
		{"no test size", "test_size: 0.25", "test_size: 0", "field split.test_size: must be above 0"},
		{"a target without a sample value", "sample_submission: {Sentiment: 2}", "sample_submission: {Other: 2}", "field split.sample_submission: has no value for target column Sentiment"},
		{"a sample value of no target", "sample_submission: {Sentiment: 2}", "sample_submission: {Sentiment: 2, Other: 1}", "field split.sample_submission: names Other"},
		{"a file the platform cannot read", "train: train.csv", "train: train.tsv", "field files.train: \"train.tsv\": the generic split writes plain CSV"},
		{"both ways to prepare", "inputs:", "preparer: prep.py\ninputs:", "field preparer: and split.raw are both set"},
		{"one-hot answers", "format: columns", "format: one-hot", "field answers.format: must be columns for the generic split"},
		{"generic fields without raw", "  raw: train.tsv.zip\n", "", "field split.raw: is empty while other generic split fields are set"},
		{"images without a folder", "stratify: Sentiment", "images: train.zip", "field inputs.images: is empty while split.images is set"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, _, err := userSpec(t, c.from, c.to)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	_, _, err := userSpec(t, "inputs:", "preparer: prep.sh\ninputs:", "  raw: train.tsv.zip\n", "", "  stratify: Sentiment\n  sample_submission: {Sentiment: 2}\n", "")
	if err == nil || !strings.Contains(err.Error(), "field preparer: \"prep.sh\" must be a Python file") {
		t.Fatalf("a preparer that is not Python: %v", err)
	}
}

// Raw data that does not fit the spec fails naming the spec field and the fix.
func TestGenericSplitErrorsNameTheField(t *testing.T) {
	testenv.RequirePython(t)
	cases := []struct {
		name  string
		edits []string
		want  string
	}{
		{"a raw file missing", []string{"raw_files: [train.tsv.zip]", "raw_files: [train.tsv.zip, labels.csv]"}, "lacks labels.csv (named by the spec's raw_files or split)"},
		{"the raw table missing", []string{"raw: train.tsv.zip", "raw: other.csv"}, "lacks other.csv"},
		{"a target column missing", []string{"target_columns: [Sentiment]", "target_columns: [Score]", "{Sentiment: 2}", "{Score: 2}", "stratify: Sentiment", "stratify: Score", "columns: [Sentiment]", "columns: [Score]"},
			"target_columns: ['Score'] not in raw table train.tsv"},
		{"an id column missing", []string{"id_column: PhraseId", "id_column: Id"}, "id_column: ['Id'] not in raw table train.tsv"},
		{"a stratify column missing", []string{"stratify: Sentiment", "stratify: Mood"}, "split.stratify: 'Mood' is not a column"},
		{"a split that does not fit", []string{"test_size: 0.25", "test_size: 0.99"}, "split.test_size: the 40 rows of train.tsv cannot be split with test_size 0.99"},
		{"too few rows to stratify", []string{"test_size: 0.25", "test_size: 0.05"}, "split.stratify: the 40 rows of train.tsv cannot be split with test_size 0.05 stratified on Sentiment"},
		{"images missing", []string{"stratify: Sentiment", "images: pics.zip", "inputs: {text: [Phrase]}", "inputs: {text: [Phrase], images: images, image_ext: .png}"},
			"lacks pics.zip"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, _, err := userSpec(t, c.edits...)
			if err != nil {
				t.Fatal(err)
			}
			p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
			if err := p.Prepare(context.Background(), s, toyRaw(t)); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// Images in a raw zip go with their rows into the public images folder; rows without an image
// are named.
func TestGenericSplitCarriesImages(t *testing.T) {
	testenv.RequirePython(t)
	s, _, err := userSpec(t, "stratify: Sentiment", "images: pics.zip", "inputs: {text: [Phrase]}", "inputs: {text: [Phrase], images: images, image_ext: .png}")
	if err != nil {
		t.Fatal(err)
	}
	raw := toyRaw(t)
	pics := map[string][]byte{}
	for i := 1; i <= 40; i++ {
		pics[fmt.Sprintf("pics/%d.png", i)] = []byte(fmt.Sprint(i))
	}
	writeZip(t, filepath.Join(raw, "pics.zip"), pics)
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), s, raw); err != nil {
		t.Fatal(err)
	}
	for _, split := range []tasks.Dirs{p.Layout.Dirs(s.ID, tasks.SplitTest), p.Layout.FoldDirs(s.ID, 2)} {
		got, _ := filepath.Glob(filepath.Join(split.Public, "images", "*.png"))
		if len(got) != 40 || readFile(t, filepath.Join(split.Public, "images", "17.png")) != "17" {
			t.Errorf("%s: %d images, want the 40 rows' own", split.Public, len(got))
		}
	}
	// The same images as a raw folder (an extracted zip keeps its own folder), one missing.
	s, _, err = userSpec(t, "stratify: Sentiment", "images: pics", "inputs: {text: [Phrase]}", "inputs: {text: [Phrase], images: images, image_ext: .png}")
	if err != nil {
		t.Fatal(err)
	}
	for name, b := range pics {
		if name == "pics/17.png" {
			continue
		}
		f := filepath.Join(raw, "pics", name)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err = p.Prepare(context.Background(), s, raw)
	if err == nil || !strings.Contains(err.Error(), "split.images: pics lacks the images of 1 of 40 rows (first: ['17.png'])") {
		t.Fatalf("a row without its image: %v", err)
	}
	if err := os.WriteFile(filepath.Join(raw, "pics", "pics", "17.png"), pics["pics/17.png"], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Prepare(context.Background(), s, raw); err != nil {
		t.Fatalf("images in a raw folder: %v", err)
	}
}
