package activities

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/model"
	"mlerl/sandbox"
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
	}{
		{"crash after loading", "import pandas as pd\ntrain = pd.read_csv('input/train.csv')\nraise ValueError('boom')\n", -9.8, false},
		{"timeout after importing", "import time\nimport pandas as pd\ntime.sleep(60)\n", -9.9, true},
		{"runs but writes nothing", "import pandas as pd\n", -9.9, false},
		{"a symlink as the submission is never read", "import os\nimport pandas as pd\nos.symlink('/etc/passwd', 'submission.csv')\n", -9.9, false},
	}
	for i, c := range cases {
		id := "case-" + string(rune('a'+i))
		store.Put(context.Background(), sampleKey(id, "program.py"), []byte(c.program))
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
		if _, err := os.Stat(filepath.Join(store.Root, "samples", id, "output.txt")); err != nil {
			t.Errorf("%s: output not stored", c.name)
		}
		if _, err := os.Lstat(filepath.Join(store.Root, "samples", id, "submission.csv")); err == nil {
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
		if e := pickPrevious(b, ImproveBest, rng); e.Prev.Reward < 3 {
			t.Fatalf("best picked reward %v", e.Prev.Reward)
		}
		if e := pickPrevious(b, ImproveRecent, rng); e.SampleID < "6" {
			t.Fatalf("recent picked %s", e.SampleID)
		}
		if e := pickPrevious(b, ImproveFailedClose, rng); e.Prev.Valid || e.Prev.LastMarker < 3 {
			t.Fatalf("failed-close picked %+v", e.Prev)
		}
	}
}
