package settings

import (
	"flag"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"mlerl/model/ppo"
)

func TestDefaultsAreValid(t *testing.T) {
	if err := Defaults().Validate(); err != nil {
		t.Fatal(err)
	}
}

// The automatic reward folds follow the task and the protocol; a number given is kept, so an
// impossible one still reaches the check that names it.
func TestForTaskDecidesRewardFolds(t *testing.T) {
	for _, c := range []struct {
		name     string
		folds    int
		protocol Protocol
		carved   int
		want     int
	}{
		{"auto, three carved", RewardFoldsAuto, LeakFree, 3, 3},
		{"auto, five carved", RewardFoldsAuto, LeakFree, 5, 3},
		{"auto, one carved", RewardFoldsAuto, LeakFree, 1, 1},
		{"auto, two carved", RewardFoldsAuto, LeakFree, 2, 1},
		{"auto, test split", RewardFoldsAuto, Paper, 3, 1},
		{"given one", 1, LeakFree, 3, 1},
		{"given two", 2, LeakFree, 3, 2},
		{"given more than carved", 4, LeakFree, 3, 4},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Defaults()
			s.RewardFolds, s.Protocol = c.folds, c.protocol
			got := s.ForTask(c.carved)
			if got.RewardFolds != c.want {
				t.Fatalf("RewardFolds %d, want %d", got.RewardFolds, c.want)
			}
			got.RewardFolds = s.RewardFolds
			if !reflect.DeepEqual(got, s) {
				t.Fatalf("ForTask changed more than RewardFolds: %+v", got)
			}
		})
	}
}

// Best-of-K gets EvalShare of the budget from training's end, capped where it always stopped.
func TestEvalDeadline(t *testing.T) {
	const budget = 2400.0
	for _, c := range []struct {
		name          string
		trainingEnded float64
		want          float64
	}{
		{"training used its share", 1440, 1920},
		{"training overshot its share", 1500, 1920},
		{"iterations ended training at 39%", 936, 1416},
		{"training ended at once", 0, 480},
		{"training ended past the cap", 2000, 1920},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := EvalDeadline(budget, c.trainingEnded); math.Abs(got-c.want) > 1e-9 {
				t.Fatalf("EvalDeadline(%v, %v) = %v, want %v", budget, c.trainingEnded, got, c.want)
			}
		})
	}
}

