package tasks_test

import (
	"context"
	"crypto/md5"
	"encoding/csv"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// checkMLEBenchChecksums compares every prepared file listed in shared/'s checksums.yaml (public
// and private; the zip of the whole folder is not ours to match) with its md5.
func checkMLEBenchChecksums(t *testing.T, dataDir, id string) {
	t.Helper()
	var sums struct {
		Public  map[string]string `yaml:"public"`
		Private map[string]string `yaml:"private"`
	}
	b, err := os.ReadFile(filepath.Join(testenv.SharedDir(t, "mlebench"), id, "checksums.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(b, &sums); err != nil {
		t.Fatal(err)
	}
	if len(sums.Public)+len(sums.Private) == 0 {
		t.Fatalf("%s: checksums.yaml lists no files", id)
	}
	d := tasks.Layout{DataDir: dataDir}.Dirs(id, tasks.SplitTest)
	check := func(dir string, want map[string]string) {
		for name, sum := range want {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			got := md5.Sum(data)
			if hex.EncodeToString(got[:]) != sum {
				t.Errorf("%s/%s: md5 %x, MLE-bench has %s", filepath.Base(dir), name, got, sum)
			}
		}
	}
	check(d.Public, sums.Public)
	check(d.Private, sums.Private)
}

func firstLine(t *testing.T, file string) string {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSuffix(line, "\r")
}

func TestPreparersMatchMLEBench(t *testing.T) {
	cases := []struct {
		id       string
		answers  int // rows of MLE-bench's private answers
		geometry bool
		images   int // images in the public images folder, of train and test rows alike
	}{
		{id: "random-acts-of-pizza", answers: 1162},
		{id: "nomad2018-predict-transparent-conductors", answers: 240, geometry: true},
		{id: "detecting-insults-in-social-commentary", answers: 2647},
		// Prepared by the generic split from their specs alone.
		{id: "aerial-cactus-identification", answers: 3325, images: 17500},
		{id: "movie-review-sentiment-analysis-kernels-only", answers: 46818},
	}
	for _, c := range cases {
		t.Run(c.id, func(t *testing.T) {
			spec, err := tasks.Builtin().Get(c.id)
			if err != nil {
				t.Fatal(err)
			}
			dataDir := testenv.PreparedData(t, c.id)
			checkMLEBenchChecksums(t, dataDir, c.id)

			l := tasks.Layout{DataDir: dataDir}
			full, val := l.Dirs(c.id, tasks.SplitTest), l.Dirs(c.id, tasks.SplitValidation)
			if err := l.CheckPrepared(spec); err != nil {
				t.Fatal(err)
			}
			// The answers hold the id and the spec's answer columns.
			header := firstLine(t, filepath.Join(full.Private, spec.Files.Answers))
			if n := csvRows(t, filepath.Join(full.Private, spec.Files.Answers)); n != c.answers {
				t.Errorf("the answers have %d rows, MLE-bench's %d", n, c.answers)
			}
			for _, want := range append([]string{spec.IDColumn}, spec.Answers.Columns...) {
				if !strings.Contains(","+header+",", ","+want+",") {
					t.Errorf("answers header %q lacks %q", header, want)
				}
			}
			// The validation answers hold the id and the graded columns, and only columns of the
			// real answers (insults' Usage is not in the train, so it is left out).
			vheader := firstLine(t, filepath.Join(val.Private, spec.Files.Answers))
			for _, col := range strings.Split(vheader, ",") {
				if !strings.Contains(","+header+",", ","+col+",") {
					t.Errorf("validation answers column %q is not a column of the real answers %q", col, header)
				}
			}
			for _, want := range append([]string{spec.IDColumn}, spec.Answers.Columns...) {
				if !strings.Contains(","+vheader+",", ","+want+",") {
					t.Errorf("validation answers header %q lacks %q", vheader, want)
				}
			}
			if n, want := csvRows(t, filepath.Join(val.Private, spec.Files.Answers)), csvRows(t, filepath.Join(val.Public, spec.Files.SampleSubmission)); n == 0 || n != want {
				t.Errorf("validation answers have %d rows, its sample submission %d", n, want)
			}
			if got, want := firstLine(t, filepath.Join(val.Public, spec.Files.SampleSubmission)), firstLine(t, filepath.Join(full.Public, spec.Files.SampleSubmission)); got != want {
				t.Errorf("validation sample submission header %q, the real one has %q", got, want)
			}
			if c.images > 0 {
				for _, d := range []tasks.Dirs{full, val} {
					got, _ := filepath.Glob(filepath.Join(d.Public, spec.Inputs.Images, "*"+spec.Inputs.ImageExt))
					if len(got) != c.images {
						t.Errorf("%s holds %d images, want %d", filepath.Join(d.Public, spec.Inputs.Images), len(got), c.images)
					}
				}
			}
			if c.geometry {
				for split, n := range map[string]int{"train": 2160, "test": 240} {
					files, _ := filepath.Glob(filepath.Join(full.Public, split, "*", "geometry.xyz"))
					if len(files) != n {
						t.Errorf("public/%s holds %d geometry files, want one per row (%d)", split, len(files), n)
					}
				}
				// In the validation split the geometry follows its rows: 2160 = 1944 + 216.
				vtrain, _ := filepath.Glob(filepath.Join(val.Public, "train", "*", "geometry.xyz"))
				vtest, _ := filepath.Glob(filepath.Join(val.Public, "test", "*", "geometry.xyz"))
				if len(vtrain) != 1944 || len(vtest) != 216 {
					t.Errorf("validation geometry: %d train, %d test files; want 1944 and 216", len(vtrain), len(vtest))
				}
			}
		})
	}
}

// csvRows counts the records of a CSV file after its header (quoted fields may span lines).
func csvRows(t *testing.T, file string) int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.FieldsPerRecord = -1
	all, err := r.ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return len(all) - 1
}

// copyRawWithout copies a raw folder leaving out one file.
func copyRawWithout(t *testing.T, raw, omit string) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.IsDir() || e.Name() == omit {
			continue
		}
		b, err := os.ReadFile(filepath.Join(raw, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A raw folder lacking a needed file fails with a message naming it: first the Go check of the
// spec's raw_files, and, were that list incomplete, the preparer's own check.
func TestPreparersNameAMissingRawFile(t *testing.T) {
	testenv.RequirePython(t)
	for _, id := range []string{"random-acts-of-pizza", "nomad2018-predict-transparent-conductors", "detecting-insults-in-social-commentary"} {
		spec, err := tasks.Builtin().Get(id)
		if err != nil {
			t.Fatal(err)
		}
		raw := testenv.RawDir(t, id)
		for _, f := range spec.RawFiles {
			t.Run(id+"/"+f, func(t *testing.T) {
				dir := copyRawWithout(t, raw, f)
				p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
				if err := p.Prepare(context.Background(), spec, dir); err == nil || !strings.Contains(err.Error(), "lacks "+f) {
					t.Fatalf("raw folder without %s: %v", f, err)
				}
				unchecked := *spec
				unchecked.RawFiles = nil
				err := p.Prepare(context.Background(), &unchecked, dir)
				if err == nil || !strings.Contains(err.Error(), "raw file "+f+" is missing") {
					t.Fatalf("the preparer itself must name the missing %s: %v", f, err)
				}
			})
		}
	}
}

// A raw file of the wrong shape fails with a message naming the file.
func TestPreparersNameAMalformedRawFile(t *testing.T) {
	testenv.RequirePython(t)
	cases := []struct{ id, file, content, want string }{
		{"random-acts-of-pizza", "train.json", "not json", "train.json is not valid JSON"},
		{"random-acts-of-pizza", "test.json", `[{"request_id": "t3_x", "requester_received_pizza": true}]`, "test.json must have 'request_id' and no 'requester_received_pizza'"},
		{"nomad2018-predict-transparent-conductors", "train.csv", "a,b\n1,2\n", "train.csv has no 'id' column"},
		{"nomad2018-predict-transparent-conductors", "geometry_xyz.tar.gz", "not a tar", "geometry_xyz.tar.gz is not a readable tar.gz"},
		{"detecting-insults-in-social-commentary", "test_with_solutions.csv", "Date,Comment\n1,\"x\"\n", "test_with_solutions.csv has columns ['Date', 'Comment']"},
	}
	for _, c := range cases {
		t.Run(c.id+"/"+c.file, func(t *testing.T) {
			spec, err := tasks.Builtin().Get(c.id)
			if err != nil {
				t.Fatal(err)
			}
			dir := copyRawWithout(t, testenv.RawDir(t, c.id), c.file)
			if err := os.WriteFile(filepath.Join(dir, c.file), []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
			if err := p.Prepare(context.Background(), spec, dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
