package main

import (
	"archive/zip"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

func TestGradeJSONHasExactlyMLEBenchsKeys(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sample := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs("leaf-classification", tasks.SplitTest).Public, "sample_submission.csv")
	var out bytes.Buffer
	if err := gradeCommand([]string{"--task", "leaf-classification", "--data-dir", dataDir, "--submission", sample, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range rep {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	want := "above_median any_medal bronze_medal bronze_threshold competition_id created_at gold_medal gold_threshold is_lower_better median_threshold score silver_medal silver_threshold submission_exists submission_path valid_submission"
	if strings.Join(keys, " ") != want {
		t.Fatalf("keys %v\nwant %s", keys, want)
	}
	if rep["score"].(float64) != 4.59512 { // log(99): the uniform sample submission
		t.Fatalf("score %v", rep["score"])
	}
}

func TestGradeJSONLAggregates(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sample := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs("leaf-classification", tasks.SplitTest).Public, "sample_submission.csv")
	answers := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs("leaf-classification", tasks.SplitTest).Private, "test.csv")
	dir := t.TempDir()
	perfect := filepath.Join(dir, "perfect.csv")
	b, _ := os.ReadFile(answers)
	os.WriteFile(perfect, b, 0o644)
	lines := fmt.Sprintf(`{"competition_id": "leaf-classification", "submission_path": %q}
{"competition_id": "leaf-classification", "submission_path": %q}
{"competition_id": "leaf-classification", "submission_path": "/nonexistent.csv"}
`, sample, perfect)
	jsonl := filepath.Join(dir, "subs.jsonl")
	os.WriteFile(jsonl, []byte(lines), 0o644)
	var out bytes.Buffer
	if err := gradeCommand([]string{"--jsonl", jsonl, "--data-dir", dataDir}, &out); err != nil {
		t.Fatal(err)
	}
	var agg aggregate
	if err := json.Unmarshal(out.Bytes(), &agg); err != nil {
		t.Fatal(err)
	}
	if agg.TotalRuns != 3 || agg.TotalRunsWithSubmissions != 2 || agg.TotalValidSubmissions != 2 ||
		agg.TotalGoldMedals != 1 || agg.TotalMedals != 1 || agg.TotalAboveMedian != 1 {
		t.Fatalf("aggregate %+v", agg)
	}
	os.WriteFile(jsonl, []byte(`{"competition": "leaf"}`+"\n"), 0o644)
	if err := gradeCommand([]string{"--jsonl", jsonl, "--data-dir", dataDir}, &out); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("a malformed line must be named: %v", err)
	}
}

// userCompetition is a competition the platform does not ship, as a user brings it: a spec and
// raw files, and what grading its sample submission must score.
type userCompetition struct {
	id, spec string
	// testHeader is the public test's header: the raw table's columns without the target.
	testHeader string
	raw        map[string][]byte // raw file name to content
	// score is what the sample submission scores, from the prepared private answers.
	score func(t *testing.T, answers string) float64
}

// share is the fraction of the answers' rows whose column col holds value.
func share(t *testing.T, answers, col, value string) float64 {
	t.Helper()
	f, err := os.Open(answers)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) < 2 {
		t.Fatalf("answers %s: %d rows, %v", answers, len(rows), err)
	}
	c := slices.Index(rows[0], col)
	if c < 0 {
		t.Fatalf("answers %s have no column %s: %v", answers, col, rows[0])
	}
	n := 0
	for _, r := range rows[1:] {
		if r[c] == value {
			n++
		}
	}
	return float64(n) / float64(len(rows)-1)
}

