package codeactions_test

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"mlerl/codeactions"
	"mlerl/grading"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/model"
	"mlerl/sandbox"
	"mlerl/tasks"
)

// strongPrograms are each library's strongest default program (the base of its own tests).
var strongPrograms = map[string]func() map[string]string{
	"tabular-classification": base,
	"tabular-regression":     tabRegBase,
	"text-classification":    func() map[string]string { return textClsBase() },
	"text-pair":              textPairBase,
	"span-extraction":        spanBase,
	"ordinal":                ordinalBase,
	"preference":             preferenceBase,
	"image":                  imageBase,
}

// conformanceData prepares the task's synthetic raw files (testdata/conformance_synth.py) with
// the task's own preparer and validation carving, and returns the validation split: the files,
// columns, labels and answers are shaped exactly as a run on the real data sees them.
// Properties (conformance_synth.py's PROPERTIES) give a tabular task's train the awkward data
// real competitions have.
func conformanceData(spec *tasks.Spec, root string, properties ...string) (tasks.Dirs, error) {
	raw := filepath.Join(root, "raw")
	script := filepath.Join(testenv.RepoRoot(), "codeactions", "testdata", "conformance_synth.py")
	if out, err := exec.Command(testenv.Python, script, spec.ID, raw, strings.Join(properties, ",")).CombinedOutput(); err != nil {
		return tasks.Dirs{}, fmt.Errorf("writing synthetic raw data: %v\n%s", err, out)
	}
	data := filepath.Join(root, "data")
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: data}, Python: testenv.Python}
	if err := p.Prepare(context.Background(), spec, raw); err != nil {
		return tasks.Dirs{}, err
	}
	dirs := tasks.Layout{DataDir: data}.Dirs(spec.ID, tasks.SplitValidation)
	if spec.Metric == "mean-word-jaccard" {
		// An empty answer makes every submission invalid (Jaccard's 0/0 where the prediction is
		// empty too): the generator's empty tweet must land in the validation train.
		f, err := os.Open(filepath.Join(dirs.Private, spec.Files.Answers))
		if err != nil {
			return tasks.Dirs{}, err
		}
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		if err != nil {
			return tasks.Dirs{}, err
		}
		k := slices.Index(rows[0], spec.TargetColumns[0])
		for _, r := range rows[1:] {
			if k < 0 || strings.TrimSpace(r[k]) == "" {
				return tasks.Dirs{}, fmt.Errorf("the synthetic validation answers have an empty %s: change the generator's seed or rows", spec.TargetColumns[0])
			}
		}
	}
	return dirs, nil
}

// conformanceSample is the programs run on a task: the library's strong default, then programs
// drawn from the warm start's prior and uniformly, without repeats, from a seed of the task (and
// salt); with sweep, every program that differs from the strong default in one slot as well.
func conformanceSample(lib *codeactions.Library, spec *tasks.Spec, prior, uniform int, salt uint64, sweep bool) ([][]int, error) {
	h := fnv.New64a()
	h.Write([]byte(spec.ID))
	seed := h.Sum64() + salt
	strong, err := lib.TokensFor(strongPrograms[lib.Modality]())
	if err != nil {
		return nil, err
	}
	out := [][]int{strong}
	seen := map[string]bool{fmt.Sprint(strong): true}
	add := func(toks []int) bool {
		if seen[fmt.Sprint(toks)] {
			return false
		}
		seen[fmt.Sprint(toks)] = true
		out = append(out, toks)
		return true
	}
	if sweep {
		for i := range lib.Slots {
			first, n := lib.SlotRange(i)
			for j := first; j < first+n; j++ {
				toks := slices.Clone(strong)
				toks[i] = j
				add(toks)
			}
		}
	}
	// The warm start's own draws: the scratch examples of its corpus.
	for _, e := range model.Corpus(lib, model.Task{Modality: lib.Modality}, 8*prior, seed) {
		if prior > 0 && e.Prompt.Kind == model.KindScratch && add(e.Tokens) {
			prior--
		}
	}
	rng := rand.New(rand.NewPCG(seed, 7))
	for uniform > 0 {
		if add(randomChoices(lib, rng)) {
			uniform--
		}
	}
	return out, nil
}

