// Package report renders a run's results beside the paper's numbers (Tables 1, 2 and 4 of
// "Reinforcement Learning for Machine Learning Engineering Agents") as terminal and Markdown
// tables.
package report

import (
	"bytes"
	_ "embed"
	"encoding/csv"
	"fmt"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// paperTables is a copy of shared/data/baselines/paper_tables.csv (a test keeps them equal).
//
//go:embed paper_tables.csv
var paperTables []byte

// Baseline is one system's number in one of the paper's tables.
type Baseline struct {
	Table, Task, Better, System string
	Mean, Stderr                *float64
}

// Baselines returns the paper's numbers for a task, in file order.
func Baselines(task string) ([]Baseline, error) {
	rows, err := csv.NewReader(bytes.NewReader(paperTables)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("embedded paper tables: %w", err)
	}
	var out []Baseline
	for _, r := range rows[1:] {
		if len(r) != 6 || r[1] != task {
			continue
		}
		b := Baseline{Table: r[0], Task: r[1], Better: r[2], System: r[3]}
		if v, err := strconv.ParseFloat(r[4], 64); err == nil {
			b.Mean = &v
		}
		if v, err := strconv.ParseFloat(r[5], 64); err == nil {
			b.Stderr = &v
		}
		out = append(out, b)
	}
	return out, nil
}

// Row is one line of the comparison table.
type Row struct {
	System, Source, Score, Medal string
}

// Ours describes the run's graded result.
type Ours struct {
	Label       string
	Score       *float64
	Medal       string // "gold", "silver", "bronze", "none" or "" when not graded
	AboveMedian bool
	Valid       bool
	Protocol    string
	Selection   *float64 // the score the program was chosen by (validation or test)
	SelectionOn string
}

// Rows builds the comparison: our run's results first (its final answer, its best-of-K), then
// the paper's systems for the task.
func Rows(task string, ours ...Ours) ([]Row, error) {
	bs, err := Baselines(task)
	if err != nil {
		return nil, err
	}
	var rows []Row
	for _, o := range ours {
		score := "no valid program"
		if o.Score != nil {
			score = strconv.FormatFloat(*o.Score, 'f', 5, 64)
		}
		medal := o.Medal
		if o.Score != nil && o.AboveMedian {
			medal += " (above median)"
		}
		rows = append(rows, Row{System: o.Label, Source: "this run, " + o.Protocol + " protocol", Score: score, Medal: medal})
	}
	for _, b := range bs {
		s := "n/a"
		if b.Mean != nil {
			s = strconv.FormatFloat(*b.Mean, 'f', 3, 64)
			if b.Stderr != nil {
				s += " ± " + strconv.FormatFloat(*b.Stderr, 'f', 3, 64)
			}
		}
		rows = append(rows, Row{System: b.System, Source: "paper " + b.Table, Score: s})
	}
	return rows, nil
}

// Render draws rows as a terminal table or, with markdown, a Markdown table.
func Render(rows []Row, markdown bool) (string, error) {
	var buf bytes.Buffer
	opts := []tablewriter.Option{}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	opts = append(opts, tablewriter.WithHeaderAutoFormat(tw.Off))
	t := tablewriter.NewTable(&buf, opts...)
	t.Header("System", "Source", "Score", "Medal")
	for _, r := range rows {
		if err := t.Append(r.System, r.Source, r.Score, r.Medal); err != nil {
			return "", err
		}
	}
	if err := t.Render(); err != nil {
		return "", err
	}
	return strings.TrimRight(buf.String(), "\n") + "\n", nil
}
