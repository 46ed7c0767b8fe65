package grading

import (
	"math"
	"math/rand/v2"
	"testing"

	"mlerl/internal/testenv"
)

func TestRMSEMatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(11, 12))
	cases := []struct {
		name        string
		truth, pred []float64
	}{
		{"random", randFloats(rng, 300, rng.Float64), randFloats(rng, 300, func() float64 { return 1.4*rng.Float64() - 0.2 })},
		{"exact", []float64{0.1, 1}, []float64{0.1, 1}},
		{"outside [0, 1]", []float64{0, 1}, []float64{-0.5, 2}},
		{"no rows", []float64{}, []float64{}},
		{"length mismatch", []float64{1, 2, 3}, []float64{1, 2}},
		{"NaN", []float64{1, 2}, []float64{math.NaN(), 2}},
		{"infinity", []float64{1, 2}, []float64{math.Inf(1), 2}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string]floats{"y": c.truth, "p": c.pred}
	}
	// scikit-learn 1.2 has no root_mean_squared_error yet: the root of mean_squared_error is it.
	refs := reference(t, `from sklearn.metrics import mean_squared_error
def f(c):
    return np.sqrt(mean_squared_error([float(v) for v in c["y"]], [float(v) for v in c["p"]]))`, in)
	for i, c := range cases {
		got, err := RMSE(c.truth, c.pred)
		agree(t, c.name, got, err, refs[i])
	}
}