// conformanceRun is one program's run on a task and how it was classified.
type conformanceRun struct {
	spec     *tasks.Spec
	dirs     tasks.Dirs
	lib      *codeactions.Library
	tokens   []int
	strong   bool // the library's strong default
	prior    bool // drawn from the warm start's corpus
	program  codeactions.Program
	must     string // Clash: why it must fail ("" for none)
	may      string // MayClash: why it may fail
	exit     int
	timedOut bool
	output   string
	grade    grading.Result
	seconds  float64
	sub      []byte // the submission, when the program exited 0
	err      error  // rendering, instrumenting, the sandbox or the grader broke
}

func (r *conformanceRun) valid() bool { return r.exit == 0 && r.grade.Valid }

// why is how the run failed: the grader's reason, or the exit and the output's last lines.
func (r *conformanceRun) why() string {
	switch {
	case r.exit != 0:
		lines := strings.Split(strings.TrimSpace(r.output), "\n")
		return fmt.Sprintf("exit %d: %s", r.exit, strings.Join(lines[max(0, len(lines)-3):], " | "))
	}
	return "invalid submission: " + r.grade.Reason
}

// runConformance renders, instruments, runs (in the bubblewrap sandbox, as training does) and
// grades one program.
func runConformance(sb sandbox.Sandbox, r *conformanceRun, dir string) {
	schema := codeactions.SchemaOf(r.spec)
	r.must, r.may = r.lib.Clash(r.tokens, schema), r.lib.MayClash(r.tokens, schema)
	p, err := r.lib.Render(r.tokens, schema)
	if err != nil {
		r.err = err
		return
	}
	r.program = p
	ins, err := instrument.AST{Python: testenv.Python}.Instrument(context.Background(), p.Code)
	if err != nil {
		r.err = fmt.Errorf("instrumenting: %v", err)
		return
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		r.err = err
		return
	}
	prog := filepath.Join(dir, "solution.py")
	if err := os.WriteFile(prog, []byte(ins.Program), 0o644); err != nil {
		r.err = err
		return
	}
	work := filepath.Join(dir, "work")
	res, err := sb.Run(context.Background(), sandbox.Spec{Program: prog, DataDir: r.dirs.Public, WorkDir: work,
		Limits: sandbox.Limits{Wall: conformanceWall, MemoryBytes: 3 << 30, Processes: 64, OutputBytes: 1 << 14}}, nil)
	if err != nil {
		r.err = fmt.Errorf("sandbox: %v", err)
		return
	}
	r.exit, r.timedOut, r.output, r.seconds = res.ExitCode, res.TimedOut, res.Output, res.Duration.Seconds()
	if res.ExitCode == 0 && !res.TimedOut {
		r.sub, _ = os.ReadFile(filepath.Join(work, "submission.csv"))
		r.grade, r.err = grading.Grade(r.spec, filepath.Join(work, "submission.csv"), filepath.Join(r.dirs.Private, r.spec.Files.Answers))
	}
}

// runAllConformance runs the programs two at a time (the machine has two cores), each in its
// own directory under root.
func runAllConformance(sb sandbox.Sandbox, runs []*conformanceRun, root string) {
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			runConformance(sb, r, filepath.Join(root, strconv.Itoa(i)))
		}()
	}
	wg.Wait()
}

// conformanceWall bounds one program: on the small synthetic data even the slowest settings
// take seconds, so a timeout is a bug too.
const conformanceWall = 120 * time.Second

