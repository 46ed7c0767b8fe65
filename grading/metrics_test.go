package grading

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"mlerl/internal/testenv"
)

// floats marshal as strings so that NaN and infinities reach Python (float("NaN") reads them).
type floats []float64

func (f floats) MarshalJSON() ([]byte, error) {
	s := make([]string, len(f))
	for i, v := range f {
		s[i] = strconv.FormatFloat(v, 'g', -1, 64)
	}
	return json.Marshal(s)
}

// reference runs Python once over all cases: the script defines f(case), called on each JSON
// case; a line per case holds repr(float(f(case))) or "raises ..." when it raises.
func reference(t *testing.T, defs string, cases []any) []string {
	t.Helper()
	in, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	script := "import json, sys, warnings\nimport numpy as np\nwarnings.simplefilter('ignore')\n" + defs + `
for c in json.load(sys.stdin):
    try:
        print(repr(float(f(c))))
    except Exception as e:
        print("raises " + type(e).__name__ + ": " + str(e).replace("\n", " "))
`
	cmd := exec.Command(testenv.Python, "-c", script)
	cmd.Stdin = strings.NewReader(string(in))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v: %s", err, out)
	}
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("python gave %d lines for %d cases:\n%s", len(lines), len(cases), out)
	}
	return lines
}

// agree checks our (value, error) against Python's line: an error where Python raises or gives
// NaN, else the same value to 1e-9.
func agree(t *testing.T, name string, got float64, err error, ref string) {
	t.Helper()
	want, perr := strconv.ParseFloat(ref, 64)
	undefined := perr != nil || math.IsNaN(want)
	switch {
	case undefined && err == nil:
		t.Errorf("%s: ours %.12g, Python: %s", name, got, ref)
	case !undefined && err != nil:
		t.Errorf("%s: ours fails (%v), Python %s", name, err, ref)
	case !undefined && math.Abs(got-want) > 1e-9:
		t.Errorf("%s: ours %.15g, Python %.15g", name, got, want)
	case err != nil:
		t.Logf("%s: %v (Python: %s)", name, err, ref)
	}
}

func randFloats(rng *rand.Rand, n int, f func() float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = f()
	}
	return v
}

func TestROCAUCMatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(3, 4))
	truth := randFloats(rng, 300, func() float64 { return float64(rng.IntN(2)) })
	noisy := make([]float64, len(truth))
	for i, y := range truth {
		noisy[i] = y + rng.NormFloat64()
	}
	cases := []struct {
		name         string
		truth, score []float64
	}{
		{"random scores", truth, randFloats(rng, 300, rng.Float64)},
		{"informative scores", truth, noisy},
		{"many ties", truth, randFloats(rng, 300, func() float64 { return float64(rng.IntN(5)) / 4 })},
		{"one score for all", truth, randFloats(rng, 300, func() float64 { return 0.5 })},
		{"ties across classes", []float64{0, 1, 0, 1, 1}, []float64{0.2, 0.2, 0.7, 0.7, 0.9}},
		{"2 rows right", []float64{0, 1}, []float64{0.3, 0.7}},
		{"2 rows wrong", []float64{1, 0}, []float64{0.3, 0.7}},
		{"-0 ties with 0", []float64{0, 1, 1}, []float64{0, math.Copysign(0, -1), 1}},
		{"only one class", []float64{1, 1, 1}, []float64{0.1, 0.5, 0.9}},
		{"no rows", []float64{}, []float64{}},
		{"length mismatch", []float64{0, 1, 1}, []float64{0.1, 0.5}},
		{"NaN score", []float64{0, 1, 1}, []float64{0.1, math.NaN(), 0.9}},
		{"infinite score", []float64{0, 1, 1}, []float64{0.1, math.Inf(1), 0.9}},
		{"NaN answer", []float64{0, math.NaN(), 1}, []float64{0.1, 0.5, 0.9}},
		{"three classes", []float64{0, 1, 2}, []float64{0.1, 0.5, 0.9}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string]floats{"y": c.truth, "s": c.score}
	}
	refs := reference(t, `from sklearn.metrics import roc_auc_score
def f(c):
    return roc_auc_score([float(v) for v in c["y"]], [float(v) for v in c["s"]])`, in)
	for i, c := range cases {
		got, err := ROCAUC(c.truth, c.score)
		agree(t, c.name, got, err, refs[i])
	}
}

func TestQuadraticWeightedKappaMatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(5, 6))
	essays := func(n int, labels []int) ([]int, []int) {
		truth, pred := make([]int, n), make([]int, n)
		for i := range truth {
			k := rng.IntN(len(labels))
			truth[i] = labels[k]
			pred[i] = labels[max(0, min(len(labels)-1, k+rng.IntN(3)-1))]
		}
		return truth, pred
	}
	t1, p1 := essays(400, []int{1, 2, 3, 4, 5, 6})
	t2, p2 := essays(400, []int{-3, 0, 1, 4, 6, 100}) // gaps: weights follow rank, not value
	flat := make([]int, len(t1))
	for i := range flat {
		flat[i] = 3
	}
	cases := []struct {
		name        string
		truth, pred []int
	}{
		{"random essays", t1, p1},
		{"labels with gaps", t2, p2},
		{"random guesses", t1, t2},
		{"all predictions equal", t1, flat},
		{"predictions use labels the answers lack", []int{1, 2, 3, 3}, []int{1, 2, 3, 7}},
		{"2 rows opposite", []int{1, 2}, []int{2, 1}},
		{"2 rows right", []int{1, 2}, []int{1, 2}},
		{"answers one label, predictions another", []int{1, 1}, []int{2, 2}},
		{"every label the same", []int{4, 4, 4}, []int{4, 4, 4}},
		{"no rows", []int{}, []int{}},
		{"length mismatch", []int{1, 2, 3}, []int{1, 2}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string][]int{"y": c.truth, "p": c.pred}
	}
	refs := reference(t, `from sklearn.metrics import cohen_kappa_score
def f(c):
    return cohen_kappa_score(c["y"], c["p"], weights="quadratic")`, in)
	for i, c := range cases {
		got, err := QuadraticWeightedKappa(c.truth, c.pred)
		agree(t, c.name, got, err, refs[i])
	}
}

func TestPearsonMatchesScipy(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(7, 8))
	x := randFloats(rng, 300, rng.Float64)
	y := make([]float64, len(x))
	far := make([]float64, len(x))
	for i := range x {
		y[i] = x[i] + 0.3*rng.NormFloat64()
		far[i] = 1e6 + x[i] // a large offset, as scores on another scale
	}
	cases := []struct {
		name string
		x, y []float64
	}{
		{"random", x, randFloats(rng, 300, rng.Float64)},
		{"correlated", x, y},
		{"large offset", far, y},
		{"exactly linear", []float64{1, 2, 3, 4}, []float64{-2, -4, -6, -8}},
		{"2 rows", []float64{0.25, 0.5}, []float64{0.9, 0.1}},
		{"constant predictions", x, randFloats(rng, 300, func() float64 { return 0.5 })},
		{"constant answers", []float64{1, 1, 1}, []float64{0.1, 0.2, 0.3}},
		{"1 row", []float64{1}, []float64{1}},
		{"no rows", []float64{}, []float64{}},
		{"length mismatch", []float64{1, 2, 3}, []float64{1, 2}},
		{"NaN", []float64{1, 2, 3}, []float64{0.1, math.NaN(), 0.3}},
		{"infinity", []float64{1, 2, 3}, []float64{0.1, math.Inf(-1), 0.3}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string]floats{"x": c.x, "y": c.y}
	}
	refs := reference(t, `from scipy.stats import pearsonr
def f(c):
    return pearsonr(np.array([float(v) for v in c["x"]]), np.array([float(v) for v in c["y"]]))[0]`, in)
	for i, c := range cases {
		got, err := Pearson(c.x, c.y)
		agree(t, c.name, got, err, refs[i])
	}
}

func TestRMSLEMatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(9, 10))
	truth := randFloats(rng, 300, func() float64 { return 5 * rng.Float64() })
	cases := []struct {
		name        string
		truth, pred []float64
	}{
		{"random", truth, randFloats(rng, 300, func() float64 { return 5 * rng.Float64() })},
		{"zeros", []float64{0, 0, 1}, []float64{0, 2, 0}},
		{"exact", []float64{0.1, 3}, []float64{0.1, 3}},
		{"2 rows", []float64{0.5, 3}, []float64{1.5, 2}},
		{"negative prediction", []float64{0.5, 3}, []float64{-0.1, 2}},
		{"negative answer", []float64{-0.5, 3}, []float64{0.1, 2}},
		{"no rows", []float64{}, []float64{}},
		{"length mismatch", []float64{1, 2, 3}, []float64{1, 2}},
		{"NaN", []float64{1, 2}, []float64{math.NaN(), 2}},
		{"infinity", []float64{1, 2}, []float64{math.Inf(1), 2}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string]floats{"y": c.truth, "p": c.pred}
	}
	refs := reference(t, `from sklearn.metrics import mean_squared_log_error
def f(c):
    return np.sqrt(mean_squared_log_error([float(v) for v in c["y"]], [float(v) for v in c["p"]]))`, in)
	for i, c := range cases {
		got, err := RMSLE(c.truth, c.pred)
		agree(t, c.name, got, err, refs[i])
	}
}

func TestAccuracyMatchesScikitLearn(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(11, 12))
	label := func() string { return strconv.Itoa(1 + rng.IntN(7)) }
	truth, pred := make([]string, 300), make([]string, 300)
	for i := range truth {
		truth[i], pred[i] = label(), label()
		if rng.IntN(2) == 0 {
			pred[i] = truth[i]
		}
	}
	cases := []struct {
		name        string
		truth, pred []string
	}{
		{"random", truth, pred},
		{"2 rows", []string{"a", "b"}, []string{"a", "a"}},
		{"strings compare exactly", []string{"1", "2", "Cat"}, []string{"1.0", "2", "cat"}},
		{"no rows", []string{}, []string{}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string][]string{"y": c.truth, "p": c.pred}
	}
	refs := reference(t, `from sklearn.metrics import accuracy_score
def f(c):
    return accuracy_score(c["y"], c["p"])`, in)
	for i, c := range cases {
		got := Accuracy(c.truth, c.pred)
		want, _ := strconv.ParseFloat(refs[i], 64)
		if !(got == want || math.IsNaN(got) && math.IsNaN(want)) {
			t.Errorf("%s: ours %v, scikit-learn %s", c.name, got, refs[i])
		}
	}
	mustPanic(t, "Accuracy length mismatch", func() { Accuracy([]string{"a"}, nil) })
}

// mleJaccard is MLE-bench's tweet-sentiment-extraction grader, copied from its grade.py.
const mleJaccard = `
def jaccard(str1, str2):
    a = set(str1.lower().split())
    b = set(str2.lower().split())
    c = a.intersection(b)
    return float(len(c)) / (len(a) + len(b) - len(c))

def mean_jaccard(preds, answers):
    return float(np.mean([jaccard(a, b) for a, b in zip(preds, answers)]))
`

