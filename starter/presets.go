package main

import (
	"bytes"
	"embed"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"mlerl/model"
	"mlerl/model/ppo"
)

//go:embed presets/*.yaml
var presetFiles embed.FS

// preset is a YAML file of run settings (starter/presets/paper.yaml is the paper's). Fields left
// out keep the platform's defaults; flags given on the command line win over the preset.
type preset struct {
	Run struct {
		Iterations      *int     `yaml:"iterations"`
		Batch           *int     `yaml:"batch"`
		Oversample      *int     `yaml:"oversample"`
		EvalSamples     *int     `yaml:"eval_samples"`
		Protocol        *string  `yaml:"protocol"`
		ImproveFraction *float64 `yaml:"improve_fraction"`
		RewardFolds     *int     `yaml:"reward_folds"`
		Reward          *string  `yaml:"reward"`
	} `yaml:"run"`
	Policy model.Config `yaml:"policy"`
	LLM    struct {
		MaxTokens int `yaml:"max_tokens"`
	} `yaml:"llm"`
	PPO ppo.Config `yaml:"ppo"`
}

// presetNames lists the embedded presets.
func presetNames() []string {
	entries, _ := presetFiles.ReadDir("presets")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// loadPreset reads an embedded preset by name or a YAML file by path, on top of the defaults.
func loadPreset(nameOrFile string) (*preset, error) {
	data, err := presetFiles.ReadFile("presets/" + nameOrFile + ".yaml")
	source := "preset " + nameOrFile
	if err != nil {
		if data, err = os.ReadFile(nameOrFile); err != nil {
			return nil, fmt.Errorf("--preset %s: not a built-in preset (%s) nor a readable YAML file: %v", nameOrFile, strings.Join(presetNames(), ", "), err)
		}
		source = nameOrFile
	}
	p := &preset{Policy: model.DefaultConfig(), PPO: ppo.Paper()}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(p); err != nil {
		return nil, fmt.Errorf("%s: %w (keys: see starter/presets/paper.yaml)", source, err)
	}
	if err := p.PPO.Validate(); err != nil {
		return nil, fmt.Errorf("%s: ppo: %w", source, err)
	}
	if p.Policy.Temperature <= 0 || p.Policy.TopP <= 0 || p.Policy.TopP > 1 || p.Policy.Hidden < 1 {
		return nil, fmt.Errorf("%s: policy: temperature must be positive, top_p in (0, 1] and hidden at least 1", source)
	}
	if p.LLM.MaxTokens < 0 {
		return nil, errors.New(source + ": llm.max_tokens must not be negative")
	}
	return p, nil
}

// apply sets the run's settings from the preset except those given as flags.
func (p *preset) apply(f *runFlags, set map[string]bool) {
	take := func(flagName string, dst, src any) {
		if set[flagName] {
			return
		}
		switch d := dst.(type) {
		case *int:
			if v := src.(*int); v != nil {
				*d = *v
			}
		case *string:
			if v := src.(*string); v != nil {
				*d = *v
			}
		case *float64:
			if v := src.(*float64); v != nil {
				*d = *v
			}
		}
	}
	take("iterations", &f.iterations, p.Run.Iterations)
	take("batch", &f.batch, p.Run.Batch)
	take("oversample", &f.oversample, p.Run.Oversample)
	take("eval-samples", &f.evalSamples, p.Run.EvalSamples)
	take("protocol", &f.protocol, p.Run.Protocol)
	take("improve-fraction", &f.improveFraction, p.Run.ImproveFraction)
	take("reward-folds", &f.folds, p.Run.RewardFolds)
	take("reward", &f.reward, p.Run.Reward)
	if !set["learning-rate"] {
		f.learningRate = p.PPO.LearningRate
	}
	if !set["no-duration-weight"] {
		f.noDurationWeight = !p.PPO.DurationWeight
	}
	if !set["reward-shaping"] && p.PPO.RewardShaping != "" {
		f.rewardShaping = p.PPO.RewardShaping
	}
	if !set["advantage"] && p.PPO.Advantage != "" {
		f.advantage = p.PPO.Advantage
	}
	if !set["risk-epsilon"] {
		f.riskEpsilon = p.PPO.RiskEpsilon
	}
}

// setFlags names the flags given on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	return set
}
