package activities

import (
	"context"
	"slices"
	"strings"
	"testing"

	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/model"
)

// Tuning on real leaf data in the real sandbox: a standard-scaled logistic regression's
// variants along the transform slot (the second pass, after the model's) are written as
// samples differing only there, and the power-transformed one cross-validates better, the
// change that carries leaf's medals.
func TestTuneVariantsOnLeaf(t *testing.T) {
	leaf := newOnLeaf(t)
	a, spec, store, call := leaf.a, leaf.spec, leaf.store, leaf.call
	lib := codeactions.TabularClassification
	names := map[string]string{"imports": "full", "load": "input", "target": "label-encoder", "features": "all", "transform": "standard",
		"model": "logreg", "strength": "s4", "validation": "none", "postprocess": "none", "submission": "aligned"}
	toks, err := lib.TokensFor(names)
	if err != nil {
		t.Fatal(err)
	}
	prog, err := lib.Render(toks, codeactions.SchemaOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	store.Put(ctx, runstore.Sample("it001-000").Program(), []byte(prog.Code))
	putJSON(ctx, store, runstore.Sample("it001-000").Record(), sampleRecord{ID: "it001-000", Purpose: PurposeTrain, Sample: model.Sample{Tokens: toks}})
	putJSON(ctx, store, runstore.Sample("llm-000").Record(), sampleRecord{ID: "llm-000", Purpose: PurposeTrain, LLM: &llmSample{Model: "m"}})

	var kind TuneResult
	if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "it001-000", Slot: -1}, &kind); err != nil {
		t.Fatal(err)
	}
	if kind.Slots != 3 || kind.Base != "imports=full load=input target=label-encoder features=all validation=none postprocess=none submission=aligned" || len(kind.IDs) != 0 {
		t.Fatalf("kind %+v: want the options outside model, transform and strength, and nothing written", kind)
	}
	var llm TuneResult
	if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "llm-000", Slot: 0}, &llm); err != nil || llm.Note == "" || len(llm.IDs) != 0 {
		t.Fatalf("an LLM's program has no code actions to vary: %+v, %v", llm, err)
	}
	var missing TuneResult
	if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "it009-009", Slot: 0}, &missing); err != nil || missing.Note == "" || len(missing.IDs) != 0 {
		t.Fatalf("a program without its record has nothing to tune: %+v, %v", missing, err)
	}
	if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "it001-000", Slot: 3}, &llm); err == nil || !strings.Contains(err.Error(), "tunes 3 slots") {
		t.Fatalf("slot 3 of 3: want an error naming the library's slots, got %v", err)
	}

	var vs TuneResult
	if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "it001-000", Slot: 1}, &vs); err != nil {
		t.Fatal(err)
	}
	if vs.Slot != "transform" || !slices.Equal(vs.Options, []string{"none", "minmax", "power", "pca32", "pca64-whiten", "log1p"}) || len(vs.IDs) != len(vs.Options) {
		t.Fatalf("transform variants %+v: want every other transform", vs)
	}
	for i, id := range vs.IDs {
		var rec sampleRecord
		if err := getJSON(ctx, store, runstore.Sample(id).Record(), &rec); err != nil {
			t.Fatal(err)
		}
		want := strings.Replace(lib.Describe(toks), "transform=standard", "transform="+vs.Options[i], 1)
		if rec.Purpose != PurposeAnswerTune || rec.PrevID != "it001-000" || rec.Actions != want {
			t.Fatalf("variant %s: %+v, want actions %q", id, rec, want)
		}
		if code, err := store.Get(ctx, runstore.Sample(id).Program()); err != nil || string(code) == prog.Code {
			t.Fatalf("variant %s: its program must exist and differ from the original (%v)", id, err)
		}
	}
	power := vs.IDs[slices.Index(vs.Options, "power")]
	score := map[string]float64{}
	for _, id := range []string{"it001-000", power} {
		var cv CrossValidateResult
		if err := call(a.CrossValidate, CrossValidateInput{Run: "r", Task: spec.ID, SampleID: id, Folds: 3}, &cv); err != nil || cv.Score == nil {
			t.Fatalf("%s: %+v, %v", id, cv, err)
		}
		score[id] = *cv.Score
	}
	if score[power] >= score["it001-000"] {
		t.Fatalf("3-fold log loss: power-transformed %.4f, standard-scaled %.4f; the power transform should win on leaf", score[power], score["it001-000"])
	}
	t.Logf("3-fold log loss at C=100: standard %.4f, power %.4f", score["it001-000"], score[power])

	// A program that never refits on its hold-out: the first pass tries it refitted, and every
	// variant refits; on leaf's ~9 rows a class the refit wins.
	names["validation"] = "holdout-no-refit"
	partial, _ := lib.TokensFor(names)
	putJSON(ctx, store, runstore.Sample("it002-000").Record(), sampleRecord{ID: "it002-000", Purpose: PurposeTrain, Sample: model.Sample{Tokens: partial}})
	pprog, _ := lib.Render(partial, codeactions.SchemaOf(spec))
	store.Put(ctx, runstore.Sample("it002-000").Program(), []byte(pprog.Code))
	if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "it002-000", Slot: -1}, &kind); err != nil || kind.Base != strings.Replace(
		"imports=full load=input target=label-encoder features=all validation=none postprocess=none submission=aligned", "validation=none", "validation=holdout", 1) {
		t.Fatalf("kind %+v (%v): want the refitted program's base", kind, err)
	}
	for slot, want := range [][]string{{"logreg-refit", "random-forest", "xgboost"}, {"none", "minmax", "power", "pca32", "pca64-whiten", "log1p"}, {"s0", "s1", "s2", "s3", "s5"}} {
		var pv TuneResult
		if err := call(a.TuneVariants, TuneInput{Run: "r", Task: spec.ID, Of: "it002-000", Slot: slot}, &pv); err != nil || !slices.Equal(pv.Options, want) {
			t.Fatalf("slot %d: options %v (%v), want %v", slot, pv.Options, err, want)
		}
		for _, id := range pv.IDs {
			var rec sampleRecord
			if err := getJSON(ctx, store, runstore.Sample(id).Record(), &rec); err != nil || !strings.Contains(rec.Actions, "validation=holdout ") {
				t.Fatalf("variant %s does not refit: %q (%v)", id, rec.Actions, err)
			}
		}
		if slot == 0 {
			refit := pv.IDs[0]
			for _, id := range []string{"it002-000", refit} {
				var cv CrossValidateResult
				if err := call(a.CrossValidate, CrossValidateInput{Run: "r", Task: spec.ID, SampleID: id, Folds: 3}, &cv); err != nil || cv.Score == nil {
					t.Fatalf("%s: %+v, %v", id, cv, err)
				}
				score[id] = *cv.Score
			}
			if score[refit] >= score["it002-000"] {
				t.Fatalf("3-fold log loss: refitted %.4f, fitted on 80%% %.4f; the refit should win on leaf", score[refit], score["it002-000"])
			}
			t.Logf("3-fold log loss at C=100, standard: on 80%% of each fold %.4f, refitted %.4f", score["it002-000"], score[refit])
		}
	}
}
