package activities

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"mlerl/artifacts"
	"mlerl/codeactions"
	"mlerl/grading"
	"mlerl/instrument"
	"mlerl/llm"
	"mlerl/model"
	"mlerl/reward"
	"mlerl/sandbox"
	"mlerl/tasks"
)

// Activities are a run's side effects, with their dependencies.
type Activities struct {
	Runs         artifacts.Runs
	Sandbox      sandbox.Sandbox
	Instrumenter instrument.Instrumenter
	Tasks        *tasks.Registry
	Layout       tasks.Layout
	ScratchDir   string // sandbox work folders are created here and removed after each run
	// PolicyLLM is the model server an llm policy samples from, and Trainer the service that
	// updates it (llm/doc.go); both nil on workers that only serve the network policy.
	PolicyLLM *llm.Client
	Trainer   *llm.Trainer

	mu       sync.Mutex
	policies map[string]*model.Policy // read-only policies by checkpoint key, for sampling
}

func badInput(format string, a ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, a...), ErrBadInput, nil)
}

func (a *Activities) spec(id string) (*tasks.Spec, error) {
	s, err := a.Tasks.Get(id)
	if err != nil {
		return nil, badInput("%v", err)
	}
	if err := a.Layout.CheckPrepared(s); err != nil {
		return nil, badInput("%v", err)
	}
	return s, nil
}

// Artifact keys of a sample.
func sampleKey(id, file string) string { return "samples/" + id + "/" + file }

// CheckpointKey names the checkpoint written after an iteration (0 = the warm start).
func CheckpointKey(iteration int) string { return fmt.Sprintf("checkpoints/iter-%04d.json", iteration) }

// A checkpoint is stored content-addressed (artifacts.PutContent: its sha256 is checked on
// load) under blobs/sha256/, and its iteration's name holds a pointer to it.
type checkpointPointer struct {
	Blob string `json:"blob"`
}

func putCheckpoint(ctx context.Context, store artifacts.Store, name string, data []byte) error {
	blob, err := artifacts.PutContent(ctx, store, data)
	if err != nil {
		return err
	}
	return putJSON(ctx, store, name, checkpointPointer{Blob: blob})
}

// BufferKey is the self-improve buffer of a run.
const BufferKey = "buffer.json"

// SeenKey maps the sha256 of every training program sampled in a run (with RedrawRepeats) to
// the sample that first wrote it.
const SeenKey = "seen-programs.json"

func putJSON(ctx context.Context, store artifacts.Store, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return store.Put(ctx, key, b)
}

func getJSON(ctx context.Context, store artifacts.Store, key string, v any) error {
	b, err := store.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("artifact %s is not valid JSON: %w", key, err)
	}
	return nil
}

// InitPolicy builds the reproducible warm-start policy and stores it as checkpoint 0.
func (a *Activities) InitPolicy(ctx context.Context, in InitPolicyInput) (InitPolicyResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return InitPolicyResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return InitPolicyResult{}, err
	}
	desc, err := describeTask(spec, a.Layout)
	if err != nil {
		return InitPolicyResult{}, err
	}
	switch in.Backend {
	case BackendLLM:
		return a.initLLM(ctx, store, in, desc)
	case "", BackendNetwork:
	default:
		return InitPolicyResult{}, badInput("policy backend %q: use %s or %s", in.Backend, BackendNetwork, BackendLLM)
	}
	lib, err := codeactions.For(spec.Modality)
	if err != nil {
		return InitPolicyResult{}, badInput("%v", err)
	}
	var p *model.Policy
	switch in.Init {
	case "", InitWarmStart:
		p, err = model.WarmStart(lib, in.Policy, desc, in.Seed)
	case InitUniform:
		p, err = model.Uniform(lib, in.Policy)
	default:
		return InitPolicyResult{}, badInput("initial policy %q: use %s or %s", in.Init, InitWarmStart, InitUniform)
	}
	if err != nil {
		return InitPolicyResult{}, badInput("%v", err)
	}
	data, err := p.Checkpoint(in.PPO, 0, in.Seed).Marshal()
	if err != nil {
		return InitPolicyResult{}, err
	}
	key := CheckpointKey(0)
	if err := putCheckpoint(ctx, store, key, data); err != nil {
		return InitPolicyResult{}, err
	}
	return InitPolicyResult{Checkpoint: key, Task: desc}, nil
}