// Every library's renderer must write a valid submission for every task of its modality from
// the spec alone, unless the program meets one of the library's clash rules. For each of the
// built-in tasks, on synthetic data prepared by the task's own preparer, a sample of programs
// (the strong default, warm-start draws, uniform draws) is run in the sandbox and graded, and
// each outcome is checked against Clash and MayClash: a failure no rule names is a renderer
// bug, and so is a valid submission from a program a certain rule says must fail.
// To look further: MLERL_CONFORMANCE_PROGRAMS=N draws N programs per task (half from the
// prior), MLERL_CONFORMANCE_SEED=S another sample, MLERL_CONFORMANCE_SWEEP=1 adds every
// one-slot change of the strong default, MLERL_CONFORMANCE_TASKS=a,b only those tasks.
func TestConformance(t *testing.T) {
	testenv.RequirePython(t)
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	prior, uniform := 6, 3
	if v := os.Getenv("MLERL_CONFORMANCE_PROGRAMS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 2 {
			t.Fatalf("MLERL_CONFORMANCE_PROGRAMS=%q: want a number of programs, at least 2", v)
		}
		prior, uniform = n/2, n-1-n/2
	}
	salt, _ := strconv.ParseUint(os.Getenv("MLERL_CONFORMANCE_SEED"), 10, 64)
	sweep := os.Getenv("MLERL_CONFORMANCE_SWEEP") != ""
	start := time.Now()
	reg := tasks.Builtin()
	ids := reg.IDs()
	if v := os.Getenv("MLERL_CONFORMANCE_TASKS"); v != "" {
		ids = strings.Split(v, ",")
		for _, id := range ids {
			if _, err := reg.Get(id); err != nil {
				t.Fatalf("MLERL_CONFORMANCE_TASKS: %v; give built-in task ids separated by commas", err)
			}
		}
	}
	slices.Sort(ids)
	type taskRuns struct {
		spec *tasks.Spec
		dirs tasks.Dirs
		err  error
		runs []*conformanceRun
	}
	all := make([]*taskRuns, len(ids))
	root := t.TempDir()
	// Two at a time: the machine has two cores.
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, id := range ids {
		spec, err := reg.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		tr := &taskRuns{spec: spec}
		all[i] = tr
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			tr.dirs, tr.err = conformanceData(spec, filepath.Join(root, spec.ID))
		}()
	}
	wg.Wait()
	t.Logf("synthetic data for %d tasks prepared in %.0fs", len(ids), time.Since(start).Seconds())
	var jobs []*conformanceRun
	for _, tr := range all {
		if tr.err != nil {
			t.Errorf("%s: %v", tr.spec.ID, tr.err)
			continue
		}
		lib, err := codeactions.For(tr.spec.Modality)
		if err != nil {
			t.Errorf("%s: %v", tr.spec.ID, err)
			continue
		}
		sample, err := conformanceSample(lib, tr.spec, prior, uniform, salt, sweep)
		if err != nil {
			t.Fatal(err)
		}
		for i, toks := range sample {
			r := &conformanceRun{spec: tr.spec, dirs: tr.dirs, lib: lib, tokens: toks, strong: i == 0, prior: i > 0 && i <= prior}
			tr.runs = append(tr.runs, r)
			jobs = append(jobs, r)
		}
	}
	runAllConformance(sb, jobs, filepath.Join(root, "runs"))
	for _, tr := range all {
		checkOutcomes(t, tr.spec.ID, tr.runs)
	}
	var byTask [][]*conformanceRun
	for _, tr := range all {
		byTask = append(byTask, tr.runs)
	}
	jobs = append(jobs, checkSubmissionKeys(t, sb, byTask, filepath.Join(root, "keys"))...)
	// The slowest programs, to keep the test's time in check.
	total := 0.0
	for _, r := range jobs {
		total += r.seconds
	}
	slices.SortFunc(jobs, func(a, b *conformanceRun) int { return cmp.Compare(b.seconds, a.seconds) })
	for _, r := range jobs[:min(5, len(jobs))] {
		t.Logf("%.1fs %s: %s", r.seconds, r.spec.ID, r.lib.Describe(r.tokens))
	}
	t.Logf("%d programs (%.0fs of running programs) in %.0fs", len(jobs), total, time.Since(start).Seconds())
}

