package instrument

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"mlerl/llm"
)

// LLM asks a static language model behind an OpenAI-compatible endpoint (never the policy being
// trained) to insert the progress prints. Its answer is used only when the verifier accepts it;
// otherwise the AST instrumenter does the work and Result.Note says why.
type LLM struct {
	Client   *llm.Client
	Verifier AST           // checks the answer, and instruments instead when it cannot be used
	Timeout  time.Duration // bound on the model's answer; 0: 2 minutes
}

// fallbackReserve is kept from the caller's deadline for verifying and falling back.
const fallbackReserve = 10 * time.Second

const llmSystem = "You add progress messages to Python programs without changing what they do."

// llmRules is our wording of the paper's rules for the instrumenter.
const llmRules = `Insert print statements into the Python program below so that its output shows how far it got. Use exactly these seven messages, verbatim:
- "imported packages": after the program's imports;
- "loaded data": after the data has been read from its files;
- "defined model": after the model object has been created;
- "training loss:": where the program computes a loss or score on its training data, followed by that value;
- "trained model": after the model has been fitted;
- "testing loss:": where the program computes a loss or score on held-out or validation data, followed by that value;
- "predicted test labels": after the predictions for the test set have been made.

Rules:
1. Put a print right after the statement whose operation it announces, once that operation has really happened; never announce an operation the program does not perform.
2. Print "training loss:" and "testing loss:" only where the program itself already computes a loss or score into a variable, and print that variable after the message, for example print("testing loss:", val_loss, flush=True). Never compute a new loss. If the program computes none, leave these two messages out.
3. Each print is a line of its own, indented like the statement before it: print("<message>", flush=True) or print("<message>", <variable>, flush=True).
4. Change nothing else: do not edit, reformat, reorder, remove or add any other code or comment.
5. Reply with the whole instrumented program in a single ` + "```python" + ` fenced block, and nothing else.

The program:
`

// Instrument returns the model's instrumentation when the verifier accepts it, else the AST
// instrumenter's, with the reason in Note.
func (l LLM) Instrument(ctx context.Context, program string) (Result, error) {
	res, why := l.ask(ctx, program)
	if why == "" {
		return res, nil
	}
	fb, err := l.Verifier.Instrument(ctx, program)
	if err != nil {
		return Result{}, fmt.Errorf("%s, and the AST instrumenter failed too: %w", why, err)
	}
	fb.Note = strings.TrimSuffix(why+"; used the AST instrumenter; "+fb.Note, "; ")
	return fb, nil
}

// ask returns the model's verified instrumentation, or why it cannot be used.
func (l LLM) ask(ctx context.Context, program string) (Result, string) {
	if l.Client == nil {
		return Result{}, "LLM instrumentation is not configured"
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if dl, ok := ctx.Deadline(); ok {
		timeout = min(timeout, time.Until(dl)-fallbackReserve)
	}
	if timeout <= 0 {
		return Result{}, "LLM instrumentation skipped: no time left before the deadline"
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	seed := 0 // greedy and seeded: the instrumenter is a fixed function of the program
	msgs := []llm.Message{{Role: "system", Content: llmSystem},
		{Role: "user", Content: llmRules + llm.Fence(program, "python")}}
	choices, err := l.Client.Complete(cctx, msgs, llm.Options{Temperature: 0, Seed: &seed})
	if err != nil {
		return Result{}, "LLM instrumentation failed: " + err.Error()
	}
	_, code, err := llm.ParseSolution(choices[0].Text)
	if err != nil {
		return Result{}, "LLM instrumentation unusable: " + err.Error()
	}
	ok, why, err := l.Verifier.Verify(ctx, program, code)
	if err != nil {
		return Result{}, "LLM instrumentation could not be verified: " + err.Error()
	}
	if !ok {
		return Result{}, "LLM instrumentation rejected by the verifier: " + why
	}
	inserted, why := insertedMarkers(program, code)
	if why != "" {
		return Result{}, "LLM instrumentation rejected: " + why
	}
	return Result{Program: code, Inserted: inserted, Note: "instrumented by the LLM"}, ""
}

var markerList = strings.Join([]string{"imported packages", "loaded data", "defined model", "training loss:",
	"trained model", "testing loss:", "predicted test labels"}, "|")

// markerPrint is a print whose first argument is a marker.
var markerPrint = regexp.MustCompile(`^\s*print\(\s*['"](` + markerList + `)['"]`)

// simplePrint is the only form an inserted print may take: the verifier proves that removing
// marker prints gives back the original, but not that the prints themselves cannot fail or act,
// so their argument must be a variable (attributes, subscripts, .item() or .mean() allowed).
var simplePrint = regexp.MustCompile(`^\s*print\(\s*(['"])(?:` + markerList + `)['"]\s*` +
	`(?:,\s*([A-Za-z_]\w*)(?:\.\w+|\[[^\[\]()]*\])*(?:\.(?:item|mean)\(\))?\s*)?` +
	`(?:,\s*flush\s*=\s*True\s*)?\)\s*(?:#.*)?$`)

// insertedMarkers lists, in program order, the marker prints instrumented has beyond original's,
// or says why one of them is not of the allowed form.
func insertedMarkers(original, instrumented string) ([]string, string) {
	had := map[string]int{}
	for _, l := range strings.Split(original, "\n") {
		if markerPrint.MatchString(l) {
			had[strings.TrimSpace(l)]++
		}
	}
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(instrumented, "\r\n", "\n"), "\n") {
		m := markerPrint.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		if t := strings.TrimSpace(l); had[t] > 0 {
			had[t]--
			continue
		}
		s := simplePrint.FindStringSubmatch(l)
		if s == nil {
			return nil, fmt.Sprintf("the inserted line %q is not print(marker[, variable], flush=True)", strings.TrimSpace(l))
		}
		if s[2] != "" && !regexp.MustCompile(`\b`+s[2]+`\b`).MatchString(original) {
			return nil, fmt.Sprintf("the inserted line %q prints %s, which the program never mentions", strings.TrimSpace(l), s[2])
		}
		out = append(out, m[1])
	}
	return out, ""
}
