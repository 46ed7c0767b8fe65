package codeactions

import (
	"fmt"
	"strings"

	"mlerl/tasks"
)

// Output kinds: what one submission row holds besides the id.
const (
	// OutputClassProbabilities is one probability column per class, named as in the sample
	// submission (leaf, spooky).
	OutputClassProbabilities = "class-probabilities"
	// OutputProbabilities is one probability column per target (binary tasks, multi-label,
	// preference).
	OutputProbabilities = "probabilities"
	// OutputLabel is the predicted class in the target column (accuracy).
	OutputLabel = "label"
	// OutputValues is a number per target (regression, similarity, ordinal scores).
	OutputValues = "values"
	// OutputText is a string per row (span extraction).
	OutputText = "text"
)

// Schema is what rendering needs to know about a task's files.
type Schema struct {
	IDColumn string
	Targets  []string
	// Train, Test and Sample are file names under the program's input/ folder; a name ending
	// in .json is a list of records.
	Train, Test, Sample string
	Metric              string
	Output              string
	// Integer asks for whole-number predictions (ordinal scores).
	Integer bool
	// ByPosition: the grader matches submission rows to answers by position, so the id column
	// is not needed (nomad2018); otherwise rows are matched by id.
	ByPosition bool
	// Text, Images and ImageExt are the task's inputs (tasks.Inputs).
	Text             []string
	Images, ImageExt string
	// MemoryMB is the task's memory limit for one program (tasks.Limits.MemoryMB), which
	// programs size their working data by; 0 when unknown.
	MemoryMB int
}

// SchemaOf derives the rendering schema from a task spec.
func SchemaOf(s *tasks.Spec) Schema {
	out := Schema{IDColumn: s.IDColumn, Targets: s.TargetColumns, Train: s.Files.Train, Test: s.Files.Test,
		Sample: s.Files.SampleSubmission, Metric: s.Metric, Integer: s.Answers.Integer,
		ByPosition: s.Answers.MatchBy == "position",
		Text:       s.Inputs.Text, Images: s.Inputs.Images, ImageExt: s.Inputs.ImageExt,
		MemoryMB: s.Limits.MemoryMB}
	switch {
	case s.Answers.Format == "one-hot":
		out.Output = OutputClassProbabilities
	case s.Metric == "roc-auc" || s.Metric == "mean-column-roc-auc" || s.Metric == "multi-class-log-loss":
		out.Output = OutputProbabilities
	case s.Metric == "accuracy":
		out.Output = OutputLabel
	case s.Metric == "mean-word-jaccard":
		out.Output = OutputText
	default:
		out.Output = OutputValues
	}
	return out
}

// check names what a library needs and the schema lacks, so a task spec missing its inputs
// fails at sampling with the field to add rather than as a broken program.
func (s Schema) check(modality string) error {
	switch {
	case s.IDColumn == "" || len(s.Targets) == 0:
		return fmt.Errorf("task schema for %s: the id column and the target columns must be set", modality)
	case s.Train == "" || s.Test == "" || s.Sample == "":
		return fmt.Errorf("task schema for %s: files train, test and sample_submission must be named", modality)
	case s.Output == "":
		return fmt.Errorf("task schema for %s: no output kind (build it with SchemaOf)", modality)
	}
	switch modality {
	case "text-classification", "text-pair", "span-extraction", "ordinal", "preference":
		if len(s.Text) == 0 {
			return fmt.Errorf("task schema for %s: no text columns: add inputs.text to the task spec", modality)
		}
	case "image":
		if s.Images == "" {
			return fmt.Errorf("task schema for image: add inputs.images (and inputs.image_ext unless the ids are file names) to the task spec")
		}
	}
	return nil
}

// readTable is the pandas call that loads one of the task's files from folder.
func readTable(folder, file string, extra string) string {
	fn := "read_csv"
	if strings.HasSuffix(file, ".json") {
		fn = "read_json"
	}
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf("pd.%s(%q%s)", fn, folder+file, extra)
}

// loadTables writes the loading step shared by the libraries: "input" reads the task's
// files, "cwd" looks in the wrong folder (fails while loading), "index-col" turns the id into
// the index (fails where the id column is used). The index is the id column by name, whatever
// its position, so the clash is the same on every task (insults' id is its third column).
func loadTables(b *code, how string, schema Schema) {
	folder, extra := "input/", ""
	switch how {
	case "cwd":
		folder = ""
	case "index-col":
		if !jsonTables(schema) {
			extra = fmt.Sprintf("index_col=%q", schema.IDColumn)
		}
	}
	b.w("train = %s", readTable(folder, schema.Train, extra))
	b.w("test = %s", readTable(folder, schema.Test, extra))
	b.w("sample = %s", readTable(folder, schema.Sample, ""))
}

// jsonTables reports whether the task's tables are JSON records, which "index-col" leaves
// as they are.
func jsonTables(s Schema) bool { return strings.HasSuffix(s.Train, ".json") }
