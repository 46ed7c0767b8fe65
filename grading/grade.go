// Package grading scores submissions as MLE-bench does: validity rules first (an invalid
// submission is a result with a reason, never an error), then the task's metric, then medals.
package grading

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
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

// Grade scores the submission at subPath against the answers at ansPath with the task's
// metric, after MLE-bench's validity rules: the id column and every answer column present (and
// nothing else where the task requires the exact set), one row per answer, ids matching (or
// rows matched by position where the task's grader does so), values the metric can take.
// The submission is a hostile program's output: it must be a regular file, and its bytes, line
// length, columns, rows and grading time are bounded (LimitsFor); past a bound it is invalid.
func Grade(spec *tasks.Spec, subPath, ansPath string) (Result, error) {
	start := time.Now()
	ans, ansSize, err := answers(ansPath)
	if err != nil {
		// The answers are ours: a broken answers file is an infrastructure error.
		return Result{}, fmt.Errorf("reading answers %s: %w", ansPath, err)
	}
	sub, cols, invalid, err := readAligned(spec, subPath, ans, ansSize, start)
	if invalid != nil || err != nil {
		return deref(invalid), err
	}
	score, err := metric(spec, sub, ans, cols)
	return scored(start, score, err)
}

// readAligned reads the submission at subPath under the limits for ans and returns, for each
// answers row, its values of the answer columns cols (Grade's rules up to the metric's own
// checks). An invalid submission is a result saying why.
func readAligned(spec *tasks.Spec, subPath string, ans table, ansSize int64, start time.Time) (sub [][]string, cols []string, invalid *Result, err error) {
	lim := LimitsFor(ans, ansSize)
	fail := func(format string, a ...any) ([][]string, []string, *Result, error) {
		return nil, nil, &Result{Exists: true, Reason: fmt.Sprintf(format, a...), Duration: time.Since(start).Seconds()}, nil
	}
	f, err := OpenRegular(subPath)
	var notRegular notRegularError
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil, nil, &Result{Reason: "no submission file was written"}, nil
	case errors.As(err, &notRegular):
		return fail("%v", err)
	case err != nil:
		return nil, nil, nil, err
	}
	defer f.Close()
	if !strings.HasSuffix(subPath, ".csv") {
		return fail("submission must be a .csv file")
	}
	if st, err := f.Stat(); err == nil && st.Size() > lim.MaxBytes {
		return fail("submission has %d bytes, over the limit of %d bytes for these answers (%s)", st.Size(), lim.MaxBytes, lim.bytesRule())
	}
	cols = answerColumns(spec, ans)
	keep := append([]string{spec.IDColumn}, cols...)
	parsed, err := parseBounded(f, lim, keep, start)
	if err != nil {
		return fail("%v", err)
	}
	sub, err = align(spec, parsed, ans, cols)
	var inv invalidError
	if errors.As(err, &inv) {
		return fail("%s", inv.msg)
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if err := lim.check(start); err != nil {
		return fail("%v", err)
	}
	return sub, cols, nil, nil
}

// scored is the result of a metric's score and error: an invalidError is an invalid
// submission, another error is ours. Scores are rounded to 5 decimals, as reported.
func scored(start time.Time, score float64, err error) (Result, error) {
	var inv invalidError
	if errors.As(err, &inv) {
		return Result{Exists: true, Reason: inv.msg, Duration: time.Since(start).Seconds()}, nil
	}
	if err != nil {
		return Result{}, err
	}
	score = math.Round(score*1e5) / 1e5
	return Result{Score: &score, Exists: true, Valid: true, Duration: time.Since(start).Seconds()}, nil
}

func deref(r *Result) Result {
	if r == nil {
		return Result{}
	}
	return *r
}

type invalidError struct{ msg string }

func (e invalidError) Error() string { return e.msg }

func invalidf(format string, a ...any) error { return invalidError{fmt.Sprintf(format, a...)} }