// zipped is a zip holding files (name to content).
func zipped(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var b bytes.Buffer
	z := zip.NewWriter(&b)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(files[name])
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// dotPNG is an 8x8 grey image with a white dot where dot is set, darker for each id.
func dotPNG(t *testing.T, i int, dot bool) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, 8, 8))
	for p := range img.Pix {
		img.Pix[p] = uint8(i * 3 % 200)
	}
	if dot {
		img.SetGray(3, 4, color.Gray{Y: 255})
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// userCompetitions are one competition of each kind: tabular (a boolean target, a categorical
// column, the table zipped), text, and images (PNGs in a zip, one per row).
func userCompetitions(t *testing.T) []userCompetition {
	var flags, reviews, dots strings.Builder
	flags.WriteString("id,plan,x,flag\n")
	reviews.WriteString("id,review,label\n")
	dots.WriteString("id,has_dot\n")
	images := map[string][]byte{}
	plans := []string{"basic", "pro", "team"}
	for i := 0; i < 50; i++ {
		fmt.Fprintf(&flags, "r%d,%s,%d,%s\n", i, plans[i%3], i, map[bool]string{true: "True", false: "False"}[i%5 < 2])
		fmt.Fprintf(&reviews, "%d,\"review %d, \"\"%s\"\" said it\",%s\n", i, i, plans[i%3], map[bool]string{true: "pos", false: "neg"}[i%3 == 0])
		fmt.Fprintf(&dots, "d%d,%d\n", i, i%2)
		images[fmt.Sprintf("pics/d%d.png", i)] = dotPNG(t, i, i%2 == 1)
	}
	common := `validation: {fraction: 0.1, seed: 1}
limits: {wall_seconds: 60, memory_mb: 1024, processes: 16, output_kb: 64}
`
	return []userCompetition{{
		id: "toy-flags", testHeader: "id,plan,x",
		spec: `id: toy-flags
name: Toy Flags
modality: tabular-classification
metric: accuracy
direction: max
id_column: id
target_columns: [flag]
files: {train: train.csv, test: test.csv, sample_submission: sample_submission.csv, answers: test.csv}
answers: {format: columns, columns: [flag], match_by: id}
raw_files: [customers.csv.zip]
split: {raw: customers.csv.zip, test_size: 0.2, random_state: 0, stratify: flag, sample_submission: {flag: false}}
prompt: {summary: "Predict the flag.", snippet_rows: 2}
` + common,
		raw: map[string][]byte{"customers.csv.zip": zipped(t, map[string][]byte{"customers.csv": []byte(flags.String())})},
		// The all-False sample submission is right on the test rows whose flag is False.
		score: func(t *testing.T, answers string) float64 { return share(t, answers, "flag", "False") },
	}, {
		id: "toy-reviews", testHeader: "id,review",
		spec: `id: toy-reviews
name: Toy Reviews
modality: text-classification
metric: accuracy
direction: max
id_column: id
target_columns: [label]
files: {train: train.csv, test: test.csv, sample_submission: sample_submission.csv, answers: answers.csv}
answers: {format: columns, columns: [label], match_by: id}
raw_files: [reviews.csv]
split: {raw: reviews.csv, test_size: 0.3, random_state: 2, sample_submission: {label: pos}}
prompt: {summary: "Predict whether each review is pos or neg.", snippet_rows: 2}
inputs: {text: [review]}
` + common,
		raw:   map[string][]byte{"reviews.csv": []byte(reviews.String())},
		score: func(t *testing.T, answers string) float64 { return share(t, answers, "label", "pos") },
	}, {
		id: "toy-dots", testHeader: "id",
		spec: `id: toy-dots
name: Toy Dots
modality: image
metric: roc-auc
direction: max
id_column: id
target_columns: [has_dot]
files: {train: train.csv, test: test.csv, sample_submission: sample_submission.csv, answers: test.csv}
answers: {format: columns, columns: [has_dot], match_by: id}
raw_files: [labels.csv, pics.zip]
split: {raw: labels.csv, test_size: 0.2, random_state: 0, sample_submission: {has_dot: 0.5}, images: pics.zip}
prompt: {summary: "Predict the probability that each 8x8 image in images/ has a white dot.", snippet_rows: 2}
inputs: {images: images, image_ext: .png}
` + common,
		raw: map[string][]byte{"labels.csv": []byte(dots.String()), "pics.zip": zipped(t, images)},
		// A constant prediction ranks no positive above a negative.
		score: func(*testing.T, string) float64 { return 0.5 },
	}}
}

// Competitions the platform does not ship, of each kind, as a user brings them: a spec file and
// raw files outside the repository, no Go code. `tasks prepare --task-spec FILE` prepares each
// by the generic split (no --task: the spec names it); `grade` needs the test split alone and,
// without thresholds, claims no medal; `tasks prepare` without --raw carves the validation
// folds again.
func TestUserSpecPreparesAndGradesOutsideTheRepository(t *testing.T) {
	testenv.RequirePython(t)
	for _, c := range userCompetitions(t) {
		t.Run(c.id, func(t *testing.T) {
			dir := t.TempDir()
			spec := filepath.Join(dir, "toy.yaml")
			if err := os.WriteFile(spec, []byte(c.spec), 0o644); err != nil {
				t.Fatal(err)
			}
			raw := filepath.Join(dir, "raw")
			if err := os.MkdirAll(raw, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, b := range c.raw {
				if err := os.WriteFile(filepath.Join(raw, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			data := filepath.Join(dir, "data")
			common := []string{"--task-spec", spec, "--data-dir", data, "--python", testenv.Python}
			if err := tasksPrepare(t.Context(), append([]string{"--raw", raw}, common...)); err != nil {
				t.Fatal(err)
			}
			s, err := tasks.Builtin().AddFile(spec)
			if err != nil {
				t.Fatal(err)
			}
			l := tasks.Layout{DataDir: data}
			if err := l.CheckPrepared(s); err != nil {
				t.Fatal(err)
			}
			test := l.Dirs(c.id, tasks.SplitTest)
			if b, err := os.ReadFile(filepath.Join(test.Public, s.Files.Test)); err != nil || !strings.HasPrefix(string(b), c.testHeader+"\n") {
				t.Fatalf("public test (%v):\n%.200s\nwant the header %s", err, b, c.testHeader)
			}
			if s.Inputs.Images != "" {
				// Every row's image, the test rows' too, in the public images folder and the folds'.
				for _, d := range []string{test.Public, l.Dirs(c.id, tasks.SplitValidation).Public} {
					if got, _ := filepath.Glob(filepath.Join(d, s.Inputs.Images, "*"+s.Inputs.ImageExt)); len(got) != 50 {
						t.Fatalf("%s holds %d images, want the 50 rows'", filepath.Join(d, s.Inputs.Images), len(got))
					}
				}
			}
			if err := os.RemoveAll(filepath.Dir(l.Dirs(c.id, tasks.SplitValidation).Public)); err != nil {
				t.Fatal(err)
			}
			sample := filepath.Join(test.Public, s.Files.SampleSubmission)
			var out bytes.Buffer
			if err := gradeCommand(append([]string{"--submission", sample}, common...), &out); err != nil {
				t.Fatalf("grading without the validation folds: %v", err)
			}
			var score float64
			if _, err := fmt.Sscanf(out.String(), c.id+": score %g, valid true,", &score); err != nil {
				t.Fatalf("grade: %s (%v)", out.String(), err)
			}
			if want := c.score(t, filepath.Join(test.Private, s.Files.Answers)); math.Abs(score-want) > 1e-5 || want <= 0 || want >= 1 {
				t.Fatalf("the sample submission scores %v, want %v: %s", score, want, out.String())
			}
			if !strings.Contains(out.String(), "medals: unknown") {
				t.Fatalf("a spec without thresholds must claim no medal: %s", out.String())
			}
			if err := l.CheckPrepared(s); err == nil {
				t.Fatal("the folds were removed, yet the task counts as prepared")
			}
			if err := tasksPrepare(t.Context(), common); err != nil {
				t.Fatalf("carving the folds without --raw: %v", err)
			}
			if err := l.CheckPrepared(s); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A FIFO (or a symlink to one) as the submission or the JSONL list is refused at once, naming
// what it is; opening it would block for good.
func TestGradeRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "submission.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	os.Symlink(fifo, link)
	for _, args := range [][]string{
		{"--task", "leaf-classification", "--submission", fifo},
		{"--task", "leaf-classification", "--submission", link},
		{"--task", "leaf-classification", "--submission", "/dev/null"},
		{"--jsonl", fifo},
	} {
		done := make(chan error, 1)
		go func() { done <- gradeCommand(args, io.Discard) }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%v: %v, want a refusal naming a special file", args, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%v: grade blocked", args)
		}
	}
}

// A FIFO (or a symlink to one, or a device) as --task-spec is refused at once by every command
// that reads the spec, naming the path and the fix; reading it would block for good.
func TestTaskSpecRefusesSpecialFiles(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "spec.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.yaml")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	sub := filepath.Join(dir, "submission.csv")
	if err := os.WriteFile(sub, []byte("id\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, spec := range []string{fifo, link, "/dev/null"} {
		kind := "a named pipe (FIFO)"
		if spec == "/dev/null" {
			kind = "a character device"
		}
		want := "task spec " + spec + " is " + kind + ", not a regular file: give --task-spec the path of the spec's YAML file itself"
		for name, run := range map[string]func() error{
			"tasks prepare": func() error {
				return tasksPrepare(t.Context(), []string{"--task-spec", spec, "--raw", dir, "--data-dir", dir})
			},
			"tasks list": func() error { return tasksList([]string{"--task-spec", spec, "--data-dir", dir}) },
			"grade": func() error {
				return gradeCommand([]string{"--task-spec", spec, "--data-dir", dir, "--submission", sub}, io.Discard)
			},
			"grade --task": func() error {
				return gradeCommand([]string{"--task", "leaf-classification", "--task-spec", spec, "--data-dir", dir, "--submission", sub}, io.Discard)
			},
		} {
			done := make(chan error, 1)
			go func() { done <- run() }()
			select {
			case err := <-done:
				if err == nil || err.Error() != want {
					t.Errorf("%s --task-spec %s: %v\nwant %s", name, spec, err, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s --task-spec %s blocked", name, spec)
			}
		}
	}
}

// `starter tasks thresholds` prints MLE-bench's figures (thresholds.csv) for every leaderboard
// in ../shared, with the direction from the spec, from the leaderboard, or refused when they
// disagree.
func TestTasksThresholdsMatchMLEBench(t *testing.T) {
	dir := testenv.SharedDir(t, "mlebench")
	b, err := os.ReadFile(filepath.Join(dir, "thresholds.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")[1:]
	for _, l := range lines {
		f := strings.Split(l, ",") // competition,better,teams,gold,silver,bronze,median
		board := filepath.Join(dir, f[0], "leaderboard.csv")
		num := func(s string) string { v, _ := strconv.ParseFloat(s, 64); return strconv.FormatFloat(v, 'g', -1, 64) }
		want := fmt.Sprintf("teams %s, direction %s", f[2], f[1]) + fmt.Sprintf(" (%s is better)\ngold %s\nsilver %s\nbronze %s\nmedian %s\n",
			map[string]string{"min": "lower", "max": "higher"}[f[1]], num(f[3]), num(f[4]), num(f[5]), num(f[6]))
		for _, extra := range [][]string{nil, {"--direction", f[1]}} {
			var out bytes.Buffer
			if err := tasksThresholds(append([]string{"--leaderboard", board}, extra...), &out); err != nil {
				t.Fatalf("%s: %v", f[0], err)
			}
			if !strings.HasPrefix(out.String(), want) {
				t.Errorf("%s %v:\n%s\nwant\n%s", f[0], extra, out.String(), want)
			}
		}
		wrong := map[string]string{"min": "max", "max": "min"}[f[1]]
		var out bytes.Buffer
		if err := tasksThresholds([]string{"--leaderboard", board, "--direction", wrong}, &out); err == nil || !strings.Contains(err.Error(), "direction is "+wrong) {
			t.Errorf("%s: the wrong direction must be refused: %v", f[0], err)
		}
	}
	if len(lines) < 12 {
		t.Fatalf("thresholds.csv has %d competitions", len(lines))
	}
	var out bytes.Buffer
	err = tasksThresholds([]string{"--leaderboard", filepath.Join(dir, "thresholds.csv")}, &out)
	if err == nil || !strings.Contains(err.Error(), "no score column") {
		t.Fatalf("a file without a score column: %v", err)
	}
}

// A spec without thresholds grades with medals unknown, never a medal: the sample submission of
// insults (all zeros) was reported gold against zero thresholds.
func TestGradeWithoutThresholdsSaysMedalsUnknown(t *testing.T) {
	dataDir := testenv.PreparedData(t, "detecting-insults-in-social-commentary")
	spec, err := tasks.Builtin().Get("detecting-insults-in-social-commentary")
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "tasks", "specs", spec.ID+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := regexp.MustCompile(`(?m)^thresholds:\n(\s+.*\n)+`).ReplaceAllString(string(b), "")
	if strings.Contains(text, "gold:") {
		t.Fatalf("the thresholds were not removed:\n%s", text)
	}
	specFile := filepath.Join(t.TempDir(), "spec.yaml")
	os.WriteFile(specFile, []byte(text), 0o644)
	sample := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs(spec.ID, tasks.SplitTest).Public, spec.Files.SampleSubmission)
	var out bytes.Buffer
	if err := gradeCommand([]string{"--task", spec.ID, "--task-spec", specFile, "--data-dir", dataDir, "--submission", sample}, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "medals: unknown") || strings.Contains(out.String(), "gold true") {
		t.Fatalf("%s", out.String())
	}
	out.Reset()
	if err := gradeCommand([]string{"--task", spec.ID, "--task-spec", specFile, "--data-dir", dataDir, "--submission", sample, "--json"}, &out); err != nil {
		t.Fatal(err)
	}
	var rep map[string]any
	json.Unmarshal(out.Bytes(), &rep)
	if rep["medals_unknown"] != true || rep["gold_medal"] != false || rep["any_medal"] != false || rep["gold_threshold"] != nil {
		t.Fatalf("%s", out.String())
	}
}