// Every rule names the flag a user types (or the preset key where there is none).
func TestValidateNamesTheSetting(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*Settings)
		want string
	}{
		{"zero iterations", func(s *Settings) { s.Iterations = 0 }, "--iterations must be at least 1"},
		{"zero batch", func(s *Settings) { s.Batch = 0 }, "--batch must be at least 1"},
		{"zero oversample", func(s *Settings) { s.Oversample = 0 }, "--oversample must be at least 1"},
		{"zero eval samples", func(s *Settings) { s.EvalSamples = 0 }, "--eval-samples must be at least 1"},
		{"zero continue-every", func(s *Settings) { s.ContinueEvery = 0 }, "--continue-every must be at least 1"},
		{"bad protocol", func(s *Settings) { s.Protocol = "test" }, "--protocol must be leak-free or paper"},
		{"negative reward folds", func(s *Settings) { s.RewardFolds = -1 }, "--reward-folds must be 0 (automatic"},
		{"reward folds on the test split", func(s *Settings) { s.RewardFolds, s.Protocol = 2, Paper }, "only the leak-free protocol uses"},
		{"negative redraws", func(s *Settings) { s.RedrawRepeats = -1 }, "--redraw-repeats must be 0"},
		{"negative improve edit", func(s *Settings) { s.ImproveEdit = -1 }, "--improve-edit must be 0"},
		{"edits with an llm", func(s *Settings) { s.ImproveEdit, s.RedrawRepeats, s.Backend = 2, 0, BackendLLM }, "--improve-edit applies to the network policy"},
		{"negative staleness", func(s *Settings) { s.StalenessIterations = -1 }, "--staleness must be 0"},
		{"negative buffer", func(s *Settings) { s.BufferCapacity = -1 }, "--buffer must not be negative"},
		{"unknown backend", func(s *Settings) { s.Backend = "gpt" }, "--policy must be network or llm"},
		{"redraws with an llm", func(s *Settings) { s.RedrawRepeats, s.Backend = 2, BackendLLM }, "drop it with --policy llm"},
		{"unknown init", func(s *Settings) { s.Init = "zeros" }, "--init must be warm-start or uniform"},
		{"unknown improve-from", func(s *Settings) { s.ImproveFrom = "worst" }, "--improve-from must be mixed, best, recent or failed-close"},
		{"improve fraction above 1", func(s *Settings) { s.ImproveFraction = 1.5 }, "--improve-fraction must be in [0, 1]"},
		{"negative sandbox budget", func(s *Settings) { s.SandboxSeconds = -1 }, "--sandbox-seconds must be 0"},
		{"unknown per-run instrumenter", func(s *Settings) { s.Instrumenter = "ast" }, "instrumenter must be empty"},
		{"negative final candidates", func(s *Settings) { s.FinalCandidates = -1 }, "--final-candidates must be 0"},
		{"no tuning bound", func(s *Settings) { s.FinalTuneBudget, s.TimeBudget = 0, 0 }, "the final answer's tuning needs a bound"},
		{"negative tuning budget", func(s *Settings) { s.FinalTuneBudget = -1 }, "--final-tune-budget must be 0"},
		{"one final fold", func(s *Settings) { s.FinalFolds = 1 }, "--final-folds must be at least 2"},
		{"zero ensemble rounds", func(s *Settings) { s.EnsembleRounds = 0 }, "--ensemble-rounds must be at least 1"},
		{"zero top-p", func(s *Settings) { s.Policy.TopP = 0 }, "top_p in (0, 1]"},
		{"unknown reward", func(s *Settings) { s.Reward = "clipped" }, "--reward must be paper or bounded"},
		{"negative learning rate", func(s *Settings) { s.PPO.LearningRate = -1 }, "--learning-rate (ppo.learning_rate) must not be negative"},
		{"unknown shaping", func(s *Settings) { s.PPO.RewardShaping = "ranked" }, "--reward-shaping (ppo.reward_shaping) must be none or rank"},
		{"unknown advantage", func(s *Settings) { s.PPO.Advantage = "risky" }, "--advantage (ppo.advantage) must be gae or risk-seeking"},
		{"risk-seeking with no share", func(s *Settings) { s.PPO.Advantage, s.PPO.RiskEpsilon = ppo.AdvantageRiskSeeking, 0 }, "--risk-epsilon (ppo.risk_epsilon) must be in (0, 1]"},
		{"a ppo key without a flag", func(s *Settings) { s.PPO.ClipRatio = 2 }, "ppo.clip_ratio must be in (0, 1)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Defaults()
			c.edit(&s)
			if err := s.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
}

func TestFlagsSetEverySettingTheyName(t *testing.T) {
	s := Defaults()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	s.Register(fs)
	err := fs.Parse([]string{"--iterations", "3", "--protocol", "paper", "--improve-from", "recent", "--init", "uniform",
		"--policy", "llm", "--no-duration-weight", "--reward-shaping", "none", "--redraw-repeats", "0",
		"--final-candidates", "3", "--final-folds", "4", "--ensemble-rounds", "7", "--advantage", "risk-seeking",
		"--risk-epsilon", "0.5", "--learning-rate", "0", "--sandbox-seconds", "120", "--seed", "9"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Iterations != 3 || s.Protocol != Paper || s.ImproveFrom != ImproveRecent || s.Init != InitUniform || s.Backend != BackendLLM ||
		s.PPO.DurationWeight || s.PPO.RewardShaping != ppo.ShapingNone || s.RedrawRepeats != 0 ||
		s.FinalCandidates != 3 || s.FinalFolds != 4 || s.EnsembleRounds != 7 || s.PPO.Advantage != ppo.AdvantageRiskSeeking ||
		s.PPO.RiskEpsilon != 0.5 || s.PPO.LearningRate != 0 || s.SandboxSeconds != 120 || s.Seed != 9 {
		t.Fatalf("flags not applied: %+v", s)
	}
	// The defaults a user sees in -h are the platform's.
	if d := fs.Lookup("batch").DefValue; d != "8" {
		t.Errorf("--batch default %s", d)
	}
	if d := fs.Lookup("no-duration-weight").DefValue; d != "false" {
		t.Errorf("--no-duration-weight default %s", d)
	}
	if fs.Lookup("improve-from") == nil || fs.Lookup("slots") != nil {
		t.Errorf("Register binds the settings' flags only (improve-from, not slots)")
	}
}

func TestPaperPresetUnderFlags(t *testing.T) {
	p, err := LoadPreset("paper")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Resolve(p.Run)
	if err != nil {
		t.Fatal(err)
	}
	if s.PPO.LearningRate != 1e-5 || !s.PPO.DurationWeight || p.LLMMaxTokens != 1024 || s.Batch != 128 || s.Protocol != Paper ||
		s.Iterations != Defaults().Iterations {
		t.Fatalf("paper preset: %+v", p)
	}
	// The platform's defaults that are not the paper's are undone by the preset.
	d := Defaults()
	if d.ImproveFrom == ImproveMixed || d.RedrawRepeats == 0 || d.FinalCandidates == 0 || d.PPO.RewardShaping == ppo.ShapingNone {
		t.Fatalf("the test expects defaults beyond the paper's: %+v", d)
	}
	if s.ImproveFrom != ImproveMixed || s.RedrawRepeats != 0 || s.FinalCandidates != 0 || s.PPO.RewardShaping != ppo.ShapingNone || s.PPO.Advantage != ppo.AdvantageGAE {
		t.Fatalf("the paper preset keeps platform defaults the paper did not have: %+v", s)
	}
	given := Defaults()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	given.Register(fs)
	if err := fs.Parse([]string{"--batch", "16", "--no-duration-weight", "--learning-rate", "0.002"}); err != nil {
		t.Fatal(err)
	}
	if s, err = Resolve(p.Run, FlagOverlay(fs, &given)); err != nil {
		t.Fatal(err)
	}
	if s.Batch != 16 || s.PPO.DurationWeight || s.PPO.LearningRate != 0.002 || s.EvalSamples != 128 || s.Protocol != Paper {
		t.Fatalf("flags over the preset: %+v", s)
	}
}

func TestPresetFilesAreChecked(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ name, yaml, want string }{
		{"typo", "run:\n  ppo:\n    clip_ration: 0.2\n", "ppo.clip_ration (line 3): not a run setting; did you mean ppo.clip_ratio?"},
		{"a run key that is not a run setting", "run:\n  slots: 4\n", "slots (line 2): not a run setting"},
		{"a section that is not", "ppo_:\n  clip_ratio: 0.2\n", "field ppo_ not found"},
		{"a section outside run:", "ppo:\n  clip_ratio: 0.2\n", "ppo: a section of settings goes under run:"},
		{"bad clip", "run:\n  ppo:\n    clip_ratio: 2\n", "sets ppo.clip_ratio (line 3): ppo.clip_ratio must be in (0, 1)"},
		{"bad estimator", "run:\n  ppo:\n    kl_estimator: k2\n", "ppo.kl_estimator must be k1 or k3"},
		{"bad shaping", "run:\n  ppo:\n    reward_shaping: ranked\n", "ppo.reward_shaping) must be none or rank"},
		{"bad advantage", "run:\n  ppo:\n    advantage: ppo\n", "ppo.advantage) must be gae or risk-seeking"},
		{"bad risk share", "run:\n  ppo:\n    advantage: risk-seeking\n    risk_epsilon: 0\n", "ppo.risk_epsilon) must be in (0, 1]"},
		{"bad top-p", "run:\n  policy:\n    top_p: 0\n", "top_p in (0, 1]"},
		{"bad run setting", "run:\n  protocol: test\n", "--protocol must be leak-free or paper"},
		{"negative token cap", "llm:\n  max_tokens: -1\n", "llm.max_tokens must not be negative"},
	} {
		f := filepath.Join(dir, c.name+".yaml")
		os.WriteFile(f, []byte(c.yaml), 0o644)
		if _, err := LoadPreset(f); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), f) {
			t.Errorf("%s: got %v, want an error naming the file and %q", c.name, err, c.want)
		}
	}
	if _, err := LoadPreset("papr"); err == nil || !strings.Contains(err.Error(), "not a built-in preset (paper)") {
		t.Errorf("unknown preset: %v", err)
	}
}

