package codeactions

import (
	"fmt"
	"strings"
	"testing"
)

// A library that names a slot or option it does not have, or bounds a pass it cannot, is a bug
// in the library: register refuses it when the package loads, not when a run tunes an answer.
func TestRegisterRefusesAnInconsistentLibrary(t *testing.T) {
	slots := []Slot{
		{Name: "model", Options: []Option{{Name: "a"}, {Name: "b"}}},
		{Name: "validation", Options: []Option{{Name: "holdout"}, {Name: "full"}}},
	}
	cases := []struct {
		name string
		lib  Library
		want string // in the panic's message
	}{
		{"tunes a missing slot", Library{Tunable: []string{"strength"}}, "tunes slot strength"},
		{"bounds an untuned slot", Library{TuneMost: map[string]int{"model": 1}}, "slot model to 1 options"},
		{"bounds a pass to nothing", Library{Tunable: []string{"model"}, TuneMost: map[string]int{"model": 0}}, "slot model to 0 options"},
		{"report-only option missing", Library{ReportOnly: []ReportOnly{{Slot: "validation", Options: []string{"holdout", "cv"}}}}, "validation=cv does not exist"},
		{"report-only group of one", Library{ReportOnly: []ReportOnly{{Slot: "validation", Options: []string{"holdout"}}}}, "two options"},
		{"partial fit on a missing slot", Library{PartialFits: []PartialFit{{Slot: "fit", Partial: "holdout", Full: "full"}}}, "names slot fit"},
		{"partial fit's full option missing", Library{PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout", Full: "refit"}}}, "validation=refit does not exist"},
		{"guard on a missing slot", Library{Guards: []Guard{{Slot: "post", Unsafe: "a", Safe: "b", When: always}}}, "a guard needs a slot it has"},
		{"guard without a condition", Library{Guards: []Guard{{Slot: "model", Unsafe: "a", Safe: "b"}}}, "a guard needs a slot it has and a condition"},
		{"guard's safe option missing", Library{Guards: []Guard{{Slot: "model", Unsafe: "a", Safe: "c", When: always}}}, "model=c does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lib := c.lib
			lib.Modality, lib.Slots = "test-"+strings.ReplaceAll(c.name, " ", "-"), slots
			msg := func() (msg string) {
				defer func() {
					if r := recover(); r != nil {
						msg = fmt.Sprint(r)
					}
				}()
				register(&lib)
				return ""
			}()
			if !strings.Contains(msg, c.want) {
				t.Fatalf("register: panic %q, want one containing %q", msg, c.want)
			}
			if _, added := libraries[lib.Modality]; added {
				t.Fatalf("register added the refused library %s", lib.Modality)
			}
		})
	}

	// The same slots, consistently named, register: the cases above fail for their one flaw.
	ok := Library{Modality: "test-consistent", Slots: slots, Tunable: []string{"model"}, TuneMost: map[string]int{"model": 1},
		ReportOnly: []ReportOnly{{Slot: "validation", Options: []string{"holdout", "full"}}}, PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout", Full: "full"}},
		Guards: []Guard{{Slot: "model", Unsafe: "a", Safe: "b", When: always}}}
	register(&ok)
	defer delete(libraries, ok.Modality)
	if libraries[ok.Modality] != &ok {
		t.Fatal("register did not add a consistent library")
	}
}

func always(Schema) bool { return true }
