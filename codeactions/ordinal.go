package codeactions

import (
	"fmt"
)

// Ordinal writes programs for ordinal scoring of texts (essay scores 1-6 graded by quadratic
// weighted kappa): text features, a regression or classification framing, and a rounding of
// the predictions to whole scores, which the grader requires.
var Ordinal = register(&Library{
	Modality: "ordinal",
	Slots: []Slot{
		{"imports", []Option{
			{"full", "", 8},
			{"no-vectorizer", "", 0.3}, // forgets TfidfVectorizer: fails where TF-IDF features are built
			{"no-pandas", "", 0.2},     // fails while loading
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder.", 6},
			{"cwd", "Load the CSV files from the working directory.", 0.3},     // wrong path: fails
			{"index-col", "Load the CSV files with the id as the index.", 0.3}, // no id column left for the submission
		}},
		{"target", []Option{
			{"score", "Predict the score as it is.", 6},
			{"shifted", "Shift the scores to start at 0 and shift predictions back.", 1},
			{"log", "Predict the log of the score counted from 1 and exponentiate predictions back.", 0.5},
			{"label-column", "Take the scores from the label column.", 0.2}, // no such column: fails
		}},
		{"framing", []Option{
			{"regression", "Frame the task as regression on the score.", 4},
			{"classification", "Frame the task as classification into the six scores.", 4},
			{"expected-value", "Classify, then predict the probability-weighted mean score.", 1},
		}},
		{"features", []Option{
			{"length", "Describe each essay by length statistics: words, sentences, unique words, mean word length and paragraphs.", 3},
			{"tfidf-word", "Vectorise the essays with word 1-2-gram TF-IDF.", 3},
			{"tfidf-char", "Vectorise the essays with character 2-5-gram TF-IDF.", 1},
			{"tfidf-length", "Combine word 1-2-gram TF-IDF with standardised length statistics.", 1},
			{"all", "Combine word and character TF-IDF with standardised length statistics.", 0.5},
			{"raw-text", "Feed the essay text to the model directly.", 0.3},                 // strings to a numeric model: fails at fit
			{"tfidf-refit", "Vectorise train and test each with its own word TF-IDF.", 0.3}, // feature counts differ: fails at prediction
		}},
		{"transform", []Option{
			{"none", "", 6},
			{"standard", "Scale the features to unit variance.", 2},
			{"svd", "Reduce the features to 100 components with truncated SVD.", 1},
			{"pca", "Reduce the features to 50 principal components.", 0.5}, // PCA refuses sparse TF-IDF
		}},
		{"model", []Option{
			{"mode", "Predict the most common score.", 1},
			{"linear", "Fit a linear model (linear or logistic regression).", 3},
			{"ridge", "Fit a ridge model.", 2},
			{"svm", "Fit a linear support vector machine.", 1},
			{"random-forest", "Fit a random forest.", 3},
			{"knn", "Fit a distance-weighted k-nearest-neighbours model.", 1},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 1},
			{"stacking", "Stack a ridge or logistic model, a linear SVM and XGBoost under a linear model.", 0.5},
			{"grid", "Grid-search the regularisation of a ridge or logistic model by 3-fold cross-validation.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training data and report the training error.", 5},
			{"holdout", "Report the quadratic weighted kappa of rounded predictions on a stratified 20% hold-out, then refit on everything.", 2},
			{"holdout-no-refit", "Train on 80% and report the quadratic weighted kappa on a stratified 20% hold-out.", 1},
			{"holdout-raw-kappa", "Report the quadratic weighted kappa of the raw predictions on a 20% hold-out, then refit on everything.", 0.3}, // kappa of continuous predictions: fails
			{"oof5", "Predict every training essay out of fold with 5-fold cross-validation and report their kappa, then refit on everything.", 0.5},
		}},
		{"postprocess", []Option{
			{"none", "", 1}, // continuous scores: an invalid submission
			{"round-clip", "Round the predictions and clip them to the training scores' range.", 5},
			{"round", "Round the predictions to whole numbers.", 2},
			{"floor", "Truncate the predictions to whole numbers.", 1},
			{"thresholds", "Turn predictions into scores with cut points tuned for kappa on the validation predictions.", 0.5},
		}},
		{"submission", []Option{
			{"aligned", "Write the essay id and the predicted score.", 4},
			{"sample-fill", "Fill the sample submission's score column.", 2},
			{"no-id", "Write the scores without the id column.", 0.3},
			{"prediction-column", "Write the id and the scores in a prediction column.", 0.2},
		}},
	},
	Tunable:     []string{"transform", "strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly: []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "holdout-raw-kappa", "oof5"},
		// the cut points are fitted on the validation's predictions
		Unless: func(c Choice) bool { return c.Is("postprocess", "thresholds") }}},
	Clashes: ordinalClashes,
	render:  renderOrdinal,
})

// ordinalContinuous reports whether the model's raw predictions are continuous scores: a
// regression, or the probability-weighted mean (the mode predicts a training score).
func ordinalContinuous(c Choice) bool {
	return c.Is("framing", "regression", "expected-value") && !c.Is("model", "mode")
}

