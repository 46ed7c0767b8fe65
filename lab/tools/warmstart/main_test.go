package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mlerl/codeactions"
	"mlerl/tasks"
)

// tokensWhere draws leaf programs until one meets want (a clash rule's reason, or none).
func tokensWhere(t *testing.T, lib *codeactions.Library, s codeactions.Schema, clash bool) ([]int, string) {
	t.Helper()
	rng := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		toks := make([]int, len(lib.Slots))
		for i := range lib.Slots {
			first, k := lib.SlotRange(i)
			toks[i] = first + rng.IntN(k)
		}
		if why := lib.MayClash(toks, s); (why != "") == clash {
			return toks, why
		}
	}
	t.Fatalf("no program with clash=%v in 10000 draws", clash)
	return nil, ""
}

func TestReadCountsEveryProgramOfTheInitialPolicy(t *testing.T) {
	spec, err := tasks.Builtin().Get("leaf-classification")
	if err != nil {
		t.Fatal(err)
	}
	lib, _ := codeactions.For(spec.Modality)
	schema := codeactions.SchemaOf(spec)
	clashing, why := tokensWhere(t, lib, schema, true)
	clean, _ := tokensWhere(t, lib, schema, false)

	dir := t.TempDir()
	write := func(rel string, v any) {
		t.Helper()
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Read(dir, 2); err == nil || !strings.Contains(err.Error(), "run directory") {
		t.Errorf("a folder without run.json: %v, want an error saying to give a run directory", err)
	}
	write("run.json", map[string]any{"input": map[string]any{"task": "leaf-classification"}})
	type res = map[string]any
	for _, s := range []struct {
		id     string
		it     int
		tokens []int
		result res // nil: never finished
	}{
		{"it0001-s000", 1, clean, res{"valid": true, "score": 0.1}},
		{"it0001-s001", 1, clashing, res{"valid": false, "reason": "exited with code 1"}},
		{"it0001-s002", 1, clean, res{"valid": false, "reason": "validation fold 2: timed out after 600s"}},
		{"it0001-s003", 1, clean, nil},
		{"it0001-s004", 1, clean, res{"valid": false, "stale": true, "reason": "ended before it finished (staleness cap or end of run)"}},
		{"it0002-s000", 2, clean, res{"valid": false, "reason": "exited with code 1"}}, // the updated policy's
	} {
		write("samples/"+s.id+"/sample.json", map[string]any{"id": s.id, "iteration": s.it, "sample": map[string]any{"tokens": s.tokens}})
		if s.result != nil {
			write("samples/"+s.id+"/result.json", s.result)
		}
	}
	// They finished in the reverse order of their ids: the first two, s003 (never) aside, are
	// the timed-out s002 and the clash s001.
	at := time.Now()
	for i, id := range []string{"it0001-s002", "it0001-s001", "it0001-s000"} {
		tm := at.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(filepath.Join(dir, "samples", id, "result.json"), tm, tm); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Read(dir, 2)
	if err != nil {
		t.Fatal(err)
	}
	if c.Task != "leaf-classification" || c.Drawn != 5 || c.Valid != 1 || c.Failed != 2 || c.Unfinished != 2 || c.Clashes != 1 {
		t.Errorf("count = %+v, want iteration 1's 5 programs: 1 valid, 2 failed (1 a clash), 2 unfinished (one cancelled while it ran)", c)
	}
	if c.First != 2 || c.FirstValid != 0 {
		t.Errorf("first %d to finish: %d valid, want 2 and 0 (the two failures finished first)", c.First, c.FirstValid)
	}
	if c.ByReason["clash: "+why] != 1 || c.ByReason["timed out after 600s"] != 1 || len(c.ByReason) != 2 {
		t.Errorf("reasons = %v, want the clash rule's words and the timeout without its fold", c.ByReason)
	}
	var b bytes.Buffer
	writeCSV(&b, c)
	if !strings.HasPrefix(b.String(), "5,1,2,2,1,0,") {
		t.Errorf("csv = %q, want drawn,valid,failed,unfinished,clashes,first_valid first", b.String())
	}
}

func TestShortReasonAndReasons(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "no reason recorded"},
		{"validation fold 3: exited with code 1", "exited with code 1"},
		{"ValueError: x\nmore", "ValueError: x"},
		{strings.Repeat("a", 120), strings.Repeat("a", 100) + "..."},
	} {
		if got := shortReason(tc.in); got != tc.want {
			t.Errorf("shortReason(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := Reasons(map[string]int{"b": 1, "a": 1, "c": 3}); got != "c (3); a (1); b (1)" {
		t.Errorf("Reasons = %q, want the most frequent first, ties by name", got)
	}
	if got := Reasons(nil); got != "none" {
		t.Errorf("Reasons(nil) = %q", got)
	}
}
