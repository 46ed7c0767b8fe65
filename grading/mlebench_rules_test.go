package grading

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/tasks"
)

// ruleCase grades one submission against one answers file with a task's rules.
type ruleCase struct {
	name     string
	sub      string
	want     float64 // NaN: invalid
	reason   string  // part of the invalid reason
	ans      string  // the answers, when not the table's default
	taskID   string  // the spec's ID, when not the table's default
	position bool
}

func runRuleCases(t *testing.T, base tasks.Spec, defaultAns string, cases []ruleCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			ans, sub := filepath.Join(dir, "answers.csv"), filepath.Join(dir, "submission.csv")
			a := defaultAns
			if c.ans != "" {
				a = c.ans
			}
			os.WriteFile(ans, []byte(a), 0o644)
			os.WriteFile(sub, []byte(c.sub), 0o644)
			spec := base
			if c.taskID != "" {
				spec.ID = c.taskID
			}
			r, err := Grade(&spec, sub, ans)
			if err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(c.want) {
				if r.Valid || r.Score != nil || !strings.Contains(r.Reason, c.reason) {
					t.Fatalf("got %+v, want invalid with a reason containing %q", r, c.reason)
				}
				return
			}
			if !r.Valid || math.Abs(*r.Score-c.want) > 1e-9 {
				t.Fatalf("got %+v (reason %q), want valid with score %v", r, r.Reason, c.want)
			}
		})
	}
}

// MLE-bench's single-column ROC AUC graders (insults, pizza, TPS-May) reject scores outside
// [0, 1], though the AUC itself would be defined; plant-pathology's four-column grader does not.
func TestROCAUCTakesOnlyProbabilities(t *testing.T) {
	nan := math.NaN()
	auc := tasks.Spec{ID: "tabular-playground-series-may-2022", Metric: "roc-auc", Direction: "max", IDColumn: "id",
		Answers: tasks.Answers{Format: "columns", Columns: []string{"target"}, MatchBy: "id"}}
	runRuleCases(t, auc, "id,target\n1,1\n2,0\n3,1\n4,0\n", []ruleCase{
		{name: "probabilities", sub: "id,target\n1,0.9\n2,0.1\n3,0.8\n4,0.2\n", want: 1},
		{name: "the bounds 0 and 1 themselves", sub: "id,target\n1,1\n2,0\n3,1\n4,0\n", want: 1},
		{name: "a score above 1", sub: "id,target\n1,1.5\n2,0.1\n3,0.8\n4,0.2\n", want: nan, reason: "outside [0, 1]"},
		{name: "a negative score", sub: "id,target\n1,0.9\n2,-0.1\n3,0.8\n4,0.2\n", want: nan, reason: "outside [0, 1]"},
		{name: "a logit instead of a probability", sub: "id,target\n1,2.3\n2,-1.2\n3,0.4\n4,-3\n", want: nan, reason: "outside [0, 1]"},
		{name: "just above 1", sub: "id,target\n1,1.0000001\n2,0.1\n3,0.8\n4,0.2\n", want: nan, reason: "outside [0, 1]"},
		{name: "infinity", sub: "id,target\n1,inf\n2,0.1\n3,0.8\n4,0.2\n", want: nan, reason: "not a number"},
	})
	plant := tasks.Spec{ID: "plant-pathology-2020-fgvc7", Metric: "mean-column-roc-auc", Direction: "max", IDColumn: "image_id",
		Answers: tasks.Answers{Format: "columns", Columns: []string{"a", "b"}, MatchBy: "id", ExactColumns: true}}
	runRuleCases(t, plant, "image_id,a,b\nx,1,0\ny,0,1\n", []ruleCase{
		{name: "plant: scores outside [0, 1] are ranked as MLE-bench ranks them", sub: "image_id,a,b\nx,3,-1\ny,-2,5\n", want: 1},
	})
}

// The row-sum rule of each log-loss task, as its MLE-bench grader states it.
func TestLogLossRowSumTolerances(t *testing.T) {
	nan := math.NaN()
	oneHot := tasks.Spec{ID: "leaf-classification", Metric: "multi-class-log-loss", Direction: "min", IDColumn: "id",
		Answers: tasks.Answers{Format: "one-hot", MatchBy: "id", ExactColumns: true}}
	ans := "id,a,b\n1,1,0\n2,0,1\n"
	sub := func(a1 string) string { return "id,a,b\n1," + a1 + ",0.5\n2,0.5,0.5\n" }
	ll := func(a1 float64) float64 {
		return math.Round(LogLoss([]int{0, 1}, [][]float64{{a1, 0.5}, {0.5, 0.5}})*1e5) / 1e5
	}
	cases := []ruleCase{
		// np.isclose(sum, 1, atol=1e-6): |sum - 1| <= 1e-6 + 1e-5 * 1 = 1.1e-5.
		{name: "leaf: off by 1e-5 is close", sub: sub("0.50001"), want: ll(0.50001)},
		{name: "leaf: off by -1.05e-5 is close", sub: sub("0.4999895"), want: ll(0.4999895)},
		{name: "leaf: off by 1.2e-5 is not", sub: sub("0.500012"), want: nan, reason: "sum to"},
		{name: "leaf: off by -1.2e-5 is not", sub: sub("0.499988"), want: nan, reason: "sum to"},
		{name: "spooky: the same rule", taskID: "spooky-author-identification", sub: sub("0.50001"), want: ll(0.50001)},
		{name: "spooky: off by 2e-5", taskID: "spooky-author-identification", sub: sub("0.50002"), want: nan, reason: "sum to"},
		// lmsys: sum.round(6) == 1, so off by less than half a millionth passes, 6e-7 does not.
		{name: "lmsys: off by 4e-7 rounds to 1", taskID: "lmsys-chatbot-arena", sub: sub("0.5000004"), want: ll(0.5000004)},
		{name: "lmsys: off by -4e-7 rounds to 1", taskID: "lmsys-chatbot-arena", sub: sub("0.4999996"), want: ll(0.4999996)},
		{name: "lmsys: off by 6e-7 rounds away", taskID: "lmsys-chatbot-arena", sub: sub("0.5000006"), want: nan, reason: "rounded to 6 decimals"},
		{name: "lmsys: off by 1e-5, close for leaf, is not for lmsys", taskID: "lmsys-chatbot-arena", sub: sub("0.50001"), want: nan, reason: "sum to"},
		{name: "a probability outside [0, 1] even when the row sums to 1", sub: "id,a,b\n1,1.5,-0.5\n2,0.5,0.5\n", want: nan, reason: "outside [0, 1]"},
	}
	runRuleCases(t, oneHot, ans, cases)
}

