package activities

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/internal/testenv"
	"mlerl/llm"
	"mlerl/model/ppo"
	"mlerl/settings"
	"mlerl/tasks"
)

// chatServer stands in for an OpenAI-compatible model server in these unit tests: it records
// each request and answers with reply(request).
type chatServer struct {
	mu       sync.Mutex
	requests []map[string]any
	reply    func(model string) (status int, text string)
}

func (s *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req map[string]any
	json.NewDecoder(r.Body).Decode(&req)
	s.mu.Lock()
	s.requests = append(s.requests, req)
	s.mu.Unlock()
	model, _ := req["model"].(string)
	status, text := s.reply(model)
	if status != http.StatusOK {
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]any{"error": map[string]string{"message": text}})
		return
	}
	json.NewEncoder(w).Encode(map[string]any{"choices": []map[string]any{{
		"index": 0, "message": map[string]string{"role": "assistant", "content": text}, "finish_reason": "stop",
		"logprobs": map[string]any{"content": []map[string]any{{"token": "a", "logprob": -0.5}, {"token": "b", "logprob": -0.25}}},
	}}})
}

func (s *chatServer) last() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[len(s.requests)-1]
}

const llmReply = "Fit a logistic regression on the scaled features.\n\n```python\nimport pandas as pd\nprint('hello')\n```\n"

func llmActivities(t *testing.T, chat *chatServer, trainerURL string) (*Activities, *testsuite.TestActivityEnvironment, artifacts.FS) {
	t.Helper()
	dataDir := testenv.PreparedData(t, "leaf-classification")
	srv := httptest.NewServer(chat)
	t.Cleanup(srv.Close)
	root := t.TempDir()
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: tasks.Builtin(), Layout: tasks.Layout{DataDir: dataDir},
		ScratchDir: t.TempDir(), PolicyLLM: &llm.Client{BaseURL: srv.URL + "/v1", Model: "qwen-base", MaxRetries: -1}}
	if trainerURL != "" {
		a.Trainer = &llm.Trainer{URL: trainerURL}
	}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	return a, env, artifacts.FS{Root: filepath.Join(root, "r")}
}

