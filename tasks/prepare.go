package tasks

import (
	"archive/zip"
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

//go:embed preparers/*.py
var preparers embed.FS

// Preparer turns Kaggle's raw files into MLE-bench's prepared layout plus our validation split.
type Preparer struct {
	Layout Layout
	Python string // interpreter with pandas and scikit-learn (Debian's /usr/bin/python3)
}

// Prepare builds <data-dir>/<id>/prepared from raw (a folder or a zip). Files already prepared
// are rebuilt into a temporary folder first and moved in only on success, so a failure loses
// nothing that was there.
func (p Preparer) Prepare(ctx context.Context, s *Spec, raw string) error {
	args, err := preparation(s)
	if err != nil {
		return err
	}
	need := s.RawFiles
	for _, f := range []string{s.Split.Raw, s.Split.Images} {
		if f != "" && !slices.Contains(need, f) {
			need = append(slices.Clip(need), f)
		}
	}
	rawDir, cleanup, err := openRaw(raw, need)
	if err != nil {
		return err
	}
	defer cleanup()

	taskDir := filepath.Join(p.Layout.DataDir, s.ID)
	if err := os.MkdirAll(taskDir, 0o755); err != nil {
		return fmt.Errorf("creating %s: %w (is --data-dir writable?)", taskDir, err)
	}
	staging, err := os.MkdirTemp(taskDir, ".prepare-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(staging)
	stagedLayout := Layout{DataDir: staging}
	dirs := stagedLayout.Dirs(s.ID, SplitTest)
	for _, d := range []string{dirs.Public, dirs.Private} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	cmd := exec.CommandContext(ctx, p.Python, args(rawDir, dirs)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "No module named") {
			msg += " (install Debian's python3-pandas and python3-sklearn: scripts/setup-system.sh)"
		}
		return fmt.Errorf("preparing %s from %s failed: %v: %s", s.ID, raw, err, lastLines(msg, 5))
	}
	if err := CarveValidation(ctx, s, stagedLayout, p.Python); err != nil {
		return err
	}
	final := filepath.Join(taskDir, "prepared")
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	return os.Rename(filepath.Join(staging, s.ID, "prepared"), final)
}

// CarveFolds carves the validation folds of a task whose test split is already prepared (by
// MLE-bench, say), replacing any folds there.
func (p Preparer) CarveFolds(ctx context.Context, s *Spec) error {
	if err := p.Layout.CheckTestSplit(s); err != nil {
		return err
	}
	for f := 1; f <= s.Validation.FoldCount(); f++ {
		d := p.Layout.FoldDirs(s.ID, f)
		if err := os.RemoveAll(filepath.Dir(d.Public)); err != nil {
			return err
		}
	}
	return CarveValidation(ctx, s, p.Layout, p.Python)
}

// preparation returns the Python command line (after the interpreter) that prepares s from a
// folder of raw files into a split's folders: the generic split when the spec has split.raw,
// the spec's preparer file, or a built-in task's own preparer.
func preparation(s *Spec) (func(raw string, d Dirs) []string, error) {
	if s.Generic() {
		sample := make([][2]any, 0, len(s.TargetColumns))
		for _, c := range s.TargetColumns {
			sample = append(sample, [2]any{c, s.Split.SampleSubmission[c]})
		}
		return func(raw string, d Dirs) []string {
			cfg, _ := json.Marshal(map[string]any{"raw": raw, "public": d.Public, "private": d.Private,
				"split": map[string]any{"raw": s.Split.Raw, "test_size": s.Split.TestSize, "random_state": s.Split.RandomState,
					"stratify": s.Split.Stratify, "images": s.Split.Images},
				"files": map[string]string{"train": s.Files.Train, "test": s.Files.Test,
					"sample_submission": s.Files.SampleSubmission, "answers": s.Files.Answers}, "id_column": s.IDColumn, "target_columns": s.TargetColumns,
				"sample": sample, "images_folder": s.Inputs.Images, "image_ext": s.Inputs.ImageExt})
			return []string{"-c", genericScript, string(cfg)}
		}, nil
	}
	script, err := preparerScript(s)
	if err != nil {
		return nil, err
	}
	return func(raw string, d Dirs) []string { return []string{"-c", script, raw, d.Public, d.Private} }, nil
}

// preparerScript returns the Python source of a preparer: preparers/common.py (the helpers the
// preparers share) followed by the spec's preparer file, or a built-in task's
// preparers/<id>.py. Only a built-in task has one of those, so an id that is not one (such as
// "common") is refused before the lookup.
func preparerScript(s *Spec) (string, error) {
	if s.Preparer != "" {
		return specScript(s, "preparer", s.Preparer)
	}
	noPreparer := fmt.Errorf("task %s has no preparation: give its spec split.raw (the generic split: docs/tasks.md) or preparer (a Python file beside the spec); "+
		"or prepare it with MLE-bench (`mlebench prepare -c %s`) and run `starter tasks prepare` without --raw, with --data-dir its data folder, to carve the validation folds", s.ID, s.ID)
	if _, err := Builtin().Get(s.ID); err != nil {
		return "", noPreparer
	}
	script, err := preparers.ReadFile("preparers/" + s.ID + ".py")
	if err != nil {
		return "", noPreparer
	}
	return withCommon(script), nil
}

// carverScript returns the Python source that carves one fold of s: carve.py, or
// preparers/common.py followed by the spec's carver file.
func carverScript(s *Spec) (string, error) {
	if s.Carver == "" {
		return carveScript, nil
	}
	return specScript(s, "carver", s.Carver)
}

// specScript reads the Python file a spec field names (relative to a user spec's folder; a
// built-in spec's in the embedded preparers/) and puts preparers/common.py before it.
func specScript(s *Spec, field, name string) (string, error) {
	if s.Dir == "" {
		script, err := preparers.ReadFile("preparers/" + name)
		if err != nil {
			return "", fmt.Errorf("built-in task %s: field %s: no embedded preparers/%s", s.ID, field, name)
		}
		return withCommon(script), nil
	}
	script, err := os.ReadFile(filepath.Join(s.Dir, name))
	if err != nil {
		return "", fmt.Errorf("task %s: field %s: %w (the %s file is relative to the spec file's folder: put it there, or fix the name)", s.ID, field, err, field)
	}
	return withCommon(script), nil
}

// withCommon puts preparers/common.py, the helpers every preparer and carver may call, first.
func withCommon(script []byte) string {
	common, err := preparers.ReadFile("preparers/common.py")
	if err != nil {
		panic(err) // embedded at build time: cannot fail at run time
	}
	return string(common) + "\n" + string(script)
}

// openRaw returns a folder holding the raw files, extracting a zip when given one.
func openRaw(raw string, need []string) (string, func(), error) {
	st, err := os.Stat(raw)
	if err != nil {
		return "", nil, fmt.Errorf("raw data %s: %w (give --raw the folder or zip of Kaggle's competition files)", raw, err)
	}
	dir, cleanup := raw, func() {}
	if !st.IsDir() {
		tmp, err := os.MkdirTemp("", "mlerl-raw-")
		if err != nil {
			return "", nil, err
		}
		cleanup = func() { os.RemoveAll(tmp) }
		if err := unzip(raw, tmp); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("raw data %s is neither a folder nor a readable zip: %w", raw, err)
		}
		dir = tmp
	}
	// An entry "a|b" is satisfied by either file (Kaggle ships some files zipped or not).
	for _, f := range need {
		found := false
		for _, alt := range strings.Split(f, "|") {
			if _, err := os.Stat(filepath.Join(dir, alt)); err == nil {
				found = true
			}
		}
		if !found {
			cleanup()
			return "", nil, fmt.Errorf("raw data %s lacks %s (named by the spec's raw_files or split): download the competition's files from Kaggle (kaggle competitions download -c ...), or fix the name in the spec", raw, strings.ReplaceAll(f, "|", " or "))
		}
	}
	return dir, cleanup, nil
}

