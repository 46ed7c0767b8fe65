package activities

import (
	"os"
	"path/filepath"
	"testing"
)

// A task whose train is a folder of images (denoising-dirty-documents) is described by its
// files: a row per file, and the first file names as the prompt's snippet.
func TestTaskDataOfAFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "train")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"2.png", "3.png", "5.png"} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rows, cols, err := tableShape(dir)
	if err != nil || rows != 3 || cols != 1 {
		t.Fatalf("tableShape: %d rows, %d cols, %v; want 3, 1", rows, cols, err)
	}
	head, err := headLines(dir, 2, 4000)
	if err != nil || head != "2.png\n3.png" {
		t.Fatalf("headLines: %q, %v", head, err)
	}
}
