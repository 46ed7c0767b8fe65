package ensemble

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestCalibrationApply(t *testing.T) {
	cases := []struct {
		name string
		cal  Calibration
		in   string
		skip int
		want [][]float64 // probabilities per row, id column left out
		err  string
	}{
		{name: "identity leaves the table as it is", cal: Identity, in: "id,a,b\n1,0.6,0.4\n", skip: 0,
			want: [][]float64{{0.6, 0.4}}},
		{name: "zero value is the identity (runs recorded before calibration)", cal: Calibration{}, in: "id,a,b\n1,0.6,0.4\n", skip: 0,
			want: [][]float64{{0.6, 0.4}}},
		{name: "power 2 sharpens", cal: Calibration{Power: 2}, in: "id,a,b\n1,0.6,0.4\n", skip: 0,
			want: [][]float64{{0.36 / 0.52, 0.16 / 0.52}}},
		{name: "power 1/2 flattens", cal: Calibration{Power: 0.5}, in: "a,b\n0.64,0.36\n", skip: -1,
			want: [][]float64{{0.8 / 1.4, 0.6 / 1.4}}},
		{name: "smoothing lifts a zero", cal: Calibration{Power: 1, Smoothing: 0.1}, in: "id,a,b\n1,1,0\n", skip: 0,
			want: [][]float64{{0.95, 0.05}}},
		{name: "unnormalised rows are renormalised", cal: Calibration{Power: 1, Smoothing: 0.5}, in: "id,a,b\n1,2,2\n", skip: 0,
			want: [][]float64{{0.5, 0.5}}},
		{name: "a row of zeros becomes uniform", cal: Calibration{Power: 2}, in: "id,a,b,c,d\n1,0,0,0,0\n", skip: 0,
			want: [][]float64{{0.25, 0.25, 0.25, 0.25}}},
		{name: "text is not a probability", cal: Calibration{Power: 2}, in: "id,a,b\n1,x,0.4\n", skip: 0, err: `column "a": "x" is not a probability`},
		{name: "negative is not a probability", cal: Calibration{Power: 2}, in: "id,a,b\n1,-0.1,0.4\n", skip: 0, err: "not a probability"},
		{name: "power must be positive", cal: Calibration{Power: -1}, in: "id,a,b\n1,0.5,0.5\n", skip: 0, err: "power must be positive"},
		{name: "smoothing below 1", cal: Calibration{Power: 1, Smoothing: 1}, in: "id,a,b\n1,0.5,0.5\n", skip: 0, err: "smoothing in [0, 1)"},
		{name: "one class is not a distribution", cal: Calibration{Power: 2}, in: "id,a\n1,1\n", skip: 0, err: "two probability columns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := c.cal.Apply(tab(t, c.in), c.skip)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one containing %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range got.Rows {
				var ps []float64
				for j, s := range r {
					if j == c.skip {
						if s != tab(t, c.in).Rows[i][j] {
							t.Errorf("row %d: id %q changed", i, s)
						}
						continue
					}
					v, err := strconv.ParseFloat(s, 64)
					if err != nil {
						t.Fatal(err)
					}
					ps = append(ps, v)
				}
				for j := range ps {
					if math.Abs(ps[j]-c.want[i][j]) > 1e-9 {
						t.Errorf("row %d = %v, want %v", i, ps, c.want[i])
						break
					}
				}
			}
		})
	}
}

// logLoss of two-class probability rows against the true class (column a is right when truth is 0).
func logLoss(t *testing.T, tb Table, truth []int) float64 {
	total := 0.0
	for i, r := range tb.Rows {
		p, err := strconv.ParseFloat(r[truth[i]], 64)
		if err != nil {
			t.Fatal(err)
		}
		total -= math.Log(math.Max(p, 1e-15))
	}
	return total / float64(len(tb.Rows))
}

func TestFitCalibration(t *testing.T) {
	// Always 0.99 confident, right 4 times in 5: the loss wants flatter rows (power < 1).
	over := "a,b\n"
	var truth []int
	for i := 0; i < 50; i++ {
		over += "0.99,0.01\n"
		truth = append(truth, map[bool]int{true: 1, false: 0}[i%5 == 0])
	}
	// Right every time at 0.6: the loss wants sharper rows (power > 1).
	under := "a,b\n"
	var all []int
	for i := 0; i < 50; i++ {
		under += "0.6,0.4\n"
		all = append(all, 0)
	}
	cases := []struct {
		name      string
		in        string
		truth     []int
		wantPower func(float64) bool
	}{
		{"overconfident blend is flattened", over, truth, func(p float64) bool { return p < 1 }},
		{"underconfident blend is sharpened", under, all, func(p float64) bool { return p > 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb := tab(t, c.in)
			before := logLoss(t, tb, c.truth)
			cal, after, err := FitCalibration(Grid(), func(cal Calibration) (float64, bool, error) {
				ct, err := cal.Apply(tb, -1)
				if err != nil {
					return 0, false, err
				}
				return logLoss(t, ct, c.truth), true, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if !c.wantPower(cal.Power) || !(after < before) {
				t.Errorf("fitted %+v: loss %.4f -> %.4f", cal, before, after)
			}
		})
	}
	t.Run("the identity unless another is strictly better", func(t *testing.T) {
		cal, _, err := FitCalibration(Grid(), func(Calibration) (float64, bool, error) { return 0.5, true, nil })
		if err != nil || cal != Identity {
			t.Errorf("got %+v, %v; want the identity", cal, err)
		}
	})
	t.Run("an invalid uncalibrated blend is an error", func(t *testing.T) {
		if _, _, err := FitCalibration(Grid(), func(Calibration) (float64, bool, error) { return 0, false, nil }); err == nil {
			t.Error("no error")
		}
	})
	t.Run("the grid holds the identity and both directions", func(t *testing.T) {
		var id, lo, hi bool
		for _, c := range Grid() {
			id = id || c.IsIdentity()
			lo = lo || c.Power < 1
			hi = hi || c.Power > 1
		}
		if !id || !lo || !hi {
			t.Errorf("identity %v, power < 1 %v, power > 1 %v", id, lo, hi)
		}
	})
}
