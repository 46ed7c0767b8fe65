package tasks_test

import (
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// denoising-dirty-documents prepares checksum-exact from Kaggle's zips, and its validation split,
// which its own preparer carves (the train is images, not rows), holds out whole train images:
// their noisy versions become the validation test, their cleaned pixels its answers.
func TestDenoisingPreparesAndCarvesImages(t *testing.T) {
	const id = "denoising-dirty-documents"
	spec, err := tasks.Builtin().Get(id)
	if err != nil {
		t.Fatal(err)
	}
	dataDir := testenv.PreparedData(t, id)
	checkMLEBenchChecksums(t, dataDir, id)
	l := tasks.Layout{DataDir: dataDir}
	if err := l.CheckPrepared(spec); err != nil {
		t.Fatal(err)
	}
	full, val := l.Dirs(id, tasks.SplitTest), l.Dirs(id, tasks.SplitValidation)
	names := func(dir string) []string {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	if n, m := len(names(filepath.Join(full.Public, "train"))), len(names(filepath.Join(full.Public, "test"))); n != 115 || m != 29 {
		t.Fatalf("public train %d and test %d images, MLE-bench has 115 and 29", n, m)
	}
	vtrain, vtest := names(filepath.Join(val.Public, "train")), names(filepath.Join(val.Public, "test"))
	if len(vtest) != 12 || len(vtrain) != 103 {
		t.Fatalf("validation train %d and test %d images, want 103 and 12 (10%% of 115, rounded up)", len(vtrain), len(vtest))
	}
	if !slices.Equal(vtrain, names(filepath.Join(val.Public, "train_cleaned"))) {
		t.Fatal("validation train/ and train_cleaned/ hold different images")
	}
	all := append(slices.Clone(vtrain), vtest...)
	slices.Sort(all)
	if !slices.Equal(all, names(filepath.Join(full.Public, "train"))) {
		t.Fatal("the validation train and test are not a partition of the public train")
	}
	// One answer row per pixel of the held-out images, and the sample submission alike.
	pixels := 0
	for _, name := range vtest {
		f, err := os.Open(filepath.Join(full.Public, "train_cleaned", name))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		pixels += cfg.Width * cfg.Height
	}
	if n := csvRows(t, filepath.Join(val.Private, "answers.csv")); n != pixels {
		t.Fatalf("validation answers have %d rows, the held-out images %d pixels", n, pixels)
	}
	if n := csvRows(t, filepath.Join(val.Public, "sampleSubmission.csv")); n != pixels {
		t.Fatalf("validation sample submission has %d rows, want %d", n, pixels)
	}
	if h := firstLine(t, filepath.Join(val.Private, "answers.csv")); h != "id,value" {
		t.Fatalf("validation answers header %q", h)
	}
}
