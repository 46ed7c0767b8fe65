package activities

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mlerl/artifacts"
	"mlerl/llm"
	"mlerl/model"
	"mlerl/tasks"
)

// Policy backends.
const (
	BackendNetwork = "network" // the gorgonia network over code actions (package model)
	BackendLLM     = "llm"     // a language model behind an OpenAI-compatible server
)

// LLMPolicy configures an LLM policy's sampling. The server and the trainer are the gpu
// worker's (Activities.PolicyLLM, Activities.Trainer); the run records what it samples with.
type LLMPolicy struct {
	Model       string  `json:"model"` // the initial model reference (default: the worker's --policy-model)
	Temperature float64 `json:"temperature"`
	TopP        float64 `json:"top_p"`
	MaxTokens   int     `json:"max_tokens"`
}

// PaperLLMPolicy is the paper's sampling: temperature 0.7, top-p 1, 1024 new tokens.
func PaperLLMPolicy() LLMPolicy { return LLMPolicy{Temperature: 0.7, TopP: 1, MaxTokens: 1024} }

// llmCheckpoint is what an LLM policy's checkpoint holds: the model reference the server
// samples from (the weights live with the trainer and the server, not in the run's store).
type llmCheckpoint struct {
	Backend   string    `json:"backend"` // BackendLLM; network checkpoints have no such field
	Model     string    `json:"model"`
	Iteration int       `json:"iteration"`
	Sampling  LLMPolicy `json:"sampling"`
}

// llmCheckpointOf decodes data as an LLM checkpoint; ok is false for a network checkpoint.
func llmCheckpointOf(data []byte) (llmCheckpoint, bool) {
	var c llmCheckpoint
	if json.Unmarshal(data, &c) != nil || c.Backend != BackendLLM {
		return llmCheckpoint{}, false
	}
	return c, true
}

// llmSample is sample.json's record of an LLM completion (the trainer contract's fields).
type llmSample struct {
	Model        string      `json:"model"`
	FinishReason string      `json:"finish_reason"`
	Tokens       []llm.Token `json:"tokens,omitempty"`
	LogProb      float64     `json:"logprob"`
}

// initLLM writes checkpoint 0 of an LLM policy.
func (a *Activities) initLLM(ctx context.Context, store artifacts.Store, in InitPolicyInput, desc model.Task) (InitPolicyResult, error) {
	if a.PolicyLLM == nil {
		return InitPolicyResult{}, badInput("the llm policy needs a model server: start the gpu worker with --policy-url and --policy-model")
	}
	if in.PPO.LearningRate > 0 && a.Trainer == nil {
		return InitPolicyResult{}, badInput("the llm policy learns through a trainer service (llm/doc.go): start the gpu worker with --trainer-url, or pass --learning-rate 0 to sample from a fixed model")
	}
	s := in.LLM
	if s.Model == "" {
		s.Model = a.PolicyLLM.Model
	}
	if s.Model == "" {
		return InitPolicyResult{}, badInput("the llm policy names no model: pass --policy-model")
	}
	if s.Temperature <= 0 {
		s.Temperature = PaperLLMPolicy().Temperature
	}
	if s.TopP <= 0 || s.TopP > 1 {
		s.TopP = PaperLLMPolicy().TopP
	}
	if s.MaxTokens <= 0 {
		s.MaxTokens = PaperLLMPolicy().MaxTokens
	}
	data, err := json.Marshal(llmCheckpoint{Backend: BackendLLM, Model: s.Model, Sampling: s})
	if err != nil {
		return InitPolicyResult{}, err
	}
	key := CheckpointKey(0)
	if err := putCheckpoint(ctx, store, key, data); err != nil {
		return InitPolicyResult{}, err
	}
	return InitPolicyResult{Checkpoint: key, Task: desc}, nil
}

