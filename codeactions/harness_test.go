package codeactions_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"mlerl/codeactions"
	"mlerl/grading"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/reward"
	"mlerl/sandbox"
	"mlerl/tasks"
)

// outcome is what happened to one rendered program: as in training, it is instrumented, run in
// the bubblewrap sandbox on a public folder and graded against the private answers.
type outcome struct {
	Program  codeactions.Program
	Markers  int
	ExitCode int
	Output   string
	Seconds  float64
	Grade    grading.Result // zero when the program failed
}

// runChoice renders choices with lib for spec and runs the program on dirs.
func runChoice(t *testing.T, lib *codeactions.Library, choices map[string]string, spec *tasks.Spec, dirs tasks.Dirs, wall time.Duration) outcome {
	t.Helper()
	toks, err := lib.TokensFor(choices)
	if err != nil {
		t.Fatal(err)
	}
	p, err := lib.Render(toks, codeactions.SchemaOf(spec))
	if err != nil {
		t.Fatal(err)
	}
	ins, err := instrument.AST{Python: testenv.Python}.Instrument(context.Background(), p.Code)
	if err != nil {
		t.Fatalf("instrumenting:\n%s\n%v", p.Code, err)
	}
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	prog := filepath.Join(dir, "solution.py")
	if err := os.WriteFile(prog, []byte(ins.Program), 0o644); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	res, err := sb.Run(context.Background(), sandbox.Spec{Program: prog, DataDir: dirs.Public, WorkDir: work,
		Limits: sandbox.Limits{Wall: wall, MemoryBytes: 4 << 30, Processes: 64, OutputBytes: 1 << 16}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := outcome{Program: p, Markers: len(reward.FoundMarkers(res.Output)), ExitCode: res.ExitCode,
		Output: res.Output, Seconds: res.Duration.Seconds()}
	if res.ExitCode == 0 {
		out.Grade, err = grading.Grade(spec, filepath.Join(work, "submission.csv"), filepath.Join(dirs.Private, spec.Files.Answers))
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// programCase is one expectation about a program of a library on a task's data.
type programCase struct {
	name    string
	choices map[string]string
	valid   bool
	// bound: a valid program's score must be at most bound (lower-better metrics) or at least
	// bound (higher-better); ignored when the program is not valid.
	bound   float64
	markers int // markers the program must reach; -1: any
}

// checkPrograms runs each case and checks validity, the score bound and the markers reached.
func checkPrograms(t *testing.T, lib *codeactions.Library, spec *tasks.Spec, dirs tasks.Dirs, cases []programCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := runChoice(t, lib, c.choices, spec, dirs, 5*time.Minute)
			if c.markers >= 0 && o.Markers != c.markers {
				t.Errorf("reached %d markers, want %d; output:\n%s", o.Markers, c.markers, o.Output)
			}
			if !c.valid {
				if o.ExitCode == 0 && o.Grade.Valid {
					t.Fatalf("want an invalid or failing program, got a valid score %v; program:\n%s", *o.Grade.Score, o.Program.Code)
				}
				return
			}
			if o.ExitCode != 0 {
				t.Fatalf("exit %d:\n%s\nprogram:\n%s", o.ExitCode, o.Output, o.Program.Code)
			}
			if !o.Grade.Valid {
				t.Fatalf("invalid submission: %s", o.Grade.Reason)
			}
			s := *o.Grade.Score
			if (spec.LowerIsBetter() && s > c.bound) || (!spec.LowerIsBetter() && s < c.bound) {
				t.Fatalf("%s %.5f, want %s %v", spec.Metric, s, map[bool]string{true: "at most", false: "at least"}[spec.LowerIsBetter()], c.bound)
			}
			t.Logf("%s %.5f in %.1fs", spec.Metric, s, o.Seconds)
		})
	}
}

// checkValidWithin runs one program that must reach markers and write a valid submission whose
// score lies in [lo, hi]: both ends are real bounds (a baseline it must beat, a better program
// it must not reach), so the check fails if the program or the grader changes what it claims.
func checkValidWithin(t *testing.T, lib *codeactions.Library, spec *tasks.Spec, dirs tasks.Dirs, choices map[string]string, markers int, lo, hi float64) {
	t.Helper()
	o := runChoice(t, lib, choices, spec, dirs, 5*time.Minute)
	if o.Markers != markers {
		t.Errorf("reached %d markers, want %d; output:\n%s", o.Markers, markers, o.Output)
	}
	if o.ExitCode != 0 || !o.Grade.Valid {
		t.Fatalf("exit %d, grade %+v:\n%s\nprogram:\n%s", o.ExitCode, o.Grade, o.Output, o.Program.Code)
	}
	if s := *o.Grade.Score; !(s >= lo && s <= hi) {
		t.Fatalf("%s %.5f, want within [%v, %v]", spec.Metric, s, lo, hi)
	}
	t.Logf("%s %.5f within [%.5f, %.5f] in %.1fs", spec.Metric, *o.Grade.Score, lo, hi, o.Seconds)
}

// randomChoices draws one option per slot uniformly.
func randomChoices(lib *codeactions.Library, rng *rand.Rand) []int {
	toks := make([]int, len(lib.Slots))
	for i := range lib.Slots {
		first, n := lib.SlotRange(i)
		toks[i] = first + rng.IntN(n)
	}
	return toks
}

// override returns base with the given slot=option pairs (slot, option, slot, option, ...) changed.
func override(base map[string]string, kv ...string) map[string]string {
	for i := 0; i+1 < len(kv); i += 2 {
		base[kv[i]] = kv[i+1]
	}
	return base
}

// checkStrongBeatsWeak runs a strong and a weak program of lib and checks both are valid, the
// strong one reaches every marker and bound (at least; at most for lower-better metrics), and
// it beats the weak one by at least margin.
func checkStrongBeatsWeak(t *testing.T, lib *codeactions.Library, spec *tasks.Spec, dirs tasks.Dirs, strong, weak map[string]string, bound, margin float64) {
	t.Helper()
	s := runChoice(t, lib, strong, spec, dirs, 5*time.Minute)
	w := runChoice(t, lib, weak, spec, dirs, 5*time.Minute)
	for _, o := range []outcome{s, w} {
		if o.ExitCode != 0 || !o.Grade.Valid {
			t.Fatalf("exit %d, grade %+v:\n%s\nprogram:\n%s", o.ExitCode, o.Grade, o.Output, o.Program.Code)
		}
	}
	if s.Markers != 7 {
		t.Errorf("the strong program reached %d markers, want 7:\n%s", s.Markers, s.Output)
	}
	ss, ws := *s.Grade.Score, *w.Grade.Score
	t.Logf("%s: strong %.5f in %.1fs, weak %.5f in %.1fs", spec.Metric, ss, s.Seconds, ws, w.Seconds)
	if spec.LowerIsBetter() {
		ss, ws, bound = -ss, -ws, -bound
	}
	if ss < bound {
		t.Errorf("the strong program scores %v, want at least %v (sign flipped for lower-is-better)", ss, bound)
	}
	if ss-ws < margin {
		t.Errorf("the strong program (%v) beats the weak one (%v) by less than %v", ss, ws, margin)
	}
}
