package activities

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"mlerl/model"
	"mlerl/tasks"
)

// What the activities read from a task's prepared data: its tables' shapes and first lines.

// describeTask reads the sizes the network conditions on from the prepared public files.
func describeTask(spec *tasks.Spec, layout tasks.Layout) (model.Task, error) {
	d := layout.Dirs(spec.ID, tasks.SplitTest)
	rows, _, err := tableShape(filepath.Join(d.Public, spec.Files.Train))
	if err != nil {
		return model.Task{}, err
	}
	_, features, err := tableShape(filepath.Join(d.Public, spec.Files.Test))
	if err != nil {
		return model.Task{}, err
	}
	_, subCols, err := tableShape(filepath.Join(d.Public, spec.Files.SampleSubmission))
	if err != nil {
		return model.Task{}, err
	}
	return model.Task{Modality: spec.Modality, LowerIsBetter: spec.LowerIsBetter(),
		Classes: subCols - 1, Features: features - 1, Rows: rows}, nil
}

func countLines(file string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<16)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// tableShape returns the rows and columns of a CSV (header excluded) or a JSON list of records;
// a folder (denoising's train/ of images) has a row per file and one column.
func tableShape(file string) (rows, cols int, err error) {
	if entries, err := os.ReadDir(file); err == nil {
		return len(entries), 1, nil
	}
	if strings.HasSuffix(file, ".json") {
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, 0, err
		}
		var recs []map[string]json.RawMessage
		if err := json.Unmarshal(b, &recs); err != nil {
			return 0, 0, fmt.Errorf("%s is not a JSON list of records: %w", file, err)
		}
		if len(recs) > 0 {
			cols = len(recs[0])
		}
		return len(recs), cols, nil
	}
	n, err := countLines(file)
	if err != nil {
		return 0, 0, err
	}
	h, err := readHeader(file)
	if err != nil {
		return 0, 0, err
	}
	return n - 1, len(h), nil
}

func readHeader(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return csv.NewReader(bufio.NewReader(f)).Read()
}

// headLines is the first n lines of file, at most max bytes (a JSON file may be one long line);
// of a folder, its first n file names.
func headLines(file string, n, max int) (string, error) {
	if entries, err := os.ReadDir(file); err == nil {
		var names []string
		for _, e := range entries[:min(n, len(entries))] {
			names = append(names, e.Name())
		}
		s := strings.Join(names, "\n")
		if len(s) > max {
			s = s[:max] + "..."
		}
		return s, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	r := bufio.NewReader(f)
	for i := 0; i < n && b.Len() < max; i++ {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			break
		}
	}
	s := b.String()
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strings.TrimRight(s, "\n"), nil
}
