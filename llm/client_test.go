package llm

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// reply is a chat-completions answer as vLLM writes it (two choices, out of index order).
const reply = `{"id":"cmpl-1","object":"chat.completion","model":"qwen","choices":[
 {"index":1,"message":{"role":"assistant","content":"second"},"finish_reason":"length",
  "logprobs":{"content":[{"token":"sec","logprob":-0.5,"bytes":[115],"top_logprobs":[]},{"token":"ond","logprob":-0.25,"top_logprobs":[]}]}},
 {"index":0,"message":{"role":"assistant","content":"first"},"finish_reason":"stop",
  "logprobs":{"content":[{"token":"first","logprob":-1.5,"top_logprobs":[]}]}}],
 "usage":{"prompt_tokens":10,"completion_tokens":3,"total_tokens":13}}`

func TestRequestShapeAndChoices(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			t.Errorf("request to %s %s", r.Method, r.URL.Path)
		}
		if a := r.Header.Get("Authorization"); a != "Bearer sk-test" {
			t.Errorf("Authorization %q", a)
		}
		if err := json.NewDecoder(r.Body).Decode(&got); err != nil {
			t.Error(err)
		}
		io.WriteString(w, reply)
	}))
	defer srv.Close()
	c := &Client{BaseURL: srv.URL + "/v1/", APIKey: "sk-test", Model: "qwen"}
	seed := 7
	msgs := []Message{{Role: "system", Content: "be brief"}, {Role: "user", Content: "hi"}}
	choices, err := c.Complete(context.Background(), msgs, Options{Temperature: 0.7, TopP: 0.95, MaxTokens: 1024, N: 2, Seed: &seed, LogProbs: true})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"model": "qwen", "temperature": 0.7, "top_p": 0.95, "max_tokens": 1024.0, "n": 2.0, "seed": 7.0, "logprobs": true}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("request field %s = %v, want %v", k, got[k], v)
		}
	}
	m, _ := json.Marshal(got["messages"])
	if string(m) != `[{"content":"be brief","role":"system"},{"content":"hi","role":"user"}]` {
		t.Errorf("messages %s", m)
	}
	if len(choices) != 2 || choices[0].Text != "first" || choices[1].Text != "second" {
		t.Fatalf("choices %+v, want them in index order", choices)
	}
	if choices[1].FinishReason != "length" || len(choices[1].Tokens) != 2 || choices[1].Tokens[0].Text != "sec" {
		t.Errorf("choice 1 = %+v", choices[1])
	}
	if lp := choices[1].LogProb(); lp != -0.75 {
		t.Errorf("log-prob %v, want -0.75", lp)
	}
}

func TestGreedyRequestsSendTemperatureZeroAndOmitUnset(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewDecoder(r.Body).Decode(&got)
		io.WriteString(w, `{"choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop"}]}`)
	}))
	defer srv.Close()
	choices, err := (&Client{BaseURL: srv.URL, Model: "m"}).Complete(context.Background(), nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := got["temperature"]; !ok || v != 0.0 {
		t.Errorf("temperature = %v (sent: %v), want 0 sent explicitly", v, ok)
	}
	for _, k := range []string{"top_p", "max_tokens", "n", "seed", "logprobs"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s sent although unset", k)
		}
	}
	if choices[0].Text != "x" || choices[0].Tokens != nil {
		t.Errorf("choice %+v", choices[0])
	}
}

// flaky answers with the given statuses and bodies in turn, then succeeds.
func flaky(t *testing.T, calls *atomic.Int32, statuses []int, bodies []string) *httptest.Server {
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		i := int(calls.Add(1)) - 1
		if i < len(statuses) {
			w.WriteHeader(statuses[i])
			io.WriteString(w, bodies[i])
			return
		}
		io.WriteString(w, `{"choices":[{"index":0,"message":{"content":"ok"},"finish_reason":"stop"}]}`)
	}))
}

func TestRetriesOnlyRateLimitsAndServerErrors(t *testing.T) {
	cases := []struct {
		name     string
		statuses []int
		bodies   []string
		calls    int32
		errHas   []string // empty: success
	}{
		{"500 then success is retried", []int{500}, []string{`{"message":"engine overloaded"}`}, 2, nil},
		{"429 and 503 are retried", []int{429, 503}, []string{`{"error":{"message":"slow down"}}`, ""}, 3, nil},
		{"400 is not retried and its message is surfaced", []int{400},
			[]string{`{"object":"error","message":"This model's maximum context length is 4096 tokens","type":"BadRequestError","code":400}`},
			1, []string{"HTTP 400", "maximum context length is 4096"}},
		{"Ollama's string error", []int{404}, []string{`{"error":"model \"qwen\" not found, try pulling it first"}`},
			1, []string{"HTTP 404", `model "qwen" not found`}},
		{"llama.cpp's error object", []int{401}, []string{`{"error":{"code":401,"message":"Invalid API Key","type":"authentication_error"}}`},
			1, []string{"Invalid API Key"}},
		{"a non-JSON error page is quoted", []int{403}, []string{"<html>Forbidden</html>"}, 1, []string{"HTTP 403", "<html>Forbidden</html>"}},
		{"gives up after the retries", []int{500, 500, 500, 500}, []string{"a", "b", "c", "still broken"},
			4, []string{"HTTP 500", "still broken"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := flaky(t, &calls, c.statuses, c.bodies)
			defer srv.Close()
			cl := &Client{BaseURL: srv.URL + "/v1", Model: "qwen", Backoff: time.Millisecond}
			choices, err := cl.Complete(context.Background(), []Message{{Role: "user", Content: "hi"}}, Options{})
			if calls.Load() != c.calls {
				t.Errorf("%d calls, want %d", calls.Load(), c.calls)
			}
			if len(c.errHas) == 0 {
				if err != nil || choices[0].Text != "ok" {
					t.Fatalf("err = %v, choices %+v", err, choices)
				}
				return
			}
			if err == nil {
				t.Fatal("no error")
			}
			t.Log(err)
			for _, s := range append(c.errHas, srv.URL+"/v1/chat/completions") {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("error %q does not mention %q", err, s)
				}
			}
			var he *HTTPError
			if !errors.As(err, &he) {
				t.Errorf("error %T is not an *HTTPError", err)
			}
		})
	}
}

func TestMalformedAnswersTimeoutsAndDeadServers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/bad/chat/completions":
			io.WriteString(w, `{"choices":[{"index":0,"message":`)
		case "/empty/chat/completions":
			io.WriteString(w, `{"choices":[]}`)
		case "/slow/chat/completions":
			io.Copy(io.Discard, r.Body) // then the server notices the client hanging up
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
		}
	}))
	defer srv.Close()
	dead := httptest.NewServer(http.NotFoundHandler())
	deadURL := dead.URL
	dead.Close()
	cases := []struct {
		base   string
		errHas string
	}{
		{srv.URL + "/bad", "malformed JSON"},
		{srv.URL + "/empty", "no choices"},
		{srv.URL + "/slow", "timed out"},
		{deadURL, "connection refused"},
	}
	for _, c := range cases {
		cl := &Client{BaseURL: c.base, Model: "m", HTTP: &http.Client{Timeout: 100 * time.Millisecond}}
		_, err := cl.Complete(context.Background(), nil, Options{})
		t.Log(err)
		if err == nil || !strings.Contains(err.Error(), c.errHas) || !strings.Contains(err.Error(), c.base+"/chat/completions") {
			t.Errorf("%s: err = %v, want one naming the URL and %q", c.base, err, c.errHas)
		}
	}
}
