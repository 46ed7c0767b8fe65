// Package codeactions is the policy's vocabulary: a program is a sequence of statement-level
// actions (imports, loading, target, features, transform, model and its strength, validation,
// post-processing, submission), each rendered into a plan sentence and Python code for a task's
// schema. Choices interact (a label encoder changes what the submission's columns must be, a
// model without predict_proba fails at prediction), so most random sequences fail somewhere and
// the strong programs need several coordinated choices. There is one library per modality.
package codeactions

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Option is one action a slot can take.
type Option struct {
	Name string
	Plan string // a sentence for the plan paragraph ("" for none)
	// Prior is the option's relative weight in the warm start's corpus (0 means 1): what a
	// small pretrained model tends to write, plausible but imperfect.
	Prior float64
}

// Weight is the option's prior weight, 1 when none is set.
func (o Option) Weight() float64 {
	if o.Prior <= 0 {
		return 1
	}
	return o.Prior
}

// Slot is one decision in the program, in the order the network emits them.
type Slot struct {
	Name    string
	Options []Option
}

// Library is a modality's action space and its renderer.
type Library struct {
	Modality string
	Slots    []Slot
	// Clashes are the library's intended clashes, declared beside its options.
	Clashes []ClashRule
	// Tunable names the slots whose options vary one program's settings (preprocessing,
	// regularisation strength) rather than what it is: the final answer tunes its best
	// candidates along them, one slot at a time (Variants).
	Tunable []string
	// TuneMost bounds a tunable slot's pass to its n most common other options (by prior
	// weight, the slot's order breaking ties), for a slot whose options are different
	// estimators rather than settings of one: trying every family would spend the tuning's
	// budget before the winning family's settings are tuned.
	TuneMost map[string]int
	// ReportOnly are the options that change what a program prints, not what it submits.
	ReportOnly []ReportOnly
	// PartialFits are the options that fit the model on part of the training rows: the final
	// answer holds rows out itself, so the programs it tunes fit on all of them (Refitted).
	PartialFits []PartialFit
	// Guards are the options that fail on some data of a task where another option makes the
	// same predictions and does not: the final answer cross-validates its candidates guarded
	// (Guarded), so a good program is not lost to a failure with a known repair.
	Guards []Guard
	// render writes the program for a checked choice of options.
	render func(c Choice, s Schema) Program
}

// ReportOnly is a group of one slot's options that write the same submission: each fits the
// same estimator on all the training rows (a hold-out or cross-validated score printed first,
// then a refit), so programs that differ only there repeat one result. Unless, where set, holds
// for the programs whose submission does depend on the option (post-processing fitted on the
// held-out predictions).
type ReportOnly struct {
	Slot    string
	Options []string
	Unless  func(c Choice) bool
}

// PartialFit names an option of Slot that fits the model on part of the training rows (Partial:
// a hold-out it never refits on) and the option that fits the same model on all of them (Full).
type PartialFit struct {
	Slot, Partial, Full string
}

// Guard names an option of Slot that fails on some data of the tasks When holds for (Unsafe:
// a negative prediction on an RMSLE task, say) and the option that writes the same submission
// wherever Unsafe's does not fail, and a valid one where it does (Safe).
type Guard struct {
	Slot, Unsafe, Safe string
	When               func(s Schema) bool
}

// ClashRule names a combination of options whose program is written to fail (an exception, or
// a submission the grader refuses): the intended clashes the policy learns to avoid. Rules are
// read off the renderer; a program no rule names must write a valid submission for every task
// of the library's modality.
type ClashRule struct {
	// Reason says what fails, e.g. "LinearSVC has no predict_proba".
	Reason string
	// DataDependent marks a clash that fails on some data of the task's shape and not on other
	// (log1p of a negative count, a context the test lacks): its program may still be valid.
	DataDependent bool
	When          func(c Choice, s Schema) bool
}

// Clash returns why the program must fail on any data of the task's shape: the reason of the
// first certain clash rule it meets, "" when it meets none (or only data-dependent ones), or why
// the tokens are not a program of the library.
func (l *Library) Clash(tokens []int, s Schema) string {
	return l.clash(tokens, s, false)
}

// MayClash returns why the program fails on some data of the task's shape (a certain clash, or
// else a data-dependent one), "" when it should write a valid submission on any.
func (l *Library) MayClash(tokens []int, s Schema) string {
	return l.clash(tokens, s, true)
}

func (l *Library) clash(tokens []int, s Schema, maybe bool) string {
	ch, err := l.Choices(tokens)
	if err != nil {
		return err.Error()
	}
	c := Choice{lib: l, idx: ch}
	var first string
	for _, r := range l.Clashes {
		if !r.When(c, s) {
			continue
		}
		if !r.DataDependent {
			return r.Reason
		}
		if first == "" {
			first = r.Reason
		}
	}
	if maybe {
		return first
	}
	return ""
}

// Variant is a program that differs from another in one slot.
type Variant struct {
	Option string // the slot's option in the variant
	Tokens []int
	// Own marks the variant that keeps the slot's option: it differs only by fitting on all
	// the training rows (Refitted).
	Own bool
}

