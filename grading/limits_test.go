package grading

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mlerl/tasks"
)

func aucSpec() *tasks.Spec {
	return &tasks.Spec{ID: "tabular-playground-series-may-2022", Metric: "roc-auc", Direction: "max", IDColumn: "id",
		Answers: tasks.Answers{Format: "columns", Columns: []string{"target"}, MatchBy: "id"}}
}

// Special files are refused without blocking, and what is not CSV text is invalid with a reason.
func TestGradeRefusesSpecialFilesAndBinaryData(t *testing.T) {
	dir := t.TempDir()
	ans := filepath.Join(dir, "answers.csv")
	os.WriteFile(ans, []byte("id,target\n1,1\n2,0\n3,1\n4,0\n"), 0o644)
	good := "id,target\n1,0.9\n2,0.1\n3,0.8\n4,0.2\n"
	file := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := filepath.Join(dir, "fifo.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	linkToFifo := filepath.Join(dir, "link.csv")
	os.Symlink(fifo, linkToFifo)
	folder := filepath.Join(dir, "folder.csv")
	os.Mkdir(folder, 0o755)
	linkToGood := filepath.Join(dir, "link-good.csv")
	os.Symlink(file("good.csv", []byte(good)), linkToGood)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte(good))
	zw.Close()
	wide := "id,target" + strings.Repeat(",x", 100) + "\n"
	cases := []struct {
		name, path, reason string
	}{
		{"a FIFO with no writer", fifo, "named pipe (FIFO)"},
		{"a symlink to a FIFO", linkToFifo, "named pipe (FIFO)"},
		{"a character device", "/dev/zero", "character device"},
		{"a folder", folder, "a folder"},
		{"gzip data named .csv", file("gz.csv", gz.Bytes()), "gzip-compressed"},
		{"a NUL byte", file("nul.csv", []byte("id,target\n1,0.9\x00\n2,0.1\n3,0.8\n4,0.2\n")), "NUL byte at offset 15"},
		{"Latin-1 text", file("latin1.csv", []byte("id,target\n1,0.9\n2,0.1\n3,0.8\n4,0.2\xe9\n")), "not UTF-8"},
		{"too many columns", file("wide.csv", []byte(wide)), "102 columns"},
		{"too many rows", file("long.csv", []byte(good+strings.Repeat("5,0.5\n", 10))), "14 rows, the answers have 4"},
		{"a short row", file("short.csv", []byte("id,target\n1,0.9\n2\n3,0.8\n4,0.2\n")), "row 2 has 1 fields"},
		{"a line past the limit", file("longline.csv", []byte("id,target\n1,0.9\n2,0."+strings.Repeat("1", 70000)+"\n3,0.8\n4,0.2\n")), "line 3 is longer than"},
	}
	for _, c := range cases {
		done := make(chan struct{}, 1)
		var r Result
		var err error
		go func() {
			r, err = Grade(aucSpec(), c.path, ans)
			done <- struct{}{}
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: grading blocked", c.name)
		}
		if err != nil || r.Valid || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("%s: %+v %v, want invalid with a reason containing %q", c.name, r, err, c.reason)
		}
	}
	// Allowed: a symlink to a regular file, a UTF-8 byte-order mark (pandas skips it).
	for _, p := range []string{linkToGood, file("bom.csv", []byte("\ufeff"+good))} {
		if r, err := Grade(aucSpec(), p, ans); err != nil || !r.Valid || *r.Score != 1 {
			t.Errorf("%s: %+v %v, want valid with score 1", filepath.Base(p), r, err)
		}
	}
}

func TestGradeTimeLimit(t *testing.T) {
	dir := t.TempDir()
	ans, sub := filepath.Join(dir, "answers.csv"), filepath.Join(dir, "sub.csv")
	os.WriteFile(ans, []byte("id,target\n1,1\n2,0\n"), 0o644)
	os.WriteFile(sub, []byte("id,target\n1,0.9\n2,0.1\n"), 0o644)
	defer func(d time.Duration) { GradeTimeout = d }(GradeTimeout)
	GradeTimeout = time.Nanosecond
	r, err := Grade(aucSpec(), sub, ans)
	if err != nil || r.Valid || !strings.Contains(r.Reason, "grading took longer than its limit") {
		t.Fatalf("%+v %v, want invalid for the time limit", r, err)
	}
}

func TestLimitsScaleWithTheAnswers(t *testing.T) {
	ans, err := parseTable(strings.NewReader("id,a,b\n1,1,0\n2,0,1\n"))
	if err != nil {
		t.Fatal(err)
	}
	l := LimitsFor(ans, 100)
	// 4 x 100 bytes + 24 bytes x 3 rows (with the header) x 3 columns + 1 MiB.
	if l.MaxBytes != 400+24*9+1<<20 || l.MaxColumns != 70 || l.MaxRows != 2 || l.MaxLine != minLine {
		t.Fatalf("%+v", l)
	}
}
