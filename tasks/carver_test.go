package tasks_test

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// toyPNG is a w x h grey image whose levels depend on seed, so every image is different.
func toyPNG(t *testing.T, w, h, seed int) []byte {
	t.Helper()
	img := image.NewGray(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			img.SetGray(x, y, color.Gray{Y: uint8((seed*37 + x*11 + y*5) % 256)})
		}
	}
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// denoisingKindSpec writes a user's spec for a new competition of denoising-dirty-documents'
// kind (pairs of noisy and clean page images): the built-in spec under another id, with its
// preparer and carver files named by the spec and written beside it. edits replace text in the
// spec first, as userSpec's do.
func denoisingKindSpec(t *testing.T, carver string, edits ...string) (*tasks.Spec, string, error) {
	t.Helper()
	b, err := os.ReadFile("specs/denoising-dirty-documents.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	edits = append([]string{
		"id: denoising-dirty-documents", "id: toy-pages",
		"preparer: denoising-dirty-documents.py", "preparer: pages.py",
		"carver: denoising-dirty-documents.py", "carver: " + carver,
		"validation: {fraction: 0.1, seed: 20250901}", "validation: {fraction: 0.25, seed: 3, folds: 2}",
	}, edits...)
	for i := 0; i < len(edits); i += 2 {
		if !strings.Contains(text, edits[i]) {
			t.Fatalf("the denoising spec no longer contains %q", edits[i])
		}
		text = strings.Replace(text, edits[i], edits[i+1], 1)
	}
	dir := t.TempDir()
	prep, err := os.ReadFile("preparers/denoising-dirty-documents.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pages.py"), prep, 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "pages.yaml")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := tasks.Builtin().AddFile(file)
	return s, dir, err
}

// pagesRaw writes Kaggle's two zips of a denoising-kind competition: 10 noisy pages and their
// clean versions, of two sizes.
func pagesRaw(t *testing.T) string {
	t.Helper()
	raw := t.TempDir()
	noisy, clean := map[string][]byte{}, map[string][]byte{}
	for i := 1; i <= 10; i++ {
		w, h := 5, 3
		if i%2 == 0 {
			w, h = 4, 6
		}
		noisy[fmt.Sprintf("train/%d.png", i)] = toyPNG(t, w, h, i)
		clean[fmt.Sprintf("train_cleaned/%d.png", i)] = toyPNG(t, w, h, 100+i)
	}
	writeZip(t, filepath.Join(raw, "train.zip"), noisy)
	writeZip(t, filepath.Join(raw, "train_cleaned.zip"), clean)
	return raw
}

func pngs(t *testing.T, dir string) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range names {
		names[i] = filepath.Base(n)
	}
	return names
}

// A competition whose train carve.py cannot split (images, not rows) is added by its spec and
// files alone: the spec's carver, a Python file beside it, carves its validation and
// cross-validation folds, holding out whole images.
func TestCarverFileBesideTheSpec(t *testing.T) {
	testenv.RequirePython(t)
	s, _, err := denoisingKindSpec(t, "pages.py")
	if err != nil {
		t.Fatal(err)
	}
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), s, pagesRaw(t)); err != nil {
		t.Fatal(err)
	}
	if err := p.Layout.CheckPrepared(s); err != nil {
		t.Fatal(err)
	}
	full := p.Layout.Dirs(s.ID, tasks.SplitTest)
	if n, m := len(pngs(t, filepath.Join(full.Public, "train"))), len(pngs(t, filepath.Join(full.Public, "test"))); n != 8 || m != 2 {
		t.Fatalf("public train %d and test %d images, want 8 and 2 (test_size 0.2 of 10)", n, m)
	}
	held := map[string]int{}
	for f := 1; f <= 2; f++ {
		d := p.Layout.FoldDirs(s.ID, f)
		test, train := pngs(t, filepath.Join(d.Public, "test")), pngs(t, filepath.Join(d.Public, "train"))
		if len(test) != 2 || len(train) != 6 { // ceil(0.25 * 8) held out
			t.Fatalf("fold %d: train %v, test %v: want 6 and 2 images", f, train, test)
		}
		pixels := 0
		for _, name := range test {
			if g, ok := held[name]; ok {
				t.Fatalf("image %s is held out by folds %d and %d", name, g, f)
			}
			held[name] = f
			cfg, err := png.DecodeConfig(bytes.NewReader([]byte(readFile(t, filepath.Join(full.Public, "train_cleaned", name)))))
			if err != nil {
				t.Fatal(err)
			}
			pixels += cfg.Width * cfg.Height
		}
		if n := csvRows(t, filepath.Join(d.Private, "answers.csv")); n != pixels {
			t.Errorf("fold %d: %d answer rows, the held-out images have %d pixels", f, n, pixels)
		}
	}
	cv, err := tasks.CarveCrossValidation(context.Background(), s, p.Layout, testenv.Python, 4)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, d := range cv.Folds {
		seen += len(pngs(t, filepath.Join(d.Public, "test")))
	}
	if seen != 8 {
		t.Fatalf("the cross-validation folds hold out %d images, want all 8 of the train", seen)
	}
}

// A carver that is missing, fails or writes nothing is named, with the fix.
func TestCarverErrorsNameTheFieldAndTheFix(t *testing.T) {
	testenv.RequirePython(t)
	cases := []struct{ name, carver, source, want string }{
		{"missing", "carve-pages.py", "", "task toy-pages: field carver: open "},
		{"failing", "carve-pages.py", "sys.exit('public train/ holds no pages')\n", "carving validation fold 1 of toy-pages with the spec's carver carve-pages.py: exit status 1: public train/ holds no pages"},
		{"writing nothing", "carve-pages.py", "pass\n", "carving validation fold 1 of toy-pages: the spec's carver carve-pages.py exited without error but wrote no "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, dir, err := denoisingKindSpec(t, c.carver)
			if err != nil {
				t.Fatal(err)
			}
			if c.source != "" {
				if err := os.WriteFile(filepath.Join(dir, c.carver), []byte(c.source), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			p := tasks.Preparer{Layout: tasks.Layout{DataDir: t.TempDir()}, Python: testenv.Python}
			err = p.Prepare(context.Background(), s, pagesRaw(t))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
			if c.name == "missing" && !strings.Contains(err.Error(), "relative to the spec file's folder: put it there, or fix the name") {
				t.Fatalf("the fix is not named: %v", err)
			}
			if _, statErr := os.Stat(filepath.Join(p.Layout.DataDir, s.ID, "prepared")); statErr == nil {
				t.Fatal("a failed carving left a prepared folder")
			}
		})
	}
	_, _, err := denoisingKindSpec(t, "carve.sh")
	if err == nil || !strings.Contains(err.Error(), `field carver: "carve.sh" must be a Python file (.py) beside the spec`) {
		t.Fatalf("a carver that is not Python: %v", err)
	}
}
