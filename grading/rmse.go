package grading

import (
	"errors"
	"fmt"
	"math"
)

// RMSE is scikit-learn's root_mean_squared_error: the root of the mean squared difference. No
// value is clipped (MLE-bench's denoising grader takes any float), so a prediction outside the
// truth's range only costs its error.
func RMSE(truth, pred []float64) (float64, error) {
	if len(truth) != len(pred) {
		return 0, fmt.Errorf("RMSE needs as many predictions as answers (%d predictions, %d answers)", len(pred), len(truth))
	}
	if len(truth) == 0 {
		return 0, errors.New("RMSE is undefined with no rows")
	}
	sum := 0.0
	for i := range truth {
		if !finite(truth[i]) || !finite(pred[i]) {
			return 0, errors.New("RMSE needs finite numbers (found NaN or infinity)")
		}
		d := truth[i] - pred[i]
		sum += d * d
	}
	return math.Sqrt(sum / float64(len(truth))), nil
}