// Ids compare as pandas reads them: a numeric column's 4.0 is 4, a text column's is not.
func TestIDsCompareAsPandasReadsThem(t *testing.T) {
	nan := math.NaN()
	spec := tasks.Spec{ID: "tabular-playground-series-may-2022", Metric: "roc-auc", Direction: "max", IDColumn: "id",
		Answers: tasks.Answers{Format: "columns", Columns: []string{"target"}, MatchBy: "id"}}
	runRuleCases(t, spec, "id,target\n4,1\n5,0\n6,1\n", []ruleCase{
		{name: "4.0 is 4 in a numeric column", sub: "id,target\n4.0,0.9\n5.0,0.1\n6.0,0.8\n", want: 1},
		{name: "floats and ints mixed", sub: "id,target\n6,0.8\n4.0,0.9\n5e0,0.1\n", want: 1},
		{name: "leading zeros and spaces", sub: "id,target\n004,0.9\n 5,0.1\n06 ,0.8\n", want: 1},
		{name: "4.5 is no id of the answers", sub: "id,target\n4.5,0.9\n5,0.1\n6,0.8\n", want: nan, reason: "ids do not match"},
		{name: "one text id makes the column text: 4.0 is then not 4", sub: "id,target\n4.0,0.9\n5,0.1\nx,0.8\n", want: nan, reason: "ids do not match"},
		{name: "a missing id (NA) matches nothing", sub: "id,target\n4,0.9\n5,0.1\nNA,0.8\n", want: nan, reason: "ids do not match"},
		{name: "a hex float is text to pandas", sub: "id,target\n0x4p0,0.9\n5,0.1\n6,0.8\n", want: nan, reason: "ids do not match"},
		{name: "text ids are compared as written", ans: "id,target\na4,1\nb5,0\n", sub: "id,target\nb5,0.1\na4,0.9\n", want: 1},
		{name: "text ids: 4.0 is not 4", ans: "id,target\n4,1\nb,0\n", sub: "id,target\n4.0,0.9\nb,0.1\n", want: nan, reason: "ids do not match"},
	})
}

// tweet-sentiment-extraction reads spans with pandas: its missing-value spellings become "".
func TestJaccardReadsNALikeTextAsEmpty(t *testing.T) {
	nan := math.NaN()
	spec := tasks.Spec{ID: "tweet-sentiment-extraction", Metric: "mean-word-jaccard", Direction: "max", IDColumn: "textID",
		Answers: tasks.Answers{Format: "columns", Columns: []string{"selected_text"}, MatchBy: "id"}}
	ans := "textID,selected_text\na,good day\nb,so sad\n"
	var cases []ruleCase
	for _, na := range []string{"", `""`, "NA", "N/A", "n/a", "null", "NULL", "None", "nan", "NaN", "-nan", "-NaN", "#N/A", "#N/A N/A", "#NA", "<NA>", "1.#IND", "-1.#IND", "1.#QNAN", "-1.#QNAN"} {
		// An empty prediction shares no word with "so sad": (1 + 0) / 2.
		cases = append(cases, ruleCase{name: "predicting " + na, sub: "textID,selected_text\na,good day\nb," + na + "\n", want: 0.5})
	}
	cases = append(cases,
		// Not missing values to pandas: compared as words.
		ruleCase{name: "na is a word", sub: "textID,selected_text\na,good day\nb,na\n", want: 0.5},
		ruleCase{name: "a word that is NA in the answers too", ans: "textID,selected_text\na,good day\nb,so NA\n", sub: "textID,selected_text\na,good day\nb,na so\n", want: 1},
		ruleCase{name: "NA with spaces is text", ans: "textID,selected_text\na,good day\nb,na\n", sub: "textID,selected_text\na,good day\nb, NA\n", want: 1},
		// An answer that pandas reads as missing meets an empty prediction: 0/0 raises there.
		ruleCase{name: "answer NA and prediction null: undefined", ans: "textID,selected_text\na,good day\nb,NA\n", sub: "textID,selected_text\na,good day\nb,null\n", want: nan, reason: "undefined"},
		ruleCase{name: "answer None is empty, so the word None shares nothing", ans: "textID,selected_text\na,good day\nb,None\n", sub: "textID,selected_text\na,good day\nb,None here\n", want: 0.5},
	)
	runRuleCases(t, spec, ans, cases)
}
