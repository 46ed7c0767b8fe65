package codeactions

import (
	"fmt"
)

// TextPair writes programs that score the similarity of two phrases (anchor, target) within a
// context (patent phrase matching): hand-made pair features (TF-IDF cosines, overlaps, edit
// ratios) or sparse shared n-grams, the context, a regressor, and a numeric score per row.
var TextPair = register(&Library{
	Modality: "text-pair",
	Slots: []Slot{
		{"imports", []Option{
			{"full", "", 8},
			{"no-sklearn", "", 0.2}, // fails at the first vectoriser
			{"no-pandas", "", 0.2},  // fails while loading
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder.", 6},
			{"cwd", "Load the CSV files from the working directory.", 0.3},     // wrong path: fails
			{"index-col", "Load the CSV files with the id as the index.", 0.3}, // the id column is gone at submission
		}},
		{"preprocess", []Option{
			{"lower", "Lower-case both phrases.", 4},
			{"none", "Keep the phrases as they are.", 4},
			{"stem", "Lower-case the phrases and strip common suffixes (-s, -ing, -ed) from each word.", 1},
			{"nltk", "Stem the words with NLTK's Porter stemmer.", 0.3}, // nltk is not installed: fails
		}},
		{"context", []Option{
			{"none", "Ignore the context.", 4},
			{"onehot", "One-hot encode the context code.", 1},
			{"onehot-separate", "One-hot encode the context with pandas' get_dummies on train and test.", 0.5}, // columns differ: fails at prediction
			{"section", "One-hot encode the context's section (its first letter).", 1},
			{"as-text", "Prepend the context code to both phrases.", 2},
			{"target-mean", "Add the context's smoothed mean score in train as a feature.", 1},
			{"raw-string", "Add the context column to the features.", 0.3}, // a string in a numeric model: fails
		}},
		{"features", []Option{
			{"char-cosine", "Use the cosine similarity of the phrases' character 2-4-gram TF-IDF vectors.", 2},
			{"word-cosine", "Use the cosine similarity of the phrases' word TF-IDF vectors.", 4},
			{"overlap", "Use the phrases' word Jaccard overlap, shared word count and length differences.", 2},
			{"difflib", "Use difflib's sequence-matcher ratio and the longest common block of the phrases.", 2},
			{"all", "Build many pair features: word and character TF-IDF cosines, Jaccard overlap, length differences, difflib ratios, shared prefixes, containment and head-word matches.", 1},
			{"tfidf-product", "Use the element-wise product of the phrases' character and word TF-IDF vectors (the n-grams they share) plus their cosines, as a sparse matrix.", 1},
			{"raw-text", "Feed the two phrases to the model directly.", 0.3}, // strings: fails at fit
		}},
		{"target", []Option{
			{"score", "Regress the score directly.", 6},
			{"classes", "Turn the score into five classes (score x 4) and map predictions back.", 1},
			{"binary", "Predict whether the score is at least 0.5.", 1},
			{"square", "Regress the squared score and take the square root of the predictions.", 0.5}, // NaN for negative predictions
			{"logit", "Regress the logit of the clipped score and map predictions back with a sigmoid.", 1},
			{"wrong-column", "Take the target from the similarity column.", 0.2}, // no such column: fails
		}},
		{"model", []Option{
			{"mean", "Predict the mean training score.", 0.3}, // constant: Pearson is undefined
			{"linear", "Fit a linear regression.", 4},
			{"ridge", "Fit a ridge regression.", 2},
			{"knn", "Fit a k-nearest-neighbours regressor.", 1},
			{"svr", "Fit an RBF support vector regressor.", 1},
			{"random-forest", "Fit a random forest regressor.", 3},
			{"extra-trees", "Fit an extra-trees regressor.", 1},
			{"gbr", "Fit scikit-learn's gradient boosting regressor.", 1},
			{"hist-gbm", "Fit a histogram gradient boosting regressor.", 1}, // dense only: fails on sparse features
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 1},
			{"logreg", "Fit a logistic regression classifier.", 0.5}, // fails on a continuous target
			{"stacking", "Stack ridge, a random forest and XGBoost under a ridge regression.", 0.5},
			{"grid-xgb", "Grid-search XGBoost's depth and rounds by 3-fold cross-validated squared error.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training data and report the training squared error.", 5},
			{"holdout", "Check the squared error on a 20% hold-out, then refit on everything.", 2},
			{"holdout-no-refit", "Train on 80% and report the squared error on a 20% hold-out.", 2},
			{"cv3", "Estimate the squared error with 3-fold cross-validated predictions.", 1},
			{"cv-old-scoring", "Estimate the error with cross_val_score and the mean_squared_error scorer.", 0.2}, // removed scorer name: fails
			{"holdout-msle", "Train on 80% and report the squared log error on a 20% hold-out.", 0.3},             // negative values: fails
		}},
		{"postprocess", []Option{
			{"none", "", 5},
			{"clip", "Clip the predictions to [0, 1].", 2},
			{"round-quarter", "Round the predictions to the nearest 0.25.", 2},
			{"round", "Round the predictions to whole numbers.", 0.3}, // mostly zeros: often constant
			{"minmax", "Rescale the predictions to span [0, 1].", 1},
		}},
		{"submission", []Option{
			{"frame", "Write the id and the predicted score.", 4},
			{"sample", "Fill the sample submission's score column with the predictions.", 3},
			{"no-id", "Write the predicted scores without the id column.", 0.3},
			{"prediction-column", "Write the id and the predictions in a prediction column.", 0.2},
		}},
	},
	Tunable:     []string{"strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly:  []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "cv3"}}},
	Clashes:     textPairClashes,
	render:      renderTextPair,
})

