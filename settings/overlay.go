package settings

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Overlay is one layer of a run's settings: the keys it sets, with where it came from. Every
// place that says settings (a preset's run: section, a task spec's run: section, an experiment
// spec's and its arms' run: sections, the flags given to `starter run`) is an Overlay of the
// same keys, and Resolve lays them over the defaults in one order.
//
// A key is a Settings field's YAML name; the fields of Settings.Policy and Settings.PPO are
// written nested, as in `policy: {top_p: 0.9}` and `ppo: {learning_rate: 0}`, and named
// policy.top_p and ppo.learning_rate in messages.
type Overlay struct {
	// Source names the layer in errors: a file, a section, an arm or the command line.
	Source  string
	entries []entry
}

// entry is one key an overlay sets: from YAML (node, with its line) or from a typed value (a
// flag, or a layer built in code).
type entry struct {
	key  string
	line int
	node *yaml.Node
	val  reflect.Value
	flag string // the flag that set it ("" for YAML and code)
}

// field is a setting's place in Settings.
type field struct {
	index []int
	typ   reflect.Type
}

// fields maps every key (policy.top_p, ppo.learning_rate) to its field; sections are the
// struct-typed fields.
var fields, sections = func() (map[string]field, map[string]bool) {
	fs, secs := map[string]field{}, map[string]bool{}
	var walk func(t reflect.Type, prefix string, index []int)
	walk = func(t reflect.Type, prefix string, index []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
			if name == "" || name == "-" {
				continue
			}
			idx := append(slices.Clone(index), i)
			if f.Type.Kind() == reflect.Struct {
				secs[prefix+name] = true
				walk(f.Type, prefix+name+".", idx)
				continue
			}
			fs[prefix+name] = field{index: idx, typ: f.Type}
		}
	}
	walk(reflect.TypeFor[Settings](), "", nil)
	return fs, secs
}()

// Keys lists every setting's key, sorted.
func Keys() []string {
	keys := make([]string, 0, len(fields))
	for k := range fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// UnmarshalYAML reads a run: section: known keys whose values decode to their setting's type
// (whether they are allowed is Resolve's check, which knows the other layers).
func (o *Overlay) UnmarshalYAML(n *yaml.Node) error {
	entries, err := parseNode(n, "")
	if err != nil {
		return err
	}
	o.entries = entries
	return nil
}

func parseNode(n *yaml.Node, prefix string) ([]entry, error) {
	if n.Kind != yaml.MappingNode {
		what := "run"
		if prefix != "" {
			what = strings.TrimSuffix(prefix, ".")
		}
		return nil, fmt.Errorf("%s (line %d): must be a mapping of settings to values, e.g. {iterations: 20, ppo: {learning_rate: 0}}", what, n.Line)
	}
	var out []entry
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		key := prefix + k.Value
		if seen[key] {
			return nil, fmt.Errorf("%s (line %d): given twice in one section", key, k.Line)
		}
		seen[key] = true
		if sections[key] {
			sub, err := parseNode(v, key+".")
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
			continue
		}
		f, ok := fields[key]
		if !ok {
			return nil, unknownKey(key, k.Line)
		}
		if err := v.Decode(reflect.New(f.typ).Interface()); err != nil {
			return nil, fmt.Errorf("%s (line %d): %v", key, v.Line, err)
		}
		out = append(out, entry{key: key, line: k.Line, node: v})
	}
	return out, nil
}

