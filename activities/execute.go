package activities

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"go.temporal.io/sdk/activity"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/grading"
	"mlerl/reward"
	"mlerl/sandbox"
	"mlerl/tasks"
)

// Heartbeat is what an execution reports while it runs.
type Heartbeat struct {
	ElapsedS    float64 `json:"elapsed_s"`
	LastMarker  string  `json:"last_marker"`
	OutputBytes int64   `json:"output_bytes"`
}

// maxSubmissionBytes bounds what we read back from an untrusted program, unless the task's
// answers are large (submissionLimit).
const maxSubmissionBytes = 64 << 20

// submissionLimit is the most of a submission read back, graded and stored: 64 MiB, or four
// times the answers' size where that is more (a task graded pixel by pixel has answers of
// millions of rows), the share grading's own size limit allows.
func submissionLimit(answers string) int64 {
	lim := int64(maxSubmissionBytes)
	if st, err := os.Stat(answers); err == nil && 4*st.Size()+1<<20 > lim {
		lim = 4*st.Size() + 1<<20
	}
	return lim
}

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
	return a.execute(ctx, store, in.Task, in.SampleID, a.Layout.Dirs(in.Task, in.Split), runstore.Sample(in.SampleID), rewardOf)
}

// executeFolds runs the program on validation folds 1..folds in turn and rewards the mean of
// their scores, so that a program confidently right on one small split by luck does not win.
// Fold 1 is stored as a single-split run is (the improve prompts read its output); the others
// in their own folders (runstore.SampleDir.Fold). The first fold without a valid submission
// ends it: that fold's outcome is the result, so a failing program costs no more than on one
// split.
func (a *Activities) executeFolds(ctx context.Context, store artifacts.Store, taskID, id string, folds int, rewardOf func(reward.Outcome) float64) (ExecuteResult, error) {
	spec, err := a.spec(taskID)
	if err != nil {
		return ExecuteResult{}, err
	}
	if have := spec.Validation.FoldCount(); folds > have {
		return ExecuteResult{}, badInput("%d reward folds asked, but task %s carves %d validation folds: lower --reward-folds or raise validation.folds in its spec and prepare it again", folds, taskID, have)
	}
	sample := runstore.Sample(id)
	var total ExecuteResult
	var scores []float64
	duration := 0.0
	for f := 1; f <= folds; f++ {
		dir := sample.Fold(f)
		res, err := a.execute(ctx, store, taskID, id, a.Layout.FoldDirs(spec.ID, f), dir, rewardOf)
		if err != nil {
			if ctx.Err() != nil && f > 1 {
				// Cancelled during a later fold: an update may still use the sample, so its
				// result must be that unfinished fold's partial credit, not fold 1's score.
				bg := context.Background()
				var r ExecuteResult
				if getJSON(bg, store, dir.Result(), &r) == nil {
					r.DurationS, r.FoldScores = r.DurationS+duration, scores
					putJSON(bg, store, sample.Result(), r)
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
	if err := putJSON(ctx, store, sample.Result(), total); err != nil {
		return ExecuteResult{}, err
	}
	return total, nil
}

// execute runs a sample's program on one split's public folder and grades it on that split's
// private answers, storing its output, submission and result in out (the sample's folder, or
// one of its sub-folders for another split); rewardOf is the run's reward scheme.
func (a *Activities) execute(ctx context.Context, store artifacts.Store, taskID, id string, dirs tasks.Dirs, out runstore.SampleDir, rewardOf func(reward.Outcome) float64) (ExecuteResult, error) {
	spec, err := a.spec(taskID)
	if err != nil {
		return ExecuteResult{}, err
	}
	sample := runstore.Sample(id)
	prog, err := store.Get(ctx, sample.Instrumented())
	if errors.Is(err, artifacts.ErrNotFound) {
		prog, err = store.Get(ctx, sample.Program())
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
			// Analysis tools call the activities directly (lab/tools/selection),
			// where there is no activity to heartbeat and the SDK would panic.
			if activity.IsActivity(ctx) {
				activity.RecordHeartbeat(ctx, Heartbeat{ElapsedS: p.Elapsed.Seconds(),
					LastMarker: reward.LastMarker(reward.FoundMarkers(p.LastLine)), OutputBytes: p.OutputBytes})
			}
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
		store.Put(bg, out.Output(), []byte(run.Output))
		putJSON(bg, store, out.Result(), res)
		return ExecuteResult{}, ctx.Err()
	}
	if err != nil {
		return ExecuteResult{}, err // the sandbox failed, not the program: retry
	}
	// Grading and storing a submission of millions of rows outlasts the heartbeat timeout.
	defer keepAlive(ctx)()
	markers := reward.FoundMarkers(run.Output)
	res := ExecuteResult{SampleID: id, Markers: len(markers), LastMarker: reward.LastMarker(markers),
		DurationS: run.Duration.Seconds(), TimedOut: run.TimedOut, ExitCode: run.ExitCode}
	ran := run.ExitCode == 0 && !run.TimedOut && run.Failure == ""
	subFile := filepath.Join(work, "submission.csv")
	switch {
	case run.TimedOut:
		res.Reason = fmt.Sprintf("timed out after %ds", spec.Limits.WallSeconds)
		if run.DiskFull { // a full disk slows writers down (and may be why it ran out of time)
			res.Reason += fmt.Sprintf(", having reached its disk limit (%d MiB)", spec.Limits.Disk())
		}
	case run.OutOfMemory:
		res.Reason = fmt.Sprintf("ran out of memory (%d MiB)", spec.Limits.MemoryMB)
	case run.DiskFull:
		res.Reason = fmt.Sprintf("disk limit exceeded (%d MiB)", spec.Limits.Disk())
	case run.Failure != "":
		res.Reason = run.Failure
	case !ran:
		res.Reason = fmt.Sprintf("exited with code %d", run.ExitCode)
	}
	if st, err := os.Lstat(subFile); err == nil {
		res.Submitted = true
		// Lstat, not Stat: a program could leave a symlink to a host file (the answers, say),
		// which must never be read, graded or stored.
		limit := submissionLimit(filepath.Join(dirs.Private, spec.Files.Answers))
		regular := st.Mode().IsRegular() && st.Size() <= limit
		if !regular {
			res.Reason = fmt.Sprintf("submission.csv is not a regular file under %d MiB", limit>>20)
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
				if err := store.Put(ctx, out.Submission(), b); err != nil {
					return ExecuteResult{}, err
				}
			}
		}
	} else if ran && res.Reason != "" {
		res.Reason = "the program wrote no submission.csv (" + res.Reason + ")" // a full disk, say
	} else if ran {
		res.Reason = "the program wrote no submission.csv"
	}
	res.Reward = rewardOf(reward.Outcome{Ran: ran, Markers: markers, Score: res.Score, LowerIsBetter: spec.LowerIsBetter()})
	if err := store.Put(ctx, out.Output(), []byte(run.Output)); err != nil {
		return ExecuteResult{}, err
	}
	if err := putJSON(ctx, store, out.Result(), res); err != nil {
		return ExecuteResult{}, err
	}
	return res, nil
}
