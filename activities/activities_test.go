package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/grading"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/model"
	"mlerl/model/ppo"
	"mlerl/sandbox"
	"mlerl/settings"
	"mlerl/tasks"
)

// A program's crash or timeout is a result with partial credit, never an activity error.
func TestExecuteTurnsCrashesAndTimeoutsIntoResults(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	reg := tasks.Builtin()
	spec, _ := reg.Get("leaf-classification")
	spec.Limits.WallSeconds = 3 // the registry's specs are ours to change in a test
	spec.Limits.DiskMB = 64
	root := t.TempDir()
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb, Instrumenter: instrument.AST{Python: testenv.Python},
		Tasks: reg, Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	cases := []struct {
		name, program string
		reward        float64
		timedOut      bool
		reason        string // when set, the result's reason contains it
	}{
		{"crash after loading", "import pandas as pd\ntrain = pd.read_csv('input/train.csv')\nraise ValueError('boom')\n", -9.8, false, ""},
		{"timeout after importing", "import time\nimport pandas as pd\ntime.sleep(60)\n", -9.9, true, ""},
		{"runs but writes nothing", "import pandas as pd\n", -9.9, false, ""},
		{"a symlink as the submission is never read", "import os\nimport pandas as pd\nos.symlink('/etc/passwd', 'submission.csv')\n", -9.9, false, ""},
		// What the program leaves that copy-out will not bring home is its failure, never a
		// retry (it used to be "file name too long", an activity error re-running the program).
		{"leaves a path over 4,096 bytes", "import os\nimport pandas as pd\ntrain = pd.read_csv('input/train.csv')\nfor i in range(20):\n  os.mkdir('x' * 250)\n  os.chdir('x' * 250)\n", -9.8, false, "cannot be copied out: a path of"},
		{"leaves a sparse file over its disk", "import pandas as pd\ntrain = pd.read_csv('input/train.csv')\nopen('big', 'wb').truncate(1 << 30)\n", -9.8, false, "more than the 64 MiB disk limit once copied"},
		{"fills its disk", "import pandas as pd\ntrain = pd.read_csv('input/train.csv')\nwith open('big', 'wb') as f:\n  for i in range(200): f.write(b'x' * (1 << 20))\n", -9.8, false, "disk limit exceeded (64 MiB)"},
	}
	for i, c := range cases {
		id := "case-" + string(rune('a'+i))
		store.Put(context.Background(), runstore.Sample(id).Program(), []byte(c.program))
		if _, err := env.ExecuteActivity(a.InstrumentPrograms, InstrumentInput{Run: "r", SampleIDs: []string{id}}); err != nil {
			t.Fatal(err)
		}
		v, err := env.ExecuteActivity(a.ExecuteProgram, ExecuteInput{Run: "r", Task: spec.ID, SampleID: id, Split: tasks.SplitValidation})
		if err != nil {
			t.Fatalf("%s: a program's failure must not be an activity error: %v", c.name, err)
		}
		var res ExecuteResult
		v.Get(&res)
		if res.Valid || res.TimedOut != c.timedOut || res.Reward < c.reward-1e-9 || res.Reward > c.reward+1e-9 || res.Reason == "" {
			t.Errorf("%s: %+v, want reward %v, timed out %v, and a reason", c.name, res, c.reward, c.timedOut)
		}
		if !strings.Contains(res.Reason, c.reason) {
			t.Errorf("%s: reason %q, want it to say %q", c.name, res.Reason, c.reason)
		}
		if _, err := os.Stat(filepath.Join(store.Root, runstore.Sample(id).Output())); err != nil {
			t.Errorf("%s: output not stored", c.name)
		}
		if _, err := os.Lstat(filepath.Join(store.Root, runstore.Sample(id).Submission())); err == nil {
			t.Errorf("%s: no submission should have been stored", c.name)
		}
	}
}

