// Package artifacts stores what a run produces (samples, checkpoints, metrics, reports) under
// string keys, so activities exchange small references instead of megabytes.
package artifacts

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotFound is returned by Get for a missing key.
var ErrNotFound = errors.New("artifact not found")

// Store is a key-value store of artifacts.
type Store interface {
	Put(ctx context.Context, key string, data []byte) error
	Get(ctx context.Context, key string) ([]byte, error)
	// Location says where key lives, for people (a path or URL).
	Location(key string) string
}

// FS keeps artifacts as files under Root: the run directory of the embedded stack.
type FS struct{ Root string }

func (f FS) path(key string) (string, error) {
	clean := filepath.Clean("/" + key)
	if clean == "/" || strings.Contains(key, "..") {
		return "", fmt.Errorf("artifact key %q is not a relative path", key)
	}
	return filepath.Join(f.Root, clean), nil
}

// Put writes atomically (temporary file, then rename), so a crash never leaves half a file.
func (f FS) Put(_ context.Context, key string, data []byte) error {
	p, err := f.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), p)
}

// Get reads key.
func (f FS) Get(_ context.Context, key string) ([]byte, error) {
	p, err := f.path(key)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotFound, p)
	}
	return b, err
}

// Location is the file's path.
func (f FS) Location(key string) string {
	p, err := f.path(key)
	if err != nil {
		return key
	}
	return p
}

// Path returns the local file for key (activities that hand files to a sandbox need one).
func (f FS) Path(key string) (string, error) { return f.path(key) }

// Runs locates the store of each run, so one worker can serve many runs.
type Runs interface {
	Run(id string) (Store, error)
}

// FSRuns keeps each run in a folder under Root.
type FSRuns struct{ Root string }

// Run returns the run's folder as a store.
func (r FSRuns) Run(id string) (Store, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return nil, fmt.Errorf("run id %q is not a folder name", id)
	}
	return FS{Root: filepath.Join(r.Root, id)}, nil
}
