// Package tasks holds the competition specs (what a task is, where its files live, how it is
// graded and how its programs are limited) and prepares MLE-bench's data layout from raw files.
package tasks

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"math"
	"path"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"mlerl/internal/regularfile"
	"mlerl/settings"
)

//go:embed specs/*.yaml
var embeddedSpecs embed.FS

// Spec describes one competition. Field names follow the YAML keys.
type Spec struct {
	ID            string     `yaml:"id"`
	Name          string     `yaml:"name"`
	Modality      string     `yaml:"modality"`
	Metric        string     `yaml:"metric"`
	Direction     string     `yaml:"direction"` // "min" when lower scores are better
	IDColumn      string     `yaml:"id_column"`
	TargetColumns []string   `yaml:"target_columns"`
	Files         Files      `yaml:"files"`
	Answers       Answers    `yaml:"answers"`
	RawFiles      []string   `yaml:"raw_files"`
	Split         Split      `yaml:"split"`
	Validation    Validation `yaml:"validation"`
	Thresholds    Thresholds `yaml:"thresholds"`
	Limits        Limits     `yaml:"limits"`
	Prompt        Prompt     `yaml:"prompt"`
	Inputs        Inputs     `yaml:"inputs"`
	// Run holds the run settings measured best on this task where they differ from the
	// platform's defaults (benchmarks/RESULTS.md names the experiments); optional.
	Run settings.Measured `yaml:"run"`
	// Preparer is a Python preparer file, relative to the spec file, for a competition the
	// generic split (split.raw) cannot prepare; it runs after preparers/common.py.
	Preparer string `yaml:"preparer"`
	// Carver is a Python file, relative to the spec file, that carves the validation and
	// cross-validation folds of a competition whose train carve.py cannot split by rows (a
	// folder of images, say); it runs after preparers/common.py with carve.py's JSON config as
	// its one argument. Without it carve.py carves.
	Carver string `yaml:"carver"`
	// Dir is the folder of the spec file (empty for a built-in spec): Preparer and Carver are
	// relative to it.
	Dir string `yaml:"-"`
}

// Inputs names what programs read besides the id and the targets, for the code-action
// libraries of text and image tasks (tabular tasks use every other column).
type Inputs struct {
	// Text lists free-text columns in the order programs use them (joined, or as a pair's
	// sides, or a span's source then its condition).
	Text []string `yaml:"text"`
	// Images is a folder of the public data holding one <id><ImageExt> file per row.
	Images   string `yaml:"images"`
	ImageExt string `yaml:"image_ext"`
}

// Files names the prepared files, relative to the public (and, for answers, private) folder.
type Files struct {
	Train            string `yaml:"train"`
	Test             string `yaml:"test"`
	SampleSubmission string `yaml:"sample_submission"`
	Answers          string `yaml:"answers"`
}

// Answers describes the private answers and so what a submission must look like.
type Answers struct {
	// Format is "one-hot" (id + one 0/1 column per class; the classes are the answers file's
	// other columns) or "columns" (id + Columns).
	Format  string   `yaml:"format"`
	Columns []string `yaml:"columns"`
	// MatchBy is "id" (rows matched by the id column) or "position" (row i with row i).
	MatchBy string `yaml:"match_by"`
	// ExactColumns rejects submissions with columns beyond the id and the answer columns.
	ExactColumns bool `yaml:"exact_columns"`
	// Integer requires whole-number predictions (ordinal scores).
	Integer bool `yaml:"integer"`
}

// Split is MLE-bench's train_test_split of the raw train file. With Raw set, the generic
// preparer does it from the spec alone (docs/tasks.md): the raw table's rows are split, the
// train part is the public train, the test part without the target columns the public test,
// the test part whole the private answers, and its ids with SampleSubmission's constants the
// sample submission.
type Split struct {
	TestSize    float64 `yaml:"test_size"`
	RandomState int     `yaml:"random_state"`
	// Raw is the raw table of labelled rows: a .csv or .tsv file, or a .zip holding one.
	Raw string `yaml:"raw"`
	// Stratify is the column train_test_split stratifies on, where MLE-bench does.
	Stratify string `yaml:"stratify"`
	// SampleSubmission gives each target column's constant in the sample submission.
	SampleSubmission map[string]any `yaml:"sample_submission"`
	// Images is the raw zip or folder holding one <id><inputs.image_ext> file per raw row;
	// each row's image is copied into the public inputs.images folder.
	Images string `yaml:"images"`
}