// sampleLLM has the model write one solution per id. A retried activity keeps the samples
// an earlier attempt finished (completions are slow and not reproducible on every server).
func (a *Activities) sampleLLM(ctx context.Context, store artifacts.Store, spec *tasks.Spec, in SampleInput, ck llmCheckpoint, buffer []bufferEntry) ([]SampleRef, error) {
	if a.PolicyLLM == nil {
		return nil, badInput("checkpoint %s is an llm policy but this gpu worker has no model server: start it with --policy-url", in.Checkpoint)
	}
	files, snippet, err := promptContext(spec, a.Layout.Dirs(spec.ID, tasks.SplitTest).Public)
	if err != nil {
		return nil, err
	}
	client := *a.PolicyLLM
	client.Model = ck.Model
	refs := make([]SampleRef, 0, len(in.IDs))
	for i, id := range in.IDs {
		var done sampleRecord
		if err := getJSON(ctx, store, sampleKey(id, "sample.json"), &done); err == nil && done.LLM != nil {
			refs = append(refs, SampleRef{ID: id, Kind: done.Prompt.Kind, Prev: done.PrevID, Actions: done.Actions})
			continue
		}
		rng := rngFor(in.Seed, id)
		prompt, prevID := model.Prompt{Kind: model.KindScratch}, ""
		switch {
		case in.Purpose == PurposeEvalImprove:
			prevID = in.ImproveOf[i]
		case in.Purpose == PurposeTrain && len(buffer) > 0 && rng.Float64() < in.ImproveFraction:
			prevID = pickPrevious(buffer, in.ImproveFrom, rng).SampleID
		}
		var prevLLM *llm.Previous
		if prevID != "" {
			prev, err := previous(ctx, store, prevID)
			if err != nil {
				return nil, err
			}
			prompt = model.Prompt{Kind: model.KindImprove, Prev: &prev}
			if prevLLM, err = llmPrevious(ctx, store, prevID); err != nil {
				return nil, err
			}
		}
		messages := llm.PromptFor(spec, files, snippet, prevLLM)
		seed := int(rng.Int32())
		choices, err := client.Complete(ctx, messages, llm.Options{Temperature: ck.Sampling.Temperature,
			TopP: ck.Sampling.TopP, MaxTokens: ck.Sampling.MaxTokens, Seed: &seed, LogProbs: true})
		if err != nil {
			if llm.IsPermanent(err) {
				return nil, badInput("the policy's model server refused the request (model %q): %v", ck.Model, err)
			}
			return nil, err
		}
		ch := choices[0]
		plan, code, perr := llm.ParseSolution(ch.Text)
		if perr != nil {
			// A reply without a program is the policy's failure, not the platform's: it runs
			// as an empty program and earns the failure reward.
			plan, code = fmt.Sprintf("(no program could be parsed from the reply: %v)", perr), ""
		}
		actions := fmt.Sprintf("llm=%s finish=%s tokens=%d", ck.Model, ch.FinishReason, len(ch.Tokens))
		rec := sampleRecord{ID: id, Iteration: in.Iteration, Purpose: in.Purpose, Checkpoint: in.Checkpoint,
			Task: in.Descriptor, Prompt: prompt, PrevID: prevID, Actions: actions,
			LLM: &llmSample{Model: ck.Model, FinishReason: ch.FinishReason, Tokens: ch.Tokens, LogProb: ch.LogProb()}}
		if err := putJSON(ctx, store, sampleKey(id, "prompt.json"), messages); err != nil {
			return nil, err
		}
		if err := store.Put(ctx, sampleKey(id, "completion.txt"), []byte(ch.Text)); err != nil {
			return nil, err
		}
		planDoc := fmt.Sprintf("# Plan (%s, %s)\n\n%s\n", prompt.Kind, id, strings.TrimSpace(plan))
		if err := store.Put(ctx, sampleKey(id, "plan.md"), []byte(planDoc)); err != nil {
			return nil, err
		}
		if err := store.Put(ctx, sampleKey(id, "program.py"), []byte(code)); err != nil {
			return nil, err
		}
		// sample.json last: its presence marks the sample finished for a retried attempt.
		if err := putJSON(ctx, store, sampleKey(id, "sample.json"), rec); err != nil {
			return nil, err
		}
		refs = append(refs, SampleRef{ID: id, Kind: prompt.Kind, Prev: prevID, Actions: actions})
	}
	return refs, nil
}

