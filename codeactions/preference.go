package codeactions

import (
	"fmt"
)

// Preference writes programs for pairwise preference between two responses to a prompt (A wins,
// B wins or a tie, graded by log loss): the texts arrive as JSON lists of turns, features compare
// the two responses, and a symmetric augmentation (swap A and B) helps the strong programs.
var Preference = register(&Library{
	Modality: "preference",
	Slots: []Slot{
		{"imports", []Option{
			{"full", "", 8},
			{"no-json", "", 0.2},   // forgets json: fails where the texts are parsed
			{"no-pandas", "", 0.2}, // fails while loading
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder.", 6},
			{"cwd", "Load the CSV files from the working directory.", 0.3},     // wrong path: fails
			{"index-col", "Load the CSV files with the id as the index.", 0.3}, // no id column left for the submission
		}},
		{"parse", []Option{
			{"json", "Parse the prompt and responses as JSON lists of turns and join the turns.", 3},
			{"raw", "Use the prompt and response fields as raw strings.", 4},
			{"literal-eval", "Parse the prompt and response lists with ast.literal_eval.", 0.5}, // null turns: fails
			{"first-turn", "Keep only the first turn of each conversation.", 1},
		}},
		{"target", []Option{
			{"argmax", "Encode the outcome as 0 (A wins), 1 (B wins) or 2 (tie).", 5},
			{"idxmax", "Use the name of the winning outcome column as the label.", 2},
			{"sign", "Encode the outcome as A's win minus B's win (1, -1, or 0 for a tie).", 1},
			{"winner-column", "Take the labels from the winner column.", 0.2}, // no such column: fails
		}},
		{"features", []Option{
			{"length-diff", "Compare the responses' lengths in characters and words (both, and their difference).", 4},
			{"structure", "Compare the responses' lengths, line breaks, list items, code blocks, headers and bold text, with the prompt's length.", 2},
			{"similarity", "Add to the structure features the TF-IDF cosine similarities between the prompt and each response and between the responses.", 1},
			{"tfidf-diff", "Add to the structure and similarity features the difference of the responses' TF-IDF vectors.", 1},
			{"tfidf-both", "Add to the structure and similarity features both responses' TF-IDF vectors side by side.", 1},
			{"raw-text", "Feed the prompt and response texts to the model directly.", 0.3},                                 // strings to a numeric model: fails at fit
			{"model-names", "Add to the structure features which chatbot wrote each response (one-hot model names).", 0.3}, // the test has no model names: fails
		}},
		{"augment", []Option{
			{"none", "", 6},
			{"swap", "Add every training pair with A and B swapped (and the winner swapped), and average each prediction with the swapped pair's.", 1},
			{"swap-no-label", "Add every training pair with A and B swapped, and average each prediction with the swapped pair's.", 1}, // keeps the labels: learns no direction
		}},
		{"model", []Option{
			{"prior", "Predict the class frequencies of the training data.", 1},
			{"logreg", "Fit a multinomial logistic regression.", 4},
			{"naive-bayes", "Fit a Gaussian naive Bayes model.", 1},        // refuses sparse TF-IDF
			{"linear-svc", "Fit a linear support vector classifier.", 0.3}, // no predict_proba unless calibrated
			{"knn", "Fit a k-nearest-neighbours classifier.", 1},
			{"random-forest", "Fit a random forest.", 3},
			{"gradient-boosting", "Fit scikit-learn's gradient boosting.", 1},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 1}, // needs labels 0..2
			{"stacking", "Stack logistic regression, a random forest and XGBoost under a logistic regression.", 0.5},
			{"grid-logreg", "Grid-search the logistic regression's C by 3-fold cross-validated log loss.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training data and report the training log loss.", 5},
			{"holdout", "Report the log loss on a stratified 20% hold-out, then refit on everything.", 2},
			{"holdout-no-refit", "Train on 80% and report the log loss on a stratified 20% hold-out.", 2},
			{"cv5", "Report the out-of-fold log loss of 5-fold cross-validation, then refit on everything.", 1},
		}},
		{"postprocess", []Option{
			{"none", "", 6},
			{"clip", "Clip the probabilities to [0.02, 0.98] and renormalise.", 1},
			{"clip-no-renorm", "Clip the probabilities to [0.05, 0.95].", 0.3}, // rows stop summing to one: invalid
			{"calibrate", "Calibrate the probabilities with 3-fold sigmoid calibration.", 1},
			{"temperature", "Soften or sharpen the probabilities with a temperature tuned for log loss on the validation predictions.", 0.5},
			{"sharpen", "Sharpen the probabilities (squared, renormalised).", 1},
		}},
		{"submission", []Option{
			{"aligned", "Write one probability column per outcome, mapping the model's classes to the outcome columns.", 3},
			{"sample-columns", "Write the probabilities under the sample submission's columns in the model's class order.", 3},
			{"model-classes", "Write the model's classes as columns.", 0.5},
			{"hard-labels", "Write the predicted outcome as a one-hot row.", 1},
			{"no-id", "Write the probabilities without the id column.", 0.3},
		}},
	},
	Tunable:     []string{"strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly: []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "cv5"},
		// the temperature is fitted on the validation's probabilities
		Unless: func(c Choice) bool { return c.Is("postprocess", "temperature") }}},
	Clashes: preferenceClashes,
	render:  renderPreference,
})

