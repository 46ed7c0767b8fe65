package ensemble

import (
	"math"
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

func TestConcatNeedsOneHeader(t *testing.T) {
	got, err := Concat([]Table{tab(t, "id,a\n1,0\n"), tab(t, "id,a\n2,1\n")})
	if err != nil || string(got.CSV()) != "id,a\n1,0\n2,1\n" {
		t.Fatalf("got %q, %v", got.CSV(), err)
	}
	if _, err := Concat([]Table{tab(t, "id,a\n1,0\n"), tab(t, "id,b\n2,1\n")}); err == nil || !strings.Contains(err.Error(), "part 2 has columns") {
		t.Fatalf("want a header mismatch named, got %v", err)
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