// A task's measured settings are checked like a preset's run section when its spec is read, and
// laid over exactly the keys they name.
func TestMeasuredSettings(t *testing.T) {
	type spec struct {
		Run Measured `yaml:"run"`
	}
	for _, c := range []struct {
		name, yaml string
		want       func(*Settings) // the edit over the defaults; nil: an error is wanted
		err        string
	}{
		{"absent", "other: 1\n", func(*Settings) {}, ""},
		{"one key", "run:\n  final_tune_budget: 8\n", func(s *Settings) { s.FinalTuneBudget = 8 }, ""},
		{"several", "run:\n  iterations: 20\n  eval_samples: 16\n  final_folds: 10\n",
			func(s *Settings) { s.Iterations, s.EvalSamples, s.FinalFolds = 20, 16, 10 }, ""},
		{"typo", "run:\n  final_tune_budjet: 8\n", nil, "run.final_tune_budjet (line 2): not a run setting; did you mean final_tune_budget?"},
		{"not a run setting", "run:\n  slots: 4\n", nil, "run.slots (line 2): not a run setting"},
		{"not a number", "run:\n  iterations: many\n", nil, "line 2: cannot unmarshal"},
		{"a section's key", "run:\n  policy:\n    top_p: 0.9\n", func(s *Settings) { s.Policy.TopP = 0.9 }, ""},
		{"not a key of the section", "run:\n  policy:\n    topp: 0.9\n", nil, "run.policy.topp (line 3): not a run setting; did you mean policy.top_p?"},
		{"bad value", "run:\n  final_tune_budget: -1\n", nil, "--final-tune-budget must be 0"},
		{"seed", "run:\n  seed: 7\n", nil, "must not fix the seed"},
		{"not a mapping", "run: [final_tune_budget]\n", nil, "run (line 1): must be a mapping"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got spec
			err := yaml.Unmarshal([]byte(c.yaml), &got)
			if c.want == nil {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("got %v, want an error with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := Defaults()
			c.want(&want)
			if s := got.Run.Over(Defaults()); s != want {
				t.Fatalf("over the defaults: %+v, want %+v", s, want)
			}
		})
	}
	var one spec
	if err := yaml.Unmarshal([]byte("run:\n  iterations: 20\n  final_tune_budget: 1\n"), &one); err != nil {
		t.Fatal(err)
	}
	if got := one.Run.String(); got != "iterations=20 final_tune_budget=1" {
		t.Errorf("String() = %q", got)
	}
	// Over lays only the named keys: a setting changed below them stays.
	base := Defaults()
	base.Batch = 3
	if s := one.Run.Over(base); s.Batch != 3 || s.Iterations != 20 {
		t.Errorf("Over changed an unnamed setting or missed a named one: %+v", s)
	}
}