// Generic reports whether the spec's split prepares the task without a preparer of its own.
func (s *Spec) Generic() bool { return s.Split.Raw != "" }

// Validation is the leak-free protocol's carve-out of the public train: Folds disjoint shares of
// Fraction each (fold 1 is the validation split; the others let a run's reward average over
// several held-out shares, so one lucky split cannot decide the best program).
type Validation struct {
	Fraction float64 `yaml:"fraction"`
	Seed     uint64  `yaml:"seed"`
	Folds    int     `yaml:"folds"` // 0 or 1: the validation split only
}

// FoldCount is how many validation folds the task's preparation carves.
func (v Validation) FoldCount() int { return max(v.Folds, 1) }

// Thresholds are the medal thresholds computed from the Kaggle leaderboard.
type Thresholds struct {
	Gold   float64 `yaml:"gold"`
	Silver float64 `yaml:"silver"`
	Bronze float64 `yaml:"bronze"`
	Median float64 `yaml:"median"`
}

// Limits bound one agent program in the sandbox.
type Limits struct {
	WallSeconds int `yaml:"wall_seconds"`
	MemoryMB    int `yaml:"memory_mb"`
	Processes   int `yaml:"processes"`
	OutputKB    int `yaml:"output_kb"`
	// DiskMB bounds the program's work folder and /tmp together; 0 (absent) is DefaultDiskMB.
	// Where the sandbox runs as root this is a tmpfs, i.e. memory: keep it well below memory_mb
	// times the concurrent programs' share of the host.
	DiskMB int `yaml:"disk_mb"`
}

// UnmarshalYAML refuses a limit that is not a whole number, naming the field: the YAML
// decoder would otherwise truncate it silently (wall_seconds: 1.5 ran with 1 s). A whole
// number written as a float (2.0, 1e3) is taken as it is. Unknown keys are refused, as the
// rest of the spec's are.
func (l *Limits) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: field limits must be a mapping of wall_seconds, memory_mb, processes, output_kb, disk_mb", n.Line)
	}
	fields := map[string]reflect.Value{}
	v := reflect.ValueOf(l).Elem()
	for i := 0; i < v.NumField(); i++ {
		key, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("yaml"), ",")
		fields[key] = v.Field(i)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := n.Content[i], n.Content[i+1]
		f, ok := fields[k.Value]
		if !ok {
			return fmt.Errorf("line %d: field limits.%s not found: the limits are %s", k.Line, k.Value, strings.Join(limitKeys(), ", "))
		}
		var x float64
		if val.Kind != yaml.ScalarNode || val.Decode(&x) != nil {
			return fmt.Errorf("line %d: field limits.%s: %q is not a number: give a whole number", val.Line, k.Value, val.Value)
		}
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0):
			return fmt.Errorf("line %d: field limits.%s: %s is not a finite number: give a whole number", val.Line, k.Value, val.Value)
		case x != math.Trunc(x):
			return fmt.Errorf("line %d: field limits.%s: %s is not a whole number: limits are whole units (seconds, MiB, KiB, processes), so write %s or %s",
				val.Line, k.Value, val.Value, strconv.FormatFloat(math.Floor(x), 'f', -1, 64), strconv.FormatFloat(math.Ceil(x), 'f', -1, 64))
		case math.Abs(x) > 1<<53:
			x = math.Copysign(1<<53, x) // far out of every limit's range, which Validate reports
		}
		f.SetInt(int64(x))
	}
	return nil
}

func limitKeys() []string {
	t := reflect.TypeOf(Limits{})
	keys := make([]string, t.NumField())
	for i := range keys {
		keys[i], _, _ = strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
	}
	return keys
}

// DefaultDiskMB is a program's disk quota when a spec gives no limits.disk_mb.
const DefaultDiskMB = 1024

// MaxDiskMB is the largest limits.disk_mb a spec may ask for (4 TiB).
const MaxDiskMB = 1 << 22

// Disk is the program's disk quota in MiB, DefaultDiskMB when unset.
func (l Limits) Disk() int {
	if l.DiskMB > 0 {
		return l.DiskMB
	}
	return DefaultDiskMB
}

