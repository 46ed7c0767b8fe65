package grading

import (
	"fmt"
	"math"
	"time"

	"mlerl/tasks"
)

// Numeric holds a task's answers for scoring many numeric predictions of them: greedy ensemble
// selection scores dozens of blends of the same out-of-fold rows, and as text (written,
// parsed and matched by id again for each blend) that took minutes a blend on image-output
// tasks' millions of rows.
type Numeric struct {
	spec  *tasks.Spec
	ans   table
	size  int64
	cols  []string
	truth [][]float64
}

// NumericMetric says the metric scores numbers (probabilities, scores, values), which Numeric
// scores; the others compare labels or texts, which Grade grades.
func NumericMetric(metric string) bool { return numericMetric(metric) }

// NewNumeric reads the answers at ansPath for spec's numeric metric.
func NewNumeric(spec *tasks.Spec, ansPath string) (*Numeric, error) {
	if !numericMetric(spec.Metric) {
		return nil, fmt.Errorf("metric %q compares labels or texts, not numbers: grade its submissions with Grade", spec.Metric)
	}
	ans, size, err := answers(ansPath)
	if err != nil {
		return nil, fmt.Errorf("reading answers %s: %w", ansPath, err)
	}
	cols := answerColumns(spec, ans)
	truth, err := numericTruth(spec, ans, cols)
	if err != nil {
		return nil, fmt.Errorf("answers %s: %w", ansPath, err)
	}
	return &Numeric{spec: spec, ans: ans, size: size, cols: cols, truth: truth}, nil
}

// Read grades the submission at subPath as Grade does (the same limits and rules, the same
// result) and returns its predictions when it is valid: one slice per answer column, in the
// answers' row order.
func (n *Numeric) Read(subPath string) ([][]float64, Result, error) {
	start := time.Now()
	sub, cols, invalid, err := readAligned(n.spec, subPath, n.ans, n.size, start)
	if invalid != nil || err != nil {
		return nil, deref(invalid), err
	}
	pred, err := numericColumns(n.spec, sub, cols)
	if err != nil {
		r, err := scored(start, 0, err)
		return nil, r, err
	}
	r, err := n.score(start, pred)
	if !r.Valid {
		pred = nil
	}
	return pred, r, err
}

// Score grades predictions laid out as Read returns them with the task's metric, after the
// checks Grade makes on the values.
func (n *Numeric) Score(pred [][]float64) (Result, error) {
	if len(pred) != len(n.cols) {
		return Result{}, fmt.Errorf("%d prediction columns for the %d answer columns %v", len(pred), len(n.cols), n.cols)
	}
	for k, p := range pred {
		if len(p) != n.ans.n {
			return Result{}, fmt.Errorf("column %q has %d predictions for %d answers", n.cols[k], len(p), n.ans.n)
		}
	}
	start := time.Now()
	for k, p := range pred {
		for i, v := range p {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return scored(start, 0, invalidf("row %d, column %q: %v is not a number", i+1, n.cols[k], v))
			}
		}
	}
	return n.score(start, pred)
}

func (n *Numeric) score(start time.Time, pred [][]float64) (Result, error) {
	s, err := scoreNumeric(n.spec, pred, n.truth, n.cols)
	return scored(start, s, err)
}
