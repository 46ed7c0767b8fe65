package main

import (
	"errors"
	"flag"
	"fmt"
	"os"

	"mlerl/activities"
	"mlerl/llm"
	"mlerl/settings"
)

// policyFlags choose the policy backend: the code-action network (trained in-process on the
// gpu queue), or a language model behind an OpenAI-compatible server whose updates go to a
// trainer service (llm/doc.go has the contract).
type policyFlags struct {
	URL        string `json:"policy_url,omitempty"`
	Model      string `json:"policy_model,omitempty"`
	KeyEnv     string `json:"policy_key_env,omitempty"` // the variable's name; the key itself is never stored
	TrainerURL string `json:"trainer_url,omitempty"`
}

// register registers where an llm policy's model server and trainer are (--policy, the
// backend, is a setting): a gpu worker needs them, whichever run it serves.
func (f *policyFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.URL, "policy-url", "", "llm policy: OpenAI-compatible base URL including /v1 (vLLM, llama.cpp server, Ollama)")
	fs.StringVar(&f.Model, "policy-model", "", "llm policy: the initial model served at --policy-url")
	fs.StringVar(&f.KeyEnv, "policy-key-env", "", "llm policy: environment variable holding the server's API key")
	fs.StringVar(&f.TrainerURL, "trainer-url", "", "llm policy: base URL of the trainer service (POST /update; llm/doc.go); without it, run with --learning-rate 0")
}

// check validates the servers for a run with this backend (settings.Validate has checked its
// name) and learning rate lr.
func (f policyFlags) check(backend settings.Backend, lr float64) error {
	if backend != settings.BackendLLM {
		if f.URL != "" || f.TrainerURL != "" {
			return errors.New("--policy-url and --trainer-url are for --policy llm")
		}
		return nil
	}
	if f.URL == "" || f.Model == "" {
		return errors.New("--policy llm needs --policy-url and --policy-model")
	}
	if lr > 0 && f.TrainerURL == "" {
		return errors.New("--policy llm learns through a trainer service: give --trainer-url, or --learning-rate 0 to sample from a fixed model")
	}
	_, _, err := f.open()
	return err
}

// open returns the model server and trainer clients (nil when not configured).
func (f policyFlags) open() (*llm.Client, *llm.Trainer, error) {
	var c *llm.Client
	if f.URL != "" {
		key := ""
		if f.KeyEnv != "" {
			if key = os.Getenv(f.KeyEnv); key == "" {
				return nil, nil, fmt.Errorf("--policy-key-env %s: the variable is empty; export it first", f.KeyEnv)
			}
		}
		c = &llm.Client{BaseURL: f.URL, Model: f.Model, APIKey: key}
	}
	var t *llm.Trainer
	if f.TrainerURL != "" {
		t = &llm.Trainer{URL: f.TrainerURL}
	}
	return c, t, nil
}

// llmSampling is what an llm policy samples with: the paper's settings, the policy's sampling
// temperature and top-p, and a preset's token cap (0: the paper's).
func llmSampling(backend settings.Backend, f policyFlags, p settings.Policy, maxTokens int) activities.LLMPolicy {
	if backend != settings.BackendLLM {
		return activities.LLMPolicy{}
	}
	s := activities.PaperLLMPolicy()
	s.Model, s.Temperature, s.TopP = f.Model, p.Temperature, p.TopP
	if maxTokens > 0 {
		s.MaxTokens = maxTokens
	}
	return s
}
