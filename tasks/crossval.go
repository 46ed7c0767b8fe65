package tasks

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"mlerl/ensemble"
)

// CVFolds are the folders of a k-fold partition of a prepared task's public train: the final
// answer's cross-validation. Fold f's public folder trains on the other folds and predicts
// fold f; Answers holds every fold's answers in fold order, to grade the concatenated
// out-of-fold predictions against.
type CVFolds struct {
	Folds   []Dirs
	Answers string
}

// CVFolds locates the k-fold partition of a task's public train.
func (l Layout) CVFolds(s *Spec, k int) CVFolds {
	base := l.cvBase(s, k)
	out := CVFolds{Answers: filepath.Join(base, "oof-"+s.Files.Answers)}
	for f := 1; f <= k; f++ {
		d := filepath.Join(base, fmt.Sprintf("fold-%d", f))
		out.Folds = append(out.Folds, Dirs{Public: filepath.Join(d, "public"), Private: filepath.Join(d, "private")})
	}
	return out
}

// cvBase is the partition's folder. Partitions of class-labelled tasks are stratified and live
// under a name of their own, so a data folder carved before stratification is not reused.
func (l Layout) cvBase(s *Spec, k int) string {
	name := fmt.Sprintf("cv-%d", k)
	if s.ClassLabelled() {
		name += "-stratified"
	}
	return filepath.Join(l.DataDir, s.ID, "prepared", name)
}

// carving serialises carving in this process; the rename makes concurrent processes safe.
var carving sync.Mutex

// CarveCrossValidation writes the k-fold partition of the task's public train unless it is
// there (carve.py with cv_folds: seeded by the spec's validation seed, so deterministic). On a
// class-labelled task every class is dealt evenly over the folds (stratified): on leaf, with
// 99 classes of 6-10 rows, a random 10-fold partition left one fold holding 5 rows of a class
// whose other 4 trained, and that fold alone decided the ranking of the answer's candidates. It is
// written beside its final place and renamed in, so a crash leaves nothing half-written.
func CarveCrossValidation(ctx context.Context, s *Spec, l Layout, python string, k int) (CVFolds, error) {
	if k < 2 {
		return CVFolds{}, fmt.Errorf("cross-validation needs at least 2 folds, got %d", k)
	}
	if err := l.CheckPrepared(s); err != nil {
		return CVFolds{}, err
	}
	carving.Lock()
	defer carving.Unlock()
	want := l.CVFolds(s, k)
	if _, err := os.Stat(want.Answers); err == nil {
		return want, nil
	}
	final := l.cvBase(s, k)
	tmp, err := os.MkdirTemp(filepath.Dir(final), ".carving-cv-")
	if err != nil {
		return CVFolds{}, err
	}
	defer os.RemoveAll(tmp)
	staged := Layout{DataDir: l.DataDir}
	var answers []string
	for f := 1; f <= k; f++ {
		rel, err := filepath.Rel(final, want.Folds[f-1].Public)
		if err != nil {
			return CVFolds{}, err
		}
		pub := filepath.Join(tmp, rel)
		dst := Dirs{Public: pub, Private: filepath.Join(filepath.Dir(pub), "private")}
		if err := carveFold(ctx, s, staged, python, f, dst, k); err != nil {
			return CVFolds{}, err
		}
		answers = append(answers, filepath.Join(dst.Private, s.Files.Answers))
	}
	if err := concatCSV(answers, filepath.Join(tmp, filepath.Base(want.Answers))); err != nil {
		return CVFolds{}, fmt.Errorf("joining the cross-validation answers of %s: %w", s.ID, err)
	}
	os.RemoveAll(final) // an older, incomplete partition (no answers file)
	if err := os.Rename(tmp, final); err != nil {
		if _, statErr := os.Stat(want.Answers); statErr == nil {
			return want, nil // another process carved it first
		}
		return CVFolds{}, err
	}
	return want, nil
}

// concatCSV writes the rows of files, which must share a header, one after another.
func concatCSV(files []string, out string) error {
	parts := make([][]byte, len(files))
	for i, f := range files {
		var err error
		if parts[i], err = os.ReadFile(f); err != nil {
			return err
		}
	}
	joined, err := ensemble.ConcatCSV(parts)
	if err != nil {
		return err
	}
	return os.WriteFile(out, joined, 0o644)
}