func TestExecuteRejectsAnUnknownTaskAsBadInput(t *testing.T) {
	a := &Activities{Runs: artifacts.FSRuns{Root: t.TempDir()}, Tasks: tasks.Builtin(), Layout: tasks.Layout{DataDir: t.TempDir()}}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	_, err := env.ExecuteActivity(a.ExecuteProgram, ExecuteInput{Run: "r", Task: "no-such-task", SampleID: "x", Split: tasks.SplitValidation})
	if err == nil || !contains(err.Error(), ErrBadInput) || !contains(err.Error(), "unknown task") {
		t.Fatalf("want a non-retryable BadInput error naming the task, got %v", err)
	}
}

func TestBufferKeepsBestAndRecent(t *testing.T) {
	var b []bufferEntry
	for i, r := range []float64{-10, -0.1, -9, -8, -0.2, -10, -10, -10} {
		b = append(b, bufferEntry{SampleID: string(rune('a' + i)), Prev: model.Previous{Reward: r}})
	}
	got := trimBuffer(b, 4)
	ids := ""
	for _, e := range got {
		ids += e.SampleID
	}
	if ids != "begh" { // best two of the older six (b, e), then the two most recent (g, h)
		t.Fatalf("kept %q", ids)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

func TestDescribeTaskReadsCSVAndJSON(t *testing.T) {
	for _, c := range []struct {
		id   string
		want model.Task
	}{
		{"leaf-classification", model.Task{Modality: "tabular-classification", LowerIsBetter: true, Classes: 99, Features: 192, Rows: 891}},
		{"random-acts-of-pizza", model.Task{Modality: "text-classification", Classes: 1, Features: 16, Rows: 2878}},
	} {
		spec, _ := tasks.Builtin().Get(c.id)
		got, err := describeTask(spec, tasks.Layout{DataDir: testenv.PreparedData(t, c.id)})
		if err != nil || got != c.want {
			t.Errorf("%s: %+v %v, want %+v", c.id, got, err, c.want)
		}
	}
}

func TestPickPreviousFollowsTheStrategy(t *testing.T) {
	var b []bufferEntry
	for i := 0; i < 10; i++ {
		b = append(b, bufferEntry{SampleID: fmt.Sprint(i), Prev: model.Previous{Reward: float64(i % 5), Valid: i%2 == 0, LastMarker: i}})
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for k := 0; k < 50; k++ {
		if e := pickPrevious(b, settings.ImproveBest, rng); e.Prev.Reward < 3 {
			t.Fatalf("best picked reward %v", e.Prev.Reward)
		}
		if e := pickPrevious(b, settings.ImproveRecent, rng); e.SampleID < "6" {
			t.Fatalf("recent picked %s", e.SampleID)
		}
		if e := pickPrevious(b, settings.ImproveFailedClose, rng); e.Prev.Valid || e.Prev.LastMarker < 3 {
			t.Fatalf("failed-close picked %+v", e.Prev)
		}
	}
}

// With reward folds the program runs on each validation fold; its score is the mean of the
// folds' grades (checked against the stored fold submissions), and the first failing fold ends
// the run with that fold's outcome.
func TestExecuteOnFoldsRewardsTheMeanScore(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	reg := tasks.Builtin()
	spec, _ := reg.Get("leaf-classification")
	layout := tasks.Layout{DataDir: dataDir}
	root := t.TempDir()
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb, Tasks: reg, Layout: layout, ScratchDir: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	run := func(id, program string, in ExecuteInput) (ExecuteResult, error) {
		store.Put(context.Background(), runstore.Sample(id).Program(), []byte(program))
		in.Run, in.Task, in.SampleID = "r", spec.ID, id
		v, err := env.ExecuteActivity(a.ExecuteProgram, in)
		var res ExecuteResult
		if err == nil {
			v.Get(&res)
		}
		return res, err
	}
	// 1-nearest-neighbour with 0.9 on its class: a different score on every fold.
	nearest := `import numpy as np, pandas as pd
from sklearn.neighbors import KNeighborsClassifier
train, test = pd.read_csv('input/train.csv'), pd.read_csv('input/test.csv')
sub = pd.read_csv('input/sample_submission.csv')
X = train.drop(columns=['id', 'species']).values
knn = KNeighborsClassifier(1).fit(X, train['species'])
pred = knn.predict(test.drop(columns=['id']).values)
classes = list(sub.columns[1:])
p = np.full((len(test), len(classes)), 0.1 / (len(classes) - 1))
for i, c in enumerate(pred):
    p[i, classes.index(c)] = 0.9
out = pd.DataFrame(p, columns=classes)
out.insert(0, 'id', test['id'])
out.to_csv('submission.csv', index=False)
`
	folds := spec.Validation.FoldCount()
	res, err := run("nearest", nearest, ExecuteInput{Split: tasks.SplitValidation, Folds: folds})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || len(res.FoldScores) != folds || res.Score == nil {
		t.Fatalf("a valid program on %d folds: %+v", folds, res)
	}
	mean := 0.0
	for f, got := range res.FoldScores {
		g, err := grading.Grade(spec, filepath.Join(store.Root, runstore.Sample("nearest").Fold(f+1).Submission()),
			filepath.Join(layout.FoldDirs(spec.ID, f+1).Private, spec.Files.Answers))
		if err != nil || g.Score == nil || math.Abs(*g.Score-got) > 1e-9 {
			t.Fatalf("fold %d: stored submission grades %v (%v), result says %v", f+1, g.Score, err, got)
		}
		mean += got / float64(folds)
	}
	if res.FoldScores[0] == res.FoldScores[1] || math.Abs(*res.Score-mean) > 1e-9 || math.Abs(res.Reward+mean) > 1e-9 {
		t.Fatalf("score %v and reward %v, want the mean %v of distinct fold scores %v", *res.Score, res.Reward, mean, res.FoldScores)
	}
	var stored ExecuteResult
	if err := getJSON(context.Background(), store, runstore.Sample("nearest").Result(), &stored); err != nil || stored.Score == nil || *stored.Score != *res.Score {
		t.Fatalf("the stored result must be the folds' mean: %+v %v", stored, err)
	}

	// A program that crashes on fold 2 only: fold 2's outcome, fold 3 never runs.
	test2, err := os.ReadFile(filepath.Join(layout.FoldDirs(spec.ID, 2).Public, spec.Files.Test))
	if err != nil {
		t.Fatal(err)
	}
	firstID := strings.SplitN(strings.Split(string(test2), "\n")[1], ",", 2)[0]
	crashOn2 := strings.Replace(nearest, "sub = pd.read_csv", fmt.Sprintf("if str(test['id'][0]) == '%s':\n    raise SystemExit(3)\nsub = pd.read_csv", firstID), 1)
	res, err = run("crash-on-2", crashOn2, ExecuteInput{Split: tasks.SplitValidation, Folds: folds})
	if err != nil {
		t.Fatal(err)
	}
	if res.Valid || res.Score != nil || len(res.FoldScores) != 1 || !strings.Contains(res.Reason, "validation fold 2") || res.Reward > -9 {
		t.Fatalf("a crash on fold 2: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(store.Root, runstore.Sample("crash-on-2").Fold(3).Output())); err == nil {
		t.Fatal("fold 3 ran after fold 2 failed")
	}

	// More folds than the spec carves, or folds on the test split: bad input naming the fix.
	if _, err := run("x", nearest, ExecuteInput{Split: tasks.SplitValidation, Folds: folds + 1}); err == nil || !contains(err.Error(), ErrBadInput) || !contains(err.Error(), "validation.folds") {
		t.Fatalf("too many folds: %v", err)
	}
	if _, err := run("y", nearest, ExecuteInput{Split: tasks.SplitTest, Folds: 2}); err == nil || !contains(err.Error(), ErrBadInput) {
		t.Fatalf("folds on the test split: %v", err)
	}

	// Certain and always wrong (the neighbour's class shifted by one): valid, with a log loss
	// far worse than a crash. The paper's reward is the signed log loss; the bounded one is no
	// worse than the best failure.
	hard := strings.NewReplacer("p[i, classes.index(c)] = 0.9", "p[i, (classes.index(c) + 1) % len(classes)] = 1.0",
		"0.1 / (len(classes) - 1)", "0.0").Replace(nearest)
	paper, err := run("hard-paper", hard, ExecuteInput{Split: tasks.SplitValidation, Reward: "paper"})
	if err != nil || !paper.Valid || paper.Score == nil || *paper.Score < 10 || paper.Reward != -*paper.Score {
		t.Fatalf("hard labels under the paper's reward: %+v %v", paper, err)
	}
	bounded, err := run("hard-bounded", hard, ExecuteInput{Split: tasks.SplitValidation, Folds: folds, Reward: "bounded"})
	if err != nil || !bounded.Valid || math.Abs(bounded.Reward-(-9.3)) > 1e-9 {
		t.Fatalf("hard labels under the bounded reward on %d folds: %+v %v", folds, bounded, err)
	}
	if _, err := run("z", nearest, ExecuteInput{Split: tasks.SplitValidation, Reward: "clipped"}); err == nil || !contains(err.Error(), ErrBadInput) || !contains(err.Error(), "paper or bounded") {
		t.Fatalf("an unknown reward scheme: %v", err)
	}
}

// With RedrawRepeats a training program the run has already sampled is drawn again, so the
// budget goes to new programs: new submissions, not only new text (programs that differ only in
// the validation they print count as repeats); a collapsed policy that can only repeat itself keeps its draw
// after the cap, and a retried activity writes the same programs again.
func TestSampleRedrawsProgramsTheRunAlreadySampled(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	root := t.TempDir()
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: tasks.Builtin(), Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	ctx := context.Background()
	// sample writes ids in batches of 8 (as the workflow tops up) and returns their programs.
	sample := func(run string, cfg model.Config, redraws int, ids []string) (programs []string, refs []SampleRef) {
		t.Helper()
		v, err := env.ExecuteActivity(a.InitPolicy, InitPolicyInput{Run: run, Task: "leaf-classification", Seed: 3, Policy: settings.Policy(cfg), PPO: ppo.Paper()})
		if err != nil {
			t.Fatal(err)
		}
		var init InitPolicyResult
		v.Get(&init)
		for start := 0; start < len(ids); start += 8 {
			v, err := env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: run, Task: "leaf-classification", Descriptor: init.Task,
				Checkpoint: init.Checkpoint, Iteration: 1, IDs: ids[start:min(start+8, len(ids))], Purpose: PurposeTrain, Seed: 3, RedrawRepeats: redraws})
			if err != nil {
				t.Fatal(err)
			}
			var r []SampleRef
			v.Get(&r)
			refs = append(refs, r...)
		}
		for _, id := range ids {
			code, err := artifacts.FS{Root: filepath.Join(root, run)}.Get(ctx, runstore.Sample(id).Program())
			if err != nil {
				t.Fatal(err)
			}
			programs = append(programs, string(code))
		}
		return programs, refs
	}
	distinct := func(programs []string) int {
		seen := map[string]bool{}
		for _, p := range programs {
			seen[p] = true
		}
		return len(seen)
	}
	// submissions counts the distinct submission keys among a run's samples: programs that
	// differ only in the validation they print before refitting write one submission.
	spec, _ := tasks.Builtin().Get("leaf-classification")
	lib, _ := codeactions.For(spec.Modality)
	submissions := func(run string, ids []string) int {
		t.Helper()
		seen := map[string]bool{}
		for _, id := range ids {
			var rec struct {
				Sample model.Sample `json:"sample"`
			}
			b, err := artifacts.FS{Root: filepath.Join(root, run)}.Get(ctx, runstore.Sample(id).Record())
			if err == nil {
				err = json.Unmarshal(b, &rec)
			}
			if err != nil {
				t.Fatal(err)
			}
			key, err := lib.SubmissionKey(rec.Sample.Tokens, codeactions.SchemaOf(spec))
			if err != nil {
				t.Fatal(err)
			}
			seen[lib.Describe(key)] = true
		}
		return len(seen)
	}
	ids := make([]string, 64)
	for k := range ids {
		ids[k] = fmt.Sprintf("it0001-s%03d", k)
	}

	cold := model.DefaultConfig()
	cold.TopP = 0.01 // every draw is the policy's mode
	collapsed, _ := sample("collapsed", cold, 0, ids[:3])
	if distinct(collapsed) != 1 {
		t.Fatalf("a policy with top-p 0.01 should repeat one program, wrote %d distinct", distinct(collapsed))
	}
	capped, refs := sample("capped", cold, 3, ids[:3])
	if distinct(capped) != 1 || refs[0].Redraws != 0 || refs[1].Redraws != 3 || refs[2].Redraws != 3 {
		t.Fatalf("a collapsed policy keeps its program after 3 redraws: %d distinct, refs %+v", distinct(capped), refs)
	}

	narrow := model.DefaultConfig()
	narrow.TopP = 0.7 // a few likely options per slot, as a policy that has learnt
	plain, _ := sample("plain", narrow, 0, ids)
	redrawn, refs := sample("redrawn", narrow, 20, ids)
	if distinct(plain) == len(ids) {
		t.Fatalf("the warm start should repeat some of %d programs without redraws for this test to mean anything", len(ids))
	}
	if distinct(redrawn) != len(ids) || submissions("redrawn", ids) != len(ids) {
		t.Errorf("with redraws %d of %d programs are distinct and %d write distinct submissions (without: %d, %d), want all",
			distinct(redrawn), len(ids), submissions("redrawn", ids), distinct(plain), submissions("plain", ids))
	}
	if submissions("plain", ids) == distinct(plain) {
		t.Errorf("without redraws, no two of the %d distinct programs differ only in what they print: this test does not check that such programs count as repeats", distinct(plain))
	}
	total := 0
	for _, r := range refs {
		total += r.Redraws
	}
	if total == 0 {
		t.Error("no redraw was recorded")
	}
	again, _ := sample("redrawn", narrow, 20, ids)
	if !slices.Equal(again, redrawn) {
		t.Error("sampling the same ids again (a retried activity) wrote different programs")
	}
}

// With ImproveEdit an improve prompt's program is its previous program with that many slots
// redrawn: sample.json marks the kept tokens, and the update reads the marks (a record whose
// marks do not fit its tokens is refused, so they are not dropped on the way).
func TestSampleEditsThePreviousProgram(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	root := t.TempDir()
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Tasks: tasks.Builtin(), Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: t.TempDir()}
	var suite testsuite.WorkflowTestSuite
	env := suite.NewTestActivityEnvironment()
	env.RegisterActivity(a)
	ctx := context.Background()
	store := artifacts.FS{Root: filepath.Join(root, "edit")}
	v, err := env.ExecuteActivity(a.InitPolicy, InitPolicyInput{Run: "edit", Task: "leaf-classification", Seed: 3, Policy: settings.Policy(model.DefaultConfig()), PPO: ppo.Paper()})
	if err != nil {
		t.Fatal(err)
	}
	var init InitPolicyResult
	v.Get(&init)
	prevIDs := []string{"it0001-s000", "it0001-s001", "it0001-s002", "it0001-s003"}
	if _, err := env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "edit", Task: "leaf-classification", Descriptor: init.Task,
		Checkpoint: init.Checkpoint, Iteration: 1, IDs: prevIDs, Purpose: PurposeTrain, Seed: 3}); err != nil {
		t.Fatal(err)
	}
	score := 0.5
	for _, id := range prevIDs { // as if they ran: an improve prompt reads the outcome
		if err := putJSON(ctx, store, runstore.Sample(id).Result(), ExecuteResult{SampleID: id, Reward: -score, Score: &score, Valid: true, DurationS: 1}); err != nil {
			t.Fatal(err)
		}
	}
	editIDs := []string{"eval-improve-000", "eval-improve-001", "eval-improve-002", "eval-improve-003"}
	if _, err := env.ExecuteActivity(a.SamplePrograms, SampleInput{Run: "edit", Task: "leaf-classification", Descriptor: init.Task,
		Checkpoint: init.Checkpoint, Iteration: 1, IDs: editIDs, Purpose: PurposeEvalImprove, ImproveOf: prevIDs, Seed: 3, ImproveEdit: 2}); err != nil {
		t.Fatal(err)
	}
	for k, id := range editIDs {
		var prev, rec sampleRecord
		if err := getJSON(ctx, store, runstore.Sample(prevIDs[k]).Record(), &prev); err != nil {
			t.Fatal(err)
		}
		if err := getJSON(ctx, store, runstore.Sample(id).Record(), &rec); err != nil {
			t.Fatal(err)
		}
		redrawn := 0
		for i, kept := range rec.Sample.Kept {
			if !kept {
				redrawn++
			} else if rec.Sample.Tokens[i] != prev.Sample.Tokens[i] {
				t.Fatalf("%s: slot %d kept but changed from %s's", id, i, prevIDs[k])
			}
		}
		if rec.PrevID != prevIDs[k] || len(rec.Sample.Kept) != len(rec.Sample.Tokens) || redrawn != 2 {
			t.Fatalf("%s: previous %q, %d kept flags for %d tokens, %d redrawn; want an edit of %s redrawing 2 slots", id, rec.PrevID, len(rec.Sample.Kept), len(rec.Sample.Tokens), redrawn, prevIDs[k])
		}
		if err := putJSON(ctx, store, runstore.Sample(id).Result(), ExecuteResult{SampleID: id, Reward: -score, Score: &score, Valid: true, DurationS: 1}); err != nil {
			t.Fatal(err)
		}
	}
	in := UpdateInput{Run: "edit", Checkpoint: init.Checkpoint, Iteration: 1, SampleIDs: editIDs, PPO: ppo.Paper(), Seed: 1, Metrics: IterationMetrics{Iteration: 1, Samples: 4}}
	if _, err := env.ExecuteActivity(a.UpdatePolicy, in); err != nil {
		t.Fatalf("an update on edits: %v", err)
	}
	var rec sampleRecord
	getJSON(ctx, store, runstore.Sample(editIDs[1]).Record(), &rec)
	rec.Sample.Kept = rec.Sample.Kept[:2]
	if err := putJSON(ctx, store, runstore.Sample(editIDs[1]).Record(), rec); err != nil {
		t.Fatal(err)
	}
	in.Iteration, in.Metrics.Iteration = 2, 2
	if _, err := env.ExecuteActivity(a.UpdatePolicy, in); err == nil || !contains(err.Error(), "kept flags") {
		t.Fatalf("an update on a record whose kept flags do not fit its tokens: %v, want them refused", err)
	}
}

