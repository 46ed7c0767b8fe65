package codeactions_test

import (
	"math/rand/v2"
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
		want    []string // the variants' options in the slot, in the order tried
	}{
		{"every other transform", base, "transform", []string{"none", "minmax", "power", "pca32", "pca64-whiten", "log1p"}},
		{"every other strength", base, "strength", []string{"s0", "s1", "s3", "s4", "s5"}},
		// A linear SVC has no probabilities unless calibrated: only that postprocessing is left.
		{"certain clashes left out", with("model", "linear-svc"), "postprocess", []string{"calibrate"}},
		// Calibration fails on some data of the shape (a class of fewer than 3 rows), not all.
		{"data-dependent clashes kept", base, "postprocess", []string{"clip-1e-3", "clip-1e-2", "soften", "sharpen", "calibrate"}},
		// The model pass tries the two most common other families (TuneMost), the slot's order
		// breaking the tie between random forest and logistic regression (both 4), then between
		// XGBoost and histogram gradient boosting (both 3).
		{"a logistic regression's two alternatives", base, "model", []string{"random-forest", "xgboost"}},
		{"an LDA's two alternatives", with("model", "lda"), "model", []string{"logreg", "random-forest"}},
		{"a random forest's two alternatives", with("model", "random-forest"), "model", []string{"logreg", "xgboost"}},
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

// A program that never refits on its hold-out is tuned as the program that does: its variants,
// and first the program itself refitted, fit on all the training rows.
func TestVariantsOfAPartialFitRefit(t *testing.T) {
	lib := codeactions.TabularClassification
	spec, _ := tasks.Builtin().Get("leaf-classification")
	schema := codeactions.SchemaOf(spec)
	names := map[string]string{"imports": "full", "load": "input", "target": "label-encoder", "features": "all", "transform": "standard",
		"model": "logreg", "strength": "s3", "validation": "holdout-no-refit", "postprocess": "none", "submission": "aligned"}
	toks, err := lib.TokensFor(names)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := lib.Variants(toks, "transform", schema)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, v := range vs {
		got = append(got, v.Option)
		if !strings.Contains(lib.Describe(v.Tokens), "validation=holdout ") {
			t.Fatalf("variant %s does not refit: %s", v.Option, lib.Describe(v.Tokens))
		}
	}
	if want := []string{"standard", "none", "minmax", "power", "pca32", "pca64-whiten", "log1p"}; !slices.Equal(got, want) || !vs[0].Own || vs[1].Own {
		t.Fatalf("variants %v (first own: %v), want %v with the refitted program first", got, vs[0].Own, want)
	}
	// A program that already fits on everything is its own refit, and not among its variants.
	names["validation"] = "cv3"
	toks, _ = lib.TokensFor(names)
	if r, _ := lib.Refitted(toks, schema); !slices.Equal(r, toks) {
		t.Fatalf("cv3 refits already: %s became %s", lib.Describe(toks), lib.Describe(r))
	}
	if vs, _ := lib.Variants(toks, "transform", schema); len(vs) != 6 || vs[0].Own {
		t.Fatalf("a program that refits: want the 6 other transforms, got %d (first own: %v)", len(vs), vs[0].Own)
	}
	// A bounded pass (TuneMost) still tries the refitted program first, beside its bound.
	names["validation"], names["model"] = "holdout-no-refit", "lda"
	toks, _ = lib.TokensFor(names)
	vs, _ = lib.Variants(toks, "model", schema)
	got = nil
	for _, v := range vs {
		got = append(got, v.Option)
	}
	if want := []string{"lda", "logreg", "random-forest"}; !slices.Equal(got, want) || !vs[0].Own {
		t.Fatalf("model variants of a partial LDA %v (first own: %v), want %v", got, vs[0].Own, want)
	}
}

// Every library's partial fit has a full counterpart that the refit reaches on a program of its
// own: the rule is declared for the libraries with hold-outs they never refit on.
func TestEveryPartialFitRefits(t *testing.T) {
	reg := tasks.Builtin()
	specs := map[string]*tasks.Spec{}
	for _, id := range reg.IDs() {
		if s, _ := reg.Get(id); specs[s.Modality] == nil {
			specs[s.Modality] = s
		}
	}
	for _, m := range codeactions.Modalities() {
		lib, _ := codeactions.For(m)
		for _, slot := range lib.Slots {
			for _, o := range slot.Options {
				if o.Name != "holdout-no-refit" {
					continue
				}
				if !slices.ContainsFunc(lib.PartialFits, func(p codeactions.PartialFit) bool { return p.Slot == slot.Name && p.Partial == o.Name }) {
					t.Errorf("%s: %s=%s fits on part of the rows and declares no full counterpart", m, slot.Name, o.Name)
				}
			}
		}
		spec := specs[m]
		if spec == nil || len(lib.PartialFits) == 0 {
			continue
		}
		schema := codeactions.SchemaOf(spec)
		// Draw programs until one holds the partial fit and no clash.
		rng := rand.New(rand.NewPCG(1, 2))
		found := false
		for n := 0; n < 20000 && !found; n++ {
			toks := make([]int, len(lib.Slots))
			for i, s := range lib.Slots {
				first, _ := lib.SlotRange(i)
				toks[i] = first + rng.IntN(len(s.Options))
			}
			p := lib.PartialFits[0]
			if !strings.Contains(lib.Describe(toks)+" ", p.Slot+"="+p.Partial+" ") || lib.Clash(toks, schema) != "" {
				continue
			}
			r, err := lib.Refitted(toks, schema)
			if err != nil {
				t.Fatal(err)
			}
			full := strings.Replace(lib.Describe(toks)+" ", p.Slot+"="+p.Partial+" ", p.Slot+"="+p.Full+" ", 1)
			// The full fit, or the program unchanged when the full fit would surely clash.
			if got := lib.Describe(r) + " "; got != full && !slices.Equal(r, toks) {
				t.Fatalf("%s: %s refitted to %s", m, lib.Describe(toks), lib.Describe(r))
			} else if got != full {
				continue
			}
			found = true
		}
		if !found {
			t.Errorf("%s: no clash-free program with %s=%s in 20000 draws", m, lib.PartialFits[0].Slot, lib.PartialFits[0].Partial)
		}
	}
}
