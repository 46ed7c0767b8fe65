package settings

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// Measured is the `run:` section of a task's spec: the layer of that task's settings, above a
// preset and below an experiment's and the command line's (Resolve). The built-in specs carry
// none: a setting chosen after a shortfall on one task's test answers says nothing about a new
// task, so the platform's defaults and the run's time budget are what every task gets; a
// user's spec may still fix settings it has measured by cross-validation.
type Measured struct {
	run Overlay
}

// UnmarshalYAML checks the section when the spec is read: known keys, values the defaults
// would accept, and no seed (a task must not fix which draws a run makes). Errors name the
// spec's line.
func (m *Measured) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("run (line %d): must be a mapping of run settings, as in a preset's run: section (settings/presets/paper.yaml), e.g. final_tune_budget: 8", n.Line)
	}
	var o Overlay
	if err := o.UnmarshalYAML(n); err != nil {
		return fmt.Errorf("run.%w", err)
	}
	for _, e := range o.entries {
		if e.key == "seed" {
			return fmt.Errorf("run.seed (line %d): a task spec's run settings must not fix the seed (give --seed to starter run)", e.line)
		}
	}
	if _, err := Resolve(o); err != nil {
		var le *LayerError
		if errors.As(err, &le) {
			return fmt.Errorf("run: %w (run.%s, line %d)", le.Err, le.Key, le.Line)
		}
		return fmt.Errorf("run: %w", err)
	}
	m.run = o
	return nil
}

// Layer is the section as the layer of task id's settings.
func (m Measured) Layer(task string) Overlay {
	o := m.run
	o.Source = "task " + task + "'s spec (run:)"
	return o
}

// Over returns s with the section's settings laid over it.
func (m Measured) Over(s Settings) Settings { return m.run.Over(s) }

// String is the section as key=value pairs, for the line a run starts with.
func (m Measured) String() string { return m.run.String() }
