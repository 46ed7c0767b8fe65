// Package ensemble builds a run's final answer from its best programs: their submissions are
// blended (weighted mean of numeric columns, weighted vote of the others) and the weights come
// from greedy ensemble selection on out-of-fold predictions (Caruana et al., 2004, as
// auto-sklearn builds its ensembles).
package ensemble

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Table is a submission: a header and its rows, as strings.
type Table struct {
	Header []string
	Rows   [][]string
}

// ReadCSV parses a submission.
func ReadCSV(b []byte) (Table, error) {
	r := csv.NewReader(bytes.NewReader(b))
	recs, err := r.ReadAll()
	if err != nil {
		return Table{}, err
	}
	if len(recs) == 0 {
		return Table{}, errors.New("empty CSV: no header")
	}
	return Table{Header: recs[0], Rows: recs[1:]}, nil
}

// CSV writes the table.
func (t Table) CSV() []byte {
	var b bytes.Buffer
	w := csv.NewWriter(&b)
	w.Write(t.Header)
	w.WriteAll(t.Rows) // flushes; a bytes.Buffer does not fail
	return b.Bytes()
}

// ConcatCSV joins CSV files with the same header (the folds' submissions, in fold order): the
// first header, then each file's rows as written. The rows are not parsed: joined out-of-fold
// predictions of image-output tasks are millions of rows, which as a table took gigabytes.
// A byte-order mark is dropped; a file whose last row has no newline gets one.
func ConcatCSV(parts [][]byte) ([]byte, error) {
	if len(parts) == 0 {
		return nil, errors.New("nothing to concatenate")
	}
	var out bytes.Buffer
	var first []string
	for i, p := range parts {
		p = bytes.TrimPrefix(p, []byte("\ufeff"))
		r := csv.NewReader(bytes.NewReader(p))
		head, err := r.Read()
		if err != nil {
			if err == io.EOF {
				err = errors.New("empty CSV: no header")
			}
			return nil, fmt.Errorf("part %d: %w", i+1, err)
		}
		if i == 0 {
			first = head
			w := csv.NewWriter(&out)
			w.Write(head)
			w.Flush()
			out.Grow(len(p) * len(parts))
		} else if !sameStrings(head, first) {
			return nil, fmt.Errorf("part %d has columns %v, part 1 has %v", i+1, head, first)
		}
		rows := p[r.InputOffset():]
		out.Write(rows)
		if len(rows) > 0 && rows[len(rows)-1] != '\n' {
			out.WriteByte('\n')
		}
	}
	return out.Bytes(), nil
}

func sameStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Align says how rows of different submissions are matched.
type Align struct {
	// IDColumn matches rows by this column's value; "" matches them by position.
	IDColumn string
	// Carry, when rows match by position, is a column the grader does not read (the id): the
	// blend takes it from the first table, and a table without it is still blended (programs
	// may leave it out where the grader matches rows by position).
	Carry string
	// Integer rounds blended numbers to whole numbers (ordinal scores).
	Integer bool
	// Vote takes every column by weighted vote, numbers too: class labels (1, 2, 3) and
	// texts are not quantities to average.
	Vote bool
	// Log1p averages numbers as log(1+x) and maps the mean back, for metrics that grade
	// log(1+x) (RMSLE): there the blend is a weighted mean of the graded quantities, so its
	// error on a row is never above the weighted mean of its members' errors. A column with a
	// value at or below -1 is averaged as it is.
	Log1p bool
}

