package tasks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// DefaultDataDir is MLE-bench's default data directory.
func DefaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return filepath.Join(".cache", "mle-bench", "data")
	}
	return filepath.Join(home, ".cache", "mle-bench", "data")
}

// Split names which public/private pair a program sees and is graded on.
type SplitName string

const (
	// SplitTest is MLE-bench's own split: the public train, and the private test answers.
	SplitTest SplitName = "test"
	// SplitValidation is carved from the public train for leak-free rewards.
	SplitValidation SplitName = "validation"
)

// Dirs are the folders of one split of one prepared task.
type Dirs struct {
	Public  string // everything an agent's program may read
	Private string // answers: never mounted in a sandbox
}

// Layout locates prepared data in MLE-bench's on-disk layout.
type Layout struct{ DataDir string }

// Dirs returns the public and private folders of a split.
func (l Layout) Dirs(taskID string, split SplitName) Dirs {
	base := filepath.Join(l.DataDir, taskID, "prepared")
	if split == SplitValidation {
		base = filepath.Join(base, "validation")
	}
	return Dirs{Public: filepath.Join(base, "public"), Private: filepath.Join(base, "private")}
}

// FoldDirs returns the folders of validation fold f (1-based): fold 1 is the validation split,
// fold f > 1 lives beside it as validation-<f>.
func (l Layout) FoldDirs(taskID string, fold int) Dirs {
	if fold <= 1 {
		return l.Dirs(taskID, SplitValidation)
	}
	base := filepath.Join(l.DataDir, taskID, "prepared", fmt.Sprintf("validation-%d", fold))
	return Dirs{Public: filepath.Join(base, "public"), Private: filepath.Join(base, "private")}
}

// CheckTestSplit returns an error saying how to prepare the data when a file of the test split
// (MLE-bench's own, all that grading needs) is missing.
func (l Layout) CheckTestSplit(s *Spec) error {
	return l.checkFiles(s, l.Dirs(s.ID, SplitTest), "")
}

// CheckPrepared returns an error saying how to prepare the data when any file of the test split
// or of the validation folds is missing.
func (l Layout) CheckPrepared(s *Spec) error {
	if err := l.CheckTestSplit(s); err != nil {
		return err
	}
	for f := 1; f <= s.Validation.FoldCount(); f++ {
		if err := l.checkFiles(s, l.FoldDirs(s.ID, f), fmt.Sprintf(
			"its validation folds are not carved (%%s is missing): run `starter tasks prepare --task %s --data-dir %s` (without --raw, it carves them from the prepared test split)",
			s.ID, l.DataDir)); err != nil {
			return err
		}
	}
	// Folds carved before the rule was recorded (27 November) were random shares.
	carving := "random"
	if b, err := os.ReadFile(l.carvingFile(s.ID)); err == nil {
		carving = strings.TrimSpace(string(b))
	}
	if carving != Carving(s) {
		return fmt.Errorf("task %s's validation folds in %s were carved %q, and the platform now carves them %q: run `starter tasks prepare --task %s --data-dir %s` again (without --raw it carves the folds anew)",
			s.ID, l.DataDir, carving, Carving(s), s.ID, l.DataDir)
	}
	return nil
}

// checkFiles returns an error when a file of the split in d is missing: notPrepared (a format
// with one %s, the missing file) when given, else how to prepare the task from raw files.
func (l Layout) checkFiles(s *Spec, d Dirs, notPrepared string) error {
	for _, f := range []string{
		filepath.Join(d.Public, s.Files.Train), filepath.Join(d.Public, s.Files.Test),
		filepath.Join(d.Public, s.Files.SampleSubmission), filepath.Join(d.Private, s.Files.Answers),
	} {
		if _, err := os.Stat(f); err != nil {
			if notPrepared != "" {
				return fmt.Errorf("task %s in %s: "+notPrepared, s.ID, l.DataDir, f)
			}
			return fmt.Errorf("task %s is not prepared in %s (%s is missing): run `starter tasks prepare --task %s --raw DIR --data-dir %s` with DIR holding Kaggle's raw files",
				s.ID, l.DataDir, f, s.ID, l.DataDir)
		}
	}
	return nil
}

// carvingFile records the rule the task's validation folds were carved by (Carving).
func (l Layout) carvingFile(taskID string) string {
	return filepath.Join(l.DataDir, taskID, "prepared", "validation-carving.txt")
}
