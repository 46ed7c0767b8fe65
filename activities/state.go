package activities

import (
	"context"

	"mlerl/artifacts/runstore"
)

// SaveState stores the run's state for the next continue-as-new segment and returns its key.
func (a *Activities) SaveState(ctx context.Context, in SaveStateInput) (string, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return "", badInput("%v", err)
	}
	key := runstore.SegmentKey(in.State.Segments)
	if err := putJSON(ctx, store, key, in.State); err != nil {
		return "", err
	}
	return key, nil
}

// LoadState reads a state saved by SaveState.
func (a *Activities) LoadState(ctx context.Context, in LoadStateInput) (RunState, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return RunState{}, badInput("%v", err)
	}
	var st RunState
	if err := getJSON(ctx, store, in.Key, &st); err != nil {
		return RunState{}, err
	}
	return st, nil
}