// describeTask reads the sizes the network conditions on from the prepared public files.
func describeTask(spec *tasks.Spec, layout tasks.Layout) (model.Task, error) {
	d := layout.Dirs(spec.ID, tasks.SplitTest)
	rows, _, err := tableShape(filepath.Join(d.Public, spec.Files.Train))
	if err != nil {
		return model.Task{}, err
	}
	_, features, err := tableShape(filepath.Join(d.Public, spec.Files.Test))
	if err != nil {
		return model.Task{}, err
	}
	_, subCols, err := tableShape(filepath.Join(d.Public, spec.Files.SampleSubmission))
	if err != nil {
		return model.Task{}, err
	}
	return model.Task{Modality: spec.Modality, LowerIsBetter: spec.LowerIsBetter(),
		Classes: subCols - 1, Features: features - 1, Rows: rows}, nil
}

// policy loads checkpoint key of run: a network policy (cached), or, for the llm backend, the
// model reference it names (returned as lc, with a nil policy).
func (a *Activities) policy(ctx context.Context, store artifacts.Store, run, key string) (p *model.Policy, lc *llmCheckpoint, used string, err error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if p, ok := a.policies[run+"/"+key]; ok {
		return p, nil, key, nil
	}
	ck, err := loadCheckpoint(ctx, store, key)
	if err != nil {
		return nil, nil, "", err
	}
	if ck.llm != nil {
		return nil, ck.llm, ck.key, nil
	}
	// Cached under the checkpoint that loaded: a damaged key is read again (and stepped over)
	// on each call, so restoring it takes effect.
	key, p = ck.key, ck.policy
	if cached, ok := a.policies[run+"/"+key]; ok {
		return cached, nil, key, nil
	}
	if a.policies == nil {
		a.policies = map[string]*model.Policy{}
	}
	if len(a.policies) > 16 {
		a.policies = map[string]*model.Policy{} // a long-lived worker serves many checkpoints
	}
	a.policies[run+"/"+key] = p
	return p, nil, key, nil
}

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

// bufferEntry is one previous solution that improve prompts can build on.
type bufferEntry struct {
	SampleID string         `json:"sample_id"`
	Prev     model.Previous `json:"prev"`
}

// rngFor derives a sample's random stream from the run seed and the sample id, so a retried
// or resumed activity writes exactly the same program.
func rngFor(seed uint64, id string) *rand.Rand {
	h := fnv.New64a()
	h.Write([]byte(id))
	return rand.New(rand.NewPCG(seed, h.Sum64()))
}

