package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/internal/testenv"
	"mlerl/model"
	"mlerl/model/ppo"
	"mlerl/tasks"
)

var leafTask = model.Task{Modality: "tabular-classification", LowerIsBetter: true, Classes: 99, Features: 192, Rows: 891}

// trainedRun writes a run with checkpoints 0, 1 and 2 (two real PPO updates on stored samples)
// and the samples for a third update, as the workflow would have left it.
func trainedRun(t *testing.T, a *Activities, env *testsuite.TestActivityEnvironment, store artifacts.FS, run string) {
	t.Helper()
	ctx := context.Background()
	lib, err := codeactions.For(leafTask.Modality)
	if err != nil {
		t.Fatal(err)
	}
	p, err := model.WarmStart(lib, model.DefaultConfig(), leafTask, 1)
	if err != nil {
		t.Fatal(err)
	}
	data, _ := p.Checkpoint(ppo.Paper(), 0, 1).Marshal()
	if _, err := putCheckpoint(ctx, store, 0, data); err != nil {
		t.Fatal(err)
	}
	for it := 1; it <= 3; it++ {
		for k := 0; k < 4; k++ {
			id := fmt.Sprintf("it%04d-s%03d", it, k)
			s := p.Sample(leafTask, model.Prompt{Kind: model.KindScratch}, rngFor(1, id))
			putJSON(ctx, store, runstore.Sample(id).Record(), sampleRecord{ID: id, Iteration: it, Purpose: PurposeTrain,
				Checkpoint: runstore.CheckpointKey(it - 1), Task: leafTask, Prompt: model.Prompt{Kind: model.KindScratch}, Sample: s})
			putJSON(ctx, store, runstore.Sample(id).Result(), ExecuteResult{SampleID: id, Reward: -10 + float64(k), DurationS: 1})
		}
		if it == 3 {
			break
		}
		if _, err := env.ExecuteActivity(a.UpdatePolicy, updateInput(run, it, runstore.CheckpointKey(it-1))); err != nil {
			t.Fatal(err)
		}
	}
}

func updateInput(run string, it int, checkpoint string) UpdateInput {
	ids := make([]string, 4)
	for k := range ids {
		ids[k] = fmt.Sprintf("it%04d-s%03d", it, k)
	}
	return UpdateInput{Run: run, Checkpoint: checkpoint, Iteration: it, SampleIDs: ids, PPO: ppo.Paper(), Seed: 1,
		Metrics: IterationMetrics{Iteration: it, Samples: 4}}
}

func blobOf(t *testing.T, store artifacts.FS, key string) string {
	t.Helper()
	var ptr checkpointPointer
	if err := getJSON(context.Background(), store, key, &ptr); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(store.Root, ptr.Blob)
}

