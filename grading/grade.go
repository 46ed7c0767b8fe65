// Package grading scores submissions as MLE-bench does: validity rules first (an invalid
// submission is a result with a reason, never an error), then the task's metric, then medals.
package grading

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"mlerl/tasks"
)

// Result is one graded submission. Score is nil unless the submission is valid.
type Result struct {
	Score    *float64 `json:"score"`
	Exists   bool     `json:"submission_exists"`
	Valid    bool     `json:"valid_submission"`
	Reason   string   `json:"reason,omitempty"` // why the submission is invalid
	Duration float64  `json:"-"`
}

// Grade scores the submission at subPath against the answers at ansPath.
func Grade(spec *tasks.Spec, subPath, ansPath string) (Result, error) {
	f, err := os.Open(subPath)
	if errors.Is(err, os.ErrNotExist) {
		return Result{Reason: "no submission file was written"}, nil
	}
	if err != nil {
		return Result{}, err
	}
	defer f.Close()
	ans, err := readTable(ansPath)
	if err != nil {
		// The answers are ours: a broken answers file is an infrastructure error.
		return Result{}, fmt.Errorf("reading answers %s: %w", ansPath, err)
	}
	invalid := func(format string, a ...any) (Result, error) {
		return Result{Exists: true, Reason: fmt.Sprintf(format, a...)}, nil
	}
	if !strings.HasSuffix(subPath, ".csv") {
		return invalid("submission must be a .csv file")
	}
	sub, err := parseTable(f)
	if err != nil {
		return invalid("submission is not a readable CSV: %v", err)
	}
	var score float64
	switch spec.Metric {
	case "multi-class-log-loss":
		score, err = oneHotLogLoss(sub, ans, spec.IDColumn)
	default:
		return Result{}, fmt.Errorf("metric %q has no grader", spec.Metric)
	}
	var inv invalidError
	if errors.As(err, &inv) {
		return invalid("%s", inv.msg)
	}
	if err != nil {
		return Result{}, err
	}
	score = math.Round(score*1e5) / 1e5
	return Result{Score: &score, Exists: true, Valid: true}, nil
}

type invalidError struct{ msg string }

func (e invalidError) Error() string { return e.msg }

func invalidf(format string, a ...any) error { return invalidError{fmt.Sprintf(format, a...)} }

// table is a parsed CSV with its header.
type table struct {
	header []string
	rows   [][]string
}

func (t table) col(name string) int {
	for i, h := range t.header {
		if h == name {
			return i
		}
	}
	return -1
}

func readTable(file string) (table, error) {
	f, err := os.Open(file)
	if err != nil {
		return table{}, err
	}
	defer f.Close()
	return parseTable(f)
}

func parseTable(r io.Reader) (table, error) {
	cr := csv.NewReader(r)
	all, err := cr.ReadAll()
	if err != nil {
		return table{}, err
	}
	if len(all) == 0 {
		return table{}, errors.New("the file is empty (no header)")
	}
	return table{header: all[0], rows: all[1:]}, nil
}

// oneHotLogLoss is sklearn's multi-class log loss between a probability submission and one-hot
// answers, rows matched by id, probabilities clipped at machine epsilon and renormalised.
func oneHotLogLoss(sub, ans table, idCol string) (float64, error) {
	want := map[string]bool{}
	for _, h := range ans.header {
		want[h] = true
	}
	have := map[string]bool{}
	for _, h := range sub.header {
		if have[h] {
			return 0, invalidf("column %q appears twice", h)
		}
		have[h] = true
	}
	var missing, extra []string
	for h := range want {
		if !have[h] {
			missing = append(missing, h)
		}
	}
	for h := range have {
		if !want[h] {
			extra = append(extra, h)
		}
	}
	if len(missing)+len(extra) > 0 {
		sort.Strings(missing)
		sort.Strings(extra)
		return 0, invalidf("submission must have exactly the id column and one column per class: missing %s, unexpected %s",
			short(missing), short(extra))
	}
	if len(sub.rows) != len(ans.rows) {
		return 0, invalidf("submission has %d rows, the answers have %d", len(sub.rows), len(ans.rows))
	}
	classes := make([]string, 0, len(ans.header)-1)
	for _, h := range ans.header {
		if h != idCol {
			classes = append(classes, h)
		}
	}
	subIdx, ansIdx := sub.col(idCol), ans.col(idCol)
	byID := map[string][]string{}
	for _, r := range sub.rows {
		if len(r) != len(sub.header) {
			return 0, invalidf("a row has %d fields, the header has %d", len(r), len(sub.header))
		}
		if _, dup := byID[r[subIdx]]; dup {
			return 0, invalidf("id %q appears twice", r[subIdx])
		}
		byID[r[subIdx]] = r
	}
	probs := make([][]float64, len(ans.rows))
	truth := make([]int, len(ans.rows))
	for i, a := range ans.rows {
		r, ok := byID[a[ansIdx]]
		if !ok {
			return 0, invalidf("submission ids do not match the test ids (id %q is missing)", a[ansIdx])
		}
		p := make([]float64, len(classes))
		sum := 0.0
		truth[i] = -1
		for k, c := range classes {
			v, err := strconv.ParseFloat(strings.TrimSpace(r[sub.col(c)]), 64)
			if err != nil || math.IsNaN(v) {
				return 0, invalidf("id %q, column %q: %q is not a probability", a[ansIdx], c, r[sub.col(c)])
			}
			if v < 0 || v > 1 {
				return 0, invalidf("id %q, column %q: probability %v is outside [0, 1]", a[ansIdx], c, v)
			}
			p[k] = v
			sum += v
			if a[ans.col(c)] == "1" {
				truth[i] = k
			}
		}
		if math.Abs(sum-1) > 1e-6 {
			return 0, invalidf("id %q: probabilities sum to %v, not 1 (tolerance 1e-6)", a[ansIdx], sum)
		}
		if truth[i] < 0 {
			return 0, fmt.Errorf("answers row %q has no class set", a[ansIdx])
		}
		probs[i] = p
	}
	return LogLoss(truth, probs), nil
}

