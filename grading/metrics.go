package grading

// Metrics as MLE-bench's graders compute them (mlebench/competitions/<id>/grade.py), checked
// against Debian's scikit-learn 1.2.1 and scipy 1.10.1 in metrics_test.go. MLE-bench rounds every
// score to 5 decimals, and any exception in a grader makes the submission invalid (score None).
//
//   - plant-pathology-2020-fgvc7: roc_auc_score on each of healthy, multiple_diseases, rust, scab,
//     then the plain mean of the four (column-wise, not micro-averaged). No range check on scores.
//   - us-patent-phrase-to-phrase-matching: scipy.stats.pearsonr(answers, submission)[0]. A constant
//     submission gives NaN there (a "valid" NaN score that earns nothing); here it is an error.
//   - learning-agency-lab-automated-essay-scoring-2: cohen_kappa_score(pred, truth,
//     weights="quadratic"). Weights use each label's rank in the sorted union of labels, not its
//     value; non-integer scores (3.5) make scikit-learn raise, whole floats (3.0) are accepted.
//   - nomad2018-predict-transparent-conductors: (RMSLE(formation_energy_ev_natom) +
//     RMSLE(bandgap_energy_ev)) / 2 via root_mean_squared_log_error (scikit-learn >= 1.4, equal to
//     sqrt(mean_squared_log_error)); a negative value raises. Rows are not matched by id there.
//   - tabular-playground-series-dec-2021: accuracy_score on Cover_Type, rows sorted by Id.
//   - tweet-sentiment-extraction: mean of the word Jaccard below; empty cells read as "".

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unicode"
)

// ROCAUC is scikit-learn's roc_auc_score for 0/1 answers: the area under the ROC curve by the
// trapezoidal rule, where tied scores form one step (a tie counts as half a correct ordering).
func ROCAUC(truth []float64, score []float64) (float64, error) {
	if len(truth) != len(score) {
		return 0, fmt.Errorf("ROC AUC needs as many scores as answers (%d scores, %d answers)", len(score), len(truth))
	}
	var pos, neg float64
	for i, t := range truth {
		if t != 0 && t != 1 {
			return 0, fmt.Errorf("ROC AUC answers must be 0 or 1, got %v", t)
		}
		if math.IsNaN(score[i]) || math.IsInf(score[i], 0) {
			return 0, fmt.Errorf("ROC AUC scores must be finite numbers, got %v", score[i])
		}
		pos += t
	}
	neg = float64(len(truth)) - pos
	if pos == 0 || neg == 0 {
		return 0, errors.New("ROC AUC is undefined when the answers hold only one class")
	}
	idx := make([]int, len(score))
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool { return score[idx[a]] > score[idx[b]] })
	var tp, fp, area float64
	for i := 0; i < len(idx); {
		tp0, fp0 := tp, fp
		// Walk the whole group of equal scores before adding its trapezoid.
		for j := i; i < len(idx) && score[idx[i]] == score[idx[j]]; i++ {
			tp += truth[idx[i]]
			fp += 1 - truth[idx[i]]
		}
		area += (fp - fp0) * (tp + tp0) / 2
	}
	return area / (pos * neg), nil
}

// QuadraticWeightedKappa is cohen_kappa_score(truth, pred, weights="quadratic"). As in
// scikit-learn, the labels are the sorted union of both lists and the weight of a disagreement is
// the squared difference of the labels' positions in that list (not of their values).
func QuadraticWeightedKappa(truth, pred []int) (float64, error) {
	if len(truth) != len(pred) {
		return 0, fmt.Errorf("quadratic weighted kappa needs as many predictions as answers (%d predictions, %d answers)", len(pred), len(truth))
	}
	if len(truth) == 0 {
		return 0, errors.New("quadratic weighted kappa is undefined with no rows")
	}
	pos := map[int]int{}
	for _, v := range append(append([]int{}, truth...), pred...) {
		pos[v] = 0
	}
	labels := make([]int, 0, len(pos))
	for v := range pos {
		labels = append(labels, v)
	}
	sort.Ints(labels)
	if len(labels) == 1 {
		// scikit-learn computes 0/0 = NaN here: nothing to agree or disagree on.
		return 0, errors.New("quadratic weighted kappa is undefined when every answer and prediction is the same label")
	}
	for i, v := range labels {
		pos[v] = i
	}
	k := len(labels)
	rowSum, colSum := make([]float64, k), make([]float64, k)
	var observed float64
	for i := range truth {
		a, b := pos[truth[i]], pos[pred[i]]
		rowSum[a]++
		colSum[b]++
		observed += float64((a - b) * (a - b))
	}
	// Expected disagreement if answers and predictions were independent with the same marginals.
	var expected float64
	for a := range k {
		for b := range k {
			expected += float64((a-b)*(a-b)) * rowSum[a] * colSum[b]
		}
	}
	expected /= float64(len(truth))
	return 1 - observed/expected, nil
}

