package llm

import (
	"errors"
	"strings"
	"testing"

	"mlerl/tasks"
)

func TestParseSolution(t *testing.T) {
	cases := []struct {
		name, text, plan, code string
		err                    bool
	}{
		{"plan then python block",
			"I will fit a forest.\nThen predict.\n\n```python\nimport pandas as pd\nprint(1)\n```\n",
			"I will fit a forest.\nThen predict.", "import pandas as pd\nprint(1)\n", false},
		{"a block without a language",
			"Plan.\n```\nx = 1\n```", "Plan.", "x = 1\n", false},
		{"CRLF line ends",
			"Plan A.\r\n```python\r\nx = 1\r\ny = 2\r\n```\r\n", "Plan A.", "x = 1\ny = 2\n", false},
		{"extra blocks after the first are ignored",
			"P.\n```python\na = 1\n```\nOr:\n```python\na = 2\n```\n", "P.", "a = 1\n", false},
		{"a block in another language before it stays in the plan",
			"Install:\n```bash\npip install x\n```\nThen:\n```py\nb = 1\n```", "Install:\n```bash\npip install x\n```\nThen:", "b = 1\n", false},
		{"a longer fence may hold backticks",
			"P.\n````python\ns = '```'\n````\n", "P.", "s = '```'\n", false},
		{"an indented fence is dedented",
			"1. Plan.\n   ```python\n   if x:\n       y = 1\n   ```\n", "1. Plan.", "if x:\n    y = 1\n", false},
		{"a block cut by max_tokens runs to the end",
			"P.\n```python\nfor i in range(3):\n    pri", "P.", "for i in range(3):\n    pri\n", false},
		{"no plan", "```python\nz = 3\n```", "", "z = 3\n", false},
		{"no code block", "I would fit a forest but will not write code.", "", "", true},
		{"only inline code", "Use ```x = 1``` here.", "", "", true},
		{"an empty block", "P.\n```python\n\n```\n", "", "", true},
		{"only a block in another language", "P.\n```bash\nls\n```\n", "", "", true},
	}
	for _, c := range cases {
		plan, code, err := ParseSolution(c.text)
		if (err != nil) != c.err {
			t.Errorf("%s: err = %v, want error %v", c.name, err, c.err)
			continue
		}
		if plan != c.plan || code != c.code {
			t.Errorf("%s:\nplan %q\nwant %q\ncode %q\nwant %q", c.name, plan, c.plan, code, c.code)
		}
	}
	if _, _, err := ParseSolution("no code"); !errors.Is(err, ErrNoCode) {
		t.Errorf("err = %v, want ErrNoCode", err)
	}
}

var markers = []string{"imported packages", "loaded data", "defined model", "training loss",
	"trained model", "testing loss", "predicted test labels"}

func pizza(t *testing.T) *tasks.Spec {
	t.Helper()
	spec, err := tasks.Builtin().Get("random-acts-of-pizza")
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

func text(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString(m.Content + "\n")
	}
	return b.String()
}

func TestScratchPrompt(t *testing.T) {
	spec := pizza(t)
	files := []string{"train.json", "test.json", "sampleSubmission.csv"}
	msgs := PromptFor(spec, files, `[{"request_id": "t3_abc", "request_title": "[Request] pizza"}]`, nil)
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[1].Role != "user" {
		t.Fatalf("messages %+v", msgs)
	}
	all := text(msgs)
	for _, want := range []string{"3 to 5 sentences", "exactly one Python program", "```python", "./input/",
		"./submission.csv", "without internet", "600 seconds", "4096 MB", "Random Acts of Pizza", "ROC AUC",
		"roc-auc (higher is better)", "- train.json", "- sampleSubmission.csv", `"request_title": "[Request] pizza"`} {
		if !strings.Contains(all, want) {
			t.Errorf("scratch prompt lacks %q:\n%s", want, all)
		}
	}
	if strings.Contains(all, "previous solution") {
		t.Error("a scratch prompt mentions a previous solution")
	}
	for _, m := range markers {
		if strings.Contains(strings.ToLower(all), m) {
			t.Errorf("the agent's prompt mentions the marker %q: the policy would learn to print for credit", m)
		}
	}
}

func TestImprovePrompt(t *testing.T) {
	spec := pizza(t)
	score := 0.6123
	output := "imported packages\nloaded data\ntraining loss: 0.41\ntesting loss: 0.52\n"
	prev := &Previous{Plan: "Fit a logistic regression on TF-IDF features.", Code: "import pandas as pd\nprint('hi')\n",
		Output: output, DurationS: 12.34, Score: &score}
	msgs := PromptFor(spec, []string{"train.json"}, "", prev)
	all := text(msgs)
	for _, want := range []string{"previous solution", "Fit a logistic regression on TF-IDF features.",
		"```python\nimport pandas as pd\nprint('hi')\n```", output, "12.3 s", "scored 0.6123 (roc-auc, higher is better)",
		"improved solution", "3 to 5 sentences", "complete new program"} {
		if !strings.Contains(all, want) {
			t.Errorf("improve prompt lacks %q:\n%s", want, all)
		}
	}
	// The previous run's output shows the instrumented losses, as in the paper; our own words
	// never name the markers.
	rest := strings.ToLower(strings.Replace(all, output, "", 1))
	for _, m := range markers {
		if strings.Contains(rest, m) {
			t.Errorf("the improve prompt mentions the marker %q outside the quoted output", m)
		}
	}

	prev = &Previous{Plan: "P.", Code: "x = 1\n", Output: "Traceback ...\nKeyError: 'y'\n", DurationS: 0.5, Reason: "exited with code 1"}
	if all := text(PromptFor(spec, nil, "", prev)); !strings.Contains(all, "failed: exited with code 1.") || !strings.Contains(all, "KeyError: 'y'") {
		t.Errorf("failed previous run not described:\n%s", all)
	}
}

func TestLongOutputKeepsHeadAndTail(t *testing.T) {
	var b strings.Builder
	b.WriteString("FIRST LINE\n")
	for i := 0; i < 2000; i++ {
		b.WriteString("epoch loss 0.123456\n")
	}
	b.WriteString("Traceback: LAST LINE\n")
	prev := &Previous{Plan: "P.", Code: "x = 1\n", Output: b.String(), Reason: "exited with code 1"}
	all := text(PromptFor(pizza(t), nil, "", prev))
	if !strings.Contains(all, "FIRST LINE") || !strings.Contains(all, "Traceback: LAST LINE") || !strings.Contains(all, "characters cut") {
		t.Errorf("clipped output lost its head or tail")
	}
	if len(all) > 8000 {
		t.Errorf("prompt is %d characters: the output was not clipped", len(all))
	}
}
