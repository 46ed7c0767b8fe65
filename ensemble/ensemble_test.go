package ensemble

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func tab(t *testing.T, s string) Table {
	t.Helper()
	tb, err := ReadCSV([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

func TestBlend(t *testing.T) {
	cases := []struct {
		name    string
		tables  []string
		weights []float64
		align   Align
		want    string
		err     string
	}{
		{name: "weighted mean by id, rows in the first table's order",
			tables:  []string{"id,a,b\n1,0.2,0.8\n2,1,0\n", "id,b,a\n2,1,0\n1,0.4,0.6\n"},
			weights: []float64{3, 1}, align: Align{IDColumn: "id"},
			want: "id,a,b\n1,0.3,0.7\n2,0.75,0.25\n"},
		{name: "zero weight ignored, even with other columns",
			tables:  []string{"id,a\n1,0.5\n", "x,y\nq,r\n"},
			weights: []float64{1, 0}, align: Align{IDColumn: "id"},
			want: "id,a\n1,0.5\n"},
		{name: "labels: weighted vote",
			tables:  []string{"id,label\n1,cat\n2,dog\n", "id,label\n1,dog\n2,dog\n", "id,label\n1,dog\n2,cat\n"},
			weights: []float64{0.5, 0.25, 0.25}, align: Align{IDColumn: "id"},
			want: "id,label\n1,cat\n2,dog\n"},
		{name: "vote tie goes to the earliest table",
			tables:  []string{"id,label\n1,cat\n", "id,label\n1,dog\n"},
			weights: []float64{1, 1}, align: Align{IDColumn: "id"},
			want: "id,label\n1,cat\n"},
		{name: "numeric labels are voted on, not averaged",
			tables:  []string{"id,label\n1,0\n", "id,label\n1,2\n", "id,label\n1,2\n"},
			weights: []float64{1, 1, 1}, align: Align{IDColumn: "id", Vote: true},
			want: "id,label\n1,2\n"},
		{name: "integer scores are rounded",
			tables:  []string{"id,score\n1,2\n", "id,score\n1,3\n", "id,score\n1,3\n"},
			weights: []float64{1, 1, 1}, align: Align{IDColumn: "id", Integer: true},
			want: "id,score\n1,3\n"},
		{name: "by position when there is no id column",
			tables:  []string{"p\n0\n1\n", "p\n1\n1\n"},
			weights: []float64{1, 1}, align: Align{},
			want: "p\n0.5\n1\n"},
		{name: "by position, the carried id taken from the first table; a table without it still blended",
			tables:  []string{"id,p\n7,0\n8,1\n", "p\n1\n1\n", "id,p\n9,1\n9,1\n"},
			weights: []float64{2, 1, 1}, align: Align{Carry: "id"},
			want: "id,p\n7,0.5\n8,1\n"},
		{name: "by position, a first table without the carried id: none in the blend",
			tables:  []string{"p\n0\n1\n", "id,p\n7,1\n8,1\n"},
			weights: []float64{1, 1}, align: Align{Carry: "id"},
			want: "p\n0.5\n1\n"},
		{name: "by id, the carry does not excuse a missing column", tables: []string{"id,a\n1,0\n", "a\n0\n"},
			weights: []float64{1, 1}, align: Align{IDColumn: "id", Carry: "id"}, err: `no column "id"`},
		{name: "log1p: the mean of log(1+x), mapped back",
			tables:  []string{"id,a\n1,0\n2,1\n", "id,a\n1,3\n2,1\n"},
			weights: []float64{1, 1}, align: Align{IDColumn: "id", Log1p: true},
			want: "id,a\n1,1\n2,1\n"},
		{name: "log1p: a column with a value at or below -1 is averaged as it is",
			tables:  []string{"id,a,b\n1,-2,0\n", "id,a,b\n1,4,3\n"},
			weights: []float64{1, 1}, align: Align{IDColumn: "id", Log1p: true},
			want: "id,a,b\n1,1,1\n"},
		{name: "a missing row is named", tables: []string{"id,a\n1,0\n2,0\n", "id,a\n1,0\n3,0\n"},
			weights: []float64{1, 1}, align: Align{IDColumn: "id"}, err: `no row for id "2"`},
		{name: "a missing column is named", tables: []string{"id,a\n1,0\n", "id,b\n1,0\n"},
			weights: []float64{1, 1}, align: Align{IDColumn: "id"}, err: `no column "a"`},
		{name: "all zero weights", tables: []string{"id,a\n1,0\n"}, weights: []float64{0},
			align: Align{IDColumn: "id"}, err: "every weight is zero"},
		{name: "negative weight", tables: []string{"id,a\n1,0\n"}, weights: []float64{-1},
			align: Align{IDColumn: "id"}, err: "non-negative"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tables []Table
			for _, s := range c.tables {
				tables = append(tables, tab(t, s))
			}
			got, err := Blend(tables, c.weights, c.align)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got.CSV()) != c.want {
				t.Fatalf("got\n%s\nwant\n%s", got.CSV(), c.want)
			}
		})
	}
}

func TestConcatCSV(t *testing.T) {
	cases := []struct {
		name  string
		parts []string
		want  string
		err   string
	}{
		{name: "rows in part order under the first header", parts: []string{"id,a\n1,0\n", "id,a\n2,1\n3,1\n"}, want: "id,a\n1,0\n2,1\n3,1\n"},
		{name: "a last row without its newline, a part without rows, CRLF kept",
			parts: []string{"id,a\n1,0", "id,a\n", "id,a\r\n2,1\r\n"}, want: "id,a\n1,0\n2,1\r\n"},
		{name: "quoted headers and fields", parts: []string{"\"id\",\"a,b\"\n\"x\ny\",1\n", "id,\"a,b\"\n2,3\n"}, want: "id,\"a,b\"\n\"x\ny\",1\n2,3\n"},
		{name: "a byte-order mark dropped", parts: []string{"\ufeffid,a\n1,0\n", "\ufeffid,a\n2,1\n"}, want: "id,a\n1,0\n2,1\n"},
		{name: "another header", parts: []string{"id,a\n1,0\n", "id,b\n2,1\n"}, err: "part 2 has columns [id b], part 1 has [id a]"},
		{name: "an empty part", parts: []string{"id,a\n1,0\n", ""}, err: "part 2: empty CSV: no header"},
		{name: "nothing", err: "nothing to concatenate"},
	}
	for _, c := range cases {
		var parts [][]byte
		for _, p := range c.parts {
			parts = append(parts, []byte(p))
		}
		got, err := ConcatCSV(parts)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want one containing %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || string(got) != c.want {
			t.Errorf("%s: got %q, %v; want %q", c.name, got, err, c.want)
		}
	}
}

// sq is a squared-error scorer of the weighted mean of candidates' predictions against truth.
func sq(preds [][]float64, truth []float64, invalid map[int]bool) Scorer {
	return func(counts []int) (float64, bool, error) {
		total := 0
		for i, c := range counts {
			if c > 0 && invalid[i] {
				return 0, false, nil
			}
			total += c
		}
		loss := 0.0
		for r, y := range truth {
			p := 0.0
			for i, c := range counts {
				p += float64(c) / float64(total) * preds[i][r]
			}
			loss += (p - y) * (p - y)
		}
		return loss, true, nil
	}
}

func TestGreedy(t *testing.T) {
	truth := []float64{0, 0, 1, 1}
	cases := []struct {
		name    string
		preds   [][]float64
		invalid map[int]bool
		rounds  int
		counts  []int
		score   float64
		err     string
	}{
		// Two candidates wrong in opposite directions: their mean is exact, which neither is.
		{name: "complementary errors average out", rounds: 4,
			preds:  [][]float64{{0.4, 0.4, 1, 1}, {-0.4, -0.4, 1, 1}, {0.5, 0.5, 0.5, 0.5}},
			counts: []int{1, 1, 0}, score: 0},
		{name: "one dominant candidate stays alone", rounds: 5,
			preds:  [][]float64{{0, 0, 1, 1}, {0.5, 0.5, 0.5, 0.5}},
			counts: []int{1, 0}, score: 0},
		{name: "weights in thirds", rounds: 3,
			preds:  [][]float64{{0.3, 0.3, 1, 1}, {-0.6, -0.6, 1, 1}},
			counts: []int{2, 1}, score: 0},
		{name: "an invalid candidate is never picked", rounds: 3, invalid: map[int]bool{0: true},
			preds:  [][]float64{{0, 0, 1, 1}, {0.1, 0.1, 1, 1}},
			counts: []int{0, 1}, score: 0.02},
		{name: "nothing valid", rounds: 3, invalid: map[int]bool{0: true},
			preds: [][]float64{{0, 0, 1, 1}}, err: "no candidate alone"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sel, err := Greedy(len(c.preds), c.rounds, true, sq(c.preds, truth, c.invalid))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(sel.Score-c.score) > 1e-9 {
				t.Errorf("score %v, want %v (steps %+v)", sel.Score, c.score, sel.Steps)
			}
			if len(sel.Counts) != len(c.counts) {
				t.Fatalf("counts %v, want %v", sel.Counts, c.counts)
			}
			for i := range c.counts {
				if sel.Counts[i] != c.counts[i] {
					t.Fatalf("counts %v, want %v (steps %+v)", sel.Counts, c.counts, sel.Steps)
				}
			}
		})
	}
}

