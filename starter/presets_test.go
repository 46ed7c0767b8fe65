package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mlerl/internal/testenv"
	"mlerl/model/ppo"
	"mlerl/settings"
	"mlerl/workflows"
)

// The paper preset records the paper's table, and flags given on the command line win over it.
// (planRun builds the run's run.json without starting anything.)
func TestPaperPresetAndFlagsOverIt(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	out := filepath.Join(t.TempDir(), "run")
	plan, err := planRun(context.Background(), []string{"--task", "leaf-classification", "--data-dir", dataDir, "--out", out,
		"--preset", "paper", "--batch", "16", "--temporal-address", "127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	in := plan.info.Input
	want := ppo.Paper()
	want.LearningRate = 1e-5
	if in.PPO != want {
		t.Errorf("PPO %+v, want the paper's %+v", in.PPO, want)
	}
	if in.Batch != 16 || in.EvalSamples != 128 || in.Protocol != settings.Paper || in.Oversample != 2 || in.Policy.Temperature != 0.7 || in.Policy.TopP != 1 || in.RewardFolds != 1 {
		t.Errorf("run settings %+v: want batch 16 from the flag, the rest from the preset", in)
	}
}

// The defaults are the platform's measured best for the network policy: on leaf, which carves
// three validation folds, the reward is their mean (and an execution may take three times as
// long); an llm run drops the redraws (code actions only) unless asked for them.
func TestDefaultsAndTheLLMPolicy(t *testing.T) {
	dataDir := testenv.PreparedData(t, "leaf-classification")
	planned := func(args ...string) workflows.TrainInput {
		t.Helper()
		p, err := planRun(context.Background(), append([]string{"--task", "leaf-classification", "--data-dir", dataDir,
			"--out", filepath.Join(t.TempDir(), "run"), "--temporal-address", "127.0.0.1:1"}, args...))
		if err != nil {
			t.Fatal(err)
		}
		return p.info.Input
	}
	plan := func(args ...string) settings.Settings { return planned(args...).Settings }
	want := settings.Defaults()
	want.RewardFolds = 3
	if d := plan(); d != want || d.RedrawRepeats == 0 {
		t.Fatalf("a run without flags: %+v, want the defaults (with redraws, three reward folds)", d)
	}
	// A user's spec may carry a run: section, laid over the defaults and a preset; flags win
	// over it.
	leaf, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "tasks", "specs", "leaf-classification.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	spec := filepath.Join(t.TempDir(), "leaf.yaml")
	if err := os.WriteFile(spec, append(leaf, "run:\n  final_tune_budget: 8\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if d := plan("--task-spec", spec); d.FinalTuneBudget != 8 {
		t.Errorf("the spec's run: section gave a tuning budget of %v, want 8", d.FinalTuneBudget)
	}
	if d := plan("--task-spec", spec, "--final-tune-budget", "3"); d.FinalTuneBudget != 3 {
		t.Errorf("--final-tune-budget 3 gave %v", d.FinalTuneBudget)
	}
	if d := plan("--task-spec", spec, "--preset", "paper", "--final-tune", "1"); d.FinalTuneBudget != 8 || d.Batch != 128 || d.FinalTune != 1 {
		t.Errorf("the spec's run: section over the paper preset, the flag over both: tuning budget %v (want the spec's 8), batch %d (the preset's 128), final tune %d (the flag's 1)", d.FinalTuneBudget, d.Batch, d.FinalTune)
	}
	one := planned("--reward-folds", "1").ExecTimeout
	for _, c := range []struct {
		args  []string
		folds int
	}{{nil, 3}, {[]string{"--reward-folds", "1"}, 1}, {[]string{"--reward-folds", "2"}, 2}, {[]string{"--protocol", "paper"}, 1}} {
		in := planned(c.args...)
		if in.RewardFolds != c.folds || in.ExecTimeout != time.Duration(c.folds)*one {
			t.Errorf("%v: %d reward folds, exec timeout %v; want %d and %d times one split's %v", c.args, in.RewardFolds, in.ExecTimeout, c.folds, c.folds, one)
		}
	}
	llm := plan("--policy", "llm", "--policy-url", "http://127.0.0.1:1/v1", "--policy-model", "m", "--learning-rate", "0")
	if llm.RedrawRepeats != 0 || llm.Backend != settings.BackendLLM {
		t.Fatalf("an llm run keeps the network's redraws: %+v", llm)
	}
}
