package settings

import (
	"bytes"
	"embed"
	"flag"
	"fmt"
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"mlerl/model/ppo"
)

//go:embed presets/*.yaml
var presetFiles embed.FS

// Preset is a YAML file of settings on top of the defaults (presets/paper.yaml is the paper's):
// a `run:` section with Settings' keys, `policy:`, `ppo:` and `llm:`. Keys left out keep the
// defaults; flags given on the command line win over the preset (ApplyFlags).
type Preset struct {
	Settings     Settings
	LLMMaxTokens int // an llm policy's token cap (0: the paper's)
}

// presetFile is a preset's YAML layout, decoded onto the defaults.
type presetFile struct {
	Run    *Settings   `yaml:"run"`
	Policy *Policy     `yaml:"policy"`
	PPO    *ppo.Config `yaml:"ppo"`
	LLM    struct {
		MaxTokens int `yaml:"max_tokens"`
	} `yaml:"llm"`
}

// PresetNames lists the built-in presets.
func PresetNames() []string {
	entries, _ := presetFiles.ReadDir("presets")
	var out []string
	for _, e := range entries {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	return out
}

// LoadPreset reads a built-in preset by name or a YAML file by path, on top of the defaults,
// and checks the result (errors name the file).
func LoadPreset(nameOrFile string) (Preset, error) {
	data, err := presetFiles.ReadFile("presets/" + nameOrFile + ".yaml")
	source := "preset " + nameOrFile
	if err != nil {
		if data, err = os.ReadFile(nameOrFile); err != nil {
			return Preset{}, fmt.Errorf("--preset %s: not a built-in preset (%s) nor a readable YAML file: %v", nameOrFile, strings.Join(PresetNames(), ", "), err)
		}
		source = nameOrFile
	}
	s := Defaults()
	f := presetFile{Run: &s, Policy: &s.Policy, PPO: &s.PPO}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		return Preset{}, fmt.Errorf("%s: %w (keys: see settings/presets/paper.yaml)", source, err)
	}
	if f.LLM.MaxTokens < 0 {
		return Preset{}, fmt.Errorf("%s: llm.max_tokens must not be negative", source)
	}
	if err := s.Validate(); err != nil {
		return Preset{}, fmt.Errorf("%s: %w", source, err)
	}
	return Preset{Settings: s, LLMMaxTokens: f.LLM.MaxTokens}, nil
}

// ApplyFlags sets on s every setting whose flag was given in fs (parsed with Register on
// another Settings): the command line wins over a preset.
func (s *Settings) ApplyFlags(given *flag.FlagSet) error {
	mine := flag.NewFlagSet("", flag.ContinueOnError)
	s.Register(mine)
	var err error
	given.Visit(func(f *flag.Flag) {
		if mine.Lookup(f.Name) == nil || err != nil {
			return
		}
		if e := mine.Set(f.Name, f.Value.String()); e != nil {
			err = fmt.Errorf("--%s: %w", f.Name, e)
		}
	})
	return err
}
