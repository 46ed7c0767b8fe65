package grading

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// diffCase is one submission graded against one answers file under a built-in task's spec.
type diffCase struct {
	task, name, answers, submission string
	valid                           bool // what both graders must say (documents the case)
}

// diffCases are submissions to the built-in tasks, valid ones and edge cases of each validity
// rule, on small answers files in each task's own columns.
func diffCases() []diffCase {
	var cs []diffCase
	add := func(task, answers string, valid bool, name, sub string) {
		cs = append(cs, diffCase{task: task, name: name, answers: answers, submission: sub, valid: valid})
	}

	leaf := "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,1,0,0\n2,0,1,0\n4,0,0,1\n7,0,1,0\n"
	l := func(valid bool, name, sub string) { add("leaf-classification", leaf, valid, name, sub) }
	l(true, "probabilities", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0.7,0.2,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(true, "rows and columns shuffled", "Zelkova_Serrata,id,Quercus_Rubra,Acer_Opalus\n0.25,7,0.5,0.25\n0.1,1,0.2,0.7\n0.4,4,0.3,0.3\n0.1,2,0.8,0.1\n")
	l(true, "ids written as floats", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1.0,0.7,0.2,0.1\n2.0,0.1,0.8,0.1\n4.0,0.3,0.3,0.4\n7.0,0.25,0.5,0.25\n")
	l(true, "one-hot certainty, clipped at machine epsilon", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,1,0,0\n2,1,0,0\n4,0,0,1\n7,0,1,0\n")
	l(true, "a row off by 1e-5 is close to 1", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0.70001,0.2,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(false, "a row off by 2e-5 is not", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0.70002,0.2,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(false, "a row of zeros", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0,0,0\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(false, "a negative probability in a row summing to 1", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,1.2,-0.3,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(false, "a class missing", "id,Acer_Opalus,Quercus_Rubra\n1,0.8,0.2\n2,0.2,0.8\n4,0.5,0.5\n7,0.5,0.5\n")
	l(false, "an extra column", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata,x\n1,0.7,0.2,0.1,0\n2,0.1,0.8,0.1,0\n4,0.3,0.3,0.4,0\n7,0.25,0.5,0.25,0\n")
	l(false, "a row short", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0.7,0.2,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n")
	l(false, "an id not in the answers", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0.7,0.2,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n8,0.25,0.5,0.25\n")
	l(false, "an id twice", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,0.7,0.2,0.1\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n4,0.25,0.5,0.25\n")
	l(false, "NA", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,NA,0.2,0.8\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(false, "an empty cell", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,,0.2,0.8\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")
	l(false, "text", "id,Acer_Opalus,Quercus_Rubra,Zelkova_Serrata\n1,high,0.2,0.8\n2,0.1,0.8,0.1\n4,0.3,0.3,0.4\n7,0.25,0.5,0.25\n")

	spooky := "id,EAP,HPL,MWS\nid01,1,0,0\nid02,0,0,1\nid03,0,1,0\n"
	s := func(valid bool, name, sub string) { add("spooky-author-identification", spooky, valid, name, sub) }
	s(true, "probabilities", "id,EAP,HPL,MWS\nid03,0.2,0.6,0.2\nid01,0.5,0.25,0.25\nid02,0.1,0.1,0.8\n")
	s(true, "off by 1e-5", "id,EAP,HPL,MWS\nid01,0.50001,0.25,0.25\nid02,0.1,0.1,0.8\nid03,0.2,0.6,0.2\n")
	s(false, "off by -2e-5", "id,EAP,HPL,MWS\nid01,0.49998,0.25,0.25\nid02,0.1,0.1,0.8\nid03,0.2,0.6,0.2\n")
	s(false, "an extra column", "id,EAP,HPL,MWS,x\nid01,0.5,0.25,0.25,1\nid02,0.1,0.1,0.8,1\nid03,0.2,0.6,0.2,1\n")
	s(false, "an id in another case", "id,EAP,HPL,MWS\nID01,0.5,0.25,0.25\nid02,0.1,0.1,0.8\nid03,0.2,0.6,0.2\n")

	lmsys := "id,winner_model_a,winner_model_b,winner_tie\n10,1,0,0\n20,0,1,0\n30,0,0,1\n"
	m := func(valid bool, name, sub string) { add("lmsys-chatbot-arena", lmsys, valid, name, sub) }
	m(true, "probabilities", "id,winner_model_a,winner_model_b,winner_tie\n10,0.5,0.3,0.2\n20,0.3,0.4,0.3\n30,0.2,0.2,0.6\n")
	m(true, "an extra column is ignored", "id,winner_model_a,winner_model_b,winner_tie,note\n10,0.5,0.3,0.2,x\n20,0.3,0.4,0.3,y\n30,0.2,0.2,0.6,z\n")
	m(true, "off by 4e-7 rounds to 1", "id,winner_model_a,winner_model_b,winner_tie\n10,0.5000004,0.3,0.2\n20,0.3,0.4,0.3\n30,0.2,0.2,0.6\n")
	m(false, "off by 6e-7 does not", "id,winner_model_a,winner_model_b,winner_tie\n10,0.5000006,0.3,0.2\n20,0.3,0.4,0.3\n30,0.2,0.2,0.6\n")
	m(false, "off by 1e-5, close for leaf, not for lmsys", "id,winner_model_a,winner_model_b,winner_tie\n10,0.50001,0.3,0.2\n20,0.3,0.4,0.3\n30,0.2,0.2,0.6\n")
	m(true, "ids as 10.0", "id,winner_model_a,winner_model_b,winner_tie\n10.0,0.5,0.3,0.2\n20.0,0.3,0.4,0.3\n30.0,0.2,0.2,0.6\n")
	m(false, "a probability above 1", "id,winner_model_a,winner_model_b,winner_tie\n10,1.1,-0.1,0\n20,0.3,0.4,0.3\n30,0.2,0.2,0.6\n")

	may := "id,target\n4,1\n5,0\n6,1\n7,0\n8,0\n"
	a := func(valid bool, name, sub string) { add("tabular-playground-series-may-2022", may, valid, name, sub) }
	a(true, "probabilities", "id,target\n4,0.9\n5,0.2\n6,0.4\n7,0.5\n8,0.1\n")
	a(true, "ties and the bounds", "id,target\n8,0\n7,1\n6,1\n5,0\n4,1\n")
	a(true, "ids as floats and with leading zeros", "id,target\n4.0,0.9\n05,0.2\n6e0,0.4\n7.00,0.5\n8,0.1\n")
	a(false, "a score above 1", "id,target\n4,1.5\n5,0.2\n6,0.4\n7,0.5\n8,0.1\n")
	a(false, "a negative score", "id,target\n4,0.9\n5,-0.2\n6,0.4\n7,0.5\n8,0.1\n")
	a(false, "logits", "id,target\n4,2.2\n5,-1.4\n6,0.3\n7,0.1\n8,-3\n")
	a(false, "NA", "id,target\n4,0.9\n5,NA\n6,0.4\n7,0.5\n8,0.1\n")
	a(false, "text", "id,target\n4,0.9\n5,low\n6,0.4\n7,0.5\n8,0.1\n")
	a(false, "a text id turns 4.0 into text", "id,target\n4.0,0.9\n5,0.2\n6,0.4\n7,0.5\nx8,0.1\n")
	a(false, "4.5 is not an id", "id,target\n4.5,0.9\n5,0.2\n6,0.4\n7,0.5\n8,0.1\n")
	a(false, "a column missing", "id,prediction\n4,0.9\n5,0.2\n6,0.4\n7,0.5\n8,0.1\n")

	insults := "Comment,Insult\n\"you fool\",1\n\"nice\",0\n\"nice\",0\n\"idiot, really\",1\n"
	in := func(valid bool, name, sub string) {
		add("detecting-insults-in-social-commentary", insults, valid, name, sub)
	}
	in(true, "a repeated comment matched as often as it repeats", "Comment,Insult\n\"nice\",0.1\n\"idiot, really\",0.9\n\"nice\",0.3\n\"you fool\",0.2\n")
	in(false, "a repeated comment once too often", "Comment,Insult\n\"nice\",0.1\n\"nice\",0.9\n\"nice\",0.3\n\"you fool\",0.2\n")
	in(false, "a probability above 1", "Comment,Insult\n\"nice\",0.1\n\"idiot, really\",1.9\n\"nice\",0.3\n\"you fool\",0.2\n")

	pizza := "request_id,requester_received_pizza\nt3_a,1\nt3_b,0\nt3_c,0\n"
	p := func(valid bool, name, sub string) { add("random-acts-of-pizza", pizza, valid, name, sub) }
	p(true, "probabilities", "request_id,requester_received_pizza\nt3_c,0.3\nt3_b,0.2\nt3_a,0.8\n")
	p(false, "percentages", "request_id,requester_received_pizza\nt3_c,30\nt3_b,20\nt3_a,80\n")

	plant := "image_id,healthy,multiple_diseases,rust,scab\nTest_0,1,0,0,0\nTest_1,0,1,0,0\nTest_2,0,0,1,0\nTest_3,0,0,0,1\nTest_4,1,0,0,0\n"
	pl := func(valid bool, name, sub string) { add("plant-pathology-2020-fgvc7", plant, valid, name, sub) }
	pl(true, "probabilities", "image_id,healthy,multiple_diseases,rust,scab\nTest_0,0.7,0.1,0.1,0.1\nTest_1,0.2,0.5,0.2,0.1\nTest_2,0.1,0.1,0.6,0.2\nTest_3,0.3,0.1,0.2,0.4\nTest_4,0.4,0.2,0.2,0.2\n")
	pl(true, "scores outside [0, 1] (no range check there)", "image_id,healthy,multiple_diseases,rust,scab\nTest_0,3,-1,0,0\nTest_1,-2,4,0,1\nTest_2,0,0,5,-1\nTest_3,1,0,-3,2\nTest_4,2,1,1,1\n")
	pl(false, "an extra column", "image_id,healthy,multiple_diseases,rust,scab,x\nTest_0,0.7,0.1,0.1,0.1,0\nTest_1,0.2,0.5,0.2,0.1,0\nTest_2,0.1,0.1,0.6,0.2,0\nTest_3,0.3,0.1,0.2,0.4,0\nTest_4,0.4,0.2,0.2,0.2,0\n")

	tweet := "textID,selected_text\nab12,so happy today\ncd34,sad\nef56,\"well, NA\"\n0x7,None of it\n"
	tw := func(valid bool, name, sub string) { add("tweet-sentiment-extraction", tweet, valid, name, sub) }
	tw(true, "spans", "textID,selected_text\ncd34,sad\nab12,happy\n0x7,none of it\nef56,well\n")
	for _, na := range []string{"", "NA", "N/A", "null", "NULL", "None", "nan", "NaN", "#N/A", "<NA>", "-nan", "1.#QNAN"} {
		tw(true, "a span spelled "+na, "textID,selected_text\ncd34,"+na+"\nab12,happy\n0x7,none of it\nef56,well\n")
	}
	tw(true, "NA-like words inside a span or padded are text", "textID,selected_text\ncd34, NA\nab12,happy null\n0x7,None\nef56,\"well, NA\"\n")
	tw(false, "a missing id", "textID,selected_text\ncd34,sad\nab12,happy\nNA,none of it\nef56,well\n")
	tw(false, "a row short", "textID,selected_text\ncd34,sad\nab12,happy\nef56,well\n")
	add("tweet-sentiment-extraction", "textID,selected_text\nab12,so happy today\ncd34,a nan b\n", true,
		"a span spelled nan is empty, not the word nan", "textID,selected_text\nab12,happy\ncd34,nan\n")
	tweetNA := "textID,selected_text\nab12,so happy today\ncd34,NA\n"
	add("tweet-sentiment-extraction", tweetNA, true, "an answer read as empty against words", "textID,selected_text\nab12,happy\ncd34,NA here\n")
	add("tweet-sentiment-extraction", tweetNA, false, "an answer read as empty against an empty span: 0/0", "textID,selected_text\nab12,happy\ncd34,null\n")

	dec := "Id,Cover_Type\n100,2\n101,1\n102,3\n103,2\n"
	d := func(valid bool, name, sub string) { add("tabular-playground-series-dec-2021", dec, valid, name, sub) }
	d(true, "classes", "Id,Cover_Type\n103,2\n100,2\n101,3\n102,3\n")
	d(true, "2.0 is class 2, 100.0 is id 100", "Id,Cover_Type\n100.0,2.0\n101,1\n102,3\n103,7\n")
	d(false, "an id not in the answers", "Id,Cover_Type\n100,2\n101,1\n102,3\n104,2\n")
	d(true, "quoted classes are numbers", "Id,Cover_Type\n100,\"2\"\n101,\"1\"\n102,\"3\"\n103,\"2\"\n")
	d(true, "a text class against numbers: never equal, not an error (multiclass)", "Id,Cover_Type\n100,2\n101,one\n102,3\n103,2\n")
	d(false, "a class written 2.5 is continuous", "Id,Cover_Type\n100,2.5\n101,1\n102,3\n103,2\n")
	d(false, "a missing class", "Id,Cover_Type\n100,\n101,1\n102,3\n103,2\n")

	// Boolean labels (spaceship-titanic's Transported): pandas reads true/false of any case as
	// bool, and scikit-learn takes True as 1.
	boolAns := "PassengerId,Transported\n0001_01,True\n0002_01,False\n0003_01,True\n0004_01,False\n"
	sp := func(valid bool, name, vals string) {
		v := strings.Split(vals, " ")
		add("spaceship-titanic", boolAns, valid, name, fmt.Sprintf("PassengerId,Transported\n0004_01,%s\n0003_01,%s\n0002_01,%s\n0001_01,%s\n", v[3], v[2], v[1], v[0]))
	}
	sp(true, "True/False", "True False True False")
	sp(true, "true/false", "true false true false")
	sp(true, "TRUE/FALSE and tRuE", "TRUE FALSE tRuE false")
	sp(true, "1/0", "1 0 1 0")
	sp(true, "1.0/0.0", "1.0 0.0 1.0 0.0")
	sp(true, "a wrong row", "True True True False")
	sp(true, "True and 1 mixed are text of three labels: never equal to a bool", "True 0 1 False")
	sp(false, "yes/no: text against booleans, both binary", "yes no yes no")
	sp(false, "T/F", "T F T F")
	sp(false, "a missing label", "True NA True False")
	sp(false, "a probability is continuous", "0.9 0.1 0.8 0.2")
	add("spaceship-titanic", strings.NewReplacer("True", "1", "False", "0").Replace(boolAns), true, "answers 1/0, submission True/False",
		"PassengerId,Transported\n0001_01,True\n0002_01,False\n0003_01,True\n0004_01,True\n")
	add("spaceship-titanic", strings.NewReplacer("True", "a", "False", "b").Replace(boolAns), false, "text answers, 1/0 submission",
		"PassengerId,Transported\n0001_01,1\n0002_01,0\n0003_01,1\n0004_01,0\n")
	// A boolean submission for ROC AUC is 1/0 scores, as pandas and scikit-learn read it.
	a(true, "booleans as scores", "id,target\n4,True\n5,False\n6,true\n7,FALSE\n8,False\n")
	a(false, "booleans mixed with numbers are text", "id,target\n4,True\n5,0\n6,0.5\n7,FALSE\n8,False\n")
	return cs
}

// TestGradeAgreesWithMLEBenchInPython grades every case with the Go grader and with
// testdata/mlebench_validity.py (MLE-bench's rules with pandas, numpy and scikit-learn) through
// Debian's python3: both must agree on validity and on the (5-decimal) score within 1e-9.
func TestGradeAgreesWithMLEBenchInPython(t *testing.T) {
	testenv.RequirePython(t)
	cases := diffCases()
	dir := t.TempDir()
	type input struct {
		Task       string `json:"task"`
		Submission string `json:"submission"`
		Answers    string `json:"answers"`
	}
	var in []input
	for i, c := range cases {
		ans := filepath.Join(dir, fmt.Sprintf("%03d-answers.csv", i))
		sub := filepath.Join(dir, fmt.Sprintf("%03d-submission.csv", i))
		os.WriteFile(ans, []byte(c.answers), 0o644)
		os.WriteFile(sub, []byte(c.submission), 0o644)
		in = append(in, input{c.task, sub, ans})
	}
	stdin, _ := json.Marshal(in)
	cmd := exec.Command(testenv.Python, filepath.Join("testdata", "mlebench_validity.py"))
	cmd.Stdin = strings.NewReader(string(stdin))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr.String())
	}
	var py []struct {
		Valid  bool     `json:"valid"`
		Score  *float64 `json:"score"`
		Reason string   `json:"reason"`
	}
	if err := json.Unmarshal(out, &py); err != nil || len(py) != len(cases) {
		t.Fatalf("python gave %d results for %d cases (%v):\n%s", len(py), len(cases), err, out)
	}
	valid, taskSet := map[bool]int{}, map[string]bool{}
	for i, c := range cases {
		spec, err := tasks.Builtin().Get(c.task)
		if c.task == "spaceship-titanic" { // not a built-in task: the spec of its grading
			spec, err = &tasks.Spec{ID: c.task, Metric: "accuracy", Direction: "max", IDColumn: "PassengerId",
				Answers: tasks.Answers{Format: "columns", Columns: []string{"Transported"}, MatchBy: "id"}}, nil
		}
		if err != nil {
			t.Fatal(err)
		}
		r, err := Grade(spec, in[i].Submission, in[i].Answers)
		if err != nil {
			t.Errorf("%s / %s: Go grader error: %v", c.task, c.name, err)
			continue
		}
		want := py[i]
		switch {
		case r.Valid != want.Valid:
			t.Errorf("%s / %s: Go valid=%v (%s), Python valid=%v (%s)", c.task, c.name, r.Valid, r.Reason, want.Valid, want.Reason)
		case r.Valid && math.Abs(*r.Score-*want.Score) > 1e-9:
			t.Errorf("%s / %s: Go score %.10g, Python %.10g", c.task, c.name, *r.Score, *want.Score)
		case r.Valid != c.valid:
			t.Errorf("%s / %s: both graders say valid=%v, the case expects %v (Go: %s, Python: %s)", c.task, c.name, r.Valid, c.valid, r.Reason, want.Reason)
		}
		valid[r.Valid]++
		taskSet[c.task] = true
	}
	t.Logf("%d submissions over %d tasks: %d valid, %d invalid, the Go grader and MLE-bench's rules in Python agree", len(cases), len(taskSet), valid[true], valid[false])
}
