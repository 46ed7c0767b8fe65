package llm

import (
	"errors"
	"fmt"
	"strings"

	"mlerl/tasks"
)

// Previous is the solution an improve prompt builds on, and what happened when it ran.
type Previous struct {
	Plan, Code string
	// Output is the instrumented run's terminal output (its progress prints and losses included).
	Output    string
	DurationS float64
	Score     *float64 // the graded score of a valid submission; nil when there was none
	Reason    string   // why it failed or its submission was rejected ("exited with code 1", ...)
}

// The output's head shows how far the program got, its tail how it ended; the middle goes so
// that the prompt stays within a small model's context.
const outputHead, outputTail = 800, 2200

// PromptFor writes the agent's prompt: from scratch when prev is nil, otherwise asking to improve
// prev. files are the names in ./input/, snippet the first rows of the training data.
// It never mentions the progress markers: the policy must not learn to print for credit.
func PromptFor(spec *tasks.Spec, files []string, snippet string, prev *Previous) []Message {
	direction := "higher is better"
	if spec.LowerIsBetter() {
		direction = "lower is better"
	}
	system := fmt.Sprintf(`You are an expert machine-learning engineer solving a Kaggle competition.
Answer with one complete solution: first a plan of 3 to 5 sentences of plain prose, then exactly one Python program in a single `+"```python"+` fenced block, and nothing after it.
The program runs as "python solution.py" in a sandbox without internet access and without a GPU; pandas, numpy, scipy, scikit-learn, xgboost and Pillow are installed.
It must read the competition's files from ./input/ and write its predictions for the test set to ./submission.csv, in the format of the sample submission.
It may use at most %d seconds and %d MB of memory.`, spec.Limits.WallSeconds, spec.Limits.MemoryMB)

	var u strings.Builder
	fmt.Fprintf(&u, "Competition: %s (%s)\n%s\nMetric: %s (%s).\n\nFiles in ./input/:\n",
		spec.Name, spec.ID, strings.TrimSpace(spec.Prompt.Summary), spec.Metric, direction)
	for _, f := range files {
		fmt.Fprintf(&u, "- %s\n", f)
	}
	if snippet != "" {
		fmt.Fprintf(&u, "\nThe first rows of the training data:\n%s\n", Fence(snippet, ""))
	}
	if prev == nil {
		u.WriteString("\nWrite a plan and a program that solve this task.")
		return []Message{{Role: "system", Content: system}, {Role: "user", Content: u.String()}}
	}
	fmt.Fprintf(&u, "\nHere is a previous solution to this task.\n\nPlan:\n%s\n\nProgram:\n%s\n\n",
		strings.TrimSpace(prev.Plan), Fence(prev.Code, "python"))
	switch {
	case prev.Score != nil:
		fmt.Fprintf(&u, "It ran for %.1f s and its submission scored %.6g (%s, %s).", prev.DurationS, *prev.Score, spec.Metric, direction)
	case prev.Reason != "":
		fmt.Fprintf(&u, "It ran for %.1f s and failed: %s.", prev.DurationS, strings.TrimSuffix(prev.Reason, "."))
	default:
		fmt.Fprintf(&u, "It ran for %.1f s and produced no valid submission.", prev.DurationS)
	}
	fmt.Fprintf(&u, " Its terminal output:\n%s\n\n", Fence(clip(prev.Output), ""))
	u.WriteString("Write an improved solution: a new plan of 3 to 5 sentences saying what you change and why, then the complete new program (not a diff).")
	return []Message{{Role: "system", Content: system}, {Role: "user", Content: u.String()}}
}

// clip keeps the head and tail of long output, cut at line ends.
func clip(s string) string {
	if len(s) <= outputHead+outputTail {
		return s
	}
	head, tail := s[:outputHead], s[len(s)-outputTail:]
	if i := strings.LastIndexByte(head, '\n'); i > 0 {
		head = head[:i+1]
	}
	if i := strings.IndexByte(tail, '\n'); i >= 0 && i < len(tail)-1 {
		tail = tail[i+1:]
	}
	return fmt.Sprintf("%s[... %d characters cut ...]\n%s", head, len(s)-len(head)-len(tail), tail)
}

// Fence wraps s in a Markdown code fence longer than any backtick run inside it.
func Fence(s, lang string) string {
	ticks, run := 3, 0
	for _, r := range s {
		if r == '`' {
			run++
			ticks = max(ticks, run+1)
		} else {
			run = 0
		}
	}
	f := strings.Repeat("`", ticks)
	return f + lang + "\n" + strings.TrimRight(s, "\n") + "\n" + f
}

// ErrNoCode is returned when a reply holds no fenced Python block.
var ErrNoCode = errors.New("the reply has no ```python code block")

// ParseSolution splits a reply into the plan (the prose before the first fenced Python block)
// and the code (that block). A block without a language counts as Python; blocks in other
// languages before it are part of the plan; anything after it is ignored. A block the reply
// never closes (cut by max_tokens) runs to the end: the program will fail, which is the
// feedback a policy that writes too much should get.
func ParseSolution(text string) (plan, code string, err error) {
	lines := strings.SplitAfter(strings.ReplaceAll(text, "\r\n", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		indent, ticks, lang, ok := openFence(lines[i])
		if !ok {
			continue
		}
		end := i + 1
		for end < len(lines) && !closesFence(lines[end], ticks) {
			end++
		}
		if lang != "" && lang != "python" && lang != "py" && lang != "python3" {
			i = end // skip the whole block: its closing fence is not an opening one
			continue
		}
		var b strings.Builder
		for _, l := range lines[i+1 : end] {
			b.WriteString(dedent(strings.TrimSuffix(l, "\n"), indent) + "\n")
		}
		code = b.String()
		if strings.TrimSpace(code) == "" {
			return "", "", errors.New("the reply's code block is empty")
		}
		return strings.TrimSpace(strings.Join(lines[:i], "")), code, nil
	}
	return "", "", ErrNoCode
}

// openFence recognises a line like "```python" (or "  ````py title=x").
func openFence(line string) (indent, ticks int, lang string, ok bool) {
	t := strings.TrimLeft(line, " \t")
	indent = len(line) - len(t)
	ticks = len(t) - len(strings.TrimLeft(t, "`"))
	if ticks < 3 {
		return 0, 0, "", false
	}
	info := strings.Fields(t[ticks:])
	if len(info) > 0 {
		lang = strings.ToLower(info[0])
	}
	if strings.Contains(lang, "`") {
		return 0, 0, "", false // inline code such as ```x```, not a fence
	}
	return indent, ticks, lang, true
}

func closesFence(line string, ticks int) bool {
	t := strings.TrimSpace(line)
	return len(t) >= ticks && strings.Trim(t, "`") == ""
}

// dedent removes up to n leading spaces (the fence's own indentation).
func dedent(l string, n int) string {
	i := 0
	for i < n && i < len(l) && (l[i] == ' ' || l[i] == '\t') {
		i++
	}
	return l[i:]
}