// Blend combines tables with weights (non-negative, not all zero) into one in the first
// table's row order and columns: a column numeric in every table gets the weighted mean, any
// other (or every one, with Align.Vote) the value with the largest summed weight (ties: the earliest table's). Tables whose
// weight is 0 are ignored.
func Blend(tables []Table, weights []float64, al Align) (Table, error) {
	if len(tables) != len(weights) {
		return Table{}, fmt.Errorf("%d tables, %d weights", len(tables), len(weights))
	}
	idx, w, err := normalized(weights)
	if err != nil {
		return Table{}, err
	}
	used := make([]Table, len(idx))
	for u, i := range idx {
		used[u] = tables[i]
	}
	base := used[0]
	idc := -1
	if al.IDColumn != "" {
		if idc = index(base.Header, al.IDColumn); idc < 0 {
			return Table{}, fmt.Errorf("no id column %q in %v", al.IDColumn, base.Header)
		}
	}
	carry := -1
	if al.IDColumn == "" && al.Carry != "" {
		carry = index(base.Header, al.Carry)
	}
	// rows[k][i] is table k's row for the base's row i; cols[k][j] its column for base column j.
	rows := make([][][]string, len(used))
	cols := make([][]int, len(used))
	for k, t := range used {
		if len(t.Rows) != len(base.Rows) {
			return Table{}, fmt.Errorf("submission %d has %d rows, submission 1 has %d", k+1, len(t.Rows), len(base.Rows))
		}
		cols[k] = make([]int, len(base.Header))
		for j, h := range base.Header {
			if cols[k][j] = index(t.Header, h); cols[k][j] < 0 && j != carry {
				return Table{}, fmt.Errorf("submission %d has no column %q", k+1, h)
			}
		}
		rows[k] = t.Rows
		if idc < 0 {
			continue
		}
		byID := make(map[string][]string, len(t.Rows))
		for _, r := range t.Rows {
			if cols[k][idc] >= len(r) {
				return Table{}, fmt.Errorf("submission %d has a short row %v", k+1, r)
			}
			byID[r[cols[k][idc]]] = r
		}
		rows[k] = make([][]string, len(base.Rows))
		for i, r := range base.Rows {
			if idc >= len(r) {
				return Table{}, fmt.Errorf("submission 1 has a short row %v", r)
			}
			if rows[k][i] = byID[r[idc]]; rows[k][i] == nil {
				return Table{}, fmt.Errorf("submission %d has no row for %s %q", k+1, al.IDColumn, r[idc])
			}
		}
	}
	out := Table{Header: base.Header, Rows: make([][]string, len(base.Rows))}
	for j := range base.Header {
		numeric := j != idc && j != carry && !al.Vote
		logs := al.Log1p
		for k := range used {
			if cols[k][j] < 0 { // the carried column, which this table left out
				continue
			}
			for _, r := range rows[k] {
				if c := cols[k][j]; c >= len(r) {
					return Table{}, fmt.Errorf("submission %d has a short row %v", k+1, r)
				} else if x, err := strconv.ParseFloat(r[c], 64); err != nil {
					numeric = false
				} else if x <= -1 {
					logs = false
				}
			}
		}
		for i := range base.Rows {
			if out.Rows[i] == nil {
				out.Rows[i] = make([]string, len(base.Header))
			}
			if j == idc || j == carry {
				out.Rows[i][j] = base.Rows[i][j]
				continue
			}
			if numeric {
				v := 0.0
				for k := range used {
					x, _ := strconv.ParseFloat(rows[k][i][cols[k][j]], 64)
					if logs {
						x = math.Log1p(x)
					}
					v += w[k] * x
				}
				if logs {
					v = math.Expm1(v)
				}
				if al.Integer {
					v = math.Round(v)
				}
				// 12 significant digits: float noise (0.30000000000000004) is not a prediction.
				out.Rows[i][j] = strconv.FormatFloat(v, 'g', 12, 64)
				continue
			}
			out.Rows[i][j] = vote(rows, cols, w, i, j)
		}
	}
	return out, nil
}

// normalized are the positions of the positive weights and those weights over their sum.
func normalized(weights []float64) (idx []int, w []float64, err error) {
	total := 0.0
	for i, x := range weights {
		if x < 0 || math.IsNaN(x) {
			return nil, nil, fmt.Errorf("weight %d is %v: weights must be non-negative", i, x)
		}
		if x > 0 {
			idx, w = append(idx, i), append(w, x)
			total += x
		}
	}
	if len(idx) == 0 {
		return nil, nil, errors.New("every weight is zero")
	}
	for i := range w {
		w[i] /= total
	}
	return idx, w, nil
}

// BlendColumns is Blend for predictions already read as numbers, in one row order (the
// answers'): preds[k][j][i] is table k's value of column j on row i. It averages as Blend
// averages numeric columns (Log1p where every used value is above -1, Integer rounding), without
// Blend's 12-digit text; a vote (Align.Vote) needs Blend.
func BlendColumns(preds [][][]float64, weights []float64, al Align) ([][]float64, error) {
	if len(preds) != len(weights) {
		return nil, fmt.Errorf("%d tables, %d weights", len(preds), len(weights))
	}
	if al.Vote {
		return nil, errors.New("a vote blends labels, not numbers: use Blend")
	}
	idx, w, err := normalized(weights)
	if err != nil {
		return nil, err
	}
	base := preds[idx[0]]
	for _, k := range idx {
		if len(preds[k]) != len(base) {
			return nil, fmt.Errorf("submission %d has %d columns, submission %d has %d", k+1, len(preds[k]), idx[0]+1, len(base))
		}
		for j := range base {
			if len(preds[k][j]) != len(base[j]) {
				return nil, fmt.Errorf("submission %d has %d rows, submission %d has %d", k+1, len(preds[k][j]), idx[0]+1, len(base[j]))
			}
		}
	}
	out := make([][]float64, len(base))
	for j := range base {
		logs := al.Log1p
		for _, k := range idx {
			for _, x := range preds[k][j] {
				if x <= -1 {
					logs = false
					break
				}
			}
		}
		col := make([]float64, len(base[j]))
		for u, k := range idx {
			for i, x := range preds[k][j] {
				if logs {
					x = math.Log1p(x)
				}
				col[i] += w[u] * x
			}
		}
		for i := range col {
			if logs {
				col[i] = math.Expm1(col[i])
			}
			if al.Integer {
				col[i] = math.Round(col[i])
			}
		}
		out[j] = col
	}
	return out, nil
}

// vote is the value of cell (i, j) with the largest summed weight; ties go to the earliest.
func vote(rows [][][]string, cols [][]int, w []float64, i, j int) string {
	sum := map[string]float64{}
	var order []string
	for k := range rows {
		v := rows[k][i][cols[k][j]]
		if _, seen := sum[v]; !seen {
			order = append(order, v)
		}
		sum[v] += w[k]
	}
	best := order[0]
	for _, v := range order[1:] {
		if sum[v] > sum[best] {
			best = v
		}
	}
	return best
}

func index(h []string, name string) int {
	for i, v := range h {
		if v == name {
			return i
		}
	}
	return -1
}