// llmPrevious loads a finished sample as an improve prompt's previous solution.
func llmPrevious(ctx context.Context, store artifacts.Store, id string) (*llm.Previous, error) {
	plan, err := store.Get(ctx, sampleKey(id, "plan.md"))
	if err != nil {
		return nil, err
	}
	code, err := store.Get(ctx, sampleKey(id, "program.py"))
	if err != nil {
		return nil, err
	}
	var res ExecuteResult
	if err := getJSON(ctx, store, sampleKey(id, "result.json"), &res); err != nil {
		return nil, err
	}
	out, _ := store.Get(ctx, sampleKey(id, "output.txt"))
	p := string(plan)
	if _, body, ok := strings.Cut(p, "\n\n"); ok && strings.HasPrefix(p, "# Plan") {
		p = body // drop our own heading
	}
	prev := &llm.Previous{Plan: p, Code: string(code), Output: string(out), DurationS: res.DurationS, Reason: res.Reason}
	if res.Valid {
		prev.Score = res.Score
	}
	return prev, nil
}

// promptContext lists the public files (folders as "name/ (N files)") and the first rows of
// the training file, as the agent's prompt shows them.
func promptContext(spec *tasks.Spec, public string) ([]string, string, error) {
	entries, err := os.ReadDir(public)
	if err != nil {
		return nil, "", badInput("task %s: reading its public data: %v", spec.ID, err)
	}
	var files []string
	for _, e := range entries {
		if e.IsDir() {
			n, _ := os.ReadDir(filepath.Join(public, e.Name()))
			files = append(files, fmt.Sprintf("%s/ (%d files)", e.Name(), len(n)))
			continue
		}
		files = append(files, e.Name())
	}
	sort.Strings(files)
	rows := spec.Prompt.SnippetRows
	if rows <= 0 {
		rows = 2
	}
	snippet, err := headLines(filepath.Join(public, spec.Files.Train), rows+1, 4000)
	if err != nil {
		return nil, "", err
	}
	return files, snippet, nil
}

// headLines is the first n lines of file, at most max bytes (a JSON file may be one long line).
func headLines(file string, n, max int) (string, error) {
	f, err := os.Open(file)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var b strings.Builder
	r := bufio.NewReader(f)
	for i := 0; i < n && b.Len() < max; i++ {
		line, err := r.ReadString('\n')
		b.WriteString(line)
		if err != nil {
			break
		}
	}
	s := b.String()
	if len(s) > max {
		s = s[:max] + "..."
	}
	return strings.TrimRight(s, "\n"), nil
}

// updateLLM has the trainer service update the model, or, with learning rate 0, keeps it.
func (a *Activities) updateLLM(ctx context.Context, store artifacts.Store, in UpdateInput, ck llmCheckpoint) (UpdateResult, error) {
	next := ck
	next.Iteration = in.Iteration
	var stats model.Stats
	if in.PPO.LearningRate > 0 {
		if a.Trainer == nil {
			return UpdateResult{}, badInput("checkpoint %s is an llm policy and needs a trainer: start the gpu worker with --trainer-url", in.Checkpoint)
		}
		ppoJSON, err := json.Marshal(in.PPO)
		if err != nil {
			return UpdateResult{}, err
		}
		resp, err := a.Trainer.Update(ctx, llm.UpdateRequest{Run: in.Run, Model: ck.Model, Iteration: in.Iteration,
			SampleIDs: in.SampleIDs, Stale: in.Stale, PPO: ppoJSON, Seed: in.Seed})
		if err != nil {
			if llm.IsPermanent(err) {
				return UpdateResult{}, badInput("the trainer refused update %d: %v", in.Iteration, err)
			}
			return UpdateResult{}, err
		}
		if len(resp.Stats) > 0 {
			if err := json.Unmarshal(resp.Stats, &stats); err != nil {
				return UpdateResult{}, badInput("the trainer's stats for update %d are not PPO statistics: %v", in.Iteration, err)
			}
		}
		next.Model = resp.Model
	}
	data, err := json.Marshal(next)
	if err != nil {
		return UpdateResult{}, err
	}
	return finishUpdate(ctx, store, in, data, stats)
}