// A damaged latest checkpoint (its pointer truncated, its blob truncated, or bytes of its blob
// flipped) falls back to the previous good one: the update succeeds from checkpoint 1, says so in
// its result, its metrics line and recovery.jsonl, and every sample and earlier metric is kept.
func TestDamagedCheckpointFallsBackToThePreviousGoodOne(t *testing.T) {
	damages := map[string]func(t *testing.T, store artifacts.FS){
		"pointer truncated": func(t *testing.T, store artifacts.FS) {
			f := filepath.Join(store.Root, runstore.CheckpointKey(2))
			b, _ := os.ReadFile(f)
			os.WriteFile(f, b[:len(b)/2], 0o644)
		},
		"blob truncated": func(t *testing.T, store artifacts.FS) {
			f := blobOf(t, store, runstore.CheckpointKey(2))
			b, _ := os.ReadFile(f)
			os.WriteFile(f, b[:len(b)/3], 0o644)
		},
		"blob bytes flipped": func(t *testing.T, store artifacts.FS) {
			f := blobOf(t, store, runstore.CheckpointKey(2))
			b, _ := os.ReadFile(f)
			for i := len(b) / 2; i < len(b)/2+8; i++ {
				b[i] ^= 0xff
			}
			os.WriteFile(f, b, 0o644)
		},
	}
	for name, damage := range damages {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			root := t.TempDir()
			store := artifacts.FS{Root: filepath.Join(root, "r")}
			a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: tasks.Builtin()}
			var suite testsuite.WorkflowTestSuite
			env := suite.NewTestActivityEnvironment()
			env.RegisterActivity(a)
			trainedRun(t, a, env, store, "r")

			// What an update of iteration 3 from checkpoint 1 writes, in a copy of the run.
			want := artifacts.FS{Root: filepath.Join(root, "want")}
			if err := os.CopyFS(want.Root, os.DirFS(store.Root)); err != nil {
				t.Fatal(err)
			}
			if _, err := env.ExecuteActivity(a.UpdatePolicy, updateInput("want", 3, runstore.CheckpointKey(1))); err != nil {
				t.Fatal(err)
			}

			before, _ := os.ReadFile(filepath.Join(store.Root, runstore.MetricsKey))
			damage(t, store)
			if _, err := a.readCheckpoint(ctx, store, runstore.CheckpointKey(2)); err == nil {
				t.Fatal("the damage went unnoticed")
			}
			// Sampling steps over it too.
			_, used, fb, err := a.samplingBackend(ctx, store, "r", runstore.CheckpointKey(2))
			if err != nil || used != runstore.CheckpointKey(1) {
				t.Fatalf("sampling's policy: used %q, %v; want %s", used, err, runstore.CheckpointKey(1))
			}
			// ... and says so, for the workflow to show (SampleRef.Fallback).
			if fb == nil || fb.Damaged != runstore.CheckpointKey(2) || fb.Used != runstore.CheckpointKey(1) {
				t.Fatalf("sampling's fallback %+v: want one from %s to %s", fb, runstore.CheckpointKey(2), runstore.CheckpointKey(1))
			}
			v, err := env.ExecuteActivity(a.UpdatePolicy, updateInput("r", 3, runstore.CheckpointKey(2)))
			if err != nil {
				t.Fatalf("a damaged checkpoint must not fail the update: %v", err)
			}
			var up UpdateResult
			v.Get(&up)
			if up.Checkpoint != runstore.CheckpointKey(3) || !strings.Contains(up.Fallback, runstore.CheckpointKey(2)) || !strings.Contains(up.Fallback, "continued from "+runstore.CheckpointKey(1)) {
				t.Fatalf("update result %+v: want checkpoint 3 and a fallback from 2 to 1", up)
			}
			if blobOf(t, store, runstore.CheckpointKey(3))[len(store.Root):] != blobOf(t, want, runstore.CheckpointKey(3))[len(want.Root):] {
				t.Error("checkpoint 3 is not the update of checkpoint 1")
			}
			if _, err := a.readCheckpoint(ctx, store, runstore.CheckpointKey(3)); err != nil {
				t.Errorf("the new checkpoint does not load: %v", err)
			}

			// Nothing already done is lost: iterations 1 and 2's metric lines, every sample.
			after, _ := os.ReadFile(filepath.Join(store.Root, runstore.MetricsKey))
			lines := strings.Split(strings.TrimSpace(string(after)), "\n")
			if len(lines) != 3 || !strings.HasPrefix(string(after), string(before)) {
				t.Fatalf("metrics.jsonl:\n%s\nwant the two earlier lines kept and a third", after)
			}
			var m IterationMetrics
			json.Unmarshal([]byte(lines[2]), &m)
			if m.Iteration != 3 || !strings.Contains(m.CheckpointFallback, runstore.CheckpointKey(2)) || len(m.Used) != 4 {
				t.Errorf("metrics line 3 %+v: want the fallback recorded and the 4 samples used", m)
			}
			for it := 1; it <= 3; it++ {
				for k := 0; k < 4; k++ {
					s := runstore.Sample(fmt.Sprintf("it%04d-s%03d", it, k))
					for _, f := range []string{s.Record(), s.Result()} {
						if _, err := os.Stat(filepath.Join(store.Root, f)); err != nil {
							t.Errorf("lost %v", err)
						}
					}
				}
			}
			rec, _ := os.ReadFile(filepath.Join(store.Root, runstore.RecoveryKey))
			if fbs := readFallbacks(rec); len(fbs) != 1 || fbs[0].Damaged != runstore.CheckpointKey(2) || fbs[0].Used != runstore.CheckpointKey(1) || fbs[0].Reason == "" {
				t.Errorf("%s: %s, want one fallback from 2 to 1 with its reason (sampling and the update record it once)", runstore.RecoveryKey, rec)
			}
		})
	}
}

