package activities

import (
	"context"
	"encoding/json"
	"errors"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/model"
)

// UpdatePolicy has the policy of in.Checkpoint learn from completed samples (the network: the
// duration-weighted PPO update; an llm: through the trainer) and stores the next checkpoint
// and the iteration's metrics.
func (a *Activities) UpdatePolicy(ctx context.Context, in UpdateInput) (UpdateResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return UpdateResult{}, badInput("%v", err)
	}
	ck, err := a.loadCheckpoint(ctx, store, in.Checkpoint)
	if err != nil {
		return UpdateResult{}, err
	}
	fb := ck.fallback
	if fb != nil {
		// The samples and their results are all kept; only the damaged checkpoint's own update
		// is lost, and this one applies to the earlier policy instead.
		in.Checkpoint = ck.key
		in.Metrics.CheckpointFallback = fb.String()
	}
	next, stats, err := ck.backend.update(ctx, store, in)
	if err != nil {
		return UpdateResult{}, err
	}
	res, err := finishUpdate(ctx, store, in, next, stats)
	if fb != nil {
		res.Fallback = fb.String()
	}
	return res, err
}

// finishUpdate stores the iteration's checkpoint and its metrics line (with the samples used).
func finishUpdate(ctx context.Context, store artifacts.Store, in UpdateInput, checkpoint []byte, stats model.Stats) (UpdateResult, error) {
	key, err := putCheckpoint(ctx, store, in.Iteration, checkpoint)
	if err != nil {
		return UpdateResult{}, err
	}
	m := in.Metrics
	m.PPO = stats
	m.Used = append(append([]string(nil), in.SampleIDs...), in.Stale...)
	if err := writeMetrics(ctx, store, m); err != nil {
		return UpdateResult{}, err
	}
	return UpdateResult{Checkpoint: key, Stats: stats}, nil
}

// writeMetrics stores the iteration's line and rebuilds runstore.MetricsKey from all lines, so
// a retried update never writes a line twice.
func writeMetrics(ctx context.Context, store artifacts.Store, m IterationMetrics) error {
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := store.Put(ctx, runstore.IterationMetricsKey(m.Iteration), line); err != nil {
		return err
	}
	var all []byte
	for it := 1; it <= m.Iteration; it++ {
		b, err := store.Get(ctx, runstore.IterationMetricsKey(it))
		if errors.Is(err, artifacts.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		all = append(append(all, b...), '\n')
	}
	return store.Put(ctx, runstore.MetricsKey, all)
}
