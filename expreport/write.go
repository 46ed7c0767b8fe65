package expreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
	"mlerl/runrecord"
)

// Result lists what Write wrote.
type Result struct {
	// Dir is DIR/report.
	Dir string
	// Files are the paths written, in the order written: each table's .md and .csv, each
	// figure's .png, report.md, index.html.
	Files []string
	// Skipped says which tables and figures are left out, and why ("fig8-duration: ...").
	Skipped []string
	// From says what the report was built from: FromLedger or FromCells.
	From string
}

// Dir is the report's folder inside an experiment directory; IndexFile its page.
const (
	Dir       = "report"
	IndexFile = "index.html"
)

// Write reads DIR/experiment.json and the cells' DIR/runs/<run>/metrics.jsonl and writes the
// report into DIR/report. Missing runs or metrics leave their parts of the report empty (and
// say so); only an unreadable ledger or a failure to write is an error. A folder without a
// ledger but with a committed cell table (DIR/cells.csv) gets the report's cell table and pass
// verdict rebuilt from it and its spec (Result.From says which was used): lab experiments
// whose ledgers were never committed keep only that table.
func Write(dir string) (Result, error) {
	b, err := os.ReadFile(filepath.Join(dir, runstore.LedgerFile))
	if errors.Is(err, os.ErrNotExist) {
		if _, cerr := os.Stat(filepath.Join(dir, CellsFile)); cerr == nil {
			return writeFromCells(dir)
		}
		return Result{}, fmt.Errorf("%s: no ledger (%s) and no cell table (%s) to build a report from: run the experiment, "+
			"or name a folder that holds one of them", dir, runstore.LedgerFile, CellsFile)
	}
	if err != nil {
		return Result{}, err
	}
	var led experiment.Ledger
	if err := json.Unmarshal(b, &led); err != nil {
		return Result{}, fmt.Errorf("%s: %w", filepath.Join(dir, runstore.LedgerFile), err)
	}
	metrics := map[string][]runrecord.IterationMetrics{}
	var notes []string
	for _, c := range led.Cells {
		path := filepath.Join(runstore.ExperimentRunDir(dir, c.Run), runstore.MetricsKey)
		ms, bad, err := ReadMetrics(path)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if bad > 0 {
			notes = append(notes, fmt.Sprintf("%s/%s/%s: %d unreadable lines skipped", runstore.ExperimentRunsDir, c.Run, runstore.MetricsKey, bad))
		}
		metrics[c.Run] = ms
	}
	rep, err := Build(led, metrics)
	if err != nil {
		return Result{}, err
	}
	rep.Notes = append(rep.Notes, notes...)
	res, err := rep.WriteTo(filepath.Join(dir, Dir))
	res.From = FromLedger
	return res, err
}

// ReadMetrics reads a metrics.jsonl: every line that decodes (in file order), and how many
// did not (a line cut short by a crash, say).
func ReadMetrics(path string) ([]runrecord.IterationMetrics, int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	var out []runrecord.IterationMetrics
	bad := 0
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			var m runrecord.IterationMetrics
			if json.Unmarshal(line, &m) != nil {
				bad++
			} else {
				out = append(out, m)
			}
		}
		if err == io.EOF {
			return out, bad, nil
		}
		if err != nil {
			return out, bad, err
		}
	}
}

// WriteTo renders the report into dir: tables (.md, .csv), figures (.png), report.md and
// index.html. Files of skipped tables and figures left by an earlier report are removed.
func (r *Report) WriteTo(dir string) (Result, error) {
	res := Result{Dir: dir}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return res, err
	}
	write := func(name string, b []byte) error {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
		res.Files = append(res.Files, p)
		return nil
	}
	stale := func(names ...string) {
		for _, n := range names {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
	for _, t := range r.Tables {
		if t.Skip != "" {
			res.Skipped = append(res.Skipped, t.Name+": "+t.Skip)
			stale(t.Name+".md", t.Name+".csv")
			continue
		}
		md, err := t.Markdown()
		if err != nil {
			return res, fmt.Errorf("table %s: %w", t.Name, err)
		}
		csv, err := t.CSV()
		if err != nil {
			return res, fmt.Errorf("table %s: %w", t.Name, err)
		}
		page := fmt.Sprintf("## %s\n\n%s\n\n%s", t.Title, t.Caption, md)
		if err := write(t.Name+".md", []byte(page)); err != nil {
			return res, err
		}
		if err := write(t.Name+".csv", csv); err != nil {
			return res, err
		}
	}
	pngs := map[string][]byte{}
	for i := range r.Figures {
		f := &r.Figures[i]
		if f.Skip != "" {
			res.Skipped = append(res.Skipped, f.Name+": "+f.Skip)
			stale(f.Name + ".png")
			continue
		}
		png, err := f.PNG()
		if err != nil {
			// A figure that cannot be drawn is reported as skipped, never a failed report.
			f.Skip = "could not be drawn: " + err.Error()
			res.Skipped = append(res.Skipped, f.Name+": "+f.Skip)
			stale(f.Name + ".png")
			continue
		}
		pngs[f.Name] = png
		if err := write(f.Name+".png", png); err != nil {
			return res, err
		}
	}
	md, err := r.Markdown()
	if err != nil {
		return res, err
	}
	if err := write("report.md", []byte(md)); err != nil {
		return res, err
	}
	if err := write(IndexFile, []byte(r.HTML(pngs))); err != nil {
		return res, err
	}
	return res, nil
}