// When every checkpoint is damaged there is nothing to fall back to: a non-retryable error
// names them all.
func TestNoGoodCheckpointIsANamedError(t *testing.T) {
	root := t.TempDir()
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: tasks.Builtin()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	trainedRun(t, a, env, store, "r")
	for it := 0; it <= 2; it++ {
		os.WriteFile(blobOf(t, store, runstore.CheckpointKey(it)), []byte("{"), 0o644)
	}
	_, err := env.ExecuteActivity(a.UpdatePolicy, updateInput("r", 3, runstore.CheckpointKey(2)))
	if err == nil || !strings.Contains(err.Error(), ErrBadInput) || !strings.Contains(err.Error(), "no good checkpoint") ||
		!strings.Contains(err.Error(), "iter-0000") {
		t.Fatalf("got %v", err)
	}
}

// RecoverState rebuilds a failed run's state from its artifacts: the newest good checkpoint,
// the metrics up to it, the best score and the fallbacks recorded.
func TestRecoverStateFromArtifacts(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	root := t.TempDir()
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: tasks.Builtin(), Layout: tasks.Layout{DataDir: dataDir}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	trainedRun(t, a, env, store, "r")
	best := 0.5
	in := updateInput("r", 2, runstore.CheckpointKey(1))
	in.Metrics.BestScore = &best
	if _, err := env.ExecuteActivity(a.UpdatePolicy, in); err != nil { // iteration 2 again, with a best score
		t.Fatal(err)
	}
	rec := func() RunState {
		t.Helper()
		v, err := env.ExecuteActivity(a.RecoverState, RecoverInput{Run: "r", Task: "leaf-classification", Attempt: 1})
		if err != nil {
			t.Fatal(err)
		}
		var st RunState
		v.Get(&st)
		return st
	}
	st := rec()
	if st.Iteration != 2 || st.Checkpoint != runstore.CheckpointKey(2) || len(st.Recent) != 2 || st.Best == nil || *st.Best != best ||
		st.SamplesDone != 8 || st.Task != leafTask || len(st.Fallbacks) != 0 {
		t.Fatalf("recovered %+v", st)
	}
	// Iteration 3's programs completed but no update used them: they are carried, not rerun.
	if ids := carried(st); ids != "it0003-s000 it0003-s001 it0003-s002 it0003-s003" {
		t.Fatalf("carried %q, want iteration 3's four completed programs", ids)
	}
	os.WriteFile(blobOf(t, store, runstore.CheckpointKey(2)), []byte("{}"), 0o644)
	st = rec()
	if st.Iteration != 1 || st.Checkpoint != runstore.CheckpointKey(1) || len(st.Recent) != 1 || len(st.Fallbacks) != 1 {
		t.Fatalf("with checkpoint 2 damaged, recovered %+v; want iteration 1 and the fallback", st)
	}
	// Iteration 2 is done again: the programs its lost update used are carried with iteration 3's.
	if ids := carried(st); !strings.HasPrefix(ids, "it0002-s000 it0002-s001 it0002-s002 it0002-s003 it0003-s000") {
		t.Fatalf("carried %q, want iterations 2 and 3's programs", ids)
	}
}

func carried(st RunState) string {
	var ids []string
	for _, r := range st.Carry {
		ids = append(ids, r.SampleID)
	}
	return strings.Join(ids, " ")
}
