package runread

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
)

func TestRegistryReadsTheExperimentsTaskSpec(t *testing.T) {
	leaf, err := os.ReadFile(filepath.Join("..", "..", "..", "tasks", "specs", "leaf-classification.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	spec := filepath.Join(dir, "my-leaves.yaml")
	if err := os.WriteFile(spec, bytes.Replace(leaf, []byte("id: leaf-classification"), []byte("id: my-leaves"), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRunJSON := func(specFile string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "run.json"), []byte(`{"task_spec": "`+specFile+`"}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// Without run.json (or with one naming no spec) the built-in tasks only.
	r, err := Registry(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("my-leaves"); err == nil {
		t.Error("a task that is not built in was found without its spec")
	}
	writeRunJSON(spec)
	if r, err = Registry(dir, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("my-leaves"); err != nil {
		t.Errorf("the task of run.json's spec: %v", err)
	}
	// A recorded path that does not resolve from here: the error says how to give it.
	writeRunJSON("specs/elsewhere.yaml")
	if _, err := Registry(dir, ""); err == nil || !strings.Contains(err.Error(), "--task-spec") {
		t.Errorf("a missing spec file: %v, want an error naming --task-spec", err)
	}
	if r, err = Registry(dir, spec); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Get("my-leaves"); err != nil {
		t.Errorf("the task of --task-spec's spec: %v", err)
	}
}

func TestProgramsReadsTheUsedTrainingPrograms(t *testing.T) {
	dir := t.TempDir()
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// Two iterations' metrics; it0002-s001 finished in the drain and no update used it.
	write("metrics.jsonl", `{"iteration":1,"used":["it0001-s001","it0001-s000"]}`+"\n"+`{"iteration":2,"used":["it0002-s000"]}`+"\n")
	for _, s := range []struct{ id, sample, result string }{
		{"it0002-s000", `{"id":"it0002-s000","iteration":2,"actions":"model=lda","sample":{"tokens":[1,2],"kept":[true,false]}}`, `{"reward":-0.05,"score":0.05,"valid":true,"duration_s":3}`},
		{"it0001-s001", `{"id":"it0001-s001","iteration":1,"actions":"model=rf","sample":{"tokens":[3]}}`, `{"reward":-10,"valid":false,"duration_s":1,"reason":"exited with code 1"}`},
		{"it0001-s000", `{"id":"it0001-s000","iteration":1,"actions":"model=logreg","sample":{"tokens":[4]}}`, `{"reward":-0.1,"score":0.1,"valid":true,"duration_s":2}`},
		{"it0002-s001", `{"id":"it0002-s001","iteration":2,"actions":"model=svm","sample":{"tokens":[5]}}`, `{"reward":-0.01,"score":0.01,"valid":true,"duration_s":9}`},
	} {
		write("samples/"+s.id+"/sample.json", s.sample)
		write("samples/"+s.id+"/result.json", s.result)
	}
	// Cancelled before it had a result: no update used it, and it is no error.
	write("samples/it0002-s002/sample.json", `{"id":"it0002-s002","iteration":2,"actions":"model=knn","sample":{"tokens":[6]}}`)
	progs, err := Programs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range progs {
		ids = append(ids, p.ID)
	}
	if strings.Join(ids, ",") != "it0001-s000,it0001-s001,it0002-s000" {
		t.Fatalf("programs %v, want the three used ones in sampling order", ids)
	}
	lda := progs[2]
	if lda.Iteration != 2 || lda.Actions != "model=lda" || !lda.Valid || lda.Score == nil || *lda.Score != 0.05 ||
		lda.DurationS != 3 || len(lda.Kept) != 2 || !lda.Kept[0] || len(lda.Tokens) != 2 {
		t.Errorf("it0002-s000 = %+v", lda)
	}
	if progs[1].Valid || progs[1].Score != nil {
		t.Errorf("the failed program = %+v, want invalid with no score", progs[1])
	}
	if _, err := Programs(t.TempDir()); err == nil {
		t.Error("a directory without metrics.jsonl gave no error")
	}

	all, err := Sampled(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range all {
		got = append(got, fmt.Sprintf("%s:%v", p.ID, p.Finished))
	}
	if want := "it0001-s000:true,it0001-s001:true,it0002-s000:true,it0002-s001:true,it0002-s002:false"; strings.Join(got, ",") != want {
		t.Errorf("Sampled = %v, want %s: every program, the unfinished one marked", got, want)
	}
	if all[1].Reason != "exited with code 1" || all[1].Valid || all[1].Stale {
		t.Errorf("the failed program = %+v, want its reason", all[1])
	}
	// A result that is there but damaged is an error, not an unfinished program.
	write("samples/it0002-s002/result.json", "{")
	if _, err := Sampled(dir); err == nil || !strings.Contains(err.Error(), "it0002-s002") {
		t.Errorf("a damaged result.json: %v, want an error naming it", err)
	}
}

func TestDoneCells(t *testing.T) {
	dir := t.TempDir()
	ledger := experiment.Ledger{Cells: []experiment.CellRecord{
		{Cell: experiment.Cell{Task: "leaf-classification", Arm: "rl", Seed: 1, Run: "leaf-rl-s1"}, Status: experiment.StatusDone},
		{Cell: experiment.Cell{Task: "leaf-classification", Arm: "static", Seed: 1, Run: "leaf-static-s1"}, Status: experiment.StatusPending},
	}}
	b, err := json.Marshal(ledger)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstore.LedgerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	cells, err := DoneCells(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 1 || cells[0].Arm != "rl" || cells[0].Spec == nil || cells[0].Spec.ID != "leaf-classification" ||
		cells[0].RunDir != runstore.ExperimentRunDir(dir, "leaf-rl-s1") {
		t.Errorf("DoneCells = %+v, want the done rl cell with leaf's spec and its run directory", cells)
	}
	if _, err := DoneCells(t.TempDir(), ""); err == nil || !strings.Contains(err.Error(), "experiment directory") {
		t.Errorf("a directory without a ledger: %v", err)
	}
}