// SamplePrograms has the policy write one program per id and stores plan, code and the
// sampling-time log-probs.
func (a *Activities) SamplePrograms(ctx context.Context, in SampleInput) ([]SampleRef, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return nil, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return nil, err
	}
	var buffer []bufferEntry
	if in.Buffer != "" {
		if err := getJSON(ctx, store, in.Buffer, &buffer); err != nil && !errors.Is(err, artifacts.ErrNotFound) {
			return nil, err
		}
	}
	if in.Purpose == PurposeEvalImprove && len(in.ImproveOf) != len(in.IDs) {
		return nil, badInput("eval-improve needs one previous sample per id (%d ids, %d previous)", len(in.IDs), len(in.ImproveOf))
	}
	p, ck, used, err := a.policy(ctx, store, in.Run, in.Checkpoint)
	if err != nil {
		return nil, err
	}
	in.Checkpoint = used // the samples record the checkpoint that wrote them
	if ck != nil {
		return a.sampleLLM(ctx, store, spec, in, *ck, buffer)
	}
	schema := codeactions.SchemaOf(spec)
	var seen map[string]string // program hash -> first sample; nil: no redraws
	if in.Purpose == PurposeTrain && in.RedrawRepeats > 0 {
		seen = map[string]string{}
		if err := getJSON(ctx, store, SeenKey, &seen); err != nil && !errors.Is(err, artifacts.ErrNotFound) {
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
		redraws := 0
		for {
			s = p.Sample(in.Descriptor, prompt, rng)
			if prog, err = p.Lib.Render(s.Tokens, schema); err != nil {
				return nil, err
			}
			if seen == nil {
				break
			}
			h := artifacts.ContentHash([]byte(prog.Code))
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
		plan := fmt.Sprintf("# Plan (%s, %s)\n\n%s\n", prompt.Kind, id, prog.Plan)
		if err := store.Put(ctx, sampleKey(id, "plan.md"), []byte(plan)); err != nil {
			return nil, err
		}
		if err := store.Put(ctx, sampleKey(id, "program.py"), []byte(prog.Code)); err != nil {
			return nil, err
		}
		if err := putJSON(ctx, store, sampleKey(id, "sample.json"), rec); err != nil {
			return nil, err
		}
		refs = append(refs, SampleRef{ID: id, Kind: prompt.Kind, Prev: prevID, Actions: rec.Actions, Redraws: redraws})
	}
	if seen != nil {
		if err := putJSON(ctx, store, SeenKey, seen); err != nil {
			return nil, err
		}
	}
	return refs, nil
}

// previous loads a sample and its outcome as an improve prompt's previous solution.
func previous(ctx context.Context, store artifacts.Store, id string) (model.Previous, error) {
	var rec sampleRecord
	if err := getJSON(ctx, store, sampleKey(id, "sample.json"), &rec); err != nil {
		return model.Previous{}, err
	}
	var res ExecuteResult
	if err := getJSON(ctx, store, sampleKey(id, "result.json"), &res); err != nil {
		return model.Previous{}, err
	}
	out, _ := store.Get(ctx, sampleKey(id, "output.txt"))
	var testing *float64
	if l := reward.Losses(string(out), "testing loss:"); len(l) > 0 && !math.IsNaN(l[len(l)-1]) && !math.IsInf(l[len(l)-1], 0) {
		testing = &l[len(l)-1]
	}
	return model.Previous{Tokens: rec.Sample.Tokens, Reward: res.Reward, LastMarker: res.Markers,
		Valid: res.Valid, Duration: res.DurationS, TestingLoss: testing}, nil
}

// InstrumentPrograms inserts the progress prints into each sample's program and stores
// instrumented.py beside it.
func (a *Activities) InstrumentPrograms(ctx context.Context, in InstrumentInput) (InstrumentResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return InstrumentResult{}, badInput("%v", err)
	}
	var out InstrumentResult
	for _, id := range in.SampleIDs {
		prog, err := store.Get(ctx, sampleKey(id, "program.py"))
		if err != nil {
			return InstrumentResult{}, err
		}
		res := instrument.Result{Program: string(prog), Note: "not instrumented (instrumentation is off for this run)"}
		if !in.Off {
			if res, err = a.Instrumenter.Instrument(ctx, string(prog)); err != nil {
				return InstrumentResult{}, err
			}
		}
		if err := store.Put(ctx, sampleKey(id, "instrumented.py"), []byte(res.Program)); err != nil {
			return InstrumentResult{}, err
		}
		out.Samples = append(out.Samples, InstrumentedSample{ID: id, Inserted: res.Inserted, Note: res.Note})
	}
	return out, nil
}

// Heartbeat is what an execution reports while it runs.
type Heartbeat struct {
	ElapsedS    float64 `json:"elapsed_s"`
	LastMarker  string  `json:"last_marker"`
	OutputBytes int64   `json:"output_bytes"`
}

// maxSubmissionBytes bounds what we read back from an untrusted program.
const maxSubmissionBytes = 64 << 20