// unknownKey names the nearest key, so a misspelling is one edit away from right.
func unknownKey(key string, line int) error {
	best, bestD := "", -1
	for k := range fields {
		if d := distance(key, k); bestD < 0 || d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	return fmt.Errorf("%s (line %d): not a run setting; did you mean %s? (the keys: docs/run.md, \"Settings\")", key, line, best)
}

// distance is the edit distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// NewOverlay is a layer built in code (a built-in arm, an experiment's per-cell seed): values by
// key, each of its setting's type or convertible to it.
func NewOverlay(source string, values map[string]any) (Overlay, error) {
	o := Overlay{Source: source}
	keys := make([]string, 0, len(values))
	for k := range values {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f, ok := fields[k]
		if !ok {
			return Overlay{}, fmt.Errorf("%s: %w", source, unknownKey(k, 0))
		}
		v := reflect.ValueOf(values[k])
		if !v.IsValid() || !v.Type().ConvertibleTo(f.typ) {
			return Overlay{}, fmt.Errorf("%s: %s must be a %s, got %T", source, k, f.typ, values[k])
		}
		o.entries = append(o.entries, entry{key: k, val: v.Convert(f.typ)})
	}
	return o, nil
}

// MustOverlay is NewOverlay for layers fixed in the code.
func MustOverlay(source string, values map[string]any) Overlay {
	o, err := NewOverlay(source, values)
	if err != nil {
		panic(err)
	}
	return o
}

// Empty says whether the overlay sets nothing.
func (o Overlay) Empty() bool { return len(o.entries) == 0 }

// Sets says whether the overlay sets key.
func (o Overlay) Sets(key string) bool {
	return slices.ContainsFunc(o.entries, func(e entry) bool { return e.key == key })
}

// SetKeys lists the keys the overlay sets, in its order.
func (o Overlay) SetKeys() []string {
	keys := make([]string, len(o.entries))
	for i, e := range o.entries {
		keys[i] = e.key
	}
	return keys
}

// Over returns s with the overlay's settings laid over it. The values were checked to decode
// when the overlay was read, so none fails here.
func (o Overlay) Over(s Settings) Settings {
	for _, e := range o.entries {
		if err := e.apply(&s); err != nil {
			panic(fmt.Sprintf("settings: a checked %s no longer applies: %v", e.key, err))
		}
	}
	return s
}

func (e entry) apply(s *Settings) error {
	dst := reflect.ValueOf(s).Elem().FieldByIndex(fields[e.key].index)
	if e.node != nil {
		return e.node.Decode(dst.Addr().Interface())
	}
	dst.Set(e.val)
	return nil
}

// value is the entry's typed value.
func (e entry) value() any {
	var s Settings
	if err := e.apply(&s); err != nil {
		return nil
	}
	return reflect.ValueOf(&s).Elem().FieldByIndex(fields[e.key].index).Interface()
}

// String is the overlay as key=value pairs, for a run's first lines and a ledger.
func (o Overlay) String() string {
	parts := make([]string, len(o.entries))
	for i, e := range o.entries {
		parts[i] = fmt.Sprintf("%s=%v", e.key, e.value())
	}
	return strings.Join(parts, " ")
}

// MarshalJSON writes the overlay as its YAML is written: nested by section, typed values.
func (o Overlay) MarshalJSON() ([]byte, error) { return json.Marshal(o.nested()) }

// MarshalYAML writes the keys alone (not Source), so a spec written out reads back the same.
func (o Overlay) MarshalYAML() (any, error) { return o.nested(), nil }

// IsZero leaves an empty overlay out of YAML under omitempty.
func (o Overlay) IsZero() bool { return o.Empty() }

func (o Overlay) nested() map[string]any {
	m := map[string]any{}
	for _, e := range o.entries {
		sec, name, nested := strings.Cut(e.key, ".")
		if !nested {
			m[e.key] = e.value()
			continue
		}
		sub, _ := m[sec].(map[string]any)
		if sub == nil {
			sub = map[string]any{}
			m[sec] = sub
		}
		sub[name] = e.value()
	}
	return m
}

// UnmarshalJSON reads what MarshalJSON wrote (JSON is YAML), with the same checks.
func (o *Overlay) UnmarshalJSON(b []byte) error {
	var n yaml.Node
	if err := yaml.Unmarshal(b, &n); err != nil {
		return err
	}
	if len(n.Content) == 0 || n.Content[0].Tag == "!!null" {
		o.entries = nil
		return nil
	}
	return o.UnmarshalYAML(n.Content[0])
}

// LayerError is a setting Resolve refused, with the layer that set it: its source, key and
// line, or the flag given.
type LayerError struct {
	Source, Key, Flag string
	Line              int
	Err               error
}

func (e *LayerError) Error() string {
	switch {
	case e.Flag != "":
		return e.Err.Error() // the message names the flag
	case e.Line > 0:
		return fmt.Sprintf("%s sets %s (line %d): %v", e.Source, e.Key, e.Line, e.Err)
	}
	return fmt.Sprintf("%s sets %s: %v", e.Source, e.Key, e.Err)
}

func (e *LayerError) Unwrap() error { return e.Err }

// Resolve lays the layers over the defaults, each over the ones before it, and checks the
// result. The order callers give (docs/run.md, "Settings"): Defaults() < a preset < the task
// spec's run: section < an experiment spec's run: section < its arm's run: section < the
// flags given on the command line. An error names the layer that set the offending key.
func Resolve(layers ...Overlay) (Settings, error) {
	s := Defaults()
	type setter struct {
		source string
		e      entry
	}
	setBy := map[string]setter{}
	for _, l := range layers {
		for _, e := range l.entries {
			if err := e.apply(&s); err != nil {
				return s, &LayerError{Source: l.Source, Key: e.key, Flag: e.flag, Line: e.line, Err: err}
			}
			setBy[e.key] = setter{l.Source, e}
		}
	}
	// Redraws are a default of the network policy, whose programs are code actions: an llm run
	// drops them unless a layer asks for them (then Validate names the conflict).
	if _, asked := setBy["redraw_repeats"]; s.Backend == BackendLLM && !asked {
		s.RedrawRepeats = 0
	}
	if err := s.Validate(); err != nil {
		var ie *InvalidError
		if errors.As(err, &ie) {
			if w, ok := setBy[ie.Key]; ok {
				return s, &LayerError{Source: w.source, Key: ie.Key, Flag: w.e.flag, Line: w.e.line, Err: err}
			}
		}
		return s, err
	}
	return s, nil
}
