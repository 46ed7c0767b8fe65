package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Special files are refused at once, naming what they are; a regular file (or a symlink to
// one) is read.
func TestOpenRefusesSpecialFilesWithoutBlocking(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(fifo, link); err != nil {
		t.Fatal(err)
	}
	for path, kind := range map[string]string{fifo: "a named pipe (FIFO)", link: "a named pipe (FIFO)", "/dev/null": "a character device", dir: "a folder"} {
		done := make(chan error, 1)
		go func() { _, err := ReadFile(path); done <- err }()
		select {
		case err := <-done:
			var nr *NotRegularError
			if !errors.As(err, &nr) || err.Error() != path+" is "+kind+", not a regular file" {
				t.Errorf("%s: %v, want a refusal naming %s", path, err, kind)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: ReadFile blocked", path)
		}
	}
	file := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(file, []byte("id: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good")
	if err := os.Symlink(file, good); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, good} {
		if b, err := ReadFile(p); err != nil || string(b) != "id: x\n" {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
	if _, err := ReadFile(filepath.Join(dir, "absent")); !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), "regular") {
		t.Errorf("a missing file: %v, want not-exist", err)
	}
}
