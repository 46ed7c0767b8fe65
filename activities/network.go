package activities

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/model"
	"mlerl/settings"
	"mlerl/tasks"
)

// networkBackend is the network policy over code actions (package model): it writes a program
// as a sequence of code actions that its library renders, and learns by PPO.
type networkBackend struct {
	policy *model.Policy
}

// initNetwork builds checkpoint 0 of a network policy: the reproducible warm start, or the
// uniform policy.
func initNetwork(in InitPolicyInput, spec *tasks.Spec, desc model.Task) ([]byte, error) {
	lib, err := codeactions.For(spec.Modality)
	if err != nil {
		return nil, badInput("%v", err)
	}
	var p *model.Policy
	switch in.Init {
	case "", settings.InitWarmStart:
		p, err = model.WarmStart(lib, model.Config(in.Policy), desc, in.Seed)
	case settings.InitUniform:
		p, err = model.Uniform(lib, model.Config(in.Policy))
	default:
		return nil, badInput("initial policy %q: use %s or %s", in.Init, settings.InitWarmStart, settings.InitUniform)
	}
	if err != nil {
		return nil, badInput("%v", err)
	}
	return p.Checkpoint(in.PPO, 0, in.Seed).Marshal()
}

// decodeNetwork decodes a network checkpoint into a policy of its own.
func decodeNetwork(data []byte) (*networkBackend, error) {
	p, _, err := model.LoadCheckpoint(data)
	if err != nil {
		return nil, err
	}
	return &networkBackend{policy: p}, nil
}

// sample draws each program's code actions and renders them; with in.RedrawRepeats, a training
// program that writes the same submission as one already sampled in the run (the same program,
// or one differing only in what it prints: Library.SubmissionKey) is drawn again.
func (b *networkBackend) sample(ctx context.Context, store artifacts.Store, spec *tasks.Spec, in SampleInput, buffer []bufferEntry) ([]SampleRef, error) {
	p := b.policy
	schema := codeactions.SchemaOf(spec)
	var seen map[string]string // hash of the submission key's program -> first sample; nil: no redraws
	if in.Purpose == PurposeTrain && in.RedrawRepeats > 0 {
		seen = map[string]string{}
		if err := getJSON(ctx, store, runstore.SeenKey, &seen); err != nil && !errors.Is(err, artifacts.ErrNotFound) {
			return nil, err
		}
	}
	refs := make([]SampleRef, 0, len(in.IDs))
	for i, id := range in.IDs {
		rng := rngFor(in.Seed, id)
		prompt := model.Prompt{Kind: model.KindScratch}
		prevID := ""
		switch {
		case in.Purpose == PurposeEvalImprove:
			prev, err := previous(ctx, store, in.ImproveOf[i])
			if err != nil {
				return nil, err
			}
			prompt, prevID = model.Prompt{Kind: model.KindImprove, Prev: &prev}, in.ImproveOf[i]
		case in.Purpose == PurposeTrain && len(buffer) > 0 && rng.Float64() < in.ImproveFraction:
			e := pickPrevious(buffer, in.ImproveFrom, rng)
			prev := e.Prev
			prompt, prevID = model.Prompt{Kind: model.KindImprove, Prev: &prev}, e.SampleID
		}
		// Redraws keep the prompt: the sample stays an answer to it, with its own log-probs.
		var s model.Sample
		var prog codeactions.Program
		var err error
		redraws := 0
		for {
			if prompt.Kind == model.KindImprove && in.ImproveEdit > 0 {
				s = p.Edit(in.Descriptor, prompt, in.ImproveEdit, rng)
			} else {
				s = p.Sample(in.Descriptor, prompt, rng)
			}
			if prog, err = p.Lib.Render(s.Tokens, schema); err != nil {
				return nil, err
			}
			if seen == nil {
				break
			}
			// Programs that differ only in what they print write one submission: a repeat.
			key, err := p.Lib.SubmissionKey(s.Tokens, schema)
			if err != nil {
				return nil, err
			}
			keyProg, err := p.Lib.Render(key, schema)
			if err != nil {
				return nil, err
			}
			h := artifacts.ContentHash([]byte(keyProg.Code))
			// A retried activity meets its own earlier entries: those are not repeats.
			if first, ok := seen[h]; !ok || first == id || redraws >= in.RedrawRepeats {
				if !ok {
					seen[h] = id
				}
				break
			}
			redraws++
		}
		rec := sampleRecord{ID: id, Iteration: in.Iteration, Purpose: in.Purpose, Checkpoint: in.Checkpoint,
			Task: in.Descriptor, Prompt: prompt, PrevID: prevID, Actions: p.Lib.Describe(s.Tokens), Sample: s, Redraws: redraws}
		dir := runstore.Sample(id)
		plan := fmt.Sprintf("# Plan (%s, %s)\n\n%s\n", prompt.Kind, id, prog.Plan)
		if err := store.Put(ctx, dir.Plan(), []byte(plan)); err != nil {
			return nil, err
		}
		if err := store.Put(ctx, dir.Program(), []byte(prog.Code)); err != nil {
			return nil, err
		}
		if err := putJSON(ctx, store, dir.Record(), rec); err != nil {
			return nil, err
		}
		refs = append(refs, SampleRef{ID: id, Kind: prompt.Kind, Prev: prevID, Actions: rec.Actions, Redraws: redraws})
	}
	if seen != nil {
		if err := putJSON(ctx, store, runstore.SeenKey, seen); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// update runs the duration-weighted PPO update on the samples (and the stale ones that ran).
// The policy was decoded for this call, so cached policies stay unchanged.
func (b *networkBackend) update(ctx context.Context, store artifacts.Store, in UpdateInput) ([]byte, model.Stats, error) {
	var batch []model.Experience
	stale := map[string]bool{}
	for _, id := range in.Stale {
		stale[id] = true
	}
	for _, id := range append(append([]string(nil), in.SampleIDs...), in.Stale...) {
		dir := runstore.Sample(id)
		var rec sampleRecord
		if err := getJSON(ctx, store, dir.Record(), &rec); err != nil {
			return nil, model.Stats{}, err
		}
		var res ExecuteResult
		if err := getJSON(ctx, store, dir.Result(), &res); err != nil {
			if stale[id] && errors.Is(err, artifacts.ErrNotFound) {
				continue // cancelled before it ever ran: nothing to learn from
			}
			return nil, model.Stats{}, err
		}
		batch = append(batch, model.Experience{Task: rec.Task, Prompt: rec.Prompt, Tokens: rec.Sample.Tokens,
			LogProbs: rec.Sample.LogProbs, Values: rec.Sample.Values, Reward: res.Reward, Duration: res.DurationS, Kept: rec.Sample.Kept})
	}
	rng := rand.New(rand.NewPCG(in.Seed, uint64(in.Iteration)))
	stats, err := b.policy.Update(batch, in.PPO, rng)
	if err != nil {
		return nil, model.Stats{}, badInput("PPO update: %v", err)
	}
	out, err := b.policy.Checkpoint(in.PPO, in.Iteration, in.Seed).Marshal()
	if err != nil {
		return nil, model.Stats{}, err
	}
	return out, stats, nil
}