// Prompt holds what an agent's prompt shows besides the file list and a data snippet.
type Prompt struct {
	Summary     string `yaml:"summary"`
	SnippetRows int    `yaml:"snippet_rows"`
}

// LowerIsBetter reports whether smaller scores win.
func (s *Spec) LowerIsBetter() bool { return s.Direction == "min" }

// ClassLabelled reports whether the targets are class labels, so that held-out folds should
// keep every class's share (stratify): the metric grades classes, not values.
func (s *Spec) ClassLabelled() bool {
	switch s.Metric {
	case "multi-class-log-loss", "roc-auc", "mean-column-roc-auc", "accuracy", "f1", "f1-macro", "f1-micro", "f1-weighted":
		return true
	}
	return false
}

// Metrics the grader implements; a spec naming another is rejected.
var knownMetrics = map[string]bool{
	"multi-class-log-loss": true, "roc-auc": true, "mean-column-roc-auc": true, "quadratic-weighted-kappa": true,
	"mean-word-jaccard": true, "pearson": true, "mean-column-rmsle": true, "accuracy": true,
	// Added with the grading package's generic metrics (docs/grading.md lists them).
	"f1": true, "f1-macro": true, "f1-micro": true, "f1-weighted": true, "rmse": true, "rmsle": true,
	"mae": true, "median-absolute-error": true, "spearman": true,
}

// MAPCutoff returns K of a map@K metric (mean average precision over each row's first K
// predictions, for any K of 1 or more); isMAP is false for every other metric, and err says
// why a map@ name's K is not a positive whole number.
func MAPCutoff(metric string) (k int, isMAP bool, err error) {
	digits, isMAP := strings.CutPrefix(metric, "map@")
	if !isMAP {
		return 0, false, nil
	}
	k, err = strconv.Atoi(digits)
	switch {
	case err != nil || strconv.Itoa(k) != digits:
		return 0, true, fmt.Errorf("%q: K in map@K must be a whole number written in plain digits, e.g. map@5", metric)
	case k < 1:
		return 0, true, fmt.Errorf("%q: K in map@K is how many predictions of a row count and must be 1 or more, e.g. map@5", metric)
	}
	return k, true, nil
}

// metricProblem says what is wrong with a spec's metric name, or "" when the grader has it.
func metricProblem(metric string) string {
	if _, isMAP, err := MAPCutoff(metric); isMAP {
		if err != nil {
			return err.Error()
		}
		return ""
	}
	if knownMetrics[metric] {
		return ""
	}
	return fmt.Sprintf("%q is not one of %s, map@K (K = 1, 2, ...)", metric, keys(knownMetrics))
}

var knownModalities = map[string]bool{
	"tabular-classification": true, "tabular-regression": true, "text-classification": true,
	"text-pair": true, "span-extraction": true, "ordinal": true, "preference": true, "image": true,
	"image-denoising": true,
}

