package settings

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

// Measured is the `run:` section of a task's spec: settings laid over the defaults for that task
// when no preset is given (a preset is a whole configuration); flags given on the command line
// win over both. The built-in specs carry none: a setting chosen after a shortfall on one task's
// test answers says nothing about a new task, so the platform's defaults and the run's time
// budget are what every task gets; a user's spec may still fix settings it has measured by
// cross-validation. Keys are a preset's `run:` keys.
type Measured struct {
	node *yaml.Node // the section; nil: none
}

// UnmarshalYAML checks the section the way a preset's is checked: known keys, values the
// defaults would accept, and no seed (a task must not fix which draws a run makes). Errors
// name the spec's line.
func (m *Measured) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("run (line %d): must be a mapping of run settings, as in a preset's run: section (settings/presets/paper.yaml), e.g. final_tune_budget: 8", n.Line)
	}
	known := runKeys()
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := n.Content[i]
		switch {
		case k.Value == "seed":
			return fmt.Errorf("run.seed (line %d): a task spec's run settings must not fix the seed (give --seed to starter run)", k.Line)
		case !known[k.Value]:
			return fmt.Errorf("run.%s (line %d): not a run setting; the keys are a preset's run: section's (settings/presets/paper.yaml)", k.Value, k.Line)
		}
	}
	s := Defaults()
	if err := n.Decode(&s); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	if err := s.Validate(); err != nil {
		return fmt.Errorf("run: %w", err)
	}
	m.node = n
	return nil
}

// runKeys are the YAML keys of Settings (a preset's run: section).
func runKeys() map[string]bool {
	keys := map[string]bool{}
	t := reflect.TypeFor[Settings]()
	for i := 0; i < t.NumField(); i++ {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" && k != "-" {
			keys[k] = true
		}
	}
	return keys
}

// Over returns s with the section's settings laid over it.
func (m Measured) Over(s Settings) Settings {
	if m.node == nil {
		return s
	}
	if err := m.node.Decode(&s); err != nil {
		// UnmarshalYAML decoded the same node onto the same type: unreachable.
		panic(fmt.Sprintf("settings: a checked run section no longer decodes: %v", err))
	}
	return s
}

// String is the section as key=value pairs, for the line a run starts with.
func (m Measured) String() string {
	if m.node == nil {
		return ""
	}
	var parts []string
	for i := 0; i+1 < len(m.node.Content); i += 2 {
		parts = append(parts, m.node.Content[i].Value+"="+m.node.Content[i+1].Value)
	}
	return strings.Join(parts, " ")
}