// The llm backend: checkpoint 0 names the model; sampling stores the prompt, the completion,
// its token log-probs, the parsed plan and program; an improve prompt shows the previous
// program and its output; the update goes to the trainer, and the next sampling uses the
// model the trainer returned.
func TestLLMPolicySamplesAndUpdatesThroughTheTrainer(t *testing.T) {
	chat := &chatServer{reply: func(string) (int, string) { return http.StatusOK, llmReply }}
	var trained llm.UpdateRequest
	trainer := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/update" {
			http.NotFound(w, r)
			return
		}
		json.NewDecoder(r.Body).Decode(&trained)
		json.NewEncoder(w).Encode(map[string]any{"model": "qwen-run-r-iter-1", "stats": map[string]any{"pg_loss": 0.5}})
	}))
	defer trainer.Close()
	a, env, store := llmActivities(t, chat, trainer.URL)
	ctx := context.Background()

	v, err := env.ExecuteActivity(a.InitPolicy, InitPolicyInput{Run: "r", Task: "leaf-classification", Seed: 1,
		PPO: ppo.Paper(), Backend: settings.BackendLLM, LLM: PaperLLMPolicy()})
	if err != nil {
		t.Fatal(err)
	}
	var init InitPolicyResult
	v.Get(&init)
	v, err = env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "r", Task: "leaf-classification", Descriptor: init.Task,
		Checkpoint: init.Checkpoint, Iteration: 1, IDs: []string{"s1"}, Purpose: PurposeTrain, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	req := chat.last()
	if req["model"] != "qwen-base" || req["temperature"] != 0.7 || req["max_tokens"] != float64(1024) || req["logprobs"] != true {
		t.Errorf("request to the model server: %v", req)
	}
	code, _ := store.Get(ctx, runstore.Sample("s1").Program())
	plan, _ := store.Get(ctx, runstore.Sample("s1").Plan())
	if string(code) != "import pandas as pd\nprint('hello')\n" || !strings.Contains(string(plan), "logistic regression") {
		t.Fatalf("stored program %q and plan %q", code, plan)
	}
	var rec sampleRecord
	if err := getJSON(ctx, store, runstore.Sample("s1").Record(), &rec); err != nil || rec.LLM == nil || len(rec.LLM.Tokens) != 2 || rec.LLM.LogProb != -0.75 || rec.LLM.Model != "qwen-base" {
		t.Fatalf("sample.json: %+v (%v)", rec.LLM, err)
	}
	for _, f := range []string{runstore.Sample("s1").Prompt(), runstore.Sample("s1").Completion()} {
		if _, err := store.Get(ctx, f); err != nil {
			t.Errorf("%s not stored: %v", f, err)
		}
	}

	// The program ran (its result and output as ExecuteProgram writes them); improve it.
	score := 0.42
	putJSON(ctx, store, runstore.Sample("s1").Result(), ExecuteResult{SampleID: "s1", Valid: true, Score: &score, Markers: 7, DurationS: 3})
	store.Put(ctx, runstore.Sample("s1").Output(), []byte("imported packages\nhello\n"))
	if _, err := env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "r", Task: "leaf-classification", Descriptor: init.Task,
		Checkpoint: init.Checkpoint, Iteration: 1, IDs: []string{"s2"}, Purpose: PurposeEvalImprove, ImproveOf: []string{"s1"}, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	msgs, _ := json.Marshal(chat.last()["messages"])
	for _, want := range []string{"print('hello')", "scored 0.42", "imported packages", "logistic regression"} {
		if !strings.Contains(string(msgs), want) {
			t.Errorf("the improve prompt lacks %q:\n%s", want, msgs)
		}
	}

	v, err = env.ExecuteActivity(a.UpdatePolicy, UpdateInput{Run: "r", Checkpoint: init.Checkpoint, Iteration: 1,
		SampleIDs: []string{"s1"}, PPO: ppo.Paper(), Seed: 1, Metrics: IterationMetrics{Iteration: 1, Samples: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var up UpdateResult
	v.Get(&up)
	if trained.Run != "r" || trained.Model != "qwen-base" || trained.Iteration != 1 || len(trained.SampleIDs) != 1 || !strings.Contains(string(trained.PPO), "DurationWeight") {
		t.Fatalf("the trainer got %+v", trained)
	}
	if up.Stats.PGLoss != 0.5 {
		t.Errorf("stats from the trainer: %+v", up.Stats)
	}
	if _, err := env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "r", Task: "leaf-classification", Descriptor: init.Task,
		Checkpoint: up.Checkpoint, Iteration: 2, IDs: []string{"s3"}, Purpose: PurposeTrain, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if m := chat.last()["model"]; m != "qwen-run-r-iter-1" {
		t.Fatalf("after the update sampling used model %v, want the trainer's", m)
	}
	if _, err := store.Get(ctx, runstore.IterationMetricsKey(1)); err != nil {
		t.Errorf("no metrics written: %v", err)
	}
}

// What the policy writes is its own business: a reply without a program runs as an empty
// program (and fails), a refused request is a clear non-retryable error, and a learning run
// without a trainer is refused before anything runs.
func TestLLMPolicyBadInputs(t *testing.T) {
	var status = http.StatusOK
	var text = "I cannot help with that."
	chat := &chatServer{reply: func(string) (int, string) { return status, text }}
	a, env, store := llmActivities(t, chat, "")
	if _, err := env.ExecuteActivity(a.InitPolicy, InitPolicyInput{Run: "r", Task: "leaf-classification", PPO: ppo.Paper(), Backend: settings.BackendLLM}); err == nil ||
		!strings.Contains(err.Error(), "--trainer-url") || !strings.Contains(err.Error(), ErrBadInput) {
		t.Fatalf("want a BadInput naming --trainer-url, got %v", err)
	}
	static := ppo.Paper()
	static.LearningRate = 0
	v, err := env.ExecuteActivity(a.InitPolicy, InitPolicyInput{Run: "r", Task: "leaf-classification", PPO: static, Backend: settings.BackendLLM})
	if err != nil {
		t.Fatal(err)
	}
	var init InitPolicyResult
	v.Get(&init)
	if _, err := env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "r", Task: "leaf-classification", Checkpoint: init.Checkpoint,
		IDs: []string{"s1"}, Purpose: PurposeTrain, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	code, err := store.Get(context.Background(), runstore.Sample("s1").Program())
	plan, _ := store.Get(context.Background(), runstore.Sample("s1").Plan())
	if err != nil || len(code) != 0 || !strings.Contains(string(plan), "no program could be parsed") {
		t.Fatalf("a reply without code: program %q, plan %q, %v", code, plan, err)
	}
	status, text = http.StatusNotFound, "model 'qwen-base' not found"
	_, err = env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "r", Task: "leaf-classification", Checkpoint: init.Checkpoint,
		IDs: []string{"s2"}, Purpose: PurposeTrain, Seed: 1})
	if err == nil || !strings.Contains(err.Error(), ErrBadInput) || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("want a BadInput with the server's message, got %v", err)
	}
	// With learning rate 0 the update keeps the model and needs no trainer.
	v, err = env.ExecuteActivity(a.UpdatePolicy, UpdateInput{Run: "r", Checkpoint: init.Checkpoint, Iteration: 1, SampleIDs: []string{"s1"}, PPO: static,
		Metrics: IterationMetrics{Iteration: 1}})
	if err != nil {
		t.Fatal(err)
	}
	var up UpdateResult
	v.Get(&up)
	ck, err := a.readCheckpoint(context.Background(), store, up.Checkpoint)
	b, ok := ck.backend.(*llmBackend)
	if err != nil || !ok || b.ck.Model != "qwen-base" || b.ck.Iteration != 1 {
		t.Fatalf("checkpoint after a static update: %+v %v", ck.backend, err)
	}
}