// table is a parsed CSV: its full header, and the kept columns' cells, column by column (a
// row per slice took gigabytes on image-output tasks' millions of rows).
type table struct {
	all    []string       // every column of the header
	header []string       // the kept columns, in file order
	cols   [][]string     // cols[k][i]: kept column k's cell in row i (nil for a column the file lacks)
	n      int            // rows stored
	index  map[string]int // kept column name -> its position in cols
	total  int            // data rows in the file, stored or not
}

func (t table) col(name string) int {
	if i, ok := t.index[name]; ok {
		return i
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

// parseTable reads one of our own files (answers), whole and unbounded.
func parseTable(r io.Reader) (table, error) {
	return parseBounded(r, Limits{}, nil, time.Now())
}

// answersCache keeps parsed answers files: a run grades many submissions against the same few
// answers, and parsing them dominated grading. Entries are keyed by path, size and mtime.
var answersCache = struct {
	sync.Mutex
	m map[string]cachedAnswers
}{m: map[string]cachedAnswers{}}

type cachedAnswers struct {
	size  int64
	mtime time.Time
	t     table
}

// answers returns the parsed answers file and its size in bytes.
func answers(file string) (table, int64, error) {
	st, err := os.Stat(file)
	if err != nil {
		return table{}, 0, err
	}
	answersCache.Lock()
	c, ok := answersCache.m[file]
	answersCache.Unlock()
	if ok && c.size == st.Size() && c.mtime.Equal(st.ModTime()) {
		return c.t, c.size, nil
	}
	t, err := readTable(file)
	if err != nil {
		return table{}, 0, err
	}
	answersCache.Lock()
	if len(answersCache.m) > 64 {
		answersCache.m = map[string]cachedAnswers{}
	}
	answersCache.m[file] = cachedAnswers{size: st.Size(), mtime: st.ModTime(), t: t}
	answersCache.Unlock()
	return t, st.Size(), nil
}

func isOne(s string) bool {
	if s == "1" {
		return true
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return err == nil && v == 1
}

// answerColumns are the columns a submission must hold besides the id.
func answerColumns(spec *tasks.Spec, ans table) []string {
	if spec.Answers.Format == "columns" {
		return spec.Answers.Columns
	}
	var cols []string
	for _, h := range ans.header {
		if h != spec.IDColumn {
			cols = append(cols, h)
		}
	}
	return cols
}

// align returns the submission's values of cols, column by column in the answers' row order
// (out[k][i] is cols[k] for answers row i), after the column,
// row-count and id checks. Rows match by id as MLE-bench's graders do (both sides sorted by id
// and compared), so an id may repeat as often as it repeats in the answers (insults' comments
// do); or by position, where the id column is not needed at all.
func align(spec *tasks.Spec, sub, ans table, cols []string) ([][]string, error) {
	id := spec.IDColumn
	byPosition := spec.Answers.MatchBy == "position"
	var missing []string
	if !byPosition && sub.col(id) < 0 {
		missing = append(missing, id)
	}
	want := map[string]bool{id: true}
	for _, c := range cols {
		want[c] = true
		if sub.col(c) < 0 {
			missing = append(missing, c)
		}
	}
	var extra []string
	if spec.Answers.ExactColumns {
		for _, h := range sub.all {
			if !want[h] {
				extra = append(extra, h)
			}
		}
	}
	if len(missing)+len(extra) > 0 {
		return nil, invalidf("submission must have the column %s and %s: missing %s, unexpected %s",
			id, short(cols), short(missing), short(extra))
	}
	if sub.total != ans.n {
		return nil, invalidf("submission has %d rows, the answers have %d", sub.total, ans.n)
	}
	in := make([][]string, len(cols)) // the submission's columns, in cols' order
	out := make([][]string, len(cols))
	for k, c := range cols {
		in[k], out[k] = sub.cols[sub.col(c)], make([]string, ans.n)
	}
	if byPosition {
		for k := range cols {
			copy(out[k], in[k])
		}
		return out, nil
	}
	subID, ansID := sub.col(id), ans.col(id)
	if ansID < 0 {
		return nil, fmt.Errorf("the answers have no id column %q", id)
	}
	subKey, ansKey := idKeys(sub.cols[subID]), idKeys(ans.cols[ansID])
	// Both sides sorted by id, as MLE-bench's graders sort them (a sort, not a map: maps of
	// millions of ids took gigabytes). Within an id, rows keep their order, so the t-th answers
	// row of an id takes the t-th submission row of it. A number never equals a text.
	failed := -1 // the first answers row (in file order) left without a submission row
	if subKey.text != ansKey.text {
		failed = 0
	} else {
		subOrder, ansOrder := subKey.sorted(), ansKey.sorted()
		j := 0
		for _, i := range ansOrder {
			for j < len(subOrder) && subKey.compare(subOrder[j], ansKey, i) < 0 {
				j++
			}
			if j < len(subOrder) && subKey.compare(subOrder[j], ansKey, i) == 0 {
				for k := range cols {
					out[k][i] = in[k][subOrder[j]]
				}
				j++
			} else if failed < 0 || int(i) < failed {
				failed = int(i)
			}
		}
	}
	if failed >= 0 {
		return nil, invalidf("submission ids do not match the test ids (id %q is missing or repeated too often elsewhere)", ans.cols[ansID][failed])
	}
	return out, nil
}

// ids are an id column's values as pandas' read_csv would compare them: a column whose every
// cell is an integer is int64 ("0042" is 42), one whose every cell is a number is float64 ("4.0"
// is 4, as an int64 4 is in numpy's comparison), anything else is text compared as written.
// Text keys are the column's own cells, not copies.
type ids struct {
	text  bool
	cells []string // text
	nums  []numKey // numbers
}

// numKey is a number id: an int64, or a float's bits when it is no exact integer.
type numKey struct {
	float bool
	n     uint64
}

func idKeys(cells []string) ids {
	ints, floats := true, true
	for _, c := range cells {
		if _, err := strconv.ParseInt(strings.TrimSpace(c), 10, 64); err != nil {
			ints = false
		}
		if _, ok := pandasFloat(c); !ok {
			floats = false
			break
		}
	}
	if !floats {
		return ids{text: true, cells: cells}
	}
	nums := make([]numKey, len(cells))
	for i, c := range cells {
		if ints {
			v, _ := strconv.ParseInt(strings.TrimSpace(c), 10, 64)
			nums[i] = numKey{n: uint64(v)}
			continue
		}
		v, _ := pandasFloat(c)
		if v == math.Trunc(v) && math.Abs(v) < 1<<53 {
			nums[i] = numKey{n: uint64(int64(v))}
		} else {
			nums[i] = numKey{float: true, n: math.Float64bits(v)}
		}
	}
	return ids{nums: nums}
}

func (k ids) len() int { return max(len(k.cells), len(k.nums)) }

// compare orders row i of k against row j of o (both text, or both numbers).
func (k ids) compare(i int32, o ids, j int32) int {
	if k.text {
		return strings.Compare(k.cells[i], o.cells[j])
	}
	a, b := k.nums[i], o.nums[j]
	if a.float != b.float {
		if !a.float {
			return -1
		}
		return 1
	}
	return cmp.Compare(a.n, b.n)
}

// sorted is the rows' order by id, rows of one id in their own order.
func (k ids) sorted() []int32 {
	order := make([]int32, k.len())
	for i := range order {
		order[i] = int32(i)
	}
	slices.SortFunc(order, func(a, b int32) int {
		if c := k.compare(a, k, b); c != 0 {
			return c
		}
		return cmp.Compare(a, b)
	})
	return order
}

// pandasFloat parses s as pandas' CSV reader parses a cell of a numeric column: decimal or
// exponent notation with optional surrounding spaces and "inf"/"infinity" of any case; NaN and
// the other missing-value spellings are not a number here (a NaN id equals nothing). Go's hex
// floats and underscores, which pandas does not read as numbers, are refused.
func pandasFloat(s string) (float64, bool) {
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "_xXpP") || pandasNA[s] {
		return 0, false
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, false
	}
	return v, !math.IsNaN(v)
}

// pandasNA are pandas' (2.x) default na_values: read_csv reads a cell spelled exactly so, and an
// empty cell, as missing (NaN), whatever the column.
var pandasNA = map[string]bool{
	"": true, "#N/A": true, "#N/A N/A": true, "#NA": true, "-1.#IND": true, "-1.#QNAN": true,
	"-NaN": true, "-nan": true, "1.#IND": true, "1.#QNAN": true, "<NA>": true, "N/A": true,
	"NA": true, "NULL": true, "NaN": true, "None": true, "n/a": true, "nan": true, "null": true,
}

// pandasText is a text cell as MLE-bench's graders read it: read_csv makes a missing-value
// spelling NaN, and fillna("") makes that empty.
func pandasText(s string) string {
	if pandasNA[s] {
		return ""
	}
	return s
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

// parseColumn parses an aligned column of the submission; NaN and text are invalid.
func parseColumn(cells []string, col string) ([]float64, error) {
	if b := boolColumn(cells); b != nil {
		return b, nil
	}
	out := make([]float64, len(cells))
	for i, c := range cells {
		v, ok := pandasFloat(c)
		if !ok || math.IsInf(v, 0) {
			return nil, invalidf("row %d, column %q: %q is not a number", i+1, col, c)
		}
		out[i] = v
	}
	return out, nil
}

// truthFloats parses an answers column (0/1 may be written True/False).
func truthFloats(ans table, col string) ([]float64, error) {
	c := ans.col(col)
	if c < 0 {
		return nil, fmt.Errorf("the answers have no column %q", col)
	}
	out := make([]float64, ans.n)
	for i, cell := range ans.cols[c] {
		switch strings.ToLower(strings.TrimSpace(cell)) {
		case "true":
			out[i] = 1
		case "false":
			out[i] = 0
		default:
			v, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
			if err != nil {
				return nil, fmt.Errorf("answers row %d, column %q: %q is not a number", i+1, col, cell)
			}
			out[i] = v
		}
	}
	return out, nil
}

// metric computes the task's metric on the submission's values aligned to the answers (sub[k]
// is answer column cols[k]).
func metric(spec *tasks.Spec, sub [][]string, ans table, cols []string) (float64, error) {
	if numericMetric(spec.Metric) {
		pred, err := numericColumns(spec, sub, cols)
		if err != nil {
			return 0, err
		}
		truth, err := numericTruth(spec, ans, cols)
		if err != nil {
			return 0, err
		}
		return scoreNumeric(spec, pred, truth, cols)
	}
	switch spec.Metric {
	case "mean-word-jaccard":
		c := ans.col(cols[0])
		if c < 0 {
			return 0, fmt.Errorf("the answers have no column %q", cols[0])
		}
		pred, truth := make([]string, ans.n), make([]string, ans.n)
		for i, cell := range sub[0] {
			// pandas reads "NA", "null", "nan", an empty cell... as NaN, which the grader makes "".
			pred[i], truth[i] = pandasText(cell), pandasText(ans.cols[c][i])
		}
		j := MeanWordJaccard(truth, pred)
		if math.IsNaN(j) {
			// MLE-bench's jaccard divides by zero when both sides of a row have no words.
			return 0, invalidf("a row's prediction and answer both have no words: the Jaccard score is undefined")
		}
		return j, nil
	case "accuracy", "f1", "f1-macro", "f1-micro", "f1-weighted":
		if ans.col(cols[0]) < 0 {
			return 0, fmt.Errorf("the answers have no column %q", cols[0])
		}
		truth, err := readLabels(ans.cols[ans.col(cols[0])], "answers")
		if err != nil {
			return 0, fmt.Errorf("%v", err) // ours to fix
		}
		pred, err := readLabels(sub[0], "column "+strconv.Quote(cols[0]))
		if err != nil {
			return 0, err
		}
		if err := comparable(truth, pred); err != nil {
			return 0, err
		}
		if spec.Metric == "accuracy" {
			return Accuracy(truth.keys, pred.keys), nil
		}
		if spec.Metric == "f1" {
			return BinaryF1(truth.keys, pred.keys)
		}
		return F1(truth.keys, pred.keys, strings.TrimPrefix(spec.Metric, "f1-")), nil
	}
	if k, isMAP, err := tasks.MAPCutoff(spec.Metric); isMAP {
		if err != nil {
			return 0, fmt.Errorf("the spec's metric %w", err) // the spec is ours to fix
		}
		if ans.col(cols[0]) < 0 {
			return 0, fmt.Errorf("the answers have no column %q", cols[0])
		}
		truth, pred := ans.cols[ans.col(cols[0])], sub[0]
		for i := range pred {
			// pandas reads an empty cell or a missing-value spelling as NaN, which split() cannot take.
			if pandasNA[pred[i]] {
				return 0, invalidf("row %d: %q is a missing value: write the predictions separated by spaces", i+1, pred[i])
			}
		}
		return MeanAveragePrecisionAtK(truth, pred, k), nil
	}
	return 0, fmt.Errorf("metric %q has no grader", spec.Metric)
}

// numericMetric says the metric scores numbers (probabilities, scores, values), which
// scoreNumeric computes from parsed columns; the others compare labels or texts.
func numericMetric(metric string) bool {
	switch metric {
	case "multi-class-log-loss", "roc-auc", "mean-column-roc-auc", "quadratic-weighted-kappa", "pearson",
		"mean-column-rmsle", "rmse", "mae", "median-absolute-error", "spearman", "rmsle":
		return true
	}
	return false
}

// numericColumns parses the aligned submission's columns as numbers (true/false as 1/0, except
// for probabilities); a cell that is no number makes the submission invalid.
func numericColumns(spec *tasks.Spec, sub [][]string, cols []string) ([][]float64, error) {
	out := make([][]float64, len(cols))
	for k, c := range cols {
		if spec.Metric != "multi-class-log-loss" {
			v, err := parseColumn(sub[k], c)
			if err != nil {
				return nil, err
			}
			out[k] = v
			continue
		}
		out[k] = make([]float64, len(sub[k]))
		for i, cell := range sub[k] {
			v, ok := pandasFloat(cell)
			if !ok {
				return nil, invalidf("row %d, column %q: %q is not a probability", i+1, c, cell)
			}
			out[k][i] = v
		}
	}
	return out, nil
}

// numericTruth are the answers' columns as numbers: for log loss, 1 where the row's class is
// the column's (0/1 may be written True/False).
func numericTruth(spec *tasks.Spec, ans table, cols []string) ([][]float64, error) {
	out := make([][]float64, len(cols))
	for k, c := range cols {
		if spec.Metric != "multi-class-log-loss" {
			v, err := truthFloats(ans, c)
			if err != nil {
				return nil, err
			}
			out[k] = v
			continue
		}
		a := ans.col(c)
		if a < 0 {
			return nil, fmt.Errorf("the answers have no column %q", c)
		}
		out[k] = make([]float64, ans.n)
		for i, cell := range ans.cols[a] {
			if isOne(cell) {
				out[k][i] = 1
			}
		}
	}
	return out, nil
}

// scoreNumeric computes a numeric metric from the predictions' and the answers' columns (in
// the answers' row order), after the checks MLE-bench's graders make on the values.
func scoreNumeric(spec *tasks.Spec, pred, truth [][]float64, cols []string) (float64, error) {
	switch spec.Metric {
	case "multi-class-log-loss":
		rows := 0
		if len(pred) > 0 {
			rows = len(pred[0])
		}
		probs := make([][]float64, rows)
		class := make([]int, rows)
		for i := range rows {
			p := make([]float64, len(cols))
			sum := 0.0
			class[i] = -1
			for k, c := range cols {
				v := pred[k][i]
				if v < 0 || v > 1 {
					return 0, invalidf("row %d, column %q: probability %v is outside [0, 1]", i+1, c, v)
				}
				p[k] = v
				sum += v
				if truth[k][i] == 1 {
					class[i] = k
				}
			}
			if !sumsToOne(spec.ID, sum) {
				return 0, invalidf("row %d: probabilities sum to %v, not 1 (%s)", i+1, sum, sumRule(spec.ID))
			}
			if class[i] < 0 {
				return 0, fmt.Errorf("answers row %d has no class set", i+1)
			}
			probs[i] = p
		}
		return LogLoss(class, probs), nil
	case "roc-auc", "mean-column-roc-auc":
		return perColumn(pred, truth, cols, func(pred, truth []float64, col string) (float64, error) {
			// MLE-bench's single-column AUC graders (prepare_for_auroc_metric) take probabilities
			// only; plant-pathology's four-column grader has no such check.
			if spec.Metric == "roc-auc" {
				for i, v := range pred {
					if v < 0 || v > 1 {
						return 0, invalidf("row %d, column %q: %v is not a probability (outside [0, 1])", i+1, col, v)
					}
				}
			}
			auc, err := ROCAUC(truth, pred)
			if err != nil {
				return 0, fmt.Errorf("column %q: %w", col, err) // the answers hold one class: ours to fix
			}
			return auc, nil
		})
	case "quadratic-weighted-kappa":
		return perColumn(pred, truth, cols, func(pred, truth []float64, _ string) (float64, error) {
			p, t := make([]int, len(pred)), make([]int, len(truth))
			for i := range pred {
				if pred[i] != math.Trunc(pred[i]) {
					return 0, invalidf("row %d: score %v is not an integer", i+1, pred[i])
				}
				p[i], t[i] = int(pred[i]), int(truth[i])
			}
			k, err := QuadraticWeightedKappa(t, p)
			if err != nil {
				return 0, invalidf("%v", err)
			}
			return k, nil
		})
	case "pearson":
		return perColumn(pred, truth, cols, func(pred, truth []float64, _ string) (float64, error) {
			r, err := Pearson(truth, pred)
			if err != nil {
				return 0, invalidf("%v", err)
			}
			return r, nil
		})
	case "mean-column-rmsle":
		return perColumn(pred, truth, cols, func(pred, truth []float64, col string) (float64, error) {
			e, err := RMSLE(truth, pred)
			if err != nil {
				return 0, invalidf("column %q: %v", col, err)
			}
			return e, nil
		})
	case "rmse", "mae", "median-absolute-error", "spearman", "rmsle":
		return perColumn(pred, truth, cols, func(pred, truth []float64, col string) (float64, error) {
			var v float64
			var err error
			switch spec.Metric {
			case "rmse":
				v, err = RMSE(truth, pred)
			case "mae":
				v, err = MAE(truth, pred)
			case "median-absolute-error":
				v, err = MedianAbsoluteError(truth, pred)
			case "spearman":
				v, err = Spearman(truth, pred)
			case "rmsle":
				v, err = RMSLE(truth, pred)
			}
			if err != nil {
				return 0, invalidf("column %q: %v", col, err)
			}
			return v, nil
		})
	}
	return 0, fmt.Errorf("metric %q has no numeric grader", spec.Metric)
}

// sumsToOne is MLE-bench's check that a row of probabilities sums to 1. lmsys-chatbot-arena's
// grader rounds the sum to 6 decimals (pandas' round: numpy's rint of sum*1e6, over 1e6) and
// requires exactly 1; the others (leaf-classification, spooky-author-identification) take
// np.isclose(sum, 1, atol=1e-6) with numpy's default rtol=1e-5: |sum - 1| <= 1e-6 + 1e-5.
func sumsToOne(task string, sum float64) bool {
	if task == "lmsys-chatbot-arena" {
		return math.RoundToEven(sum*1e6)/1e6 == 1
	}
	return math.Abs(sum-1) <= 1e-6+1e-5*1
}

func sumRule(task string) string {
	if task == "lmsys-chatbot-arena" {
		return "rounded to 6 decimals"
	}
	return "np.isclose with atol 1e-6, rtol 1e-5"
}

// perColumn applies a numeric metric to each answer column's predictions and truths and
// returns the mean over the columns (the value itself for one column).
func perColumn(pred, truth [][]float64, cols []string, f func(pred, truth []float64, col string) (float64, error)) (float64, error) {
	total := 0.0
	for k, c := range cols {
		v, err := f(pred[k], truth[k], c)
		if err != nil {
			return 0, err
		}
		total += v
	}
	return total / float64(len(cols)), nil
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

// Report has MLE-bench's report fields for one submission. Where the task has no medal
// thresholds (no leaderboard to compute them from), the thresholds are null, MedalsUnknown is
// set and no medal or above-median is claimed.
type Report struct {
	CompetitionID   string   `json:"competition_id"`
	Score           *float64 `json:"score"`
	GoldThreshold   *float64 `json:"gold_threshold"`
	SilverThreshold *float64 `json:"silver_threshold"`
	BronzeThreshold *float64 `json:"bronze_threshold"`
	MedianThreshold *float64 `json:"median_threshold"`
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
	MedalsUnknown   bool     `json:"medals_unknown,omitempty"`
}

// ThresholdsKnown reports whether a spec's thresholds were given: all four zero is no
// thresholds at all (a real leaderboard's median is never 0 where its gold is).
func ThresholdsKnown(t tasks.Thresholds) bool { return t != (tasks.Thresholds{}) }

// Medal names the report's medal: gold, silver, bronze, "unknown" for a valid score on a task
// without thresholds, or "" for none.
func (r Report) Medal() string {
	switch {
	case r.GoldMedal:
		return "gold"
	case r.SilverMedal:
		return "silver"
	case r.BronzeMedal:
		return "bronze"
	case r.MedalsUnknown && r.Score != nil:
		return "unknown"
	}
	return ""
}

// MedalsText is the medals part of a one-line summary.
func (r Report) MedalsText() string {
	if r.MedalsUnknown {
		return "medals: unknown (the task spec has no thresholds; compute them with `starter tasks thresholds --leaderboard FILE`)"
	}
	return fmt.Sprintf("any medal %v (gold %v, silver %v, bronze %v), above median %v",
		r.AnyMedal, r.GoldMedal, r.SilverMedal, r.BronzeMedal, r.AboveMedian)
}

// ThresholdsText names the thresholds, or says they are unknown.
func (r Report) ThresholdsText() string {
	if r.MedalsUnknown || r.GoldThreshold == nil {
		return "unknown (the task spec has no thresholds, so no medal is claimed)"
	}
	return fmt.Sprintf("gold %.5g, silver %.5g, bronze %.5g, median %.5g (lower is better: %v)",
		*r.GoldThreshold, *r.SilverThreshold, *r.BronzeThreshold, *r.MedianThreshold, r.IsLowerBetter)
}

// NewReport applies the medal rule to a graded result: a medal is reached at or beyond its
// threshold, above-median is strict, and only the best medal counts. Without thresholds the
// medals are unknown.
func NewReport(spec *tasks.Spec, r Result, subPath string, now time.Time) Report {
	t := spec.Thresholds
	rep := Report{
		CompetitionID: spec.ID, Score: r.Score,
		SubmissionExist: r.Exists, ValidSubmission: r.Valid, IsLowerBetter: spec.LowerIsBetter(),
		CreatedAt: now.UTC().Format(time.RFC3339Nano), SubmissionPath: subPath,
	}
	if !ThresholdsKnown(t) {
		rep.MedalsUnknown = true
		return rep
	}
	rep.GoldThreshold, rep.SilverThreshold, rep.BronzeThreshold, rep.MedianThreshold = &t.Gold, &t.Silver, &t.Bronze, &t.Median
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
