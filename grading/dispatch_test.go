package grading

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/tasks"
)

// Each metric through Grade: the spec's columns and matching rules reach the right function.
func TestGradeDispatchesEveryMetric(t *testing.T) {
	type tc struct {
		name, metric, id string
		answers          tasks.Answers
		ans, sub         string
		want             float64 // NaN: invalid
		reason           string
	}
	cols := func(c ...string) tasks.Answers { return tasks.Answers{Format: "columns", Columns: c, MatchBy: "id"} }
	nan := math.NaN()
	cases := []tc{
		{"roc auc, rows matched by id", "roc-auc", "id", cols("y"), "id,y\n1,1\n2,0\n3,1\n", "id,y\n3,0.9\n1,0.8\n2,0.1\n", 1, ""},
		{"roc auc reads True/False answers", "roc-auc", "id", cols("y"), "id,y\n1,True\n2,False\n", "id,y\n1,0.2\n2,0.6\n", 0, ""},
		{"column-mean auc", "mean-column-roc-auc", "id", cols("a", "b"), "id,a,b\n1,1,0\n2,0,1\n", "id,a,b\n1,0.9,0.9\n2,0.1,0.1\n", 0.5, ""},
		{"kappa, whole floats accepted", "quadratic-weighted-kappa", "id", tasks.Answers{Format: "columns", Columns: []string{"score"}, MatchBy: "id", Integer: true}, "id,score\n1,1\n2,2\n3,3\n", "id,score\n1,1.0\n2,2\n3,3\n", 1, ""},
		{"kappa rejects non-integers", "quadratic-weighted-kappa", "id", tasks.Answers{Format: "columns", Columns: []string{"score"}, MatchBy: "id", Integer: true}, "id,score\n1,1\n2,2\n", "id,score\n1,1.5\n2,2\n", nan, "not an integer"},
		{"word jaccard", "mean-word-jaccard", "id", cols("t"), "id,t\n1,good day\n2,bad\n", "id,t\nx1,\n", nan, "1 rows, the answers have 2"},
		{"word jaccard value", "mean-word-jaccard", "id", cols("t"), "id,t\n1,good day\n2,bad\n", "id,t\n1,Good\n2,bad\n", 0.75, ""},
		{"word jaccard undefined on empty rows", "mean-word-jaccard", "id", cols("t"), "id,t\n1,\n", "id,t\n1,\n", nan, "Jaccard score is undefined"},
		{"pearson", "pearson", "id", cols("s"), "id,s\n1,0\n2,0.5\n3,1\n", "id,s\n1,0\n2,0.5\n3,1\n", 1, ""},
		{"pearson of a constant submission is invalid", "pearson", "id", cols("s"), "id,s\n1,0\n2,0.5\n", "id,s\n1,0.3\n2,0.3\n", nan, "every value on one side is the same"},
		{"rmsle by position ignores ids", "mean-column-rmsle", "id", tasks.Answers{Format: "columns", Columns: []string{"a", "b"}, MatchBy: "position"}, "id,a,b\n1,0,0\n2,0,0\n", "id,a,b\n7,0,0\n8,0,0\n", 0, ""},
		{"rmsle rejects negatives", "mean-column-rmsle", "id", tasks.Answers{Format: "columns", Columns: []string{"a"}, MatchBy: "position"}, "id,a\n1,0\n", "id,a\n1,-1\n", nan, "negative"},
		{"accuracy: 2 and 2.0 are one class", "accuracy", "Id", cols("C"), "Id,C\n1,2\n2,3\n", "Id,C\n1,2.0\n2,1\n", 0.5, ""},
		{"an id repeated as often as in the answers", "roc-auc", "c", cols("y"), "c,y\nhi,1\nhi,1\nyo,0\n", "c,y\nyo,0.1\nhi,0.8\nhi,0.7\n", 1, ""},
		{"by position the id column is not needed", "mean-column-rmsle", "id", tasks.Answers{Format: "columns", Columns: []string{"a"}, MatchBy: "position"}, "id,a\n1,0\n", "a\n0\n", 0, ""},
		{"missing id column", "accuracy", "Id", cols("C"), "Id,C\n1,2\n", "id,C\n1,2\n", nan, "missing Id"},
		{"text where a number belongs", "roc-auc", "id", cols("y"), "id,y\n1,1\n2,0\n", "id,y\n1,high\n2,0\n", nan, "not a number"},
		{"accuracy: booleans in any spelling", "accuracy", "id", cols("b"), "id,b\n1,True\n2,False\n", "id,b\n1,1\n2,false\n", nan, "text"},
		{"accuracy: 1/0 for True/False", "accuracy", "id", cols("b"), "id,b\n1,True\n2,False\n", "id,b\n1,1\n2,0\n", 1, ""},
		{"binary f1 on booleans", "f1", "id", cols("b"), "id,b\n1,True\n2,False\n3,True\n", "id,b\n1,true\n2,true\n3,false\n", 0.5, ""},
		{"binary f1 needs 0/1 labels", "f1", "id", cols("b"), "id,b\n1,a\n2,b\n", "id,b\n1,a\n2,a\n", nan, "labels 0 and 1"},
		{"macro f1", "f1-macro", "id", cols("c"), "id,c\n1,x\n2,y\n3,z\n", "id,c\n1,x\n2,y\n3,y\n", 0.55556, ""},
		{"micro f1 is accuracy", "f1-micro", "id", cols("c"), "id,c\n1,x\n2,y\n3,z\n", "id,c\n1,x\n2,y\n3,y\n", 0.66667, ""},
		{"weighted f1", "f1-weighted", "id", cols("c"), "id,c\n1,x\n2,y\n3,y\n", "id,c\n1,x\n2,y\n3,x\n", 0.66667, ""},
		{"rmse, mean over columns", "rmse", "id", cols("a", "b"), "id,a,b\n1,0,0\n2,0,0\n", "id,a,b\n1,3,1\n2,4,1\n", 2.26777, ""},
		{"mae", "mae", "id", cols("a"), "id,a\n1,0\n2,0\n", "id,a\n1,3\n2,-1\n", 2, ""},
		{"median absolute error", "median-absolute-error", "id", cols("a"), "id,a\n1,0\n2,0\n3,0\n", "id,a\n1,3\n2,-1\n3,10\n", 3, ""},
		{"spearman", "spearman", "id", cols("a"), "id,a\n1,1\n2,2\n3,3\n", "id,a\n1,10\n2,20\n3,1000\n", 1, ""},
		{"rmsle, one column", "rmsle", "id", cols("a"), "id,a\n1,0\n", "id,a\n1,0\n", 0, ""},
		{"map@3", "map@3", "id", cols("p"), "id,p\n1,a\n2,b c\n", "id,p\n1,x a\n2,b d c e\n", 0.66667, ""},
		{"map@3 with an empty row", "map@3", "id", cols("p"), "id,p\n1,a\n2,b\n", "id,p\n1,a\n2,\n", nan, "missing value"},
		{"map@1: only the first prediction counts", "map@1", "id", cols("p"), "id,p\n1,a\n2,b c\n", "id,p\n1,x a\n2,b d c e\n", 0.5, ""},
		{"map@20: hits past the usual cutoffs count", "map@20", "id", cols("p"), "id,p\n1,a\n2,b c\n", "id,p\n1,x a\n2,d e f g b c\n", 0.38333, ""},
		{"rmse reads boolean predictions as 1/0", "rmse", "id", cols("a"), "id,a\n1,1\n2,0\n", "id,a\n1,True\n2,FALSE\n", 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ans, sub := filepath.Join(dir, "answers.csv"), filepath.Join(dir, "submission.csv")
			os.WriteFile(ans, []byte(c.ans), 0o644)
			os.WriteFile(sub, []byte(c.sub), 0o644)
			spec := &tasks.Spec{ID: "t", Metric: c.metric, Direction: "max", IDColumn: c.id, Answers: c.answers}
			r, err := Grade(spec, sub, ans)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(c.want) {
				if r.Valid || !strings.Contains(r.Reason, c.reason) {
					t.Fatalf("got %+v, want invalid with a reason containing %q", r, c.reason)
				}
				return
			}
			if !r.Valid || math.Abs(*r.Score-c.want) > 1e-9 {
				t.Fatalf("got %+v (reason %q), want score %v", r, r.Reason, c.want)
			}
		})
	}
}