// checkOutcomes checks each run against the clash rules: a failure no rule names is a renderer
// bug, and so is a valid submission from a program a certain rule says must fail. It logs the
// tally under label and returns the valid runs among the warm start's draws, and those draws.
func checkOutcomes(t *testing.T, label string, runs []*conformanceRun) (priorValid, priorRuns int) {
	t.Helper()
	var valid, lucky, certain, dependent, bugs int
	for _, r := range runs {
		desc := r.lib.Describe(r.tokens)
		if r.prior {
			priorRuns++
			if r.valid() {
				priorValid++
			}
		}
		if r.strong && r.may != "" {
			bugs++
			t.Errorf("%s: the strong default meets a clash rule (%s): %s", label, r.may, desc)
		}
		switch {
		case r.err != nil:
			bugs++
			t.Errorf("%s: %s: %v", label, desc, r.err)
		case r.timedOut:
			bugs++
			t.Errorf("%s: timed out after %v (no clash is a timeout): %s", label, conformanceWall, desc)
		case r.valid() && r.must != "":
			bugs++
			t.Errorf("%s: a clash rule says this program must fail (%s), but its submission is valid (%s %.5f):\n%s\nprogram:\n%s",
				label, r.must, r.spec.Metric, *r.grade.Score, desc, r.program.Code)
		case r.valid():
			valid++
			if r.may != "" {
				lucky++
				t.Logf("%s: valid on this data despite a data-dependent clash (%s): %s", label, r.may, desc)
			}
		case r.may == "":
			bugs++
			t.Errorf("%s: no clash rule names this program, but it failed: %s\n%s\noutput:\n%s\nprogram:\n%s",
				label, r.why(), desc, r.output, r.program.Code)
		case r.must != "":
			certain++
			t.Logf("%s: intended clash (%s): %s\n\t%s", label, r.must, r.why(), desc)
		default:
			dependent++
			t.Logf("%s: data-dependent clash (%s): %s\n\t%s", label, r.may, r.why(), desc)
		}
	}
	t.Logf("%-46s %2d programs: %2d valid (%d despite a data-dependent clash), %2d intended clashes (%d data-dependent), %d bugs",
		label, len(runs), valid, lucky, certain+dependent, dependent, bugs)
	return priorValid, priorRuns
}

// checkSubmissionKeys checks the claim the redraw rule rests on: programs with one submission key
// (Library.SubmissionKey) write the same submission. For up to two valid programs of each task
// (the strong default first), every program that differs in a report-only slot and keeps the key
// is run, and its submission must be byte-identical. It returns the runs it made.
func checkSubmissionKeys(t *testing.T, sb sandbox.Sandbox, byTask [][]*conformanceRun, root string) []*conformanceRun {
	t.Helper()
	type pair struct{ ref, v *conformanceRun }
	var pairs []pair
	for _, runs := range byTask {
		refs := 0
		for _, r := range runs {
			if refs == 2 || !r.valid() {
				continue
			}
			schema := codeactions.SchemaOf(r.spec)
			key, err := r.lib.SubmissionKey(r.tokens, schema)
			if err != nil {
				t.Fatal(err)
			}
			n := len(pairs)
			for _, g := range r.lib.ReportOnly {
				i := slices.IndexFunc(r.lib.Slots, func(s codeactions.Slot) bool { return s.Name == g.Slot })
				first, count := r.lib.SlotRange(i)
				for tok := first; tok < first+count; tok++ {
					if tok == r.tokens[i] {
						continue
					}
					v := slices.Clone(r.tokens)
					v[i] = tok
					if k, err := r.lib.SubmissionKey(v, schema); err != nil || !slices.Equal(k, key) {
						continue
					}
					pairs = append(pairs, pair{r, &conformanceRun{spec: r.spec, dirs: r.dirs, lib: r.lib, tokens: v}})
				}
			}
			if len(pairs) > n {
				refs++
			}
		}
	}
	var out []*conformanceRun
	for _, p := range pairs {
		out = append(out, p.v)
	}
	runAllConformance(sb, out, root)
	for _, p := range pairs {
		switch {
		case p.v.err != nil || !p.v.valid():
			t.Errorf("%s: shares its submission key with a valid program but failed (%v %s): %s", p.v.spec.ID, p.v.err, p.v.why(), p.v.lib.Describe(p.v.tokens))
		case !slices.Equal(p.v.sub, p.ref.sub):
			t.Errorf("%s: programs with one submission key wrote different submissions (%s %v vs %v):\n%s\n%s",
				p.v.spec.ID, p.v.spec.Metric, *p.v.grade.Score, *p.ref.grade.Score, p.v.lib.Describe(p.v.tokens), p.ref.lib.Describe(p.ref.tokens))
		}
	}
	t.Logf("submission keys: %d programs sharing a key with a valid one wrote its submission byte for byte", len(pairs))
	return out
}

