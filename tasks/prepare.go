package tasks

import (
	"archive/zip"
	"bytes"
	"context"
	"embed"
	"encoding/csv"
	"fmt"
	"io"
	"math/rand/v2"
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
	script, err := preparers.ReadFile("preparers/" + s.ID + ".py")
	if err != nil {
		return fmt.Errorf("task %s has no preparer yet; prepare it with MLE-bench (`mlebench prepare -c %s`) and point --data-dir at its data folder", s.ID, s.ID)
	}
	rawDir, cleanup, err := openRaw(raw, s.RawFiles)
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
	cmd := exec.CommandContext(ctx, p.Python, "-c", string(script), rawDir, dirs.Public, dirs.Private)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if strings.Contains(msg, "No module named") {
			msg += " (install Debian's python3-pandas and python3-sklearn: scripts/setup-system.sh)"
		}
		return fmt.Errorf("preparing %s from %s failed: %v: %s", s.ID, raw, err, lastLines(msg, 5))
	}
	if err := CarveValidation(s, stagedLayout); err != nil {
		return err
	}
	final := filepath.Join(taskDir, "prepared")
	if err := os.RemoveAll(final); err != nil {
		return err
	}
	return os.Rename(filepath.Join(staging, s.ID, "prepared"), final)
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
	for _, f := range need {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			cleanup()
			return "", nil, fmt.Errorf("raw data %s lacks %s: download the competition's files from Kaggle (kaggle competitions download -c ...)", raw, f)
		}
	}
	return dir, cleanup, nil
}

func unzip(file, dest string) error {
	r, err := zip.OpenReader(file)
	if err != nil {
		return err
	}
	defer r.Close()
	for _, f := range r.File {
		name := filepath.Base(f.Name) // flatten: Kaggle zips sometimes nest one folder
		if f.FileInfo().IsDir() || name == "." {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return err
		}
		out, err := os.Create(filepath.Join(dest, name))
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

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// CarveValidation writes the validation split: a seeded fraction of the public train becomes a
// test file with the real test's schema, answers in the real answers' schema, and a sample
// submission; the rest is the validation train. Deterministic for a given spec.
func CarveValidation(s *Spec, l Layout) error {
	src := l.Dirs(s.ID, SplitTest)
	header, rows, err := readCSV(filepath.Join(src.Public, s.Files.Train))
	if err != nil {
		return err
	}
	testHeader, _, err := readCSV(filepath.Join(src.Public, s.Files.Test))
	if err != nil {
		return err
	}
	ansHeader, _, err := readCSV(filepath.Join(src.Private, s.Files.Answers))
	if err != nil {
		return err
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[h] = i
	}
	for _, c := range append([]string{s.IDColumn}, s.TargetColumns...) {
		if _, ok := idx[c]; !ok {
			return fmt.Errorf("task %s: train file has no column %q named in the spec", s.ID, c)
		}
	}
	if s.Modality != "tabular-classification" || len(s.TargetColumns) != 1 {
		return fmt.Errorf("task %s: validation carving supports one-hot classification answers only so far", s.ID)
	}
	perm := rand.New(rand.NewPCG(s.Validation.Seed, 0x6d6c65726c)).Perm(len(rows))
	nVal := int(float64(len(rows))*s.Validation.Fraction + 0.999999)
	valSet := map[int]bool{}
	for _, i := range perm[:nVal] {
		valSet[i] = true
	}
	var train, test, answers, sample [][]string
	classes := ansHeader[1:] // answers are id + one column per class
	uniform := fmt.Sprint(1 / float64(len(classes)))
	target := idx[s.TargetColumns[0]]
	for i, row := range rows {
		if !valSet[i] {
			train = append(train, row)
			continue
		}
		var t []string
		for _, h := range testHeader {
			t = append(t, row[idx[h]])
		}
		test = append(test, t)
		a := []string{row[idx[s.IDColumn]]}
		smp := []string{row[idx[s.IDColumn]]}
		found := false
		for _, c := range classes {
			v := "0"
			if c == row[target] {
				v, found = "1", true
			}
			a = append(a, v)
			smp = append(smp, uniform)
		}
		if !found {
			return fmt.Errorf("task %s: label %q of row %d is not an answers column", s.ID, row[target], i+1)
		}
		answers = append(answers, a)
		sample = append(sample, smp)
	}
	dst := l.Dirs(s.ID, SplitValidation)
	for _, d := range []string{dst.Public, dst.Private} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	writes := []struct {
		file   string
		header []string
		rows   [][]string
	}{
		{filepath.Join(dst.Public, s.Files.Train), header, train},
		{filepath.Join(dst.Public, s.Files.Test), testHeader, test},
		{filepath.Join(dst.Public, s.Files.SampleSubmission), ansHeader, sample},
		{filepath.Join(dst.Private, s.Files.Answers), ansHeader, answers},
	}
	for _, w := range writes {
		if err := writeCSV(w.file, w.header, w.rows); err != nil {
			return err
		}
	}
	return nil
}

func readCSV(file string) ([]string, [][]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", file, err)
	}
	if len(all) == 0 {
		return nil, nil, fmt.Errorf("%s is empty", file)
	}
	return all[0], all[1:], nil
}

func writeCSV(file string, header []string, rows [][]string) error {
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(header)
	w.WriteAll(slices.Clip(rows))
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