// MeanWordJaccard is MLE-bench's tweet-sentiment-extraction score: for each row, the Jaccard
// index of the sets of lower-cased, whitespace-separated words (Python's str.lower().split()),
// averaged over rows. A row where neither side has a word is 0/0: MLE-bench raises
// ZeroDivisionError and the submission is invalid, so that case and an empty input give NaN.
// truth and pred must have the same length.
func MeanWordJaccard(truth, pred []string) float64 {
	if len(truth) != len(pred) {
		panic(fmt.Sprintf("MeanWordJaccard: %d answers but %d predictions", len(truth), len(pred)))
	}
	total := 0.0
	for i := range truth {
		a, b := wordSet(truth[i]), wordSet(pred[i])
		common := 0
		for w := range a {
			if b[w] {
				common++
			}
		}
		union := len(a) + len(b) - common
		if union == 0 {
			return math.NaN()
		}
		total += float64(common) / float64(union)
	}
	return total / float64(len(truth)) // NaN with no rows, as numpy's mean of nothing
}

func wordSet(s string) map[string]bool {
	set := map[string]bool{}
	for _, w := range strings.FieldsFunc(pyLower(s), pySpace) {
		set[w] = true
	}
	return set
}

// pySpace is Python's str.isspace: Go's unicode.IsSpace plus the ASCII separators U+001C..U+001F.
func pySpace(r rune) bool { return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f) }