func TestMeanWordJaccardMatchesMLEBench(t *testing.T) {
	testenv.RequirePython(t)
	rng := rand.New(rand.NewPCG(13, 14))
	words := []string{"good", "Good", "GOOD", "bad", "day", "day!", "so", "sad", "i`m", "happy", "ΟΔΟΣ", "οδος"}
	sentence := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteString([]string{" ", "  ", "\t", "\n", " \u00a0"}[rng.IntN(5)])
		}
		return b.String()
	}
	truth, pred := make([]string, 300), make([]string, 300)
	for i := range truth {
		truth[i] = "hello " + sentence()
		pred[i] = sentence()
	}
	cases := []struct {
		name        string
		truth, pred []string
	}{
		{"random, with empty predictions", truth, pred},
		{"repeated words count once", []string{"so so so sad"}, []string{"so sad sad"}},
		{"case is ignored", []string{"Good Day"}, []string{"good DAY"}},
		{"punctuation is part of a word", []string{"good day!"}, []string{"good day"}},
		{"2 rows, one empty prediction", []string{"a b", "c"}, []string{"", "c"}},
		{"Unicode space and separators", []string{"a\u3000b\x1cc"}, []string{"a b c"}},
		{"final sigma and dotted I", []string{"ΟΔΟΣ İstanbul"}, []string{"οδος i̇stanbul"}},
		{"sigma before a quote", []string{"ΟΔΟΣ'Α"}, []string{"οδοσ'α"}},
		{"both empty", []string{"good", ""}, []string{"good", ""}},
		{"both only spaces", []string{" "}, []string{"\t"}},
		{"no rows", []string{}, []string{}},
	}
	in := make([]any, len(cases))
	for i, c := range cases {
		in[i] = map[string][]string{"y": c.truth, "p": c.pred}
	}
	refs := reference(t, mleJaccard+`
def f(c):
    return mean_jaccard(c["p"], c["y"])`, in)
	for i, c := range cases {
		got := MeanWordJaccard(c.truth, c.pred)
		var err error
		if math.IsNaN(got) { // NaN is how MeanWordJaccard says MLE-bench cannot score it
			err = fmt.Errorf("NaN")
		}
		agree(t, c.name, got, err, refs[i])
	}
	mustPanic(t, "MeanWordJaccard length mismatch", func() { MeanWordJaccard([]string{"a"}, nil) })
}

// TestPythonTextRules compares pySpace and pyLower with Python's str.isspace and str.lower on
// every code point Python's Unicode database (14.0) assigns; Go's is 15.0. Each code point c is
// lower-cased alone and in the three places that decide a capital sigma's form.
func TestPythonTextRules(t *testing.T) {
	testenv.RequirePython(t)
	script := `import unicodedata
hexes = lambda s: ",".join("%x" % ord(r) for r in s)
for i in range(0x110000):
    c = chr(i)
    if unicodedata.category(c) in ("Cn", "Cs"):
        continue
    low = [c.lower(), ("A" + c + "Σ").lower(), (c + "Σ").lower(), ("AΣ" + c).lower()]
    print("%x" % i, int(c.isspace()), *map(hexes, low))
`
	out, err := exec.Command(testenv.Python, "-c", script).Output()
	if err != nil {
		t.Fatalf("python: %v", err)
	}
	hexes := func(s string) string {
		h := []string{}
		for _, r := range s {
			h = append(h, strconv.FormatInt(int64(r), 16))
		}
		return strings.Join(h, ",")
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) < 100000 {
		t.Fatalf("Python listed only %d code points", len(lines))
	}
	bad := 0
	for _, line := range lines {
		want := strings.Split(line, " ")
		i, _ := strconv.ParseInt(want[0], 16, 32)
		c := string(rune(i))
		space := "0"
		if pySpace(rune(i)) {
			space = "1"
		}
		got := []string{want[0], space, hexes(pyLower(c)), hexes(pyLower("A" + c + "Σ")),
			hexes(pyLower(c + "Σ")), hexes(pyLower("AΣ" + c))}
		if strings.Join(got, " ") != line {
			if bad++; bad <= 20 {
				t.Errorf("U+%04X: ours %q, Python %q", i, strings.Join(got, " "), line)
			}
		}
	}
	if bad > 20 {
		t.Errorf("... %d code points differ in all", bad)
	}
}

func mustPanic(t *testing.T, name string, f func()) {
	t.Helper()
	defer func() {
		if recover() == nil {
			t.Errorf("%s: no panic", name)
		}
	}()
	f()
}
