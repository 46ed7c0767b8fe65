package artifacts

import (
	"context"
	"errors"
	"testing"
)

func TestFSStore(t *testing.T) {
	ctx := context.Background()
	s := FS{Root: t.TempDir()}
	if err := s.Put(ctx, "samples/a/program.py", []byte("print(1)")); err != nil {
		t.Fatal(err)
	}
	b, err := s.Get(ctx, "samples/a/program.py")
	if err != nil || string(b) != "print(1)" {
		t.Fatalf("got %q %v", b, err)
	}
	if _, err := s.Get(ctx, "missing"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing key: %v", err)
	}
	s.Put(ctx, "metrics.jsonl", []byte("1\n"))
	s.Put(ctx, "metrics.jsonl", []byte("2\n"))
	if b, _ := s.Get(ctx, "metrics.jsonl"); string(b) != "2\n" {
		t.Fatalf("overwrite: %q", b)
	}
	if err := s.Put(ctx, "../escape", nil); err == nil {
		t.Fatal("a key leaving the root must be refused")
	}
}
