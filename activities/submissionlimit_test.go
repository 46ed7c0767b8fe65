package activities

import (
	"os"
	"path/filepath"
	"testing"
)

// A submission is read back up to 64 MiB, or four times the answers where they are larger (a
// pixel per row), so a task graded pixel by pixel can submit its millions of rows.
func TestSubmissionLimitFollowsTheAnswers(t *testing.T) {
	dir := t.TempDir()
	small, big := filepath.Join(dir, "small.csv"), filepath.Join(dir, "big.csv")
	if err := os.WriteFile(small, []byte("id,y\n1,0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(100 << 20); err != nil { // sparse: costs no disk
		t.Fatal(err)
	}
	f.Close()
	for _, c := range []struct {
		answers string
		want    int64
	}{{small, 64 << 20}, {filepath.Join(dir, "missing.csv"), 64 << 20}, {big, 4*(100<<20) + 1<<20}} {
		if got := submissionLimit(c.answers); got != c.want {
			t.Errorf("%s: limit %d, want %d", filepath.Base(c.answers), got, c.want)
		}
	}
}
