package instrument

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/llm"
)

const small = `import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

train = pd.read_csv("input/train.csv")
test = pd.read_csv("input/test.csv")
model = LogisticRegression(C=1.0)
model.fit(train[["x"]], train.y)
val_loss = log_loss(train.y, model.predict_proba(train[["x"]]))
proba = model.predict_proba(test[["x"]])
pd.DataFrame(proba).to_csv("submission.csv")
`

// smallByLLM is how a careful model would instrument small.
const smallByLLM = `import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss
print("imported packages", flush=True)

train = pd.read_csv("input/train.csv")
test = pd.read_csv("input/test.csv")
print("loaded data", flush=True)
model = LogisticRegression(C=1.0)
print("defined model", flush=True)
model.fit(train[["x"]], train.y)
print("trained model", flush=True)
val_loss = log_loss(train.y, model.predict_proba(train[["x"]]))
print("testing loss:", val_loss, flush=True)
proba = model.predict_proba(test[["x"]])
print("predicted test labels", flush=True)
pd.DataFrame(proba).to_csv("submission.csv")
`

// fakeLLM answers every chat request with content (or with status and an error body), and
// checks that the request is the instrumenter's: greedy, seeded, the rules and the program.
func fakeLLM(t *testing.T, status int, content string) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model       string        `json:"model"`
			Temperature *float64      `json:"temperature"`
			Seed        *int          `json:"seed"`
			Messages    []llm.Message `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			t.Error(err)
		}
		user := req.Messages[len(req.Messages)-1].Content
		if req.Model != "instrumenter" || req.Temperature == nil || *req.Temperature != 0 || req.Seed == nil {
			t.Errorf("request model %q temperature %v seed %v: want the static model, greedy and seeded", req.Model, req.Temperature, req.Seed)
		}
		for _, want := range []string{`"imported packages"`, `"loaded data"`, `"defined model"`, `"training loss:"`,
			`"trained model"`, `"testing loss:"`, `"predicted test labels"`, "Change nothing else", "```python\n" + small} {
			if !strings.Contains(user, want) {
				t.Errorf("the instrumenter's prompt lacks %q", want)
			}
		}
		if status != http.StatusOK {
			w.WriteHeader(status)
			io.WriteString(w, `{"object":"error","message":"CUDA out of memory","code":500}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0,
			"message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	}))
	t.Cleanup(srv.Close)
	return srv
}

func llmInstrumenter(srv *httptest.Server) LLM {
	return LLM{Client: &llm.Client{BaseURL: srv.URL + "/v1", Model: "instrumenter", MaxRetries: -1},
		Verifier: AST{Python: testenv.Python}}
}

func TestLLMInstrumentationThatOnlyAddsPrintsIsUsed(t *testing.T) {
	testenv.RequirePython(t)
	srv := fakeLLM(t, http.StatusOK, "Here is the instrumented program:\n\n```python\n"+smallByLLM+"```\n")
	res, err := llmInstrumenter(srv).Instrument(context.Background(), small)
	if err != nil {
		t.Fatal(err)
	}
	if res.Program != smallByLLM || res.Note != "instrumented by the LLM" {
		t.Fatalf("note %q, program:\n%s", res.Note, res.Program)
	}
	want := "imported packages|loaded data|defined model|trained model|testing loss:|predicted test labels"
	if got := strings.Join(res.Inserted, "|"); got != want {
		t.Errorf("inserted %s, want %s", got, want)
	}
}

func TestUntrustworthyLLMInstrumentationFallsBackToAST(t *testing.T) {
	testenv.RequirePython(t)
	verifier := AST{Python: testenv.Python}
	withCall := strings.Replace(smallByLLM, `print("trained model", flush=True)`,
		`print("trained model", model.fit(train[["x"]], train.y), flush=True)`, 1)
	// Both the verifier (marker prints may only print plain values) and the line check reject it.
	if ok, _, err := verifier.Verify(context.Background(), small, withCall); err != nil || ok {
		t.Fatalf("the verifier must reject a marker print that calls fit (ok=%v, err=%v)", ok, err)
	}
	cases := []struct {
		name    string
		status  int
		content string
		note    string
	}{
		{"a changed constant", http.StatusOK, "```python\n" + strings.Replace(smallByLLM, "C=1.0", "C=10.0", 1) + "```",
			"LLM instrumentation rejected by the verifier: removing the inserted prints does not give back the original program"},
		{"a server error", http.StatusInternalServerError, "",
			"LLM instrumentation failed: POST " + "URL" + "/v1/chat/completions: HTTP 500 Internal Server Error: CUDA out of memory"},
		{"a reply without code", http.StatusOK, "I cannot instrument this program.",
			"LLM instrumentation unusable: the reply has no ```python code block"},
		{"a print of a variable the program lacks", http.StatusOK,
			"```python\n" + strings.Replace(smallByLLM, "val_loss, flush", "valid_loss, flush", 1) + "```",
			"LLM instrumentation rejected: the inserted line \"print(\\\"testing loss:\\\", valid_loss, flush=True)\" prints valid_loss, which the program never mentions"},
		{"a print that calls the model", http.StatusOK, "```python\n" + withCall + "```",
			"LLM instrumentation rejected"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := fakeLLM(t, c.status, c.content)
			res, err := llmInstrumenter(srv).Instrument(context.Background(), small)
			if err != nil {
				t.Fatal(err)
			}
			note := strings.Replace(c.note, "URL", srv.URL, 1)
			if !strings.HasPrefix(res.Note, note) || !strings.HasSuffix(res.Note, "; used the AST instrumenter") {
				t.Errorf("note %q, want %q...; used the AST instrumenter", res.Note, note)
			}
			if strings.Contains(res.Program, "C=10.0") || strings.Contains(res.Program, "valid_loss") || strings.Contains(res.Program, `print("`) {
				t.Errorf("the LLM's program was used:\n%s", res.Program)
			}
			if !strings.Contains(res.Program, "print('imported packages', flush=True)") || len(res.Inserted) < 5 {
				t.Errorf("the AST instrumenter did not insert the markers (%v):\n%s", res.Inserted, res.Program)
			}
		})
	}
}