// ordinalClashes are the library's intended clashes, read off its renderer.
var ordinalClashes = []ClashRule{
	{Reason: "TfidfVectorizer is not imported: fails where the TF-IDF features are built",
		When: func(c Choice, s Schema) bool {
			return c.Is("imports", "no-vectorizer") && c.Is("features", "tfidf-word", "tfidf-char", "tfidf-length", "all", "tfidf-refit")
		}},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-pandas") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "the id column became the index: fails writing the id",
		When: func(c Choice, s Schema) bool {
			return c.Is("load", "index-col") && !jsonTables(s) && !c.Is("submission", "sample-fill")
		}},
	{Reason: "the train has no label column",
		When: func(c Choice, s Schema) bool { return c.Is("target", "label-column") }},
	{Reason: "a classifier refuses the continuous log scores",
		When: func(c Choice, s Schema) bool {
			return c.Is("target", "log") && !c.Is("framing", "regression") && !c.Is("model", "mode")
		}},
	// The stacking classifier encodes the labels for its XGBoost itself.
	{Reason: "XGBoost needs classes from 0, and the scores start at 1",
		When: func(c Choice, s Schema) bool {
			return c.Is("target", "score") && !c.Is("framing", "regression") && c.Is("model", "xgboost")
		}},
	{Reason: "a ridge classifier or a linear SVM has no predict_proba for the expected value",
		When: func(c Choice, s Schema) bool {
			return c.Is("framing", "expected-value") && c.Is("model", "ridge", "svm")
		}},
	{Reason: "the essay text fed to a numeric model or transform",
		When: func(c Choice, s Schema) bool {
			return c.Is("features", "raw-text") && !(c.Is("model", "mode") && c.Is("transform", "none"))
		}},
	{Reason: "TF-IDF refitted on the test has other columns: fails at prediction",
		When: func(c Choice, s Schema) bool {
			return c.Is("features", "tfidf-refit") && !(c.Is("model", "mode") && c.Is("transform", "none", "pca"))
		}},
	{Reason: "PCA refuses sparse TF-IDF",
		When: func(c Choice, s Schema) bool {
			return c.Is("transform", "pca") && c.Is("features", "tfidf-word", "tfidf-char", "tfidf-length", "all", "tfidf-refit")
		}},
	{Reason: "the quadratic weighted kappa of continuous predictions",
		When: func(c Choice, s Schema) bool { return c.Is("validation", "holdout-raw-kappa") && ordinalContinuous(c) }},
	{Reason: "continuous scores: the grader needs whole numbers",
		When: func(c Choice, s Schema) bool { return c.Is("postprocess", "none") && ordinalContinuous(c) }},
	{Reason: "unrounded predictions of the mode: a median may be a half, the inverted log of a score is not exactly the score", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return (c.Is("postprocess", "none") || c.Is("validation", "holdout-raw-kappa")) &&
				c.Is("model", "mode") && (c.Is("framing", "regression") || c.Is("target", "log"))
		}},
	{Reason: "the scores are written under a prediction column, not the target's",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "prediction-column") }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
}

// ordinalStrengths are each model's settings at strength s0..s5 (the mode has none); for the
// grid they are the values searched.
var ordinalStrengths = map[string][6]string{
	"linear":        {"0.01", "0.1", "1.0", "10.0", "100.0", "1000.0"}, // logistic C; linear regression has none
	"ridge":         {"100.0", "30.0", "10.0", "3.0", "1.0", "0.3"},
	"svm":           {"0.001", "0.01", "0.1", "1.0", "10.0", "100.0"},
	"random-forest": {"10", "30", "100", "200", "400", "800"},
	"knn":           {"1", "3", "5", "10", "20", "40"},
	"xgboost":       {"30", "100", "200", "400", "800", "1500"},
	"stacking":      {"30", "100", "200", "400", "800", "1500"},
	"grid":          {"[1.0]", "[1.0, 10.0]", "[0.3, 3.0, 30.0]", "[0.1, 1.0, 10.0, 100.0]", "[0.1, 0.3, 1.0, 3.0, 10.0, 30.0]", "[0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0, 100.0]"},
}

// ordinalParamNames name what each model's strength sets, for the plan.
var ordinalParamNames = map[string]string{
	"linear": "logistic C", "ridge": "alpha", "svm": "C", "random-forest": "trees", "knn": "neighbours",
	"xgboost": "boosting rounds", "stacking": "XGBoost rounds", "grid": "searched over",
}

// renderOrdinal writes the program from templates/ordinal.py.tmpl.
func renderOrdinal(c Choice, schema Schema) Program {
	model, classify := c.Opt("model"), !c.Is("framing", "regression")
	params := ""
	if model != "mode" {
		params = ordinalStrengths[model][c.Strength()]
	}
	code := python("ordinal.py.tmpl", c, schema, map[string]any{"params": params, "classify": classify})
	settings := "Model settings: defaults."
	if params != "" && !(model == "linear" && !classify) {
		settings = fmt.Sprintf("Model settings: %s %s.", ordinalParamNames[model], params)
	}
	return Program{Plan: c.Plan(settings), Code: code}
}