// pyLower is Python's str.lower: Go's simple mapping plus Python's two full mappings, İ -> i̇ and
// a capital sigma that ends a word -> ς.
func pyLower(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		switch {
		case r == 'İ':
			b.WriteString("i\u0307")
		case r == 'Σ' && finalSigma(rs, i):
			b.WriteRune('ς')
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// finalSigma is Unicode's Final_Sigma context, as CPython tests it: a cased letter before
// (skipping case-ignorable ones) and none after.
func finalSigma(rs []rune, i int) bool {
	j := i - 1
	for j >= 0 && caseIgnorable(rs[j]) {
		j--
	}
	if j < 0 || !cased(rs[j]) {
		return false
	}
	for j = i + 1; j < len(rs) && caseIgnorable(rs[j]); j++ {
	}
	return j == len(rs) || !cased(rs[j])
}

func cased(r rune) bool {
	return unicode.IsUpper(r) || unicode.IsLower(r) || unicode.IsTitle(r) ||
		unicode.Is(unicode.Other_Lowercase, r) || unicode.Is(unicode.Other_Uppercase, r)
}

// caseIgnorable is Unicode's Case_Ignorable: marks, format characters, modifiers and the
// Word_Break MidLetter, MidNumLet and Single_Quote characters.
func caseIgnorable(r rune) bool {
	if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Lm, unicode.Sk) {
		return true
	}
	return strings.ContainsRune("'.:·\u0387\u055f\u05f4\u2018\u2019\u2024\u2027\ufe13\ufe52\ufe55\uff07\uff0e\uff1a", r)
}

// Pearson is scipy.stats.pearsonr's correlation coefficient r.
func Pearson(x, y []float64) (float64, error) {
	n := len(x)
	if n != len(y) {
		return 0, fmt.Errorf("Pearson correlation needs as many predictions as answers (%d and %d)", len(y), n)
	}
	if n < 2 {
		return 0, errors.New("Pearson correlation needs at least 2 rows")
	}
	for i := range x {
		if !finite(x[i]) || !finite(y[i]) {
			return 0, errors.New("Pearson correlation needs finite numbers (found NaN or infinity)")
		}
	}
	if constant(x) || constant(y) {
		return 0, errors.New("Pearson correlation is undefined when every value on one side is the same")
	}
	if n == 2 { // scipy's shortcut: the sign of the slope, exactly ±1
		return sign(x[1]-x[0]) * sign(y[1]-y[0]), nil
	}
	mx, my := mean(x), mean(y)
	var sxy, sxx, syy float64
	for i := range x {
		dx, dy := x[i]-mx, y[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	r := sxy / (math.Sqrt(sxx) * math.Sqrt(syy))
	return math.Max(-1, math.Min(1, r)), nil
}

// RMSLE is the square root of scikit-learn's mean_squared_log_error: the root mean square of
// log(1+truth) - log(1+pred). scikit-learn 1.2 rejects any negative value.
func RMSLE(truth, pred []float64) (float64, error) {
	if len(truth) != len(pred) {
		return 0, fmt.Errorf("RMSLE needs as many predictions as answers (%d predictions, %d answers)", len(pred), len(truth))
	}
	if len(truth) == 0 {
		return 0, errors.New("RMSLE is undefined with no rows")
	}
	sum := 0.0
	for i := range truth {
		t, p := truth[i], pred[i]
		if !finite(t) || !finite(p) {
			return 0, errors.New("RMSLE needs finite numbers (found NaN or infinity)")
		}
		if t < 0 || p < 0 {
			return 0, fmt.Errorf("RMSLE cannot be used with negative values (found %v)", math.Min(t, p))
		}
		d := math.Log1p(t) - math.Log1p(p)
		sum += d * d
	}
	return math.Sqrt(sum / float64(len(truth))), nil
}

// Accuracy is scikit-learn's accuracy_score: the share of rows whose labels are equal as
// strings. NaN with no rows, as scikit-learn. truth and pred must have the same length.
func Accuracy(truth, pred []string) float64 {
	if len(truth) != len(pred) {
		panic(fmt.Sprintf("Accuracy: %d answers but %d predictions", len(truth), len(pred)))
	}
	right := 0
	for i := range truth {
		if truth[i] == pred[i] {
			right++
		}
	}
	return float64(right) / float64(len(truth))
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func constant(v []float64) bool {
	for _, x := range v {
		if x != v[0] {
			return false
		}
	}
	return true
}

func sign(v float64) float64 {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// RMSE is the square root of scikit-learn's mean_squared_error.
func RMSE(truth, pred []float64) (float64, error) {
	if err := regressionInputs("RMSE", truth, pred); err != nil {
		return 0, err
	}
	s := 0.0
	for i := range truth {
		d := truth[i] - pred[i]
		s += d * d
	}
	return math.Sqrt(s / float64(len(truth))), nil
}

// MAE is scikit-learn's mean_absolute_error.
func MAE(truth, pred []float64) (float64, error) {
	if err := regressionInputs("MAE", truth, pred); err != nil {
		return 0, err
	}
	s := 0.0
	for i := range truth {
		s += math.Abs(truth[i] - pred[i])
	}
	return s / float64(len(truth)), nil
}

// MedianAbsoluteError is scikit-learn's median_absolute_error (numpy's median: the mean of the
// two middle values for an even count).
func MedianAbsoluteError(truth, pred []float64) (float64, error) {
	if err := regressionInputs("median absolute error", truth, pred); err != nil {
		return 0, err
	}
	d := make([]float64, len(truth))
	for i := range truth {
		d[i] = math.Abs(truth[i] - pred[i])
	}
	sort.Float64s(d)
	n := len(d)
	if n%2 == 1 {
		return d[n/2], nil
	}
	return (d[n/2-1] + d[n/2]) / 2, nil
}

// Spearman is scipy.stats.spearmanr's correlation: Pearson's r of the ranks, ties taking their
// average rank.
func Spearman(x, y []float64) (float64, error) {
	if err := regressionInputs("Spearman correlation", x, y); err != nil {
		return 0, err
	}
	if len(x) < 2 {
		return 0, errors.New("Spearman correlation needs at least 2 rows")
	}
	return Pearson(ranks(x), ranks(y))
}

// ranks are 1-based ranks with ties averaged (scipy.stats.rankdata's "average").
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j < len(idx) && v[idx[j]] == v[idx[i]] {
			j++
		}
		avg := float64(i+j+1) / 2 // ranks i+1..j
		for k := i; k < j; k++ {
			r[idx[k]] = avg
		}
		i = j
	}
	return r
}

func regressionInputs(name string, truth, pred []float64) error {
	if len(truth) != len(pred) {
		return fmt.Errorf("%s needs as many predictions as answers (%d predictions, %d answers)", name, len(pred), len(truth))
	}
	if len(truth) == 0 {
		return fmt.Errorf("%s is undefined with no rows", name)
	}
	for i := range truth {
		if !finite(truth[i]) || !finite(pred[i]) {
			return fmt.Errorf("%s needs finite numbers (found NaN or infinity)", name)
		}
	}
	return nil
}

// BinaryF1 is scikit-learn's f1_score with its defaults (average="binary", pos_label=1): the
// labels must be 0/1 (or booleans); a class never predicted nor present scores 0.
func BinaryF1(truth, pred []string) (float64, error) {
	one, zero := "\x00n1", "\x00n0"
	var tp, fp, fn float64
	for i := range truth {
		for _, l := range []string{truth[i], pred[i]} {
			if l != one && l != zero {
				return 0, invalidf("binary F1 needs the labels 0 and 1 (or False and True), found %q", strings.TrimPrefix(l, "\x00n"))
			}
		}
		switch {
		case truth[i] == one && pred[i] == one:
			tp++
		case pred[i] == one:
			fp++
		case truth[i] == one:
			fn++
		}
	}
	return f1(tp, fp, fn), nil
}

func f1(tp, fp, fn float64) float64 {
	if 2*tp+fp+fn == 0 {
		return 0 // scikit-learn's zero_division default ("warn") scores 0
	}
	return 2 * tp / (2*tp + fp + fn)
}

// F1 is scikit-learn's f1_score over every label of either side with average "macro" (the
// plain mean of the labels' F1), "micro" (F1 of the pooled counts: accuracy for single labels)
// or "weighted" (weighted by each label's count in the answers).
func F1(truth, pred []string, average string) float64 {
	type counts struct{ tp, fp, fn, support float64 }
	per := map[string]*counts{}
	get := func(l string) *counts {
		if per[l] == nil {
			per[l] = &counts{}
		}
		return per[l]
	}
	for i := range truth {
		get(truth[i]).support++
		if truth[i] == pred[i] {
			get(truth[i]).tp++
		} else {
			get(pred[i]).fp++
			get(truth[i]).fn++
		}
	}
	labels := make([]string, 0, len(per))
	for l := range per {
		labels = append(labels, l)
	}
	sort.Strings(labels) // a fixed order of the float sums
	var sum, weights, tp, fp, fn float64
	for _, l := range labels {
		c := per[l]
		switch average {
		case "macro":
			sum += f1(c.tp, c.fp, c.fn)
			weights++
		case "weighted":
			sum += c.support * f1(c.tp, c.fp, c.fn)
			weights += c.support
		}
		tp, fp, fn = tp+c.tp, fp+c.fp, fn+c.fn
	}
	if average == "micro" {
		return f1(tp, fp, fn)
	}
	if weights == 0 {
		return 0
	}
	return sum / weights
}

// MeanAveragePrecisionAtK is Kaggle's MAP@k over rows of space-separated labels: for each row,
// the first k predictions (a repeat counts once) score the precision at each one that is among
// the row's answers, summed and divided by min(answers, k); a row without answers scores 0.
// truth and pred must have the same length.
func MeanAveragePrecisionAtK(truth, pred []string, k int) float64 {
	if len(truth) != len(pred) {
		panic(fmt.Sprintf("MeanAveragePrecisionAtK: %d answers but %d predictions", len(truth), len(pred)))
	}
	total := 0.0
	for i := range truth {
		actual := map[string]bool{}
		for _, w := range strings.Fields(truth[i]) {
			actual[w] = true
		}
		if len(actual) == 0 {
			continue
		}
		p := strings.Fields(pred[i])
		if len(p) > k {
			p = p[:k]
		}
		seen := map[string]bool{}
		hits, score := 0.0, 0.0
		for j, w := range p {
			if actual[w] && !seen[w] {
				hits++
				score += hits / float64(j+1)
			}
			seen[w] = true
		}
		total += score / float64(min(len(actual), k))
	}
	return total / float64(len(truth))
}
