package settings

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"gopkg.in/yaml.v3"
)

//go:embed presets/*.yaml
var presetFiles embed.FS

// Preset is a YAML file of settings (presets/paper.yaml is the paper's): a `run:` section of
// settings, the layer just above the defaults (Resolve), and an `llm:` section. Keys left out
// keep what the layers below give; the task spec's run: section and the flags given on the
// command line win over the preset.
type Preset struct {
	Run          Overlay
	LLMMaxTokens int // an llm policy's token cap (0: the paper's)
}

// presetFile is a preset's YAML layout.
type presetFile struct {
	Run Overlay `yaml:"run"`
	LLM struct {
		MaxTokens int `yaml:"max_tokens"`
	} `yaml:"llm"`
	// Policy and PPO were sections of their own before presets were Overlays.
	Policy yaml.Node `yaml:"policy"`
	PPO    yaml.Node `yaml:"ppo"`
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

// LoadPreset reads a built-in preset by name or a YAML file by path, and checks it over the
// defaults (errors name the file and key).
func LoadPreset(nameOrFile string) (Preset, error) {
	data, err := presetFiles.ReadFile("presets/" + nameOrFile + ".yaml")
	source := "settings/presets/" + nameOrFile + ".yaml"
	if err != nil {
		if data, err = os.ReadFile(nameOrFile); err != nil {
			return Preset{}, fmt.Errorf("--preset %s: not a built-in preset (%s) nor a readable YAML file: %v", nameOrFile, strings.Join(PresetNames(), ", "), err)
		}
		source = nameOrFile
	}
	var f presetFile
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return Preset{}, fmt.Errorf("%s: %w", source, err)
	}
	for name, n := range map[string]yaml.Node{"policy": f.Policy, "ppo": f.PPO} {
		if n.Kind != 0 {
			return Preset{}, fmt.Errorf("%s: %s: a section of settings goes under run:, as in run: {%s: {...}} (settings/presets/paper.yaml)", source, name, name)
		}
	}
	if f.LLM.MaxTokens < 0 {
		return Preset{}, fmt.Errorf("%s: llm.max_tokens must not be negative", source)
	}
	f.Run.Source = source
	if _, err := Resolve(f.Run); err != nil {
		return Preset{}, err
	}
	return Preset{Run: f.Run, LLMMaxTokens: f.LLM.MaxTokens}, nil
}
