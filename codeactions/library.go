// Package codeactions is the policy's vocabulary: a program is a sequence of statement-level
// actions (imports, loading, target, features, transform, model and its strength, validation,
// post-processing, submission), each rendered into a plan sentence and Python code for a task's
// schema. Choices interact (a label encoder changes what the submission's columns must be, a
// model without predict_proba fails at prediction), so most random sequences fail somewhere and
// the strong programs need several coordinated choices.
package codeactions

import (
	"fmt"
	"strings"
)

// Option is one action a slot can take.
type Option struct {
	Name string
	Plan string // a sentence for the plan paragraph ("" for none)
}

// Slot is one decision in the program, in the order the network emits them.
type Slot struct {
	Name    string
	Options []Option
}

// Library is a modality's action space.
type Library struct {
	Modality string
	Slots    []Slot
}

// Token is a global index over all (slot, option) pairs: the network's vocabulary.
type Token int

// VocabSize is the number of tokens.
func (l *Library) VocabSize() int {
	n := 0
	for _, s := range l.Slots {
		n += len(s.Options)
	}
	return n
}

// SlotRange returns the first token of slot i and its option count.
func (l *Library) SlotRange(i int) (first, n int) {
	for j := 0; j < i; j++ {
		first += len(l.Slots[j].Options)
	}
	return first, len(l.Slots[i].Options)
}

// Choices converts tokens to per-slot option indices, checking that each token belongs to its slot.
func (l *Library) Choices(tokens []int) ([]int, error) {
	if len(tokens) != len(l.Slots) {
		return nil, fmt.Errorf("program has %d actions, the %s library has %d slots", len(tokens), l.Modality, len(l.Slots))
	}
	out := make([]int, len(tokens))
	for i, t := range tokens {
		first, n := l.SlotRange(i)
		if t < first || t >= first+n {
			return nil, fmt.Errorf("action %d (token %d) is not an option of slot %s", i, t, l.Slots[i].Name)
		}
		out[i] = t - first
	}
	return out, nil
}

// Describe names the chosen options, e.g. "imports=full load=csv ...".
func (l *Library) Describe(tokens []int) string {
	ch, err := l.Choices(tokens)
	if err != nil {
		return err.Error()
	}
	parts := make([]string, len(ch))
	for i, c := range ch {
		parts[i] = l.Slots[i].Name + "=" + l.Slots[i].Options[c].Name
	}
	return strings.Join(parts, " ")
}

// TokensFor maps slot option names to tokens (for corpora and tests).
func (l *Library) TokensFor(names map[string]string) ([]int, error) {
	out := make([]int, len(l.Slots))
	for i, s := range l.Slots {
		want, ok := names[s.Name]
		if !ok {
			return nil, fmt.Errorf("no choice given for slot %s", s.Name)
		}
		first, _ := l.SlotRange(i)
		found := false
		for j, o := range s.Options {
			if o.Name == want {
				out[i], found = first+j, true
			}
		}
		if !found {
			return nil, fmt.Errorf("slot %s has no option %q", s.Name, want)
		}
	}
	return out, nil
}

// Schema is what rendering needs to know about a task's files.
type Schema struct {
	IDColumn     string
	TargetColumn string
}

// Program is a rendered action sequence.
type Program struct {
	Plan string
	Code string
}

// For returns the library for a modality.
func For(modality string) (*Library, error) {
	switch modality {
	case "tabular-classification":
		return TabularClassification, nil
	}
	return nil, fmt.Errorf("no code-action library for modality %q yet (tabular-classification is available)", modality)
}