// Guarded returns tokens with every guard's unsafe option replaced by its safe one on the tasks
// it holds for, unless that surely clashes. nomadbudget2's seed 402 lost 7 of its answer's 19
// candidates, as good on the folds they finished as its members, to predictions below 0
// that RMSLE refuses: clipping at 0 changes no prediction of a program that never goes there.
func (l *Library) Guarded(tokens []int, s Schema) ([]int, error) {
	ch, err := l.Choices(tokens)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(tokens)
	for _, g := range l.Guards {
		if g.When(s) {
			out = l.swapped(out, ch, g.Slot, g.Unsafe, g.Safe, s)
		}
	}
	return out, nil
}

// Refitted returns tokens with every partial fit (PartialFits) replaced by its full one, unless
// that surely clashes on the task's shape. On leaf a power-transformed logistic regression that
// fitted on 80% of each fold scored a cross-validated log loss of 0.044, on all of it 0.031:
// with about nine rows a class, a hold-out the program never refits on is data thrown away.
func (l *Library) Refitted(tokens []int, s Schema) ([]int, error) {
	ch, err := l.Choices(tokens)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(tokens)
	for _, p := range l.PartialFits {
		out = l.swapped(out, ch, p.Slot, p.Partial, p.Full, s)
	}
	return out, nil
}

// swapped returns out with slot's option from replaced by to when the original choices ch
// picked from, unless the result surely clashes on the task's shape: the one step Guarded and
// Refitted share.
func (l *Library) swapped(out, ch []int, slot, from, to string, s Schema) []int {
	i := l.slotIndex(slot)
	if ch[i] != l.optionIndex(i, from) {
		return out
	}
	first, _ := l.SlotRange(i)
	v := slices.Clone(out)
	v[i] = first + l.optionIndex(i, to)
	if l.Clash(v, s) != "" {
		return out
	}
	return v
}

// Variants are the programs that differ from tokens only in slot, one per other option of
// slot, leaving out those that surely clash on the task's shape (Clash): what tuning the slot
// tries, or the TuneMost most common of them. Every variant fits on all the training rows
// (Refitted); when that changes tokens, the refitted program itself comes first, marked Own.
func (l *Library) Variants(tokens []int, slot string, s Schema) ([]Variant, error) {
	orig := tokens
	tokens, err := l.Refitted(tokens, s)
	if err != nil {
		return nil, err
	}
	ch, _ := l.Choices(tokens)
	i := l.slotIndex(slot)
	if i < 0 {
		return nil, fmt.Errorf("the %s library has no slot %q", l.Modality, slot)
	}
	opts := l.Slots[i].Options
	first, _ := l.SlotRange(i)
	with := func(j int) []int {
		v := slices.Clone(tokens)
		v[i] = first + j
		return v
	}
	var others []int // the slot's other options whose programs do not surely clash
	for j := range opts {
		if j != ch[i] && l.Clash(with(j), s) == "" {
			others = append(others, j)
		}
	}
	if n := l.TuneMost[slot]; n > 0 {
		slices.SortStableFunc(others, func(a, b int) int { return cmp.Compare(opts[b].Weight(), opts[a].Weight()) })
		others = others[:min(n, len(others))]
	}
	var out []Variant
	if !slices.Equal(orig, tokens) {
		out = append(out, Variant{Option: opts[ch[i]].Name, Tokens: tokens, Own: true})
	}
	for _, j := range others {
		out = append(out, Variant{Option: opts[j].Name, Tokens: with(j)})
	}
	return out, nil
}

// slotIndex is the index of the slot named name, -1 when the library has none.
func (l *Library) slotIndex(name string) int {
	return slices.IndexFunc(l.Slots, func(x Slot) bool { return x.Name == name })
}

// optionIndex is the index of slot i's option named name, -1 when the slot has none.
func (l *Library) optionIndex(i int, name string) int {
	return slices.IndexFunc(l.Slots[i].Options, func(o Option) bool { return o.Name == name })
}

// SubmissionKey returns the program that writes the same submission as tokens: every ReportOnly
// option replaced by its group's first. Programs with equal keys repeat one result, which is
// what the redraw rule must see, not their text. A program that may clash is its own key: what
// it prints may be what fails.
func (l *Library) SubmissionKey(tokens []int, s Schema) ([]int, error) {
	ch, err := l.Choices(tokens)
	if err != nil {
		return nil, err
	}
	if l.MayClash(tokens, s) != "" {
		return tokens, nil
	}
	c := Choice{lib: l, idx: ch}
	key := slices.Clone(tokens)
	for _, g := range l.ReportOnly {
		if !c.Is(g.Slot, g.Options...) || (g.Unless != nil && g.Unless(c)) {
			continue
		}
		i := l.slotIndex(g.Slot)
		first, _ := l.SlotRange(i)
		key[i] = first + l.optionIndex(i, g.Options[0])
	}
	return key, nil
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
		j := l.optionIndex(i, want)
		if j < 0 {
			return nil, fmt.Errorf("slot %s has no option %q", s.Name, want)
		}
		first, _ := l.SlotRange(i)
		out[i] = first + j
	}
	return out, nil
}