// ExecuteProgram runs a sample's instrumented program in the sandbox on a split, grades its
// submission and computes the reward (the paper's unless in.Reward names another scheme). It
// heartbeats every second.
func (a *Activities) ExecuteProgram(ctx context.Context, in ExecuteInput) (ExecuteResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return ExecuteResult{}, badInput("%v", err)
	}
	rewardOf, err := reward.Scheme(in.Reward)
	if err != nil {
		return ExecuteResult{}, badInput("%v", err)
	}
	if in.Folds > 1 {
		if in.Split != tasks.SplitValidation {
			return ExecuteResult{}, badInput("reward folds are validation folds: %d folds on the %s split", in.Folds, in.Split)
		}
		return a.executeFolds(ctx, store, in.Task, in.SampleID, in.Folds, rewardOf)
	}
	return a.execute(ctx, store, in.Task, in.SampleID, a.Layout.Dirs(in.Task, in.Split), "", rewardOf)
}

// executeFolds runs the program on validation folds 1..folds in turn and rewards the mean of
// their scores, so that a program confidently right on one small split by luck does not win.
// Fold 1 is stored as a single-split run is (the improve prompts read its output); the others
// under fold-<f>/. The first fold without a valid submission ends it: that fold's outcome is
// the result, so a failing program costs no more than on one split.
func (a *Activities) executeFolds(ctx context.Context, store artifacts.Store, taskID, id string, folds int, rewardOf func(reward.Outcome) float64) (ExecuteResult, error) {
	spec, err := a.spec(taskID)
	if err != nil {
		return ExecuteResult{}, err
	}
	if have := spec.Validation.FoldCount(); folds > have {
		return ExecuteResult{}, badInput("%d reward folds asked, but task %s carves %d validation folds: lower --reward-folds or raise validation.folds in its spec and prepare it again", folds, taskID, have)
	}
	var total ExecuteResult
	var scores []float64
	duration := 0.0
	for f := 1; f <= folds; f++ {
		prefix := ""
		if f > 1 {
			prefix = fmt.Sprintf("fold-%d/", f)
		}
		res, err := a.execute(ctx, store, taskID, id, a.Layout.FoldDirs(spec.ID, f), prefix, rewardOf)
		if err != nil {
			if ctx.Err() != nil && f > 1 {
				// Cancelled during a later fold: an update may still use the sample, so its
				// result must be that unfinished fold's partial credit, not fold 1's score.
				bg := context.Background()
				var r ExecuteResult
				if getJSON(bg, store, sampleKey(id, prefix+"result.json"), &r) == nil {
					r.DurationS += duration
					putJSON(bg, store, sampleKey(id, "result.json"), r)
				}
			}
			return ExecuteResult{}, err
		}
		duration += res.DurationS
		if f == 1 {
			total = res
		}
		if !res.Valid || res.Score == nil {
			if f > 1 {
				total = res
				total.Reason = fmt.Sprintf("validation fold %d: %s", f, res.Reason)
			}
			total.FoldScores = scores
			break
		}
		scores = append(scores, *res.Score)
	}
	total.DurationS = duration
	if len(scores) == folds {
		mean := 0.0
		for _, v := range scores {
			mean += v / float64(folds)
		}
		total.Score, total.FoldScores = &mean, scores
		total.Reward = rewardOf(reward.Outcome{Ran: true, Score: &mean, LowerIsBetter: spec.LowerIsBetter()})
	}
	if err := putJSON(ctx, store, sampleKey(id, "result.json"), total); err != nil {
		return ExecuteResult{}, err
	}
	return total, nil
}