// textPairExtrapolates are the models whose predictions can leave the range of the targets
// (below 0); the others average training targets.
func textPairExtrapolates(c Choice) bool {
	return c.Is("model", "linear", "ridge", "svr", "gbr", "hist-gbm", "xgboost", "stacking", "grid-xgb")
}

// textPairClashes are the library's intended clashes, read off its renderer.
var textPairClashes = []ClashRule{
	{Reason: "scikit-learn is not imported: fails at the first vectoriser or model",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-sklearn") }},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-pandas") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "the id column became the index: fails writing the id",
		When: func(c Choice, s Schema) bool {
			return c.Is("load", "index-col") && !jsonTables(s) && !c.Is("submission", "sample")
		}},
	{Reason: "nltk is not installed",
		When: func(c Choice, s Schema) bool { return c.Is("preprocess", "nltk") }},
	{Reason: "get_dummies on train and test separately: the test lacks some contexts, so the columns differ", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("context", "onehot-separate") && len(s.Text) > 2 }},
	{Reason: "a string column fed to a numeric model",
		When: func(c Choice, s Schema) bool { return c.Is("context", "raw-string") || c.Is("features", "raw-text") }},
	{Reason: "the train has no similarity column",
		When: func(c Choice, s Schema) bool { return c.Is("target", "wrong-column") }},
	{Reason: "a constant prediction: the Pearson correlation is undefined",
		When: func(c Choice, s Schema) bool { return c.Is("model", "mean") }},
	{Reason: "LogisticRegression refuses a continuous target",
		When: func(c Choice, s Schema) bool {
			return c.Is("model", "logreg") && c.Is("target", "score", "square", "logit")
		}},
	{Reason: "histogram boosting needs dense features: fails on the sparse shared n-grams",
		When: func(c Choice, s Schema) bool { return c.Is("model", "hist-gbm") && c.Is("features", "tfidf-product") }},
	{Reason: "the mean_squared_error scorer name was removed from scikit-learn",
		When: func(c Choice, s Schema) bool { return c.Is("validation", "cv-old-scoring") }},
	{Reason: "squared log error of the negative logit targets",
		When: func(c Choice, s Schema) bool { return c.Is("validation", "holdout-msle") && c.Is("target", "logit") }},
	{Reason: "squared log error of negative predictions", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("validation", "holdout-msle") && textPairExtrapolates(c) }},
	{Reason: "the square root of a negative prediction is NaN", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("target", "square") && textPairExtrapolates(c) }},
	{Reason: "predictions rounded to whole numbers may all be 0: the Pearson correlation is undefined", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("postprocess", "round") }},
	{Reason: "the predictions are written under a prediction column, not the target's",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "prediction-column") }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
}

// textPairStrengths are each model's hyper-parameters at strength s0..s5, sized so that the
// slowest (stacking, the grid) take minutes, not the 20-minute limit, on the ~30k real pairs.
var textPairStrengths = map[string][6]string{
	"ridge":         {"alpha=100.0", "alpha=10.0", "alpha=1.0", "alpha=0.1", "alpha=0.01", "alpha=0.001"},
	"knn":           {"n_neighbors=1", "n_neighbors=3", "n_neighbors=5", "n_neighbors=10", "n_neighbors=20", "n_neighbors=50"},
	"svr":           {"C=0.01", "C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0"},
	"random-forest": {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=300", "n_estimators=500"},
	"extra-trees":   {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=300", "n_estimators=500"},
	"gbr":           {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"hist-gbm":      {"max_iter=20", "max_iter=50", "max_iter=100", "max_iter=300", "max_iter=600", "max_iter=1000"},
	"xgboost":       {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=1000", "n_estimators=2000"},
	"logreg":        {"C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0", "C=1000.0"},
	"stacking":      {"n_estimators=10", "n_estimators=25", "n_estimators=50", "n_estimators=100", "n_estimators=150", "n_estimators=250"},
	// The grid's depths and rounds.
	"grid-xgb": {"[3], \"n_estimators\": [50]", "[3, 6], \"n_estimators\": [100]", "[4, 6], \"n_estimators\": [100, 300]",
		"[4, 6, 8], \"n_estimators\": [300]", "[4, 6, 8], \"n_estimators\": [300, 1000]", "[4, 6, 8], \"n_estimators\": [300, 1000, 1500]"},
}

// renderTextPair writes the program from templates/text_pair.py.tmpl.
func renderTextPair(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := textPairStrengths[model][c.Strength()]
	ctx, ctxCol := c.Opt("context"), ""
	if len(schema.Text) > 2 {
		ctxCol = schema.Text[2]
	}
	if ctxCol == "" && ctx != "raw-string" {
		ctx = "none" // a task without a context column: nothing to encode
	}
	code := python("text_pair.py.tmpl", c, schema, map[string]any{
		"params": params, "ctx": ctx, "ctxCol": ctxCol, "second": textPairSecond(schema),
		"sparseX": c.Is("features", "tfidf-product"),
	})
	settings := "defaults"
	if params != "" {
		settings = params
	}
	if model == "grid-xgb" {
		settings = "max_depth in " + params
	}
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", settings)), Code: code}
}

// textPairSecond is the second phrase's column (the first text column again when the task
// names only one, so the program still renders).
func textPairSecond(s Schema) string {
	if len(s.Text) > 1 {
		return s.Text[1]
	}
	return s.Text[0]
}
