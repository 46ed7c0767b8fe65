package sandbox

import (
	"bytes"
	"sync"
)

// tailBuffer keeps the last max bytes written and counts all of them, so a program that prints
// gigabytes costs a fixed amount of memory.
type tailBuffer struct {
	mu       sync.Mutex
	max      int
	buf      []byte
	total    int64
	lastLine string
	partial  []byte
}

func newTailBuffer(max int) *tailBuffer { return &tailBuffer{max: max} }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.total += int64(len(p))
	t.buf = append(t.buf, p...)
	if len(t.buf) > t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
	}
	t.partial = append(t.partial, p...)
	if i := bytes.LastIndexByte(t.partial, '\n'); i >= 0 {
		lines := bytes.Split(bytes.TrimRight(t.partial[:i], "\n"), []byte("\n"))
		if len(lines) > 0 {
			t.lastLine = string(lines[len(lines)-1])
		}
		t.partial = append(t.partial[:0], t.partial[i+1:]...)
	}
	if len(t.partial) > 4096 {
		t.partial = t.partial[len(t.partial)-4096:]
	}
	return len(p), nil
}

func (t *tailBuffer) snapshot() (string, int64, string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.buf), t.total, t.lastLine
}