func TestLLMInstrumenterLeavesTimeToFallBack(t *testing.T) {
	testenv.RequirePython(t)
	var called atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called.Store(true) }))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), fallbackReserve/2)
	defer cancel()
	res, err := llmInstrumenter(srv).Instrument(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if called.Load() || !strings.Contains(res.Note, "no time left") || len(res.Inserted) == 0 {
		t.Errorf("called %v, note %q, inserted %v", called.Load(), res.Note, res.Inserted)
	}
}

func TestInsertedPrintForms(t *testing.T) {
	orig := "import x\nscores = x.cv()\nhist = x.fit()\n"
	cases := []struct {
		line string
		ok   bool
	}{
		{`print("imported packages", flush=True)`, true},
		{`print('loaded data')`, true},
		{`print("testing loss:", scores.mean(), flush=True)  # mean over folds`, true},
		{`print("training loss:", hist.history['loss'][-1])`, true},
		{`print("training loss:", loss.item())`, false}, // loss is not a variable of the program
		{`print("trained model", x.fit(), flush=True)`, false},
		{`print("testing loss:", float(scores))`, false},
		{`print("testing loss:",`, false},
	}
	for _, c := range cases {
		got, why := insertedMarkers(orig, "import x\n"+c.line+"\nscores = x.cv()\n")
		if (why == "") != c.ok || c.ok && len(got) != 1 {
			t.Errorf("%s: inserted %v, reason %q, want accepted=%v", c.line, got, why, c.ok)
		}
	}
	// Marker prints the program already had are not counted as inserted.
	if got, why := insertedMarkers("print('loaded data')\n", "print('loaded data')\nprint('defined model')\n"); why != "" || len(got) != 1 || got[0] != "defined model" {
		t.Errorf("got %v %q", got, why)
	}
}
