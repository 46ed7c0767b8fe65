package activities

import (
	"context"
	"errors"
	"fmt"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
)

// RecoverInput asks for a run's state rebuilt from its artifacts.
type RecoverInput struct {
	Run  string `json:"run"`
	Task string `json:"task"`
	// Attempt is the fresh execution's number: the samples of executions 0 to Attempt-1 are
	// looked at for completed results no update used.
	Attempt int `json:"attempt"`
}

// carryWindow bounds how many iterations before the recovered one are searched for completed
// results no update used (stragglers); later iterations are always searched.
const carryWindow = 5

// trainSampleID is the workflow's name for training sample k of iteration it in execution
// attempt (workflows.Train).
func trainSampleID(it, attempt, k int) string {
	if attempt > 0 {
		return fmt.Sprintf("it%04d-r%d-s%03d", it, attempt, k)
	}
	return fmt.Sprintf("it%04d-s%03d", it, k)
}

// RecoverState rebuilds the state of a run whose workflow ended in failure, from what the run
// stored: the newest good checkpoint (stepping over damaged ones), the iteration metrics up to
// it, the segments saved so far, and, as carry, every training program that completed but that
// no kept update used (so no finished execution has to run again). A fresh workflow execution
// continues from it: iterations completed before the failure are kept, later ones are done
// again.
func (a *Activities) RecoverState(ctx context.Context, in RecoverInput) (RunState, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return RunState{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return RunState{}, err
	}
	desc, err := describeTask(spec, a.Layout)
	if err != nil {
		return RunState{}, err
	}
	// The newest checkpoint written: pointers are written in order, one per iteration.
	last := -1
	for it := 0; ; it++ {
		_, err := store.Get(ctx, runstore.CheckpointKey(it))
		if errors.Is(err, artifacts.ErrNotFound) {
			break
		}
		if err != nil {
			return RunState{}, err
		}
		last = it
	}
	if last < 0 {
		return RunState{}, badInput("run %s has no checkpoint: it never started, so start it again with `starter run`", in.Run)
	}
	ck, err := a.loadCheckpoint(ctx, store, runstore.CheckpointKey(last))
	if err != nil {
		return RunState{}, err
	}
	it, _ := runstore.CheckpointIteration(ck.key)
	st := RunState{Iteration: it, Checkpoint: ck.key, Task: desc}
	if ck.fallback != nil {
		st.NewFallback = ck.fallback.String()
	}
	usedIDs := map[string]bool{}
	for i := 1; i <= it; i++ {
		var m IterationMetrics
		if err := getJSON(ctx, store, runstore.IterationMetricsKey(i), &m); err != nil {
			if errors.Is(err, artifacts.ErrNotFound) {
				continue
			}
			return RunState{}, err
		}
		if m.BestScore != nil {
			s := *m.BestScore
			if st.Best == nil || s != *st.Best {
				st.Improvements = append(st.Improvements, Improvement{Sample: m.BestSample, Score: s,
					Programs: m.Programs, SandboxSeconds: m.SandboxSeconds, ElapsedS: m.ElapsedS})
			}
			st.Best, st.BestSample = &s, m.BestSample
			st.SandboxSeconds = max(st.SandboxSeconds, m.SandboxSeconds)
		}
		st.SamplesDone += len(m.Used)
		st.Stale += m.Stale
		for _, id := range m.Used {
			usedIDs[id] = true
		}
		st.Recent = append(st.Recent, m)
	}
	if n := len(st.Recent); n > 20 {
		st.Recent = st.Recent[n-20:]
	}
	for {
		_, err := store.Get(ctx, runstore.SegmentKey(st.Segments))
		if errors.Is(err, artifacts.ErrNotFound) {
			break
		}
		if err != nil {
			return RunState{}, err
		}
		st.Segments++
	}
	if st.Carry, err = unusedResults(ctx, store, max(1, it-carryWindow), in.Attempt, usedIDs); err != nil {
		return RunState{}, err
	}
	old, err := store.Get(ctx, runstore.RecoveryKey)
	if err != nil && !errors.Is(err, artifacts.ErrNotFound) {
		return RunState{}, err
	}
	for _, f := range readFallbacks(old) {
		st.Fallbacks = append(st.Fallbacks, f.String())
	}
	return st, nil
}

// unusedResults finds the completed training executions, of iteration from onwards and of
// execution attempts before attempt, that no update in used took.
func unusedResults(ctx context.Context, store artifacts.Store, from, attempt int, used map[string]bool) ([]ExecuteResult, error) {
	var out []ExecuteResult
	for it := from; ; it++ {
		found := false
		for a := 0; a < max(attempt, 1); a++ {
			for k := 0; ; k++ {
				id := trainSampleID(it, a, k)
				if _, err := store.Get(ctx, runstore.Sample(id).Record()); errors.Is(err, artifacts.ErrNotFound) {
					break
				} else if err != nil {
					return nil, err
				}
				found = true
				if used[id] {
					continue
				}
				var res ExecuteResult
				if err := getJSON(ctx, store, runstore.Sample(id).Result(), &res); errors.Is(err, artifacts.ErrNotFound) {
					continue // never ran, or did not finish: the fresh execution samples anew
				} else if err != nil {
					return nil, err
				}
				res.SampleID = id
				out = append(out, res)
			}
		}
		if !found {
			return out, nil
		}
	}
}