// Numeric reads and scores every numeric case as Grade grades it, and scores the predictions it
// read again to the same result; a metric of labels or texts is refused.
func TestNumericGradesAsGrade(t *testing.T) {
	cols := func(c ...string) tasks.Answers { return tasks.Answers{Format: "columns", Columns: c, MatchBy: "id"} }
	cases := []struct {
		name, metric string
		answers      tasks.Answers
		ans, sub     string
	}{
		{"auc by id", "roc-auc", cols("y"), "id,y\n1,1\n2,0\n3,1\n", "id,y\n3,0.9\n1,0.2\n2,0.4\n"},
		{"auc of a non-probability", "roc-auc", cols("y"), "id,y\n1,1\n2,0\n", "id,y\n1,1.5\n2,0\n"},
		{"text in a number's place", "rmse", cols("a"), "id,a\n1,0\n2,1\n", "id,a\n1,x\n2,1\n"},
		{"ids that do not match", "rmse", cols("a"), "id,a\n1,0\n2,1\n", "id,a\n1,0\n3,1\n"},
		{"rmse over two columns", "rmse", cols("a", "b"), "id,a,b\n1,0,0\n2,0,1\n", "id,a,b\n2,3,1\n1,4,1\n"},
		{"rmsle by position", "mean-column-rmsle", tasks.Answers{Format: "columns", Columns: []string{"a", "b"}, MatchBy: "position"}, "id,a,b\n1,1,2\n2,3,4\n", "id,a,b\n1,1.5,2\n2,2,4\n"},
		{"kappa", "quadratic-weighted-kappa", cols("s"), "id,s\n1,1\n2,2\n3,3\n", "id,s\n1,1\n2,3\n3,3\n"},
		{"kappa of a non-integer", "quadratic-weighted-kappa", cols("s"), "id,s\n1,1\n2,2\n", "id,s\n1,1.5\n2,2\n"},
		{"log loss", "multi-class-log-loss", tasks.Answers{Format: "one-hot", MatchBy: "id"}, "id,a,b\n1,1,0\n2,0,1\n", "id,a,b\n1,0.7,0.3\n2,0.4,0.6\n"},
		{"log loss of rows not summing to 1", "multi-class-log-loss", tasks.Answers{Format: "one-hot", MatchBy: "id"}, "id,a,b\n1,1,0\n", "id,a,b\n1,0.7,0.7\n"},
		{"log loss of a text cell", "multi-class-log-loss", tasks.Answers{Format: "one-hot", MatchBy: "id"}, "id,a,b\n1,1,0\n", "id,a,b\n1,high,0\n"},
		{"pearson", "pearson", cols("s"), "id,s\n1,0\n2,0.5\n3,1\n", "id,s\n1,0.1\n2,0.2\n3,0.9\n"},
		{"no submission", "mae", cols("a"), "id,a\n1,0\n", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ans, sub := filepath.Join(dir, "answers.csv"), filepath.Join(dir, "submission.csv")
			os.WriteFile(ans, []byte(c.ans), 0o644)
			if c.sub != "" {
				os.WriteFile(sub, []byte(c.sub), 0o644)
			}
			spec := &tasks.Spec{ID: "t", Metric: c.metric, Direction: "max", IDColumn: "id", Answers: c.answers}
			want, err := Grade(spec, sub, ans)
			if err != nil {
				t.Fatal(err)
			}
			num, err := NewNumeric(spec, ans)
			if err != nil {
				t.Fatal(err)
			}
			pred, got, err := num.Read(sub)
			if err != nil {
				t.Fatal(err)
			}
			same := func(a, b Result) bool {
				return a.Valid == b.Valid && a.Exists == b.Exists && a.Reason == b.Reason && (a.Score == nil) == (b.Score == nil) && (a.Score == nil || *a.Score == *b.Score)
			}
			if !same(got, want) {
				t.Fatalf("Read: %+v, Grade: %+v", got, want)
			}
			if !want.Valid {
				if pred != nil {
					t.Fatalf("an invalid submission returned predictions %v", pred)
				}
				return
			}
			if again, err := num.Score(pred); err != nil || !same(again, want) {
				t.Fatalf("Score of the predictions read: %+v (%v), Grade: %+v", again, err, want)
			}
		})
	}
	if _, err := NewNumeric(&tasks.Spec{Metric: "accuracy"}, "unused.csv"); err == nil || !strings.Contains(err.Error(), "grade its submissions with Grade") {
		t.Fatalf("a label metric: %v", err)
	}
}

// Score checks the values it is given and their layout as Grade checks a file's.
func TestNumericScoreChecksItsInput(t *testing.T) {
	dir := t.TempDir()
	ans := filepath.Join(dir, "answers.csv")
	os.WriteFile(ans, []byte("id,a\n1,0\n2,1\n"), 0o644)
	num, err := NewNumeric(&tasks.Spec{ID: "t", Metric: "rmse", IDColumn: "id", Answers: tasks.Answers{Format: "columns", Columns: []string{"a"}, MatchBy: "id"}}, ans)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := num.Score([][]float64{{0, math.NaN()}}); err != nil || r.Valid || !strings.Contains(r.Reason, `row 2, column "a": NaN is not a number`) {
		t.Fatalf("a NaN prediction: %+v, %v", r, err)
	}
	if r, err := num.Score([][]float64{{0, 0.5}}); err != nil || !r.Valid || *r.Score != 0.35355 {
		t.Fatalf("valid predictions: %+v, %v", r, err)
	}
	for _, bad := range [][][]float64{{{0}}, {{0, 1}, {0, 1}}, nil} {
		if _, err := num.Score(bad); err == nil {
			t.Fatalf("predictions laid out as %v: no error", bad)
		}
	}
}