// tabularProperties are the data properties (conformance_synth.py's PROPERTIES) each tabular
// task's synthetic train can be given.
var tabularProperties = map[string][]string{
	"leaf-classification":                      {"missing", "categorical", "compound", "id-like", "text", "labels", "imbalanced"},
	"tabular-playground-series-dec-2021":       {"missing", "categorical", "compound", "id-like", "text", "labels", "imbalanced", "many-classes"},
	"tabular-playground-series-may-2022":       {"missing", "categorical", "compound", "id-like", "text", "imbalanced"},
	"nomad2018-predict-transparent-conductors": {"missing", "categorical", "compound", "id-like", "text"},
}

// The tabular libraries on the data real competitions have: missing values, categorical columns
// of low and high cardinality, compound "a/b/c" strings, id-like and free-text columns, boolean
// and integer labels, a rare class, many classes. Every tabular task gets all its properties at
// once, and each property alone is given to one task; on each dataset the strong default and
// warm-start draws run in the sandbox. A failure no clash rule names is a bug, and at the warm
// start under half the programs fail, on every task and every property: among the runs, and by
// the clash rules (which the runs check) over many draws.
// MLERL_CONFORMANCE_PROGRAMS=N draws N warm-start programs for each single-property dataset (2N
// for the combined ones), MLERL_CONFORMANCE_SEED=S puts the single properties on other tasks
// and draws other programs, MLERL_CONFORMANCE_TASKS=a,b only those tasks.
func TestTabularConformance(t *testing.T) {
	testenv.RequirePython(t)
	sb, err := sandbox.NewLocal(testenv.Python, false)
	if err != nil {
		t.Fatal(err)
	}
	prior := 2
	if v := os.Getenv("MLERL_CONFORMANCE_PROGRAMS"); v != "" {
		if prior, err = strconv.Atoi(v); err != nil || prior < 1 {
			t.Fatalf("MLERL_CONFORMANCE_PROGRAMS=%q: want a number of programs, at least 1", v)
		}
	}
	start := time.Now()
	reg := tasks.Builtin()
	type dataset struct {
		spec  *tasks.Spec
		props []string
		dirs  tasks.Dirs
		err   error
		runs  []*conformanceRun
	}
	var sets []*dataset
	ids := slices.Sorted(maps.Keys(tabularProperties))
	if v := os.Getenv("MLERL_CONFORMANCE_TASKS"); v != "" {
		ids = strings.Split(v, ",")
	}
	// Every task with all its properties at once, and each property alone on one task that
	// has it, chosen by the seed: 12 datasets rather than 30.
	bySpec := map[string][]string{}
	for _, id := range ids {
		if tabularProperties[id] == nil {
			t.Fatalf("MLERL_CONFORMANCE_TASKS: %q is not a tabular task; give some of %v", id, slices.Sorted(maps.Keys(tabularProperties)))
		}
		spec, err := reg.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		sets = append(sets, &dataset{spec: spec, props: tabularProperties[id]})
		for _, p := range tabularProperties[id] {
			bySpec[p] = append(bySpec[p], id)
		}
	}
	salt, _ := strconv.ParseUint(os.Getenv("MLERL_CONFORMANCE_SEED"), 10, 64)
	for k, p := range slices.Sorted(maps.Keys(bySpec)) {
		spec, _ := reg.Get(bySpec[p][(int(salt)+k)%len(bySpec[p])])
		sets = append(sets, &dataset{spec: spec, props: []string{p}})
	}
	root := t.TempDir()
	sem := make(chan struct{}, 2)
	var wg sync.WaitGroup
	for i, d := range sets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			d.dirs, d.err = conformanceData(d.spec, filepath.Join(root, strconv.Itoa(i)), d.props...)
		}()
	}
	wg.Wait()
	t.Logf("%d synthetic datasets prepared in %.0fs", len(sets), time.Since(start).Seconds())
	var jobs []*conformanceRun
	for _, d := range sets {
		if d.err != nil {
			t.Errorf("%s with %v: %v", d.spec.ID, d.props, d.err)
			continue
		}
		lib, err := codeactions.For(d.spec.Modality)
		if err != nil {
			t.Fatal(err)
		}
		h := fnv.New64a()
		h.Write([]byte(strings.Join(d.props, ",")))
		n := prior
		if len(d.props) > 1 {
			n = 2 * prior
		}
		sample, err := conformanceSample(lib, d.spec, n, 0, h.Sum64()+salt, false)
		if err != nil {
			t.Fatal(err)
		}
		for i, toks := range sample {
			r := &conformanceRun{spec: d.spec, dirs: d.dirs, lib: lib, tokens: toks, strong: i == 0, prior: i > 0}
			d.runs = append(d.runs, r)
			jobs = append(jobs, r)
		}
	}
	runAllConformance(sb, jobs, filepath.Join(root, "runs"))
	// The warm start's failures by task and by property (a combined dataset counts for each).
	type tally struct{ valid, runs int }
	byTask, byProp := map[string]*tally{}, map[string]*tally{}
	add := func(m map[string]*tally, k string, valid, runs int) {
		if m[k] == nil {
			m[k] = &tally{}
		}
		m[k].valid += valid
		m[k].runs += runs
	}
	for _, d := range sets {
		label := d.spec.ID + " " + strings.Join(d.props, "+")
		if len(d.props) > 1 {
			label = d.spec.ID + " all"
		}
		valid, runs := checkOutcomes(t, label, d.runs)
		t.Logf("warm start: %s: %d of %d valid", label, valid, runs)
		add(byTask, d.spec.ID, valid, runs)
		for _, p := range d.props {
			add(byProp, p, valid, runs)
		}
	}
	// The clash rules' count over many draws: a program that may clash counts as failing.
	for _, id := range ids {
		spec, _ := reg.Get(id)
		lib, _ := codeactions.For(spec.Modality)
		schema := codeactions.SchemaOf(spec)
		draws, failing := 0, 0
		for _, e := range model.Corpus(lib, model.Task{Modality: lib.Modality}, 4000, 1) {
			if e.Prompt.Kind == model.KindScratch {
				draws++
				if lib.MayClash(e.Tokens, schema) != "" {
					failing++
				}
			}
		}
		t.Logf("warm start on %s by the clash rules: %d of %d programs may fail (%.0f%%)", id, failing, draws, 100*float64(failing)/float64(draws))
		if 2*failing >= draws {
			t.Errorf("warm start on %s: %d of %d programs may fail by the clash rules, not under half", id, failing, draws)
		}
	}
	// A handful of runs a task or property cannot show a rate under half by itself (the rules'
	// count above does, and the runs check the rules); it fails on runs that show the rate is
	// above half: failures as many as a fair coin gives less than 5% of the time.
	for _, m := range []map[string]*tally{byTask, byProp} {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			v := m[k]
			fail := v.runs - v.valid
			t.Logf("warm start on %s: %d of %d programs valid (%.0f%%)", k, v.valid, v.runs, 100*float64(v.valid)/float64(max(1, v.runs)))
			if p := coinTail(v.runs, fail); p < 0.05 {
				t.Errorf("warm start on %s: %d of %d programs fail, above half (a fair coin fails this often with probability %.3f)", k, fail, v.runs, p)
			}
		}
	}
	total := 0.0
	for _, r := range jobs {
		total += r.seconds
	}
	slices.SortFunc(jobs, func(a, b *conformanceRun) int { return cmp.Compare(b.seconds, a.seconds) })
	for _, r := range jobs[:min(3, len(jobs))] {
		t.Logf("%.1fs %s: %s", r.seconds, r.spec.ID, r.lib.Describe(r.tokens))
	}
	t.Logf("%d programs (%.0fs of running programs) in %.0fs", len(jobs), total, time.Since(start).Seconds())
}