// execute runs a sample's program on one split's public folder and grades it on that split's
// private answers, storing its output, submission and result under prefix; rewardOf is the
// run's reward scheme.
func (a *Activities) execute(ctx context.Context, store artifacts.Store, taskID, id string, dirs tasks.Dirs, prefix string, rewardOf func(reward.Outcome) float64) (ExecuteResult, error) {
	spec, err := a.spec(taskID)
	if err != nil {
		return ExecuteResult{}, err
	}
	prog, err := store.Get(ctx, sampleKey(id, "instrumented.py"))
	if errors.Is(err, artifacts.ErrNotFound) {
		prog, err = store.Get(ctx, sampleKey(id, "program.py"))
	}
	if err != nil {
		return ExecuteResult{}, err
	}
	if err := os.MkdirAll(a.ScratchDir, 0o755); err != nil {
		return ExecuteResult{}, err
	}
	tmp, err := os.MkdirTemp(a.ScratchDir, id+"-")
	if err != nil {
		return ExecuteResult{}, err
	}
	defer os.RemoveAll(tmp)
	progFile := filepath.Join(tmp, "solution.py")
	if err := os.WriteFile(progFile, prog, 0o644); err != nil {
		return ExecuteResult{}, err
	}
	work := filepath.Join(tmp, "work")
	lim := sandbox.Limits{Wall: time.Duration(spec.Limits.WallSeconds) * time.Second,
		MemoryBytes: int64(spec.Limits.MemoryMB) << 20, Processes: spec.Limits.Processes, OutputBytes: spec.Limits.OutputKB << 10,
		DiskBytes: int64(spec.Limits.Disk()) << 20}
	run, err := a.Sandbox.Run(ctx, sandbox.Spec{Program: progFile, DataDir: dirs.Public, WorkDir: work, Limits: lim},
		func(p sandbox.Progress) {
			activity.RecordHeartbeat(ctx, Heartbeat{ElapsedS: p.Elapsed.Seconds(),
				LastMarker: reward.LastMarker(reward.FoundMarkers(p.LastLine)), OutputBytes: p.OutputBytes})
		})
	if err != nil && ctx.Err() != nil {
		// Cancelled (the staleness cap, or the run ending): record what the program reached
		// as a timeout with its partial credit, for the update that may still use it.
		markers := reward.FoundMarkers(run.Output)
		res := ExecuteResult{SampleID: id, Markers: len(markers), LastMarker: reward.LastMarker(markers),
			DurationS: run.Duration.Seconds(), TimedOut: true, Stale: true, ExitCode: run.ExitCode,
			Reason: "ended before it finished (staleness cap or end of run)",
			Reward: rewardOf(reward.Outcome{Markers: markers, LowerIsBetter: spec.LowerIsBetter()})}
		bg := context.Background() // ctx is cancelled; these writes must still happen
		store.Put(bg, sampleKey(id, prefix+"output.txt"), []byte(run.Output))
		putJSON(bg, store, sampleKey(id, prefix+"result.json"), res)
		return ExecuteResult{}, ctx.Err()
	}
	if err != nil {
		return ExecuteResult{}, err // the sandbox failed, not the program: retry
	}
	markers := reward.FoundMarkers(run.Output)
	res := ExecuteResult{SampleID: id, Markers: len(markers), LastMarker: reward.LastMarker(markers),
		DurationS: run.Duration.Seconds(), TimedOut: run.TimedOut, ExitCode: run.ExitCode}
	ran := run.ExitCode == 0 && !run.TimedOut
	subFile := filepath.Join(work, "submission.csv")
	switch {
	case run.TimedOut:
		res.Reason = fmt.Sprintf("timed out after %ds", spec.Limits.WallSeconds)
	case run.OutOfMemory:
		res.Reason = fmt.Sprintf("ran out of memory (%d MiB)", spec.Limits.MemoryMB)
	case run.DiskFull:
		res.Reason = fmt.Sprintf("disk limit exceeded (%d MiB)", spec.Limits.Disk())
	case !ran:
		res.Reason = fmt.Sprintf("exited with code %d", run.ExitCode)
	}
	if st, err := os.Lstat(subFile); err == nil {
		res.Submitted = true
		// Lstat, not Stat: a program could leave a symlink to a host file (the answers, say),
		// which must never be read, graded or stored.
		regular := st.Mode().IsRegular() && st.Size() <= maxSubmissionBytes
		if !regular {
			res.Reason = "submission.csv is not a regular file under 64 MiB"
		} else if ran {
			g, err := grading.Grade(spec, subFile, filepath.Join(dirs.Private, spec.Files.Answers))
			if err != nil {
				return ExecuteResult{}, err
			}
			res.Score, res.Valid, res.Reason = g.Score, g.Valid, g.Reason
		}
		// Read only after the type check: opening a FIFO the program left would block the
		// worker forever.
		if regular {
			if b, err := os.ReadFile(subFile); err == nil {
				if err := store.Put(ctx, sampleKey(id, prefix+"submission.csv"), b); err != nil {
					return ExecuteResult{}, err
				}
			}
		}
	} else if ran {
		res.Reason = "the program wrote no submission.csv"
	}
	res.Reward = rewardOf(reward.Outcome{Ran: ran, Markers: markers, Score: res.Score, LowerIsBetter: spec.LowerIsBetter()})
	if err := store.Put(ctx, sampleKey(id, prefix+"output.txt"), []byte(run.Output)); err != nil {
		return ExecuteResult{}, err
	}
	if err := putJSON(ctx, store, sampleKey(id, prefix+"result.json"), res); err != nil {
		return ExecuteResult{}, err
	}
	return res, nil
}