// Higher-is-better metrics pick the largest score, and the first round is the best single.
func TestGreedyHigherIsBetterStartsFromTheBestSingle(t *testing.T) {
	acc := []float64{0.7, 0.9, 0.8}
	sel, err := Greedy(3, 1, false, func(c []int) (float64, bool, error) {
		s := 0.0
		for i, n := range c {
			s += float64(n) * acc[i]
		}
		return s, true, nil
	})
	if err != nil || sel.Counts[1] != 1 || sel.Score != 0.9 {
		t.Fatalf("got %+v, %v; want candidate 1 alone at 0.9", sel, err)
	}
	if w := sel.Weights(); w[1] != 1 || w[0] != 0 {
		t.Fatalf("weights %v", w)
	}
}

// BlendColumns averages as Blend does: on numeric tables in one row order, its columns are
// Blend's text read back as numbers.
func TestBlendColumnsAveragesAsBlend(t *testing.T) {
	cases := []struct {
		name    string
		tables  []string
		weights []float64
		align   Align
	}{
		{"weighted mean", []string{"p,q\n0.2,0.8\n1,0\n0.125,3\n", "p,q\n0.4,0.6\n0,1\n0.5,-7\n"}, []float64{3, 1}, Align{}},
		{"a zero weight ignored", []string{"p\n0.2\n", "p\n9\n", "p\n0.3\n"}, []float64{1, 0, 1}, Align{}},
		{"integer scores rounded", []string{"s\n2\n0\n", "s\n3\n1\n", "s\n3\n1\n"}, []float64{1, 1, 1}, Align{Integer: true}},
		{"log1p, and a column at or below -1 averaged as it is", []string{"a,b\n0,-2\n1,0\n", "a,b\n3,4\n1,0.5\n"}, []float64{1, 2}, Align{Log1p: true}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var tables []Table
			var preds [][][]float64
			for _, s := range c.tables {
				tb := tab(t, s)
				tables = append(tables, tb)
				preds = append(preds, columns(t, tb))
			}
			want, err := Blend(tables, c.weights, c.align)
			if err != nil {
				t.Fatal(err)
			}
			got, err := BlendColumns(preds, c.weights, c.align)
			if err != nil {
				t.Fatal(err)
			}
			w := columns(t, want)
			for j := range w {
				for i := range w[j] {
					if math.Abs(got[j][i]-w[j][i]) > 1e-11*math.Max(1, math.Abs(w[j][i])) {
						t.Fatalf("column %d row %d: %v, Blend wrote %v", j, i, got[j][i], w[j][i])
					}
				}
			}
		})
	}
	for _, bad := range []struct {
		name    string
		preds   [][][]float64
		weights []float64
		align   Align
		err     string
	}{
		{"a vote", [][][]float64{{{1}}}, []float64{1}, Align{Vote: true}, "use Blend"},
		{"rows that differ", [][][]float64{{{1, 2}}, {{1}}}, []float64{1, 1}, Align{}, "has 1 rows"},
		{"columns that differ", [][][]float64{{{1}}, {{1}, {2}}}, []float64{1, 1}, Align{}, "has 2 columns"},
		{"weights that do not match", [][][]float64{{{1}}}, []float64{1, 1}, Align{}, "2 weights"},
		{"every weight zero", [][][]float64{{{1}}}, []float64{0}, Align{}, "every weight is zero"},
	} {
		if _, err := BlendColumns(bad.preds, bad.weights, bad.align); err == nil || !strings.Contains(err.Error(), bad.err) {
			t.Errorf("%s: error %v, want one containing %q", bad.name, err, bad.err)
		}
	}
}

// columns reads a table of numbers column by column.
func columns(t *testing.T, tb Table) [][]float64 {
	t.Helper()
	out := make([][]float64, len(tb.Header))
	for j := range tb.Header {
		for _, r := range tb.Rows {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				t.Fatal(err)
			}
			out[j] = append(out[j], v)
		}
	}
	return out
}
