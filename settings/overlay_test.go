package settings

import (
	"encoding/json"
	"errors"
	"flag"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// layer reads a run: section as a layer, as a spec or preset file holds it.
func layer(t *testing.T, source, text string) Overlay {
	t.Helper()
	var o Overlay
	if err := yaml.Unmarshal([]byte(text), &o); err != nil {
		t.Fatalf("%s: %v", source, err)
	}
	o.Source = source
	return o
}

// flagLayer is the command line's layer for args.
func flagLayer(t *testing.T, args ...string) Overlay {
	t.Helper()
	var given Settings
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	given.Register(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return FlagOverlay(fs, &given)
}

// Each layer wins over the ones before it, key by key; keys it leaves out keep what is below.
func TestResolveOrder(t *testing.T) {
	preset := layer(t, "preset", "{iterations: 2, batch: 3, oversample: 4, eval_samples: 5, ppo: {learning_rate: 0.5}}")
	task := layer(t, "task", "{batch: 13, oversample: 14, eval_samples: 15}")
	common := layer(t, "spec", "{oversample: 24, eval_samples: 25, policy: {top_p: 0.5}}")
	arm := layer(t, "arm", "{eval_samples: 35, ppo: {learning_rate: 0}}")
	flags := flagLayer(t, "--eval-samples", "45", "--no-duration-weight")
	for _, c := range []struct {
		name   string
		layers []Overlay
		want   func(*Settings)
	}{
		{"none", nil, func(*Settings) {}},
		{"preset", []Overlay{preset}, func(s *Settings) {
			s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.PPO.LearningRate = 2, 3, 4, 5, 0.5
		}},
		{"task over preset", []Overlay{preset, task}, func(s *Settings) {
			s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.PPO.LearningRate = 2, 13, 14, 15, 0.5
		}},
		{"spec over task", []Overlay{preset, task, common}, func(s *Settings) {
			s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.PPO.LearningRate, s.Policy.TopP = 2, 13, 24, 25, 0.5, 0.5
		}},
		{"arm over spec", []Overlay{preset, task, common, arm}, func(s *Settings) {
			s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.PPO.LearningRate, s.Policy.TopP = 2, 13, 24, 35, 0, 0.5
		}},
		{"flags over all", []Overlay{preset, task, common, arm, flags}, func(s *Settings) {
			s.Iterations, s.Batch, s.Oversample, s.EvalSamples, s.PPO.LearningRate, s.Policy.TopP = 2, 13, 24, 45, 0, 0.5
			s.PPO.DurationWeight = false
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := Resolve(c.layers...)
			if err != nil {
				t.Fatal(err)
			}
			want := Defaults()
			c.want(&want)
			if got != want {
				t.Fatalf("got %+v\nwant %+v", got, want)
			}
		})
	}
}

// A refused value is named by the layer that set it: a file's key and line, or the flag.
func TestResolveNamesTheLayer(t *testing.T) {
	for _, c := range []struct {
		name   string
		layers []Overlay
		want   string
	}{
		{"a file's key", []Overlay{layer(t, "lab/x/spec.yaml, arm fast", "{batch: 4,\n iterations: 0}")},
			"lab/x/spec.yaml, arm fast sets iterations (line 2): --iterations must be at least 1, got 0"},
		{"a nested key", []Overlay{layer(t, "my.yaml", "ppo:\n  clip_ratio: 2\n")}, "my.yaml sets ppo.clip_ratio (line 2): ppo.clip_ratio must be in (0, 1)"},
		{"the last layer to set it", []Overlay{layer(t, "preset", "{iterations: 0}"), layer(t, "task", "{iterations: -1}")},
			"task sets iterations (line 1): --iterations must be at least 1, got -1"},
		{"a flag", []Overlay{layer(t, "preset", "{iterations: 0}"), flagLayer(t, "--iterations", "-2")}, "--iterations must be at least 1, got -2"},
		{"a rule over two keys", []Overlay{layer(t, "preset", "{protocol: paper}"), flagLayer(t, "--reward-folds", "2")},
			"--reward-folds 2 averages validation folds"},
		{"a code layer", []Overlay{MustOverlay("built-in arm x", map[string]any{"ppo.learning_rate": -1})},
			"built-in arm x sets ppo.learning_rate: --learning-rate (ppo.learning_rate) must not be negative"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Resolve(c.layers...)
			if err == nil || err.Error() != c.want && !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
			var le *LayerError
			var ie *InvalidError
			if !strings.Contains(c.name, "two keys") && (!errors.As(err, &le) || !errors.As(err, &ie)) {
				t.Errorf("%T is not a LayerError over an InvalidError", err)
			}
		})
	}
}

// An llm policy drops the network's redraws unless a layer asks for them.
func TestResolveLLMRedraws(t *testing.T) {
	s, err := Resolve(flagLayer(t, "--policy", "llm"))
	if err != nil || s.RedrawRepeats != 0 {
		t.Fatalf("llm: %d redraws, %v", s.RedrawRepeats, err)
	}
	if _, err := Resolve(layer(t, "arm", "{backend: llm, redraw_repeats: 2}")); err == nil || !strings.Contains(err.Error(), "--redraw-repeats applies to the network policy") {
		t.Fatalf("redraws asked for with llm: %v", err)
	}
}

// Every flag of Register sets exactly the key flagKeys names.
func TestEveryFlagSetsItsKey(t *testing.T) {
	values := map[string]string{"improve-from": "recent", "init": "uniform", "policy": "llm", "protocol": "paper",
		"reward": "bounded", "reward-shaping": "none", "advantage": "risk-seeking", "time-budget": "1h", "no-duration-weight": "true",
		"sample-at-iteration-start": "true", "improve-fraction": "0.25", "learning-rate": "0.125", "risk-epsilon": "0.125",
		"final-tune-budget": "7", "sandbox-seconds": "33"}
	var probe Settings
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	probe.Register(fs)
	fs.VisitAll(func(f *flag.Flag) {
		key, ok := flagKeys[f.Name]
		if !ok {
			t.Errorf("--%s names no key in flagKeys", f.Name)
			return
		}
		v, ok := values[f.Name]
		if !ok {
			v = "77"
		}
		s := Defaults()
		one := flag.NewFlagSet("run", flag.ContinueOnError)
		s.Register(one)
		if err := one.Parse([]string{"--" + f.Name + "=" + v}); err != nil {
			t.Fatal(err)
		}
		changed := diffKeys(Defaults(), s)
		if len(changed) != 1 || changed[0] != key {
			t.Errorf("--%s=%s changed %v, flagKeys says %s", f.Name, v, changed, key)
		}
		o := FlagOverlay(one, &s)
		if got := o.Over(Defaults()); got != s || len(o.SetKeys()) != 1 {
			t.Errorf("--%s: its layer gives %+v, the flag %+v", f.Name, got, s)
		}
	})
	if len(flagKeys) != countFlags(fs) {
		t.Errorf("flagKeys has %d flags, Register %d", len(flagKeys), countFlags(fs))
	}
}

func countFlags(fs *flag.FlagSet) int {
	n := 0
	fs.VisitAll(func(*flag.Flag) { n++ })
	return n
}

// diffKeys lists the keys whose values differ between a and b.
func diffKeys(a, b Settings) []string {
	var out []string
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	for _, k := range Keys() {
		idx := fields[k].index
		if !reflect.DeepEqual(va.FieldByIndex(idx).Interface(), vb.FieldByIndex(idx).Interface()) {
			out = append(out, k)
		}
	}
	return out
}

// An overlay survives JSON (a ledger, a workflow input) key for key, typed.
func TestOverlayJSON(t *testing.T) {
	o := layer(t, "spec", "{iterations: 5, time_budget: 0, ppo: {learning_rate: 0, advantage: risk-seeking}, policy: {top_p: 0.9}, instrumenter: none}")
	b, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"instrumenter":"none","iterations":5,"policy":{"top_p":0.9},"ppo":{"advantage":"risk-seeking","learning_rate":0},"time_budget":0}`
	if string(b) != want {
		t.Fatalf("JSON %s, want %s", b, want)
	}
	var back Overlay
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Over(Defaults()) != o.Over(Defaults()) || len(back.SetKeys()) != len(o.SetKeys()) {
		t.Fatalf("back from JSON: %v, want %v", back, o)
	}
	if err := json.Unmarshal([]byte(`{"iteration": 3}`), &back); err == nil || !strings.Contains(err.Error(), "did you mean iterations?") {
		t.Fatalf("a misspelt key in JSON: %v", err)
	}
	if got := o.String(); got != "iterations=5 time_budget=0 ppo.learning_rate=0 ppo.advantage=risk-seeking policy.top_p=0.9 instrumenter=none" {
		t.Errorf("String() = %q", got)
	}
}

// Flags recorded in old ledgers read as the layer they meant; a word that is no setting's flag
// is refused by name.
func TestFromArgs(t *testing.T) {
	o, err := FromArgs("ledger arm x", []string{"--iterations", "4", "--learning-rate", "0", "--instrumenter", "none", "--no-duration-weight"})
	if err != nil {
		t.Fatal(err)
	}
	want := Defaults()
	want.Iterations, want.PPO.LearningRate, want.Instrumenter, want.PPO.DurationWeight = 4, 0, InstrumenterNone, false
	if got := o.Over(Defaults()); got != want {
		t.Fatalf("got %+v", got)
	}
	if _, err := FromArgs("ledger arm y", []string{"--slots", "3"}); err == nil || !strings.Contains(err.Error(), "ledger arm y") || !strings.Contains(err.Error(), "slots") {
		t.Fatalf("an unknown flag: %v", err)
	}
}

func TestNewOverlayChecksKeysAndTypes(t *testing.T) {
	if _, err := NewOverlay("x", map[string]any{"iteration": 3}); err == nil || !strings.Contains(err.Error(), "did you mean iterations?") {
		t.Errorf("unknown key: %v", err)
	}
	if _, err := NewOverlay("x", map[string]any{"iterations": "three"}); err == nil || !strings.Contains(err.Error(), "iterations must be a int") {
		t.Errorf("wrong type: %v", err)
	}
}
