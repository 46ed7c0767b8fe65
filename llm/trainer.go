package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// UpdateRequest asks a trainer service for one PPO update of an LLM policy (see the package
// documentation's trainer contract). Only ids travel: the trainer reads prompts, completions,
// log-probs, rewards and durations from the run's artifact store.
type UpdateRequest struct {
	Run       string   `json:"run"`
	Model     string   `json:"model"` // the model reference that sampled this iteration
	Iteration int      `json:"iteration"`
	SampleIDs []string `json:"sample_ids"`
	Stale     []string `json:"stale,omitempty"`
	// PPO holds the update's settings as the platform's ppo.Config encodes them.
	PPO  json.RawMessage `json:"ppo"`
	Seed uint64          `json:"seed"`
}

// UpdateResponse is the trainer's answer: the new model reference the next sampling uses
// (e.g. a vLLM LoRA adapter name) and the PPO statistics.
type UpdateResponse struct {
	Model string          `json:"model"`
	Stats json.RawMessage `json:"stats"`
}

// Trainer is the HTTP client of a trainer service: POST {URL}/update with an UpdateRequest.
// A retried update must be idempotent on the service's side (same run and iteration, same
// result): Temporal retries the activity that calls it.
type Trainer struct {
	URL  string
	HTTP *http.Client // nil: a client with a one-hour timeout (an update trains a model)
}

// Update asks for one update. A 4xx answer is a permanent error (PermanentError); anything
// else that fails is worth retrying.
func (t *Trainer) Update(ctx context.Context, req UpdateRequest) (UpdateResponse, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return UpdateResponse{}, err
	}
	endpoint := strings.TrimRight(t.URL, "/") + "/update"
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return UpdateResponse{}, fmt.Errorf("trainer %q: %w", endpoint, err)
	}
	hr.Header.Set("Content-Type", "application/json")
	hc := t.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: time.Hour}
	}
	resp, err := hc.Do(hr)
	if err != nil {
		return UpdateResponse{}, fmt.Errorf("POST %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return UpdateResponse{}, fmt.Errorf("POST %s: reading the response: %w", endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &HTTPError{URL: endpoint, Status: resp.StatusCode, Message: serverMessage(raw)}
		if !e.Retryable() {
			return UpdateResponse{}, &PermanentError{Err: e}
		}
		return UpdateResponse{}, e
	}
	var out UpdateResponse
	if err := json.Unmarshal(raw, &out); err != nil {
		return UpdateResponse{}, &PermanentError{Err: fmt.Errorf("POST %s: malformed JSON in the response (%v): %s", endpoint, err, excerpt(raw))}
	}
	if out.Model == "" {
		return UpdateResponse{}, &PermanentError{Err: fmt.Errorf("POST %s: the response names no model: %s (the trainer must return {\"model\": ..., \"stats\": ...})", endpoint, excerpt(raw))}
	}
	return out, nil
}

// PermanentError marks a failure that retrying cannot fix (a rejected request, a malformed
// answer).
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string { return e.Err.Error() }
func (e *PermanentError) Unwrap() error { return e.Err }

// IsPermanent reports whether err (from Complete or Update) cannot be fixed by retrying: a
// 4xx answer other than 429, or a PermanentError.
func IsPermanent(err error) bool {
	var pe *PermanentError
	if errors.As(err, &pe) {
		return true
	}
	var he *HTTPError
	return errors.As(err, &he) && !he.Retryable()
}
