package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/activity"

	"mlerl/artifacts"
	"mlerl/model"
)

// RecoveryKey is a JSON-lines log of every damaged checkpoint a run stepped over: which one, why,
// and the earlier good one used instead. `starter status` shows it.
const RecoveryKey = "recovery.jsonl"

// CheckpointFallback records that a damaged checkpoint was replaced by an earlier good one.
type CheckpointFallback struct {
	Damaged string    `json:"damaged"` // the checkpoint asked for
	Used    string    `json:"used"`    // the newest earlier one that loaded and matched its sha256
	Reason  string    `json:"reason"`
	At      time.Time `json:"at"`
}

func (f CheckpointFallback) String() string {
	return fmt.Sprintf("checkpoint %s is damaged (%s); continued from %s", f.Damaged, f.Reason, f.Used)
}

// checkpointIteration parses CheckpointKey's iteration; ok is false for another key.
func checkpointIteration(key string) (int, bool) {
	var it int
	if n, err := fmt.Sscanf(key, "checkpoints/iter-%04d.json", &it); n != 1 || err != nil || CheckpointKey(it) != key {
		return 0, false
	}
	return it, true
}

// errDamaged marks a checkpoint that can never load as it is (as opposed to a store that is
// briefly unreachable, which is retried).
var errDamaged = errors.New("damaged")

// loadedCheckpoint is a checkpoint read, checked and decoded once.
type loadedCheckpoint struct {
	key      string              // the checkpoint that loaded: the one asked for or an earlier good one
	policy   *model.Policy       // the network policy, a private copy; nil for an llm checkpoint
	llm      *llmCheckpoint      // set for an llm checkpoint
	fallback *CheckpointFallback // set when the one asked for was damaged
}

// readCheckpoint loads and decodes one checkpoint; a damaged one (its pointer missing or not
// JSON, its blob missing or failing its sha256, its contents not a checkpoint) is reported as
// errDamaged.
func readCheckpoint(ctx context.Context, store artifacts.Store, key string) (loadedCheckpoint, error) {
	ck := loadedCheckpoint{key: key}
	b, err := store.Get(ctx, key)
	if errors.Is(err, artifacts.ErrNotFound) {
		return ck, fmt.Errorf("%w: %s is missing", errDamaged, store.Location(key))
	}
	if err != nil {
		return ck, err
	}
	var ptr checkpointPointer
	if err := json.Unmarshal(b, &ptr); err != nil || ptr.Blob == "" {
		return ck, fmt.Errorf("%w: %s is not a checkpoint pointer (%d bytes)", errDamaged, store.Location(key), len(b))
	}
	data, err := artifacts.GetContent(ctx, store, ptr.Blob)
	if errors.Is(err, artifacts.ErrCorrupt) || errors.Is(err, artifacts.ErrNotFound) || errors.Is(err, artifacts.ErrNotContentKey) {
		return ck, fmt.Errorf("%w: %v", errDamaged, err)
	}
	if err != nil {
		return ck, err
	}
	if l, ok := llmCheckpointOf(data); ok {
		ck.llm = &l
		return ck, nil
	}
	if ck.policy, _, err = model.LoadCheckpoint(data); err != nil {
		return ck, fmt.Errorf("%w: %s does not decode: %v", errDamaged, store.Location(ptr.Blob), err)
	}
	return ck, nil
}

// loadCheckpoint reads checkpoint key or, when it is damaged, the newest earlier good one
// (checkpoint 0 is the warm start): the run goes on from there rather than failing for good.
// The fallback is logged and appended to RecoveryKey. It fails, naming every checkpoint, only
// when none is good.
func loadCheckpoint(ctx context.Context, store artifacts.Store, key string) (loadedCheckpoint, error) {
	ck, err := readCheckpoint(ctx, store, key)
	if err == nil || !errors.Is(err, errDamaged) {
		return ck, err
	}
	it, ok := checkpointIteration(key)
	if !ok {
		return ck, badInput("checkpoint %s: %v", key, err)
	}
	why := func(key string, err error) string {
		return key + ": " + strings.TrimPrefix(err.Error(), errDamaged.Error()+": ")
	}
	first := err
	reasons := []string{why(key, err)}
	for prev := it - 1; prev >= 0; prev-- {
		used := CheckpointKey(prev)
		ck, err := readCheckpoint(ctx, store, used)
		if err != nil && !errors.Is(err, errDamaged) {
			return ck, err
		}
		if err != nil {
			reasons = append(reasons, why(used, err))
			continue
		}
		fb := &CheckpointFallback{Damaged: key, Used: used, Reason: strings.TrimPrefix(first.Error(), errDamaged.Error()+": "), At: time.Now().UTC()}
		logWarn(ctx, "damaged checkpoint: falling back to an earlier good one", "damaged", key, "used", used, "reason", fb.Reason)
		if err := recordFallback(ctx, store, *fb); err != nil {
			return ck, err
		}
		ck.fallback = fb
		return ck, nil
	}
	return loadedCheckpoint{}, badInput("no good checkpoint at or before %s (%s): restore one from a backup and `starter resume` the run, or start it again with `starter run`", key, strings.Join(reasons, "; "))
}

func logWarn(ctx context.Context, msg string, kv ...any) {
	defer func() { _ = recover() }() // outside an activity (a plain unit test) there is no logger
	activity.GetLogger(ctx).Warn(msg, kv...)
}

// recordFallback appends f to RecoveryKey unless the same fallback is already there (sampling
// meets a damaged checkpoint on every call until the next update replaces it).
func recordFallback(ctx context.Context, store artifacts.Store, f CheckpointFallback) error {
	old, err := store.Get(ctx, RecoveryKey)
	if err != nil && !errors.Is(err, artifacts.ErrNotFound) {
		return err
	}
	for _, f2 := range readFallbacks(old) {
		if f2.Damaged == f.Damaged && f2.Used == f.Used {
			return nil
		}
	}
	line, _ := json.Marshal(f)
	return store.Put(ctx, RecoveryKey, append(append(old, line...), '\n'))
}

func readFallbacks(b []byte) []CheckpointFallback {
	var out []CheckpointFallback
	for _, l := range strings.Split(string(b), "\n") {
		var f CheckpointFallback
		if json.Unmarshal([]byte(l), &f) == nil && f.Damaged != "" {
			out = append(out, f)
		}
	}
	return out
}

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
		_, err := store.Get(ctx, CheckpointKey(it))
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
	ck, err := loadCheckpoint(ctx, store, CheckpointKey(last))
	if err != nil {
		return RunState{}, err
	}
	it, _ := checkpointIteration(ck.key)
	st := RunState{Iteration: it, Checkpoint: ck.key, Task: desc}
	if ck.fallback != nil {
		st.NewFallback = ck.fallback.String()
	}
	usedIDs := map[string]bool{}
	for i := 1; i <= it; i++ {
		var m IterationMetrics
		if err := getJSON(ctx, store, fmt.Sprintf("metrics/iter-%04d.json", i), &m); err != nil {
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
		_, err := store.Get(ctx, fmt.Sprintf("state/segment-%04d.json", st.Segments))
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
	old, err := store.Get(ctx, RecoveryKey)
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
				if _, err := store.Get(ctx, sampleKey(id, "sample.json")); errors.Is(err, artifacts.ErrNotFound) {
					break
				} else if err != nil {
					return nil, err
				}
				found = true
				if used[id] {
					continue
				}
				var res ExecuteResult
				if err := getJSON(ctx, store, sampleKey(id, "result.json"), &res); errors.Is(err, artifacts.ErrNotFound) {
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