// UpdatePolicy runs the duration-weighted PPO update on completed samples and stores the next
// checkpoint and the iteration's metrics.
func (a *Activities) UpdatePolicy(ctx context.Context, in UpdateInput) (UpdateResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return UpdateResult{}, badInput("%v", err)
	}
	ck, err := loadCheckpoint(ctx, store, in.Checkpoint)
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
	if ck.llm != nil {
		res, err := a.updateLLM(ctx, store, in, *ck.llm)
		return withFallback(res, fb), err
	}
	p := ck.policy // decoded for this call: cached policies stay unchanged
	var batch []model.Experience
	stale := map[string]bool{}
	for _, id := range in.Stale {
		stale[id] = true
	}
	for _, id := range append(append([]string(nil), in.SampleIDs...), in.Stale...) {
		var rec sampleRecord
		if err := getJSON(ctx, store, sampleKey(id, "sample.json"), &rec); err != nil {
			return UpdateResult{}, err
		}
		var res ExecuteResult
		if err := getJSON(ctx, store, sampleKey(id, "result.json"), &res); err != nil {
			if stale[id] && errors.Is(err, artifacts.ErrNotFound) {
				continue // cancelled before it ever ran: nothing to learn from
			}
			return UpdateResult{}, err
		}
		batch = append(batch, model.Experience{Task: rec.Task, Prompt: rec.Prompt, Tokens: rec.Sample.Tokens,
			LogProbs: rec.Sample.LogProbs, Values: rec.Sample.Values, Reward: res.Reward, Duration: res.DurationS})
	}
	rng := rand.New(rand.NewPCG(in.Seed, uint64(in.Iteration)))
	stats, err := p.Update(batch, in.PPO, rng)
	if err != nil {
		return UpdateResult{}, badInput("PPO update: %v", err)
	}
	out, err := p.Checkpoint(in.PPO, in.Iteration, in.Seed).Marshal()
	if err != nil {
		return UpdateResult{}, err
	}
	res, err := finishUpdate(ctx, store, in, out, stats)
	return withFallback(res, fb), err
}

