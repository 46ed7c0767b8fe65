package activities

import (
	"context"
	"hash/fnv"
	"math"
	"math/rand/v2"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/llm"
	"mlerl/model"
	"mlerl/reward"
)

// What both policy backends write about a sample and read back about an earlier one.

// sampleRecord is samples/<id>/sample.json: what PPO needs about a written program.
type sampleRecord struct {
	ID         string       `json:"id"`
	Iteration  int          `json:"iteration"`
	Purpose    string       `json:"purpose"`
	Checkpoint string       `json:"checkpoint"`
	Task       model.Task   `json:"task"`
	Prompt     model.Prompt `json:"prompt"`
	PrevID     string       `json:"prev_id,omitempty"`
	Actions    string       `json:"actions"`
	Sample     model.Sample `json:"sample"`
	Redraws    int          `json:"redraws,omitempty"`
	LLM        *llmSample   `json:"llm,omitempty"` // set instead of Sample by the llm backend
}

// llmSample is sample.json's record of an LLM completion (the trainer contract's fields).
type llmSample struct {
	Model        string      `json:"model"`
	FinishReason string      `json:"finish_reason"`
	Tokens       []llm.Token `json:"tokens,omitempty"`
	LogProb      float64     `json:"logprob"`
}

// rngFor derives a sample's random stream from the run seed and the sample id, so a retried
// or resumed activity writes exactly the same program.
func rngFor(seed uint64, id string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// previous loads a sample and its outcome as an improve prompt's previous solution.
func previous(ctx context.Context, store artifacts.Store, id string) (model.Previous, error) {
	s := runstore.Sample(id)
	var rec sampleRecord
	if err := getJSON(ctx, store, s.Record(), &rec); err != nil {
		return model.Previous{}, err
	}
	var res ExecuteResult
	if err := getJSON(ctx, store, s.Result(), &res); err != nil {
		return model.Previous{}, err
	}
	out, _ := store.Get(ctx, s.Output())
	var testing *float64
	if l := reward.Losses(string(out), "testing loss:"); len(l) > 0 && !math.IsNaN(l[len(l)-1]) && !math.IsInf(l[len(l)-1], 0) {
		testing = &l[len(l)-1]
	}
	return model.Previous{Tokens: rec.Sample.Tokens, Reward: res.Reward, LastMarker: res.Markers,
		Valid: res.Valid, Duration: res.DurationS, TestingLoss: testing}, nil
}

// putProgramSample stores a program the final answer wrote (a tuned variant, a guarded
// candidate) as a sample of its own: its plan, code and record. Writing it again writes the
// same files, so a retried attempt is harmless.
func putProgramSample(ctx context.Context, store artifacts.Store, rec sampleRecord, plan, code string) error {
	dir := runstore.Sample(rec.ID)
	if err := store.Put(ctx, dir.Plan(), []byte(plan)); err != nil {
		return err
	}
	if err := store.Put(ctx, dir.Program(), []byte(code)); err != nil {
		return err
	}
	return putJSON(ctx, store, dir.Record(), rec)
}