// Choice is a checked program: one option per slot.
type Choice struct {
	lib *Library
	idx []int
}

// Opt is the chosen option's name in slot; it panics on a slot the library does not have,
// which is a bug in the library's renderer.
func (c Choice) Opt(slot string) string {
	i := c.slot(slot)
	return c.lib.Slots[i].Options[c.idx[i]].Name
}

// Is reports whether slot's chosen option is one of options; it panics on an option the slot
// does not have, so a misspelt clash rule fails loudly instead of never matching.
func (c Choice) Is(slot string, options ...string) bool {
	i := c.slot(slot)
	for _, o := range options {
		if c.lib.optionIndex(i, o) < 0 {
			panic("codeactions: " + c.lib.Modality + " slot " + slot + " has no option " + o)
		}
	}
	return slices.Contains(options, c.lib.Slots[i].Options[c.idx[i]].Name)
}

// slot is the index of the named slot; it panics on a slot the library does not have.
func (c Choice) slot(name string) int {
	i := c.lib.slotIndex(name)
	if i < 0 {
		panic("codeactions: " + c.lib.Modality + " has no slot " + name)
	}
	return i
}

// Strength is the index (0..5) of the "strength" slot's option, for libraries that have one.
func (c Choice) Strength() int { return int(c.Opt("strength")[1] - '0') }

// Plan joins the chosen options' plan sentences and any extra sentences.
func (c Choice) Plan(extra ...string) string {
	var plan []string
	for i, s := range c.lib.Slots {
		if p := s.Options[c.idx[i]].Plan; p != "" {
			plan = append(plan, p)
		}
	}
	return strings.Join(append(plan, extra...), " ")
}

// Program is a rendered action sequence.
type Program struct {
	Plan string
	Code string
}

// Render writes the plan paragraph and the program for tokens.
func (l *Library) Render(tokens []int, schema Schema) (Program, error) {
	ch, err := l.Choices(tokens)
	if err != nil {
		return Program{}, err
	}
	if err := schema.check(l.Modality); err != nil {
		return Program{}, err
	}
	return l.render(Choice{lib: l, idx: ch}, schema), nil
}

// code accumulates program lines.
type code struct{ strings.Builder }

func (b *code) w(format string, a ...any) { fmt.Fprintf(b, format+"\n", a...) }

var libraries = map[string]*Library{}

// register adds a modality's library; each library file registers itself.
func register(l *Library) *Library {
	if _, dup := libraries[l.Modality]; dup {
		panic("codeactions: two libraries for " + l.Modality)
	}
	for _, t := range l.Tunable {
		if l.slotIndex(t) < 0 {
			panic("codeactions: " + l.Modality + " tunes slot " + t + ", which it does not have")
		}
	}
	for slot, n := range l.TuneMost {
		if !slices.Contains(l.Tunable, slot) || n < 1 {
			panic(fmt.Sprintf("codeactions: %s bounds the pass of slot %s to %d options: the slot must be tunable and the bound positive", l.Modality, slot, n))
		}
	}
	for _, g := range l.ReportOnly {
		i := l.slotIndex(g.Slot)
		if i < 0 || len(g.Options) < 2 {
			panic("codeactions: " + l.Modality + ": a report-only group needs a slot it has and two options: " + g.Slot)
		}
		for _, o := range g.Options {
			if l.optionIndex(i, o) < 0 {
				panic("codeactions: " + l.Modality + ": report-only option " + g.Slot + "=" + o + " does not exist")
			}
		}
	}
	for _, p := range l.PartialFits {
		i := l.slotIndex(p.Slot)
		if i < 0 {
			panic("codeactions: " + l.Modality + ": a partial fit names slot " + p.Slot + ", which it does not have")
		}
		for _, o := range []string{p.Partial, p.Full} {
			if l.optionIndex(i, o) < 0 {
				panic("codeactions: " + l.Modality + ": partial-fit option " + p.Slot + "=" + o + " does not exist")
			}
		}
	}
	for _, g := range l.Guards {
		i := l.slotIndex(g.Slot)
		if i < 0 || g.When == nil {
			panic("codeactions: " + l.Modality + ": a guard needs a slot it has and a condition: " + g.Slot)
		}
		for _, o := range []string{g.Unsafe, g.Safe} {
			if l.optionIndex(i, o) < 0 {
				panic("codeactions: " + l.Modality + ": guard option " + g.Slot + "=" + o + " does not exist")
			}
		}
	}
	libraries[l.Modality] = l
	return l
}

// Modalities lists the modalities with a library.
func Modalities() []string {
	out := make([]string, 0, len(libraries))
	for m := range libraries {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}

// For returns the library for a modality.
func For(modality string) (*Library, error) {
	if l, ok := libraries[modality]; ok {
		return l, nil
	}
	return nil, fmt.Errorf("no code-action library for modality %q (available: %s)", modality, strings.Join(Modalities(), ", "))
}