// preferenceClashes are the library's intended clashes, read off its renderer.
var preferenceClashes = []ClashRule{
	{Reason: "json is not imported: fails where the turns are parsed",
		When: func(c Choice, s Schema) bool {
			return c.Is("imports", "no-json") && c.Is("parse", "json", "first-turn")
		}},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-pandas") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "the id column became the index: fails writing the id",
		When: func(c Choice, s Schema) bool {
			return c.Is("load", "index-col") && !jsonTables(s) && !(s.ByPosition && c.Is("submission", "no-id"))
		}},
	{Reason: "literal_eval fails on the null turns (JSON's null is no Python literal)", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("parse", "literal-eval") }},
	{Reason: "the train has no winner column",
		When: func(c Choice, s Schema) bool { return c.Is("target", "winner-column") }},
	// The stacking classifier encodes the labels for its XGBoost itself.
	{Reason: "XGBoost needs the labels 0, 1, 2: outcome names or signs fail",
		When: func(c Choice, s Schema) bool { return c.Is("target", "idxmax", "sign") && c.Is("model", "xgboost") }},
	{Reason: "the texts fed to a numeric model",
		When: func(c Choice, s Schema) bool { return c.Is("features", "raw-text") && !c.Is("model", "prior") }},
	{Reason: "the test has no model names",
		When: func(c Choice, s Schema) bool { return c.Is("features", "model-names") }},
	{Reason: "Gaussian naive Bayes needs dense features: fails on sparse TF-IDF",
		When: func(c Choice, s Schema) bool {
			return c.Is("model", "naive-bayes") && c.Is("features", "tfidf-diff", "tfidf-both")
		}},
	{Reason: "LinearSVC has no predict_proba (unless calibrated)",
		When: func(c Choice, s Schema) bool { return c.Is("model", "linear-svc") && !c.Is("postprocess", "calibrate") }},
	{Reason: "probabilities clipped without renormalising no longer sum to one (unless none was clipped)", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return c.Is("postprocess", "clip-no-renorm") && !c.Is("submission", "hard-labels")
		}},
	{Reason: "the model's class codes as columns instead of the outcome columns",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "model-classes") && !c.Is("target", "idxmax") }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
}

// preferenceStrengths are each model's settings at strength s0..s5 (the prior has none).
var preferenceStrengths = map[string][6]string{
	"logreg":            {"C=0.001, max_iter=2000", "C=0.01, max_iter=2000", "C=0.1, max_iter=2000", "C=1.0, max_iter=2000", "C=10.0, max_iter=3000", "C=100.0, max_iter=5000"},
	"naive-bayes":       {"var_smoothing=1e-9", "var_smoothing=1e-6", "var_smoothing=1e-3", "var_smoothing=1e-2", "var_smoothing=0.1", "var_smoothing=0.5"},
	"linear-svc":        {"C=0.001", "C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0"},
	"knn":               {"n_neighbors=1", "n_neighbors=5", "n_neighbors=15", "n_neighbors=50", "n_neighbors=100", "n_neighbors=200"},
	"random-forest":     {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"gradient-boosting": {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=400", "n_estimators=800"},
	"xgboost":           {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"stacking":          {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"grid-logreg":       {"[1.0]", "[0.1, 1.0]", "[0.01, 0.1, 1.0]", "[0.01, 0.1, 1.0, 10.0]", "[0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0]", "[0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]"},
}

// preferenceText is the task's i-th text column, or the competition's name for it.
func preferenceText(s Schema, i int) string {
	if i < len(s.Text) {
		return s.Text[i]
	}
	return []string{"prompt", "response_a", "response_b"}[i]
}

// renderPreference writes the program from templates/preference.py.tmpl.
func renderPreference(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := ""
	if model != "prior" {
		params = preferenceStrengths[model][c.Strength()]
	}
	code := python("preference.py.tmpl", c, schema, map[string]any{"params": params,
		"prompt": preferenceText(schema, 0), "a": preferenceText(schema, 1), "b": preferenceText(schema, 2)})
	settings := "Model settings: defaults."
	if params != "" {
		settings = fmt.Sprintf("Model settings: %s.", params)
	}
	return Program{Plan: c.Plan(settings), Code: code}
}