// Analysis tools (lab/tools/selection) call FinalGrade directly, outside any
// activity: the sandbox's progress ticks (one a second) must not try to heartbeat, which the
// SDK answers with a panic there.
func TestFinalGradeRunsOutsideAnActivity(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	reg := tasks.Builtin()
	root := t.TempDir()
	a := &Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb, Tasks: reg, Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: t.TempDir()}
	// Uniform probabilities after 2.5 s of printing: at least two progress ticks.
	program := `import time, pandas as pd
for i in range(5):
    print('working', i, flush=True)
    time.sleep(0.5)
sub = pd.read_csv('input/sample_submission.csv')
sub.iloc[:, 1:] = 1.0 / (sub.shape[1] - 1)
sub.to_csv('submission.csv', index=False)
`
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	if err := store.Put(context.Background(), runstore.Sample("it0001-s000").Program(), []byte(program)); err != nil {
		t.Fatal(err)
	}
	res, err := a.FinalGrade(context.Background(), FinalGradeInput{Run: "r", Task: "leaf-classification", SampleID: "it0001-s000", Protocol: settings.LeakFree})
	if err != nil {
		t.Fatal(err)
	}
	// Uniform over 99 classes: log loss ln(99).
	if s := res.Report.Score; s == nil || math.Abs(*s-math.Log(99)) > 1e-3 || res.DurationS < 2 {
		t.Errorf("FinalGrade outside an activity = %+v, want a valid grade of ln(99) after at least 2 s", res)
	}
}
