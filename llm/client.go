package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Message is one chat message; Role is "system", "user" or "assistant".
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Options are the sampling settings of one request.
type Options struct {
	// Temperature is always sent: 0 must mean greedy, not the server's default.
	Temperature float64
	TopP        float64 // 0: the server's default (1)
	MaxTokens   int     // 0: the server's default
	// N is the number of completions; 0 means 1. Some servers (Ollama) ignore it and return one.
	N        int
	Seed     *int // nil: unseeded
	LogProbs bool // ask for the sampled tokens' log-probs (PPO needs them)
}

// Token is one sampled token and its log-probability at sampling time.
type Token struct {
	Text    string  `json:"token"`
	LogProb float64 `json:"logprob"`
}

// Choice is one completion.
type Choice struct {
	Text         string
	FinishReason string  // "stop", or "length" when MaxTokens cut the completion short
	Tokens       []Token // nil unless Options.LogProbs was set and the server supports it
}

// LogProb is the completion's log-probability: the sum over its tokens.
func (c Choice) LogProb() float64 {
	s := 0.0
	for _, t := range c.Tokens {
		s += t.LogProb
	}
	return s
}

// Client talks to an OpenAI-compatible chat-completions server.
type Client struct {
	// BaseURL includes the API version, e.g. http://localhost:8000/v1 (vLLM),
	// http://localhost:8080/v1 (llama.cpp server) or http://localhost:11434/v1 (Ollama).
	BaseURL string
	APIKey  string // sent as a Bearer token when set
	Model   string
	HTTP    *http.Client // nil: a client with a 10-minute timeout (CPU servers are slow)
	// MaxRetries bounds the extra attempts after a 429 or 5xx answer: 0 means 3, negative none.
	MaxRetries int
	Backoff    time.Duration // the first wait between attempts, doubled each time; 0: 1s
}

// HTTPError is a non-2xx answer; Message is the server's own explanation.
type HTTPError struct {
	URL        string
	Status     int
	Message    string
	retryAfter time.Duration
}

func (e *HTTPError) Error() string {
	return fmt.Sprintf("POST %s: HTTP %d %s: %s", e.URL, e.Status, http.StatusText(e.Status), e.Message)
}

// Retryable reports whether the server may answer differently later (rate limit, overload).
func (e *HTTPError) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status >= 500
}

type request struct {
	Model       string    `json:"model"`
	Messages    []Message `json:"messages"`
	Temperature float64   `json:"temperature"`
	TopP        float64   `json:"top_p,omitempty"`
	MaxTokens   int       `json:"max_tokens,omitempty"`
	N           int       `json:"n,omitempty"`
	Seed        *int      `json:"seed,omitempty"`
	LogProbs    bool      `json:"logprobs,omitempty"`
}

type response struct {
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
		LogProbs     *struct {
			Content []Token `json:"content"`
		} `json:"logprobs"`
	} `json:"choices"`
}

// Endpoint is the URL requests go to.
func (c *Client) Endpoint() string { return strings.TrimRight(c.BaseURL, "/") + "/chat/completions" }

// Complete asks for completions of messages. Rate limits and server errors are retried with
// backoff; other failures return at once with an error naming the URL.
func (c *Client) Complete(ctx context.Context, messages []Message, opts Options) ([]Choice, error) {
	body, err := json.Marshal(request{Model: c.Model, Messages: messages, Temperature: opts.Temperature,
		TopP: opts.TopP, MaxTokens: opts.MaxTokens, N: opts.N, Seed: opts.Seed, LogProbs: opts.LogProbs})
	if err != nil {
		return nil, err
	}
	retries := c.MaxRetries
	if retries == 0 {
		retries = 3
	}
	wait := c.Backoff
	if wait <= 0 {
		wait = time.Second
	}
	for attempt := 0; ; attempt++ {
		choices, err := c.post(ctx, body)
		var he *HTTPError
		if err == nil || !errors.As(err, &he) || !he.Retryable() || attempt >= retries {
			return choices, err
		}
		pause := max(wait, min(he.retryAfter, time.Minute))
		select {
		case <-time.After(pause):
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (gave up retrying: %v)", err, ctx.Err())
		}
		wait *= 2
	}
}

func (c *Client) post(ctx context.Context, body []byte) ([]Choice, error) {
	endpoint := c.Endpoint()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("LLM endpoint %q: %w", endpoint, err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+c.APIKey)
	}
	hc := c.HTTP
	if hc == nil {
		hc = &http.Client{Timeout: 10 * time.Minute}
	}
	resp, err := hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // its message repeats the URL
		}
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
			return nil, fmt.Errorf("POST %s: timed out waiting for the server: %w", endpoint, err)
		}
		return nil, fmt.Errorf("POST %s: %w", endpoint, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("POST %s: reading the response: %w", endpoint, err)
	}
	if resp.StatusCode/100 != 2 {
		e := &HTTPError{URL: endpoint, Status: resp.StatusCode, Message: serverMessage(raw)}
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil {
			e.retryAfter = time.Duration(s) * time.Second
		}
		return nil, e
	}
	var r response
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("POST %s: malformed JSON in the response (%v): %s", endpoint, err, excerpt(raw))
	}
	if len(r.Choices) == 0 {
		return nil, fmt.Errorf("POST %s: the response has no choices: %s", endpoint, excerpt(raw))
	}
	sort.SliceStable(r.Choices, func(i, j int) bool { return r.Choices[i].Index < r.Choices[j].Index })
	out := make([]Choice, len(r.Choices))
	for i, ch := range r.Choices {
		out[i] = Choice{Text: ch.Message.Content, FinishReason: ch.FinishReason}
		if ch.LogProbs != nil {
			out[i].Tokens = ch.LogProbs.Content
		}
	}
	return out, nil
}

// serverMessage digs the explanation out of the error formats in use: OpenAI and llama.cpp
// ({"error": {"message": ...}}), vLLM ({"message": ...}) and Ollama ({"error": "..."}).
func serverMessage(raw []byte) string {
	var e struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(raw, &e) == nil {
		var s string
		var obj struct {
			Message string `json:"message"`
		}
		switch {
		case json.Unmarshal(e.Error, &s) == nil && s != "":
			return s
		case json.Unmarshal(e.Error, &obj) == nil && obj.Message != "":
			return obj.Message
		case e.Message != "":
			return e.Message
		}
	}
	return excerpt(raw)
}

func excerpt(raw []byte) string {
	s := strings.TrimSpace(string(raw))
	if s == "" {
		return "(empty body)"
	}
	if len(s) > 500 {
		s = s[:500] + "..."
	}
	return s
}
