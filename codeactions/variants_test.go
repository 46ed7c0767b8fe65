package codeactions_test

import (
	"slices"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/tasks"
)

func TestVariantsChangeOneSlotAndSkipCertainClashes(t *testing.T) {
	lib := codeactions.TabularClassification
	spec, _ := tasks.Builtin().Get("leaf-classification")
	schema := codeactions.SchemaOf(spec)
	base := map[string]string{"imports": "full", "load": "input", "target": "label-encoder", "features": "all", "transform": "standard",
		"model": "logreg", "strength": "s2", "validation": "none", "postprocess": "none", "submission": "aligned"}
	with := func(slot, opt string) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		m[slot] = opt
		return m
	}
	cases := []struct {
		name    string
		program map[string]string
		slot    string
		want    []string // the variants' options in the slot, in the library's order
	}{
		{"every other transform", base, "transform", []string{"none", "minmax", "power", "pca32", "pca64-whiten", "log1p"}},
		{"every other strength", base, "strength", []string{"s0", "s1", "s3", "s4", "s5"}},
		// A linear SVC has no probabilities unless calibrated: only that postprocessing is left.
		{"certain clashes left out", with("model", "linear-svc"), "postprocess", []string{"calibrate"}},
		// QDA fails on some data of the shape, not all: it is tried; the linear SVC is not.
		{"data-dependent clashes kept", base, "model", []string{"knn", "random-forest", "extra-trees", "lda", "qda", "naive-bayes", "svc", "mlp", "xgboost", "stacking", "grid-logreg"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, err := lib.TokensFor(c.program)
			if err != nil {
				t.Fatal(err)
			}
			vs, err := lib.Variants(toks, c.slot, schema)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, v := range vs {
				got = append(got, v.Option)
				// Only the slot differs.
				d := 0
				for i := range toks {
					if toks[i] != v.Tokens[i] {
						d++
					}
				}
				if d != 1 || !strings.Contains(lib.Describe(v.Tokens), c.slot+"="+v.Option) {
					t.Fatalf("variant %s differs in %d slots: %s", v.Option, d, lib.Describe(v.Tokens))
				}
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("variants %v, want %v", got, c.want)
			}
		})
	}
	if _, err := lib.Variants(make([]int, len(lib.Slots)), "transform", schema); err == nil {
		t.Fatal("tokens that are not a program must be refused")
	}
	toks, _ := lib.TokensFor(base)
	if _, err := lib.Variants(toks, "optimiser", schema); err == nil || !strings.Contains(err.Error(), "no slot") {
		t.Fatalf("an unknown slot must be named, got %v", err)
	}
}

// Every library tunes at least its strength, and only slots it has (register panics otherwise).
func TestEveryLibraryTunesItsStrength(t *testing.T) {
	for _, m := range codeactions.Modalities() {
		lib, _ := codeactions.For(m)
		if !slices.Contains(lib.Tunable, "strength") {
			t.Errorf("%s tunes %v, not its strength", m, lib.Tunable)
		}
	}
}