func short(s []string) string {
	if len(s) == 0 {
		return "none"
	}
	if len(s) > 5 {
		return strings.Join(s[:5], ", ") + fmt.Sprintf(" and %d more", len(s)-5)
	}
	return strings.Join(s, ", ")
}

// LogLoss is the mean negative log-probability of the true class, after clipping each
// probability to [eps, 1-eps] and renormalising each row (scikit-learn 1.2's rule).
func LogLoss(truth []int, probs [][]float64) float64 {
	const eps = 2.220446049250313e-16 // float64 machine epsilon, as numpy's finfo
	total := 0.0
	for i, p := range probs {
		sum := 0.0
		for _, v := range p {
			sum += math.Min(math.Max(v, eps), 1-eps)
		}
		total -= math.Log(math.Min(math.Max(p[truth[i]], eps), 1-eps) / sum)
	}
	return total / float64(len(probs))
}

// Report has MLE-bench's report fields for one submission.
type Report struct {
	CompetitionID   string   `json:"competition_id"`
	Score           *float64 `json:"score"`
	GoldThreshold   float64  `json:"gold_threshold"`
	SilverThreshold float64  `json:"silver_threshold"`
	BronzeThreshold float64  `json:"bronze_threshold"`
	MedianThreshold float64  `json:"median_threshold"`
	AnyMedal        bool     `json:"any_medal"`
	GoldMedal       bool     `json:"gold_medal"`
	SilverMedal     bool     `json:"silver_medal"`
	BronzeMedal     bool     `json:"bronze_medal"`
	AboveMedian     bool     `json:"above_median"`
	SubmissionExist bool     `json:"submission_exists"`
	ValidSubmission bool     `json:"valid_submission"`
	IsLowerBetter   bool     `json:"is_lower_better"`
	CreatedAt       string   `json:"created_at"`
	SubmissionPath  string   `json:"submission_path"`
}

// NewReport applies the medal rule to a graded result: a medal is reached at or beyond its
// threshold, above-median is strict, and only the best medal counts.
func NewReport(spec *tasks.Spec, r Result, subPath string, now time.Time) Report {
	t := spec.Thresholds
	rep := Report{
		CompetitionID: spec.ID, Score: r.Score,
		GoldThreshold: t.Gold, SilverThreshold: t.Silver, BronzeThreshold: t.Bronze, MedianThreshold: t.Median,
		SubmissionExist: r.Exists, ValidSubmission: r.Valid, IsLowerBetter: spec.LowerIsBetter(),
		CreatedAt: now.UTC().Format(time.RFC3339Nano), SubmissionPath: subPath,
	}
	if r.Score == nil {
		return rep
	}
	s := *r.Score
	reach := func(th float64) bool {
		if spec.LowerIsBetter() {
			return s <= th
		}
		return s >= th
	}
	rep.GoldMedal = reach(t.Gold)
	rep.SilverMedal = !rep.GoldMedal && reach(t.Silver)
	rep.BronzeMedal = !rep.GoldMedal && !rep.SilverMedal && reach(t.Bronze)
	rep.AnyMedal = rep.GoldMedal || rep.SilverMedal || rep.BronzeMedal
	if spec.LowerIsBetter() {
		rep.AboveMedian = s < t.Median
	} else {
		rep.AboveMedian = s > t.Median
	}
	return rep
}
