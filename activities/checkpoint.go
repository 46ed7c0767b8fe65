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
	"mlerl/artifacts/runstore"
)

// Checkpoints: stored, loaded (stepping over damaged ones), and cached for sampling.

// A checkpoint is stored content-addressed (artifacts.PutContent: its sha256 is checked on
// load) under blobs/sha256/, and its iteration's name holds a pointer to it.
type checkpointPointer struct {
	Blob string `json:"blob"`
}

// putCheckpoint stores the checkpoint written after iteration and returns its key.
func putCheckpoint(ctx context.Context, store artifacts.Store, iteration int, data []byte) (string, error) {
	blob, err := artifacts.PutContent(ctx, store, data)
	if err != nil {
		return "", err
	}
	key := runstore.CheckpointKey(iteration)
	return key, putJSON(ctx, store, key, checkpointPointer{Blob: blob})
}

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

// errDamaged marks a checkpoint that can never load as it is (as opposed to a store that is
// briefly unreachable, which is retried).
var errDamaged = errors.New("damaged")

// loadedCheckpoint is a checkpoint read, checked and decoded once.
type loadedCheckpoint struct {
	key      string              // the checkpoint that loaded: the one asked for or an earlier good one
	backend  policyBackend       // the policy it holds, decoded for this call
	fallback *CheckpointFallback // set when the one asked for was damaged
}

// readCheckpoint loads and decodes one checkpoint; a damaged one (its pointer missing or not
// JSON, its blob missing or failing its sha256, its contents not a checkpoint) is reported as
// errDamaged.
func (a *Activities) readCheckpoint(ctx context.Context, store artifacts.Store, key string) (loadedCheckpoint, error) {
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
	if ck.backend, err = a.backendOf(data); err != nil {
		return ck, fmt.Errorf("%w: %s does not decode: %v", errDamaged, store.Location(ptr.Blob), err)
	}
	return ck, nil
}

// loadCheckpoint reads checkpoint key or, when it is damaged, the newest earlier good one
// (checkpoint 0 is the initial policy): the run goes on from there rather than failing for
// good. The fallback is logged and appended to runstore.RecoveryKey. It fails, naming every
// checkpoint, only when none is good.
func (a *Activities) loadCheckpoint(ctx context.Context, store artifacts.Store, key string) (loadedCheckpoint, error) {
	ck, err := a.readCheckpoint(ctx, store, key)
	if err == nil || !errors.Is(err, errDamaged) {
		return ck, err
	}
	it, ok := runstore.CheckpointIteration(key)
	if !ok {
		return ck, badInput("checkpoint %s: %v", key, err)
	}
	why := func(key string, err error) string {
		return key + ": " + strings.TrimPrefix(err.Error(), errDamaged.Error()+": ")
	}
	first := err
	reasons := []string{why(key, err)}
	for prev := it - 1; prev >= 0; prev-- {
		used := runstore.CheckpointKey(prev)
		ck, err := a.readCheckpoint(ctx, store, used)
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

// recordFallback appends f to runstore.RecoveryKey unless the same fallback is already there
// (sampling meets a damaged checkpoint on every call until the next update replaces it).
func recordFallback(ctx context.Context, store artifacts.Store, f CheckpointFallback) error {
	old, err := store.Get(ctx, runstore.RecoveryKey)
	if err != nil && !errors.Is(err, artifacts.ErrNotFound) {
		return err
	}
	for _, f2 := range readFallbacks(old) {
		if f2.Damaged == f.Damaged && f2.Used == f.Used {
			return nil
		}
	}
	line, _ := json.Marshal(f)
	return store.Put(ctx, runstore.RecoveryKey, append(append(old, line...), '\n'))
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

// samplingBackend loads checkpoint key of run for sampling and returns it with the key that
// loaded, and the fallback when key was damaged. Network policies are cached (decoding one builds its graph) and only read from; an
// llm checkpoint is a model reference, read again on each call.
func (a *Activities) samplingBackend(ctx context.Context, store artifacts.Store, run, key string) (policyBackend, string, *CheckpointFallback, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if b, ok := a.policies[run+"/"+key]; ok {
		return b, key, nil, nil
	}
	ck, err := a.loadCheckpoint(ctx, store, key)
	if err != nil {
		return nil, "", nil, err
	}
	b, ok := ck.backend.(*networkBackend)
	if !ok {
		return ck.backend, ck.key, ck.fallback, nil
	}
	// Cached under the checkpoint that loaded: a damaged key is read again (and stepped over)
	// on each call, so restoring it takes effect.
	key = ck.key
	if cached, ok := a.policies[run+"/"+key]; ok {
		return cached, key, ck.fallback, nil
	}
	if a.policies == nil {
		a.policies = map[string]*networkBackend{}
	}
	if len(a.policies) > 16 {
		a.policies = map[string]*networkBackend{} // a long-lived worker serves many checkpoints
	}
	a.policies[run+"/"+key] = b
	return b, key, ck.fallback, nil
}
