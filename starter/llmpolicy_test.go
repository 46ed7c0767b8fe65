package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
	"mlerl/internal/testenv"
	"mlerl/llm"
)

// leafSolution is what the stand-in model answers: a plan and a real program for leaf.
const leafSolution = "Standardise the features and fit a multinomial logistic regression.\n\n```python\n" + `import pandas as pd
from sklearn import linear_model, preprocessing

train = pd.read_csv("input/train.csv")
test = pd.read_csv("input/test.csv")
sample = pd.read_csv("input/sample_submission.csv")
feats = [c for c in test.columns if c != "id"]
scaler = preprocessing.StandardScaler().fit(train[feats])
model = linear_model.LogisticRegression(C=100.0, max_iter=1000)
model.fit(scaler.transform(train[feats]), train["species"])
proba = model.predict_proba(scaler.transform(test[feats]))
sub = pd.DataFrame(proba, columns=model.classes_)
sub.insert(0, "id", test["id"])
sub[list(sample.columns)].to_csv("submission.csv", index=False)
` + "```\n"

// A run with the llm policy backend, end to end through a real dev server, the real sandbox and
// grader: the model server and the trainer service are stand-ins (no LLM runs here), so what
// this checks is the platform's side of the contract: prompts out, programs in and executed,
// updates sent with the iteration's sample ids, and sampling moving to the model the trainer
// returned.
func TestRunWithTheLLMPolicy(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: end-to-end run in -short mode")
	}
	dataDir := testenv.PreparedData(t, "leaf-classification")
	var mu sync.Mutex
	models := map[string]int{}
	chat := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model string `json:"model"`
		}
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		models[req.Model]++
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{"index": 0, "finish_reason": "stop",
			"message": map[string]string{"role": "assistant", "content": leafSolution}}}})
	}))
	defer chat.Close()
	var updates []llm.UpdateRequest
	trainer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req llm.UpdateRequest
		json.NewDecoder(r.Body).Decode(&req)
		mu.Lock()
		updates = append(updates, req)
		mu.Unlock()
		json.NewEncoder(w).Encode(map[string]any{"model": fmt.Sprintf("base-%d", req.Iteration), "stats": map[string]float64{"pg_loss": 0.1}})
	}))
	defer trainer.Close()

	srv, err := testsuite.StartDevServer(context.Background(), testsuite.DevServerOptions{ExistingPath: testenv.TemporalCLI(t), LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	runDir := filepath.Join(t.TempDir(), "run")
	var out bytes.Buffer
	err = runCommand(context.Background(), []string{"--task", "leaf-classification", "--data-dir", dataDir, "--out", runDir,
		"--iterations", "2", "--batch", "2", "--oversample", "1", "--eval-samples", "1", "--final-candidates", "2", "--final-folds", "2", "--temporal-address", srv.FrontendHostPort(),
		"--policy", "llm", "--policy-url", chat.URL + "/v1", "--policy-model", "base", "--trainer-url", trainer.URL}, &out)
	t.Log(out.String())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "graded on the private test answers") {
		t.Errorf("the model's valid program was not graded on the test answers")
	}
	if len(updates) != 2 || updates[0].Model != "base" || updates[1].Model != "base-1" || len(updates[0].SampleIDs) != 2 {
		t.Errorf("trainer requests %+v: want two updates of 2 samples, the second from the first's model", updates)
	}
	if models["base"] == 0 || models["base-1"] == 0 || models["base-2"] == 0 {
		t.Errorf("models sampled from: %v; want the initial model and each updated one", models)
	}
	results, _ := filepath.Glob(filepath.Join(runDir, runstore.Sample("it*").Result()))
	valid, ran := 0, 0
	for _, f := range results {
		var res activities.ExecuteResult
		b, _ := os.ReadFile(f)
		json.Unmarshal(b, &res)
		if !res.Stale { // the program still in flight when training ended is cut short
			ran++
		}
		if res.Valid {
			valid++
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(f), "completion.txt")); err != nil {
			t.Errorf("%s: no completion.txt", filepath.Dir(f))
		}
	}
	if ran < 4 || valid != ran {
		t.Errorf("%d of %d finished training programs valid; the model's program is valid on leaf", valid, ran)
	}
}