// unzip extracts file into dest, keeping folders (plant's images/) but dropping a single
// top-level folder that wraps everything, as some Kaggle zips have.
func unzip(file, dest string) error {
	r, err := zip.OpenReader(file)
	if err != nil {
		return err
	}
	defer r.Close()
	prefix := commonTopFolder(r.File)
	for _, f := range r.File {
		name := strings.TrimPrefix(f.Name, prefix)
		if name == "" || strings.HasSuffix(name, "/") {
			continue
		}
		clean := filepath.Clean(name)
		if filepath.IsAbs(clean) || clean == ".." || strings.HasPrefix(clean, "../") {
			return fmt.Errorf("zip entry %q leaves the extraction folder", f.Name)
		}
		target := filepath.Join(dest, clean)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		out, err := os.Create(target)
		if err != nil {
			rc.Close()
			return err
		}
		_, err = io.Copy(out, rc)
		rc.Close()
		out.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// commonTopFolder returns "dir/" when every entry lies under one top-level folder.
func commonTopFolder(files []*zip.File) string {
	top := ""
	for _, f := range files {
		first, _, nested := strings.Cut(f.Name, "/")
		if !nested {
			return "" // a file at the top level
		}
		if top != "" && first != top {
			return ""
		}
		top = first
	}
	if top == "" {
		return ""
	}
	return top + "/"
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// CarveValidation writes the validation folds (carve.py, or the spec's carver, which holds out
// its own kind of rows alike): for each fold a seeded share of the public train (stratified on
// class-labelled tasks) becomes a test file with the real test's columns, answers with the real
// answers' columns and a sample submission like the real one; the rest is that fold's train.
// The folds are disjoint shares of one seeded order, so fold 1 is the same whatever the fold
// count. Deterministic.
func CarveValidation(ctx context.Context, s *Spec, l Layout, python string) error {
	for f := 1; f <= s.Validation.FoldCount(); f++ {
		if err := carveFold(ctx, s, l, python, f, l.FoldDirs(s.ID, f), 0); err != nil {
			return err
		}
	}
	return os.WriteFile(l.carvingFile(s.ID), []byte(Carving(s)+"\n"), 0o644)
}

// Carving names the rule the validation folds of s are carved by. It is written beside them,
// and data carved by another rule counts as unprepared, so a data folder from before a rule
// changed is carved again rather than silently rewarding programs on other rows.
func Carving(s *Spec) string {
	if s.ClassLabelled() {
		return "stratified by " + strings.Join(s.TargetColumns, ", ")
	}
	return "random"
}

// carveFold writes fold into dst: a validation fold, or with cvFolds > 0 fold of that many
// folds partitioning the train.
func carveFold(ctx context.Context, s *Spec, l Layout, python string, fold int, dst Dirs, cvFolds int) error {
	src := l.Dirs(s.ID, SplitTest)
	var stratify []string // the columns whose values are a row's class
	if s.ClassLabelled() {
		stratify = s.TargetColumns
	}
	cfg, err := json.Marshal(map[string]any{"cv_folds": cvFolds, "stratify": stratify,
		"public": src.Public, "private": src.Private, "out_public": dst.Public, "out_private": dst.Private,
		"files": map[string]string{"train": s.Files.Train, "test": s.Files.Test,
			"sample_submission": s.Files.SampleSubmission, "answers": s.Files.Answers},
		"id_column": s.IDColumn, "target_columns": s.TargetColumns, "format": s.Answers.Format,
		"answer_columns": s.Answers.Columns,
		"fraction":       s.Validation.Fraction, "seed": s.Validation.Seed, "fold": fold, "images": s.Inputs.Images,
	})
	if err != nil {
		return err
	}
	script, err := carverScript(s)
	if err != nil {
		return err
	}
	what := "validation fold"
	if cvFolds > 0 {
		what = fmt.Sprintf("cross-validation fold (of %d)", cvFolds)
	}
	by := "carve.py"
	if s.Carver != "" {
		by = "the spec's carver " + s.Carver
	}
	cmd := exec.CommandContext(ctx, python, "-c", script, string(cfg))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("carving %s %d of %s with %s: %v: %s", what, fold, s.ID, by, err, lastLines(strings.TrimSpace(stderr.String()), 5))
	}
	// A carver that exits cleanly without writing the fold would otherwise surface only later,
	// as a task that never counts as prepared.
	for _, f := range []string{filepath.Join(dst.Public, s.Files.Train), filepath.Join(dst.Public, s.Files.Test),
		filepath.Join(dst.Public, s.Files.SampleSubmission), filepath.Join(dst.Private, s.Files.Answers)} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("carving %s %d of %s: %s exited without error but wrote no %s: a carver must write the fold's files (files.train, files.test, files.sample_submission into its config's out_public, files.answers into out_private)",
				what, fold, s.ID, by, f)
		}
	}
	return nil
}

//go:embed carve.py
var carveScript string

//go:embed generic.py
var genericScript string
