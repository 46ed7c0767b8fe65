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

// Concat appends tables with the same header (the folds' submissions, in fold order).
func Concat(parts []Table) (Table, error) {
	if len(parts) == 0 {
		return Table{}, errors.New("nothing to concatenate")
	}
	out := Table{Header: parts[0].Header}
	for i, p := range parts {
		if !sameStrings(p.Header, out.Header) {
			return Table{}, fmt.Errorf("part %d has columns %v, part 1 has %v", i+1, p.Header, out.Header)
		}
		out.Rows = append(out.Rows, p.Rows...)
	}
	return out, nil
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
	var used []Table
	var w []float64
	total := 0.0
	for i, t := range tables {
		if weights[i] < 0 || math.IsNaN(weights[i]) {
			return Table{}, fmt.Errorf("weight %d is %v: weights must be non-negative", i, weights[i])
		}
		if weights[i] > 0 {
			used, w = append(used, t), append(w, weights[i])
			total += weights[i]
		}
	}
	if len(used) == 0 {
		return Table{}, errors.New("every weight is zero")
	}
	for i := range w {
		w[i] /= total
	}
	base := used[0]
	idc := -1
	if al.IDColumn != "" {
		if idc = index(base.Header, al.IDColumn); idc < 0 {
			return Table{}, fmt.Errorf("no id column %q in %v", al.IDColumn, base.Header)
		}
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
			if cols[k][j] = index(t.Header, h); cols[k][j] < 0 {
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
		numeric := j != idc && !al.Vote
		logs := al.Log1p
		for k := range used {
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
			if j == idc {
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
