package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/llm"
	"mlerl/model"
	"mlerl/settings"
	"mlerl/tasks"
)

// llmBackend is a language model behind an OpenAI-compatible server (server): it writes a plan
// and a program as an agent would, and learns through the trainer service (llm/doc.go).
type llmBackend struct {
	server  *llm.Client  // nil on a worker without one: sampling is refused
	trainer *llm.Trainer // nil on a worker without one: learning is refused
	layout  tasks.Layout // where the prompt's view of the task's public files comes from
	ck      llmCheckpoint
}

// llmCheckpoint is what an LLM policy's checkpoint holds: the model reference the server
// samples from (the weights live with the trainer and the server, not in the run's store).
type llmCheckpoint struct {
	Backend   settings.Backend `json:"backend"` // llm; network checkpoints have no such field
	Model     string           `json:"model"`
	Iteration int              `json:"iteration"`
	Sampling  LLMPolicy        `json:"sampling"`
}

// llmCheckpointOf decodes data as an LLM checkpoint; ok is false for a network checkpoint.
func llmCheckpointOf(data []byte) (llmCheckpoint, bool) {
	var c llmCheckpoint
	if json.Unmarshal(data, &c) != nil || c.Backend != settings.BackendLLM {
		return llmCheckpoint{}, false
	}
	return c, true
}

// initLLM builds checkpoint 0 of an LLM policy: the model to start from and how to sample it.
func initLLM(server *llm.Client, trainer *llm.Trainer, in InitPolicyInput) ([]byte, error) {
	if server == nil {
		return nil, badInput("the llm policy needs a model server: start the gpu worker with --policy-url and --policy-model")
	}
	if in.PPO.LearningRate > 0 && trainer == nil {
		return nil, badInput("the llm policy learns through a trainer service (llm/doc.go): start the gpu worker with --trainer-url, or pass --learning-rate 0 to sample from a fixed model")
	}
	s := in.LLM
	if s.Model == "" {
		s.Model = server.Model
	}
	if s.Model == "" {
		return nil, badInput("the llm policy names no model: pass --policy-model")
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
	return json.Marshal(llmCheckpoint{Backend: settings.BackendLLM, Model: s.Model, Sampling: s})
}

// sample has the model write one solution per id. A retried activity keeps the samples an
// earlier attempt finished (completions are slow and not reproducible on every server).
func (b *llmBackend) sample(ctx context.Context, store artifacts.Store, spec *tasks.Spec, in SampleInput, buffer []bufferEntry) ([]SampleRef, error) {
	ck := b.ck
	if b.server == nil {
		return nil, badInput("checkpoint %s is an llm policy but this gpu worker has no model server: start it with --policy-url", in.Checkpoint)
	}
	files, snippet, err := promptContext(spec, b.layout.Dirs(spec.ID, tasks.SplitTest).Public)
	if err != nil {
		return nil, err
	}
	client := *b.server
	client.Model = ck.Model
	refs := make([]SampleRef, 0, len(in.IDs))
	for i, id := range in.IDs {
		dir := runstore.Sample(id)
		var done sampleRecord
		if err := getJSON(ctx, store, dir.Record(), &done); err == nil && done.LLM != nil {
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
		if err := putJSON(ctx, store, dir.Prompt(), messages); err != nil {
			return nil, err
		}
		if err := store.Put(ctx, dir.Completion(), []byte(ch.Text)); err != nil {
			return nil, err
		}
		planDoc := fmt.Sprintf("# Plan (%s, %s)\n\n%s\n", prompt.Kind, id, strings.TrimSpace(plan))
		if err := store.Put(ctx, dir.Plan(), []byte(planDoc)); err != nil {
			return nil, err
		}
		if err := store.Put(ctx, dir.Program(), []byte(code)); err != nil {
			return nil, err
		}
		// sample.json last: its presence marks the sample finished for a retried attempt.
		if err := putJSON(ctx, store, dir.Record(), rec); err != nil {
			return nil, err
		}
		refs = append(refs, SampleRef{ID: id, Kind: prompt.Kind, Prev: prevID, Actions: actions})
	}
	return refs, nil
}

// llmPrevious loads a finished sample as an improve prompt's previous solution.
func llmPrevious(ctx context.Context, store artifacts.Store, id string) (*llm.Previous, error) {
	dir := runstore.Sample(id)
	plan, err := store.Get(ctx, dir.Plan())
	if err != nil {
		return nil, err
	}
	code, err := store.Get(ctx, dir.Program())
	if err != nil {
		return nil, err
	}
	var res ExecuteResult
	if err := getJSON(ctx, store, dir.Result(), &res); err != nil {
		return nil, err
	}
	out, _ := store.Get(ctx, dir.Output())
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

// update has the trainer service update the model, or, with learning rate 0, keeps it; the next
// checkpoint names the model to sample from.
func (b *llmBackend) update(ctx context.Context, store artifacts.Store, in UpdateInput) ([]byte, model.Stats, error) {
	ck := b.ck
	next := ck
	next.Iteration = in.Iteration
	var stats model.Stats
	if in.PPO.LearningRate > 0 {
		if b.trainer == nil {
			return nil, model.Stats{}, badInput("checkpoint %s is an llm policy and needs a trainer: start the gpu worker with --trainer-url", in.Checkpoint)
		}
		ppoJSON, err := json.Marshal(in.PPO)
		if err != nil {
			return nil, model.Stats{}, err
		}
		resp, err := b.trainer.Update(ctx, llm.UpdateRequest{Run: in.Run, Model: ck.Model, Iteration: in.Iteration,
			SampleIDs: in.SampleIDs, Stale: in.Stale, PPO: ppoJSON, Seed: in.Seed})
		if err != nil {
			if llm.IsPermanent(err) {
				return nil, model.Stats{}, badInput("the trainer refused update %d: %v", in.Iteration, err)
			}
			return nil, model.Stats{}, err
		}
		if len(resp.Stats) > 0 {
			if err := json.Unmarshal(resp.Stats, &stats); err != nil {
				return nil, model.Stats{}, badInput("the trainer's stats for update %d are not PPO statistics: %v", in.Iteration, err)
			}
		}
		next.Model = resp.Model
	}
	data, err := json.Marshal(next)
	if err != nil {
		return nil, model.Stats{}, err
	}
	return data, stats, nil
}
