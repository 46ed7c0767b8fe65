package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"time"

	"mlerl/instrument"
	"mlerl/llm"
)

// instrumenterFlags choose who inserts the progress prints: Python's ast module, or a static
// LLM (never the policy being trained) whose output is verified and falls back to ast.
type instrumenterFlags struct {
	Kind   string `json:"instrumenter"`
	URL    string `json:"llm_url,omitempty"`
	Model  string `json:"llm_model,omitempty"`
	KeyEnv string `json:"llm_key_env,omitempty"` // the variable's name; the key itself is never stored
}

func (f *instrumenterFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.Kind, "instrumenter", "ast", "ast (Python's ast module), llm (a static model at --llm-url; verified, falls back to ast), or none (no progress prints: a failing program earns the flat failure reward; the instrumentation ablation)")
	fs.StringVar(&f.URL, "llm-url", "", "OpenAI-compatible base URL including /v1, e.g. http://localhost:8000/v1 (vLLM), :8080/v1 (llama.cpp), :11434/v1 (Ollama)")
	fs.StringVar(&f.Model, "llm-model", "", "model served at --llm-url for the instrumenter")
	fs.StringVar(&f.KeyEnv, "llm-key-env", "", "environment variable holding the LLM API key (never on the command line or in run.json)")
}

func (f instrumenterFlags) open(python string) (instrument.Instrumenter, error) {
	ast := instrument.AST{Python: python}
	switch f.Kind {
	case "", "ast", "none": // none: runs ask for no instrumenting (TrainInput.Instrumenter)
		return ast, nil
	case "llm":
		if f.URL == "" || f.Model == "" {
			return nil, errors.New("--instrumenter llm needs --llm-url and --llm-model")
		}
		key := ""
		if f.KeyEnv != "" {
			if key = os.Getenv(f.KeyEnv); key == "" {
				return nil, fmt.Errorf("--llm-key-env %s: the variable is empty; export it first", f.KeyEnv)
			}
		}
		return instrument.LLM{Client: &llm.Client{BaseURL: f.URL, Model: f.Model, APIKey: key}, Verifier: ast}, nil
	}
	return nil, fmt.Errorf("--instrumenter must be ast, llm or none, got %q", f.Kind)
}

// perRun is the run's own instrumenter setting (TrainInput.Instrumenter).
func (f instrumenterFlags) perRun() string {
	if f.Kind == "none" {
		return "none"
	}
	return ""
}

// timeout is how long the instrument activity may take: a model call needs minutes.
func (f instrumenterFlags) timeout() time.Duration {
	if f.Kind == "llm" {
		return 3 * time.Minute
	}
	return 30 * time.Second
}