// Validate returns an error naming the first bad field and how to fix it.
func (s *Spec) Validate() error {
	bad := func(field, why string) error {
		return fmt.Errorf("task spec %q: field %s: %s", s.ID, field, why)
	}
	switch {
	case s.ID == "":
		return errors.New("task spec: field id is empty: give the competition id, e.g. leaf-classification")
	case strings.ContainsAny(s.ID, "/\\ "):
		return bad("id", "must not contain slashes or spaces")
	case !knownModalities[s.Modality]:
		return bad("modality", fmt.Sprintf("%q is not one of %s", s.Modality, keys(knownModalities)))
	case metricProblem(s.Metric) != "":
		return bad("metric", metricProblem(s.Metric))
	case s.Direction != "min" && s.Direction != "max":
		return bad("direction", fmt.Sprintf("%q must be min (lower is better) or max", s.Direction))
	case s.IDColumn == "":
		return bad("id_column", "is empty: name the id column of the test file")
	case len(s.TargetColumns) == 0:
		return bad("target_columns", "is empty: name the label column(s) of the train file")
	case s.Files.Train == "" || s.Files.Test == "" || s.Files.SampleSubmission == "" || s.Files.Answers == "":
		return bad("files", "train, test, sample_submission and answers must all be named")
	case s.Answers.Format != "one-hot" && s.Answers.Format != "columns":
		return bad("answers.format", fmt.Sprintf("%q must be one-hot or columns", s.Answers.Format))
	case s.Answers.Format == "columns" && len(s.Answers.Columns) == 0:
		return bad("answers.columns", "is empty: name the answer columns besides the id")
	case s.Answers.MatchBy != "id" && s.Answers.MatchBy != "position":
		return bad("answers.match_by", fmt.Sprintf("%q must be id or position", s.Answers.MatchBy))
	case s.Split.TestSize < 0 || s.Split.TestSize >= 1:
		return bad("split.test_size", fmt.Sprintf("%v must be a fraction in [0, 1) (0: Kaggle's own test is the private test)", s.Split.TestSize))
	case s.Validation.Seed >= 1<<32:
		return bad("validation.seed", "must be below 2^32 (numpy's RandomState)")
	case s.Validation.Fraction <= 0 || s.Validation.Fraction >= 1:
		return bad("validation.fraction", fmt.Sprintf("%v must be a fraction in (0, 1)", s.Validation.Fraction))
	case s.Validation.Folds < 0 || float64(s.Validation.FoldCount())*s.Validation.Fraction > 1:
		return bad("validation.folds", fmt.Sprintf("%d folds of %v each do not fit in the train: folds times fraction must be at most 1", s.Validation.Folds, s.Validation.Fraction))
	case (s.Modality == "text-classification" || s.Modality == "text-pair" || s.Modality == "span-extraction" ||
		s.Modality == "ordinal" || s.Modality == "preference") && len(s.Inputs.Text) == 0:
		return bad("inputs.text", "is empty: name the free-text column(s) programs for a "+s.Modality+" task read")
	case s.Modality == "image" && s.Inputs.Images == "":
		return bad("inputs.images", "is empty: an image task needs the public folder of its <id><image_ext> image files (image_ext may be empty when the ids are file names)")
	}
	if err := s.checkPreparation(bad); err != nil {
		return err
	}
	return s.Limits.check(bad)
}

// tableExt reports whether name is a table the generic preparer reads.
func tableExt(name string) bool {
	base := strings.TrimSuffix(name, ".zip")
	return strings.HasSuffix(base, ".csv") || strings.HasSuffix(base, ".tsv")
}

// checkPreparation checks how the task is prepared: the generic split's fields, or a preparer.
func (s *Spec) checkPreparation(bad func(field, why string) error) error {
	sp := s.Split
	if s.Carver != "" && !strings.HasSuffix(s.Carver, ".py") {
		return bad("carver", fmt.Sprintf("%q must be a Python file (.py) beside the spec", s.Carver))
	}
	if s.Preparer != "" {
		switch {
		case s.Generic():
			return bad("preparer", "and split.raw are both set: give split.raw (the generic split) or a preparer, not both")
		case !strings.HasSuffix(s.Preparer, ".py"):
			return bad("preparer", fmt.Sprintf("%q must be a Python file (.py) beside the spec", s.Preparer))
		}
		return nil
	}
	if !s.Generic() {
		if sp.Stratify != "" || sp.SampleSubmission != nil || sp.Images != "" {
			return bad("split.raw", "is empty while other generic split fields are set: name the raw table to split, e.g. train.csv")
		}
		return nil
	}
	for _, f := range []struct{ field, name string }{{"files.train", s.Files.Train}, {"files.test", s.Files.Test},
		{"files.sample_submission", s.Files.SampleSubmission}, {"files.answers", s.Files.Answers}} {
		if !strings.HasSuffix(f.name, ".csv") || strings.ContainsAny(f.name, "/\\") {
			return bad(f.field, fmt.Sprintf("%q: the generic split writes plain CSV files (the platform's programs read them): name a .csv file without a folder", f.name))
		}
	}
	switch {
	case !tableExt(sp.Raw):
		return bad("split.raw", fmt.Sprintf("%q is not a table the generic split reads: give a .csv or .tsv raw file (or a .zip holding one), or write a preparer", sp.Raw))
	case sp.TestSize <= 0:
		return bad("split.test_size", "must be above 0 for the generic split (MLE-bench's test_size, e.g. 0.1)")
	case s.Answers.Format != "columns":
		return bad("answers.format", "must be columns for the generic split (the answers are the test rows as they are): write a preparer for one-hot answers")
	case sp.Images != "" && s.Inputs.Images == "":
		return bad("inputs.images", "is empty while split.images is set: name the public folder the images go to, e.g. images")
	}
	for _, c := range s.TargetColumns {
		if _, ok := sp.SampleSubmission[c]; !ok {
			return bad("split.sample_submission", fmt.Sprintf("has no value for target column %s: give each target column the sample submission's constant, e.g. {%s: 0.5}", c, c))
		}
	}
	for c, v := range sp.SampleSubmission {
		if !slices.Contains(s.TargetColumns, c) {
			return bad("split.sample_submission", fmt.Sprintf("names %s, which is not one of target_columns %v", c, s.TargetColumns))
		}
		switch v.(type) {
		case int, float64, string, bool:
		default:
			return bad("split.sample_submission", fmt.Sprintf("%s: %v is not a number or a string", c, v))
		}
	}
	return nil
}

