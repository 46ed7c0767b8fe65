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

// CheckPrepared returns an error saying how to prepare the data when any file is missing.
func (l Layout) CheckPrepared(s *Spec) error {
	all := []Dirs{l.Dirs(s.ID, SplitTest)}
	for f := 1; f <= s.Validation.FoldCount(); f++ {
		all = append(all, l.FoldDirs(s.ID, f))
	}
	for _, d := range all {
		for _, f := range []string{
			filepath.Join(d.Public, s.Files.Train), filepath.Join(d.Public, s.Files.Test),
			filepath.Join(d.Public, s.Files.SampleSubmission), filepath.Join(d.Private, s.Files.Answers),
		} {
			if _, err := os.Stat(f); err != nil {
				return fmt.Errorf("task %s is not prepared in %s (%s is missing): run `starter tasks prepare --task %s --raw DIR --data-dir %s` with DIR holding Kaggle's raw files",
					s.ID, l.DataDir, f, s.ID, l.DataDir)
			}
		}
	}
	// Folds carved before the rule was recorded (27 November) were random shares.
	carving := "random"
	if b, err := os.ReadFile(l.carvingFile(s.ID)); err == nil {
		carving = strings.TrimSpace(string(b))
	}
	if carving != Carving(s) {
		return fmt.Errorf("task %s's validation folds in %s were carved %q, and the platform now carves them %q: run `starter tasks prepare --task %s --raw DIR --data-dir %s` again with DIR holding Kaggle's raw files",
			s.ID, l.DataDir, carving, Carving(s), s.ID, l.DataDir)
	}
	return nil
}

// carvingFile records the rule the task's validation folds were carved by (Carving).
func (l Layout) carvingFile(taskID string) string {
	return filepath.Join(l.DataDir, taskID, "prepared", "validation-carving.txt")
}
