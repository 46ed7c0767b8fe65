package activities

import (
	"context"

	"mlerl/artifacts"
	"mlerl/model"
	"mlerl/settings"
	"mlerl/tasks"
)

// A policyBackend is a policy loaded from one of its checkpoints: what writes a run's programs
// and learns from how they did. There are two: the network over code actions (network.go) and
// a language model (llmpolicy.go). The backend is chosen in two places only: by name when the
// run starts (initialCheckpoint), and from the checkpoint's contents ever after (backendOf).
type policyBackend interface {
	// sample writes one program per id of in into the store (in.Checkpoint is the checkpoint
	// that loaded); training's improve prompts build on entries of buffer.
	sample(ctx context.Context, store artifacts.Store, spec *tasks.Spec, in SampleInput, buffer []bufferEntry) ([]SampleRef, error)
	// update learns from in's samples and returns the next checkpoint's contents and the
	// update's statistics, which UpdatePolicy stores.
	update(ctx context.Context, store artifacts.Store, in UpdateInput) (checkpoint []byte, stats model.Stats, err error)
}

// initialCheckpoint builds checkpoint 0's contents for the backend in.Backend names.
func (a *Activities) initialCheckpoint(in InitPolicyInput, spec *tasks.Spec, desc model.Task) ([]byte, error) {
	switch in.Backend {
	case settings.BackendLLM:
		return initLLM(a.PolicyLLM, a.Trainer, in)
	case "", settings.BackendNetwork:
		return initNetwork(in, spec, desc)
	}
	return nil, badInput("policy backend %q: use %s or %s", in.Backend, settings.BackendNetwork, settings.BackendLLM)
}

// backendOf decodes a checkpoint's contents as the backend that wrote it: an llm checkpoint
// says so (llmCheckpoint.Backend); any other is the network's. An error means the contents are
// no checkpoint of either.
func (a *Activities) backendOf(data []byte) (policyBackend, error) {
	if ck, ok := llmCheckpointOf(data); ok {
		return &llmBackend{server: a.PolicyLLM, trainer: a.Trainer, layout: a.Layout, ck: ck}, nil
	}
	b, err := decodeNetwork(data)
	if err != nil {
		return nil, err
	}
	return b, nil
}