// finishUpdate stores the iteration's checkpoint and its metrics line (with the samples used).
func finishUpdate(ctx context.Context, store artifacts.Store, in UpdateInput, checkpoint []byte, stats model.Stats) (UpdateResult, error) {
	key := CheckpointKey(in.Iteration)
	if err := putCheckpoint(ctx, store, key, checkpoint); err != nil {
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

// withFallback notes in an update's result that its checkpoint was damaged.
func withFallback(res UpdateResult, fb *CheckpointFallback) UpdateResult {
	if fb != nil {
		res.Fallback = fb.String()
	}
	return res
}

// writeMetrics stores the iteration's line and rebuilds metrics.jsonl from all lines, so a
// retried update never writes a line twice.
func writeMetrics(ctx context.Context, store artifacts.Store, m IterationMetrics) error {
	line, err := json.Marshal(m)
	if err != nil {
		return err
	}
	if err := store.Put(ctx, fmt.Sprintf("metrics/iter-%04d.json", m.Iteration), line); err != nil {
		return err
	}
	var all []byte
	for it := 1; it <= m.Iteration; it++ {
		b, err := store.Get(ctx, fmt.Sprintf("metrics/iter-%04d.json", it))
		if errors.Is(err, artifacts.ErrNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		all = append(append(all, b...), '\n')
	}
	return store.Put(ctx, "metrics.jsonl", all)
}

// RefreshBuffer adds completed samples to the self-improve buffer, keeping the best half of the
// capacity by reward and the most recent half (improve prompts draw uniformly from it).
func (a *Activities) RefreshBuffer(ctx context.Context, in BufferInput) (BufferResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return BufferResult{}, badInput("%v", err)
	}
	var buffer []bufferEntry
	if err := getJSON(ctx, store, in.Buffer, &buffer); err != nil && !errors.Is(err, artifacts.ErrNotFound) {
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

// Which previous solution an improve prompt builds on (SampleInput.ImproveFrom).
const (
	ImproveMixed       = "mixed"        // uniform over the buffer: its best half and its most recent half
	ImproveBest        = "best"         // one of the highest-reward entries
	ImproveRecent      = "recent"       // one of the newest entries
	ImproveFailedClose = "failed-close" // a failed program that got furthest (most markers)
)

// ImproveStrategies lists the valid ImproveFrom values.
var ImproveStrategies = []string{ImproveMixed, ImproveBest, ImproveRecent, ImproveFailedClose}

// pickPrevious draws the previous solution for an improve prompt; the buffer is in insertion
// order (oldest first) after trimming.
func pickPrevious(buffer []bufferEntry, strategy string, rng *rand.Rand) bufferEntry {
	const pool = 4
	byReward := func() []bufferEntry {
		c := append([]bufferEntry(nil), buffer...)
		sort.SliceStable(c, func(i, j int) bool { return c[i].Prev.Reward > c[j].Prev.Reward })
		return c
	}
	var cands []bufferEntry
	switch strategy {
	case ImproveBest:
		cands = byReward()
	case ImproveRecent:
		cands = append([]bufferEntry(nil), buffer...)
		slices.Reverse(cands)
	case ImproveFailedClose:
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

// FinalGrade grades the chosen program on the private test answers. Leak-free: the program was
// chosen on the validation split, so it is re-run on the full public train to predict the real
// test. Paper protocol: it already ran on the test split; its submission is graded again.
func (a *Activities) FinalGrade(ctx context.Context, in FinalGradeInput) (FinalGradeResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return FinalGradeResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return FinalGradeResult{}, err
	}
	prefix := ""
	var res ExecuteResult
	if in.Protocol == "paper" {
		if err := getJSON(ctx, store, sampleKey(in.SampleID, "result.json"), &res); err != nil {
			return FinalGradeResult{}, err
		}
	} else {
		prefix = "final/"
		// The report uses the score; the reward scheme does not matter here.
		res, err = a.execute(ctx, store, in.Task, in.SampleID, a.Layout.Dirs(spec.ID, tasks.SplitTest), prefix, reward.Paper)
		if err != nil {
			return FinalGradeResult{}, err
		}
	}
	g := grading.Result{Score: res.Score, Valid: res.Valid, Exists: res.Submitted, Reason: res.Reason}
	rep := grading.NewReport(spec, g, store.Location(sampleKey(in.SampleID, prefix+"submission.csv")), time.Now())
	out := FinalGradeResult{SampleID: in.SampleID, Report: rep, Reason: res.Reason, DurationS: res.DurationS}
	if err := putJSON(ctx, store, sampleKey(in.SampleID, prefix+"report.json"), rep); err != nil {
		return FinalGradeResult{}, err
	}
	return out, nil
}
