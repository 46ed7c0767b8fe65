package grading

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"mlerl/internal/testenv"
)

// The regression metrics against scikit-learn and scipy on random and edge-case data, one
// Python run per metric.
func TestRegressionMetricsMatchScikitLearnAndScipy(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(11, 12))
	truth := randFloats(rng, 500, func() float64 { return rng.NormFloat64()*3 + 10 })
	near := make([]float64, len(truth))
	for i, v := range truth {
		near[i] = v + rng.NormFloat64()
	}
	ties := randFloats(rng, 500, func() float64 { return float64(rng.IntN(4)) })
	cases := []struct {
		name        string
		truth, pred []float64
	}{
		{"random", truth, randFloats(rng, 500, rng.Float64)},
		{"close", truth, near},
		{"many ties", ties, randFloats(rng, 500, func() float64 { return float64(rng.IntN(3)) })},
		{"even count", []float64{1, 2, 3, 4}, []float64{1.5, 2, 2, 8}},
		{"perfect", []float64{1, 2, 3}, []float64{1, 2, 3}},
		{"constant prediction", []float64{1, 2, 3}, []float64{2, 2, 2}},
		{"one row", []float64{1}, []float64{2}},
		{"no rows", []float64{}, []float64{}},
		{"NaN", []float64{1, math.NaN(), 3}, []float64{1, 2, 3}},
	}
	metrics := []struct {
		name, python string
		f            func(truth, pred []float64) (float64, error)
	}{
		{"rmse", "from sklearn.metrics import mean_squared_error\ndef f(c):\n    return np.sqrt(mean_squared_error(y(c), p(c)))", RMSE},
		{"mae", "from sklearn.metrics import mean_absolute_error\ndef f(c):\n    return mean_absolute_error(y(c), p(c))", MAE},
		{"median-absolute-error", "from sklearn.metrics import median_absolute_error\ndef f(c):\n    return median_absolute_error(y(c), p(c))", MedianAbsoluteError},
		{"spearman", "from scipy.stats import spearmanr\ndef f(c):\n    return spearmanr(y(c), p(c))[0]", Spearman},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string]floats{"y": c.truth, "p": c.pred}
	}
	for _, m := range metrics {
		refs := reference(t, "y = lambda c: [float(v) for v in c['y']]\np = lambda c: [float(v) for v in c['p']]\n"+m.python, in)
		for i, c := range cases {
			got, err := m.f(c.truth, c.pred)
			agree(t, m.name+" / "+c.name, got, err, refs[i])
		}
	}
}

// F1 in each of scikit-learn's averages, on labels as the grader keys them.
func TestF1MatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(13, 14))
	labels := func(n, k int, noise float64, truth []int) []int {
		out := make([]int, n)
		for i := range out {
			if truth != nil && rng.Float64() > noise {
				out[i] = truth[i]
			} else {
				out[i] = rng.IntN(k)
			}
		}
		return out
	}
	t2 := labels(400, 2, 0, nil)
	t5 := labels(400, 5, 0, nil)
	cases := []struct {
		name        string
		truth, pred []int
	}{
		{"binary, random", t2, labels(400, 2, 0, nil)},
		{"binary, informative", t2, labels(400, 2, 0.3, t2)},
		{"binary, no positive predicted", []int{1, 0, 1, 0}, []int{0, 0, 0, 0}},
		{"binary, no positive anywhere", []int{0, 0, 0}, []int{0, 0, 0}},
		{"five classes, informative", t5, labels(400, 5, 0.4, t5)},
		{"a class only predicted", []int{0, 1, 1, 2}, []int{0, 1, 3, 2}},
	}
	key := func(v []int) []string {
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = "\x00n" + strconv.Itoa(x)
		}
		return out
	}
	ints := func(v []int) floats {
		out := make(floats, len(v))
		for i, x := range v {
			out[i] = float64(x)
		}
		return out
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string]floats{"y": ints(c.truth), "p": ints(c.pred)}
	}
	for _, avg := range []string{"binary", "macro", "micro", "weighted"} {
		refs := reference(t, `from sklearn.metrics import f1_score
def f(c):
    return f1_score([int(float(v)) for v in c["y"]], [int(float(v)) for v in c["p"]], average="`+avg+`")`, in)
		for i, c := range cases {
			var got float64
			var err error
			if avg == "binary" {
				got, err = BinaryF1(key(c.truth), key(c.pred))
			} else {
				got = F1(key(c.truth), key(c.pred), avg)
			}
			agree(t, "f1 "+avg+" / "+c.name, got, err, refs[i])
		}
	}
}

// MAP@k against Kaggle's average-precision formula (ml_metrics' apk, written out in Python):
// duplicates count once, rows without answers score 0, the divisor is min(answers, k); for
// cutoffs within and beyond Kaggle's usual 3-12.
func TestMAPAtKMatchesKagglesFormula(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(15, 16))
	words := func(n, vocab int) string {
		s := ""
		for i := range n {
			if i > 0 {
				s += " "
			}
			s += "w" + strconv.Itoa(rng.IntN(vocab))
		}
		return s
	}
	var truth, pred []string
	for range 300 {
		truth = append(truth, words(1+rng.IntN(3), 12))
		pred = append(pred, words(rng.IntN(8), 12))
	}
	// Long rows, so that cutoffs past 12 cut somewhere different from the short rows' end.
	for range 40 {
		truth = append(truth, words(1+rng.IntN(30), 60))
		pred = append(pred, words(rng.IntN(120), 60))
	}
	truth = append(truth, "a b", "a", "", "a b c d e f")
	pred = append(pred, "a a b", "b a", "a", "f e d c b a")
	type c struct {
		T []string `json:"t"`
		P []string `json:"p"`
		K int      `json:"k"`
	}
	ks := []int{1, 2, 3, 4, 5, 7, 10, 12, 25, 100} // any K of 1 or more, not only Kaggle's usual ones
	in := make([]any, len(ks))
	for i, k := range ks {
		in[i] = c{truth, pred, k}
	}
	refs := reference(t, `def apk(actual, predicted, k):
    predicted = predicted[:k]
    score, hits = 0.0, 0.0
    for i, p in enumerate(predicted):
        if p in actual and p not in predicted[:i]:
            hits += 1.0
            score += hits / (i + 1.0)
    if not actual:
        return 0.0
    return score / min(len(actual), k)
def f(c):
    return np.mean([apk(list(dict.fromkeys(t.split())), p.split(), c["k"]) for t, p in zip(c["t"], c["p"])])`, in)
	for i, k := range ks {
		agree(t, "map@"+strconv.Itoa(k), MeanAveragePrecisionAtK(truth, pred, k), nil, refs[i])
	}
}
