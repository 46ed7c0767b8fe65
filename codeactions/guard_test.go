package codeactions_test

import (
	"maps"
	"slices"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/tasks"
)

// Guarding replaces an option that fails on some data by one that makes the same predictions
// where it does not, only on the tasks the guard holds for, and the guarded program no longer
// may clash for that reason.
func TestGuardedClipsOnlyWhereRMSLERefusesNegatives(t *testing.T) {
	lib := codeactions.TabularRegression
	spec, err := tasks.Builtin().Get("nomad2018-predict-transparent-conductors")
	if err != nil {
		t.Fatal(err)
	}
	rmsle := codeactions.SchemaOf(spec)
	rmse := rmsle
	rmse.Metric = "rmse"
	base := map[string]string{"setup": "full", "features": "all", "categorical": "raw", "transform": "none", "target": "none",
		"outputs": "per-target", "model": "xgboost", "strength": "s2", "validation": "holdout", "postprocess": "none", "submission": "aligned"}
	with := func(slot, opt string) map[string]string {
		m := maps.Clone(base)
		m[slot] = opt
		return m
	}
	cases := []struct {
		name    string
		program map[string]string
		schema  codeactions.Schema
		want    string // the guarded postprocess option
	}{
		{"raw XGBoost on RMSLE is clipped", base, rmsle, "clip0"},
		{"log1p target on RMSLE is clipped too", with("target", "log1p"), rmsle, "clip0"},
		{"already clipped", with("postprocess", "clip0"), rmsle, "clip0"},
		{"rounding is another prediction, not guarded", with("postprocess", "round1"), rmsle, "round1"},
		{"a metric that takes negatives", base, rmse, "none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			toks, err := lib.TokensFor(c.program)
			if err != nil {
				t.Fatal(err)
			}
			got, err := lib.Guarded(toks, c.schema)
			if err != nil {
				t.Fatal(err)
			}
			names := maps.Clone(c.program)
			names["postprocess"] = c.want
			want, _ := lib.TokensFor(names)
			if !slices.Equal(got, want) {
				t.Fatalf("guarded %s to %s, want postprocess=%s", lib.Describe(toks), lib.Describe(got), c.want)
			}
			if c.program["postprocess"] == "none" && c.want == "clip0" {
				if why := lib.MayClash(toks, c.schema); !strings.Contains(why, "below 0") {
					t.Fatalf("the unguarded program should be declared to fail on negative predictions, MayClash = %q", why)
				}
				if why := lib.MayClash(got, c.schema); why != "" {
					t.Fatalf("the guarded program may still clash: %q", why)
				}
			}
		})
	}
	if _, err := lib.Guarded([]int{0}, rmsle); err == nil {
		t.Fatal("tokens that are not a program of the library: want an error")
	}
}