// Every library's golden sample (goldenPrograms: the strong default, every one-slot change of it
// on the library's first task, and random draws on every task) compiles, and pyflakes finds
// nothing in it but unused imports (a library imports the modules any of its options may use)
// and unused local variables (logged), unless the program meets a clash rule, where an undefined name may be the intended failure.
// It needs no data: rendering, py_compile and one pyflakes run.
func TestProgramsCompileAndLint(t *testing.T) {
	testenv.RequirePython(t)
	if out, err := exec.Command(testenv.Python, "-m", "pyflakes", "--version").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3-pyflakes is required: run `go tool task setup` (scripts/setup-system.sh installs it) (%v: %s)", err, out)
	}
	dir := t.TempDir()
	reg := tasks.Builtin()
	type program struct {
		desc  string
		clash string
	}
	programs := map[string]program{}
	var files []string
	for _, modality := range codeactions.Modalities() {
		lib, _ := codeactions.For(modality)
		sweep := true
		for _, id := range reg.IDs() {
			spec, _ := reg.Get(id)
			if spec.Modality != modality {
				continue
			}
			schema := codeactions.SchemaOf(spec)
			for _, toks := range goldenPrograms(t, lib, spec, sweep) {
				p, err := lib.Render(toks, schema)
				if err != nil {
					t.Fatalf("%s %s: %v", id, lib.Describe(toks), err)
				}
				f := filepath.Join(dir, fmt.Sprintf("p%04d.py", len(files)))
				if err := os.WriteFile(f, []byte(p.Code), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, f)
				programs[f] = program{id + " " + lib.Describe(toks), lib.MayClash(toks, schema)}
			}
			sweep = false
		}
	}
	compile := "import py_compile, sys\nfor f in sys.argv[1:]:\n    py_compile.compile(f, cfile=f + 'c', doraise=True)\n"
	if out, err := exec.Command(testenv.Python, append([]string{"-c", compile}, files...)...).CombinedOutput(); err != nil {
		t.Fatalf("a rendered program does not compile: %v\n%s", err, out)
	}
	out, _ := exec.Command(testenv.Python, append([]string{"-m", "pyflakes"}, files...)...).CombinedOutput()
	complaints := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f, msg, ok := strings.Cut(line, ":")
		p, known := programs[f]
		switch {
		case line == "" || strings.Contains(msg, "imported but unused"):
		case strings.Contains(msg, "is assigned to but never used"):
			t.Logf("%s: %s", p.desc, msg)
		case ok && known && p.clash != "":
			t.Logf("%s (meets a clash rule: %s): %s", p.desc, p.clash, msg)
		default:
			complaints++
			if complaints <= 20 {
				t.Errorf("pyflakes: %s: %s", p.desc, line)
			}
		}
	}
	t.Logf("%d rendered programs compiled and linted; %d complaints", len(files), complaints)
}

// coinTail is the probability that a fair coin shows at least k heads in n tosses.
func coinTail(n, k int) float64 {
	p, c := 0.0, 1.0 // c: n choose i
	for i := 0; i <= n; i++ {
		if i >= k {
			p += c
		}
		c = c * float64(n-i) / float64(i+1)
	}
	return p / math.Pow(2, float64(n))
}

func TestCoinTail(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want float64
	}{{4, 0, 1}, {10, 9, 11.0 / 1024}, {10, 5, 638.0 / 1024}, {3, 4, 0}} {
		if got := coinTail(c.n, c.k); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("coinTail(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
		}
	}
}
