package activities

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"sort"

	"mlerl/artifacts"
	"mlerl/model"
	"mlerl/settings"
)

// The self-improve buffer: earlier solutions that improve prompts build on.

// bufferEntry is one previous solution that improve prompts can build on.
type bufferEntry struct {
	SampleID string         `json:"sample_id"`
	Prev     model.Previous `json:"prev"`
}

// readBuffer reads a run's buffer; a buffer not written yet is empty.
func readBuffer(ctx context.Context, store artifacts.Store, key string) ([]bufferEntry, error) {
	var buffer []bufferEntry
	if err := getJSON(ctx, store, key, &buffer); err != nil && !errors.Is(err, artifacts.ErrNotFound) {
		return nil, err
	}
	return buffer, nil
}

// RefreshBuffer adds completed samples to the self-improve buffer, keeping the best half of the
// capacity by reward and the most recent half (improve prompts draw uniformly from it).
func (a *Activities) RefreshBuffer(ctx context.Context, in BufferInput) (BufferResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return BufferResult{}, badInput("%v", err)
	}
	buffer, err := readBuffer(ctx, store, in.Buffer)
	if err != nil {
		return BufferResult{}, err
	}
	seen := map[string]bool{}
	for _, e := range buffer {
		seen[e.SampleID] = true
	}
	for _, id := range in.SampleIDs {
		if seen[id] {
			continue // a retried refresh adds nothing twice
		}
		prev, err := previous(ctx, store, id)
		if err != nil {
			return BufferResult{}, err
		}
		buffer = append(buffer, bufferEntry{SampleID: id, Prev: prev})
	}
	buffer = trimBuffer(buffer, in.Capacity)
	if err := putJSON(ctx, store, in.Buffer, buffer); err != nil {
		return BufferResult{}, err
	}
	return BufferResult{Size: len(buffer)}, nil
}

// pickPrevious draws the previous solution for an improve prompt; the buffer is in insertion
// order (oldest first) after trimming.
func pickPrevious(buffer []bufferEntry, strategy settings.ImproveFrom, rng *rand.Rand) bufferEntry {
	const pool = 4
	byReward := func() []bufferEntry {
		c := append([]bufferEntry(nil), buffer...)
		sort.SliceStable(c, func(i, j int) bool { return c[i].Prev.Reward > c[j].Prev.Reward })
		return c
	}
	var cands []bufferEntry
	switch strategy {
	case settings.ImproveBest:
		cands = byReward()
	case settings.ImproveRecent:
		cands = append([]bufferEntry(nil), buffer...)
		slices.Reverse(cands)
	case settings.ImproveFailedClose:
		for _, e := range buffer {
			if !e.Prev.Valid {
				cands = append(cands, e)
			}
		}
		sort.SliceStable(cands, func(i, j int) bool { return cands[i].Prev.LastMarker > cands[j].Prev.LastMarker })
	}
	if len(cands) == 0 { // mixed, or nothing fits the strategy yet
		return buffer[rng.IntN(len(buffer))]
	}
	return cands[rng.IntN(min(pool, len(cands)))]
}

func trimBuffer(b []bufferEntry, capacity int) []bufferEntry {
	if capacity <= 0 || len(b) <= capacity {
		return b
	}
	recent := b[len(b)-capacity/2:]
	older := append([]bufferEntry(nil), b[:len(b)-capacity/2]...)
	sort.SliceStable(older, func(i, j int) bool { return older[i].Prev.Reward > older[j].Prev.Reward })
	best := older[:capacity-len(recent)]
	return append(best, recent...)
}
