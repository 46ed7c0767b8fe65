package model

import (
	"encoding/json"
	"fmt"

	"mlerl/codeactions"
	"mlerl/model/ppo"
)

// CheckpointVersion changes whenever the checkpoint layout does.
const CheckpointVersion = 1

// Checkpoint is everything needed to continue training exactly: weights, reference weights,
// optimiser state, settings and the RNG seed stream position.
type Checkpoint struct {
	Version   int         `json:"version"`
	Modality  string      `json:"modality"`
	Config    Config      `json:"config"`
	PPO       ppo.Config  `json:"ppo"`
	Iteration int         `json:"iteration"`
	Seed      uint64      `json:"seed"` // samples and updates derive their RNG from (seed, iteration, index)
	Params    *Params     `json:"params"`
	Ref       *Params     `json:"ref"`
	Adam      [3]ppo.Adam `json:"adam"`
}

// Checkpoint captures the policy.
func (p *Policy) Checkpoint(cfg ppo.Config, iteration int, seed uint64) Checkpoint {
	return Checkpoint{Version: CheckpointVersion, Modality: p.Lib.Modality, Config: p.Config, PPO: cfg,
		Iteration: iteration, Seed: seed, Params: p.Params, Ref: p.Ref, Adam: p.Adam}
}

// Marshal encodes the checkpoint.
func (c Checkpoint) Marshal() ([]byte, error) { return json.Marshal(c) }

// LoadCheckpoint decodes and checks a checkpoint and rebuilds the policy.
func LoadCheckpoint(data []byte) (*Policy, Checkpoint, error) {
	var c Checkpoint
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, c, fmt.Errorf("checkpoint is not readable JSON: %w", err)
	}
	if c.Version != CheckpointVersion {
		return nil, c, fmt.Errorf("checkpoint version %d, this build reads version %d", c.Version, CheckpointVersion)
	}
	lib, err := codeactions.For(c.Modality)
	if err != nil {
		return nil, c, err
	}
	if c.Params == nil || c.Ref == nil {
		return nil, c, fmt.Errorf("checkpoint has no weights")
	}
	if err := c.Params.check(lib); err != nil {
		return nil, c, err
	}
	if err := c.Ref.check(lib); err != nil {
		return nil, c, err
	}
	return &Policy{Lib: lib, Config: c.Config, Params: c.Params, Ref: c.Ref, Adam: c.Adam}, c, nil
}