// LimitBounds are the allowed range of each limit, by its YAML key. Every integer field of
// Limits is checked against it (a field without an entry must be between 0 and MaxInt32), so a
// value that would overflow later (wall_seconds as a time.Duration wraps after ~292 years of
// nanoseconds) is refused here, naming the field, before any run starts.
var LimitBounds = map[string][2]int{
	"wall_seconds": {1, 7 * 24 * 3600}, // a week
	"memory_mb":    {1, 1 << 20},       // 1 TiB
	"processes":    {1, 1 << 16},
	"output_kb":    {1, 1 << 20},   // 1 GiB
	"disk_mb":      {0, MaxDiskMB}, // 0: DefaultDiskMB
}

func (l Limits) check(bad func(field, why string) error) error {
	v := reflect.ValueOf(l)
	for i := 0; i < v.NumField(); i++ {
		f := v.Type().Field(i)
		if !v.Field(i).CanInt() {
			continue
		}
		key, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		b, ok := LimitBounds[key]
		if !ok {
			b = [2]int{0, math.MaxInt32}
		}
		if n := v.Field(i).Int(); n < int64(b[0]) || n > int64(b[1]) {
			return bad("limits."+key, fmt.Sprintf("%d is out of range: it must be between %d and %d", n, b[0], b[1]))
		}
	}
	return nil
}

func keys(m map[string]bool) string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// Parse decodes and validates one spec; unknown keys (typos) are errors.
func Parse(data []byte, source string) (*Spec, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("task spec %s: %w (check the key names against tasks/specs/leaf-classification.yaml)", source, err)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &s, nil
}

// Registry maps task ids to specs.
type Registry struct{ specs map[string]*Spec }

// Builtin returns the specs embedded in the binary.
func Builtin() *Registry {
	r := &Registry{specs: map[string]*Spec{}}
	entries, err := embeddedSpecs.ReadDir("specs")
	if err != nil {
		panic(err) // embedded at build time: cannot fail at run time
	}
	for _, e := range entries {
		data, _ := embeddedSpecs.ReadFile(path.Join("specs", e.Name()))
		s, err := Parse(data, "embedded "+e.Name())
		if err != nil {
			panic(err) // a broken embedded spec is a build defect, caught by the tests
		}
		r.specs[s.ID] = s
	}
	return r
}

// AddFile loads a user spec file; it overrides a built-in spec with the same id.
func (r *Registry) AddFile(file string) (*Spec, error) {
	// A FIFO or a device would block the read (or never end): refused before it is opened.
	data, err := regularfile.ReadFile(file)
	var special *regularfile.NotRegularError
	switch {
	case errors.As(err, &special):
		return nil, fmt.Errorf("task spec %v: give --task-spec the path of the spec's YAML file itself", err)
	case err != nil:
		return nil, fmt.Errorf("reading task spec: %w", err)
	}
	s, err := Parse(data, file)
	if err != nil {
		return nil, err
	}
	if s.Dir, err = filepath.Abs(filepath.Dir(file)); err != nil {
		return nil, err
	}
	r.specs[s.ID] = s
	return s, nil
}

// Get returns the spec for id or an error listing the known ids.
func (r *Registry) Get(id string) (*Spec, error) {
	if s, ok := r.specs[id]; ok {
		return s, nil
	}
	return nil, fmt.Errorf("unknown task %q: known tasks are %s (or add one with --task-spec FILE)", id, strings.Join(r.IDs(), ", "))
}

// IDs lists the known task ids in order.
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.specs))
	for id := range r.specs {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}
