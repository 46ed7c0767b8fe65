package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/model/ppo"
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
	if in.Batch != 16 || in.EvalSamples != 128 || in.Protocol != "paper" || in.Oversample != 2 || in.Policy.Temperature != 0.7 || in.Policy.TopP != 1 {
		t.Errorf("run settings %+v: want batch 16 from the flag, the rest from the preset", in)
	}
}

func TestPresetFilesAreChecked(t *testing.T) {
	dir := t.TempDir()
	cases := []struct{ name, yaml, want string }{
		{"typo", "ppo:\n  clip_ration: 0.2\n", "field clip_ration not found"},
		{"bad clip", "ppo:\n  clip_ratio: 2\n", "clip_ratio must be in (0, 1)"},
		{"bad estimator", "ppo:\n  kl_estimator: k2\n", "kl_estimator must be k1 or k3"},
		{"bad shaping", "ppo:\n  reward_shaping: ranked\n", "reward_shaping must be none or rank"},
		{"bad advantage", "ppo:\n  advantage: ppo\n", "advantage must be gae or risk-seeking"},
		{"bad risk share", "ppo:\n  advantage: risk-seeking\n  risk_epsilon: 0\n", "risk_epsilon must be in (0, 1]"},
		{"bad top-p", "policy:\n  top_p: 0\n", "top_p in (0, 1]"},
	}
	for _, c := range cases {
		f := filepath.Join(dir, c.name+".yaml")
		os.WriteFile(f, []byte(c.yaml), 0o644)
		if _, err := loadPreset(f); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: got %v, want an error naming the file and %q", c.name, err, c.want)
		}
	}
	p, err := loadPreset("paper")
	if err != nil {
		t.Fatal(err)
	}
	if p.PPO.LearningRate != 1e-5 || !p.PPO.DurationWeight || p.LLM.MaxTokens != 1024 || *p.Run.Batch != 128 {
		t.Errorf("paper preset: %+v", p)
	}
}
