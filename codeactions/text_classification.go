package codeactions

import (
	"fmt"
	"slices"
	"strings"
)

// TextClassification writes programs that classify documents from their text columns (and, where
// the test file has them, numeric columns): the positive class's probability (binary, ROC AUC)
// or one probability per class (multi-class log loss). Most of the strength comes from
// coordinated choices: word and character n-grams with sublinear TF-IDF, the numeric columns
// log-scaled, and a well-regularised linear model or a stack of them; many combinations fail
// (counts given TF-IDF arguments, negative features given to naive Bayes, sparse matrices given
// to a dense-only model, a vectoriser refitted on the test text, the id column cleaned in place).
var TextClassification = register(&Library{
	Modality: "text-classification",
	Slots: []Slot{
		{"imports", []Option{
			{"full", "", 7},
			{"no-sklearn", "", 0.1}, // fails at the label encoder
			{"no-pandas", "", 0.1},  // fails while loading
			{"no-scipy", "", 0.25},  // fails where sparse matrices are stacked
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder.", 6},
			{"cwd", "Load the files from the working directory.", 0.15},                              // wrong path: fails
			{"read-csv", "Load every file with pandas' CSV reader.", 0.15},                           // a JSON file read as CSV fails
			{"head-1000", "Load the data and keep the first 1000 training rows to iterate fast.", 1}, // weak
		}},
		{"text", []Option{
			{"none", "Join the text columns and keep them exactly as written, case included.", 3},
			{"lower", "Join the text columns and lowercase them.", 4},
			{"clean", "Join the text columns, lowercase them, replace escaped characters and links, and collapse whitespace.", 1},
			{"strip-punct", "Lowercase the text columns in place and strip their punctuation.", 0.15}, // cleans an id that is text
			{"first-column", "Use only the first text column.", 1},
			{"dataframe", "Give the vectoriser the text columns as a data frame.", 0.1}, // vectorises the column names: fails
		}},
		{"features", []Option{
			{"counts", "Count word unigrams.", 3},
			{"tfidf", "Weight word unigrams by TF-IDF.", 4},
			{"tfidf-12", "Weight word unigrams and bigrams by TF-IDF.", 2},
			{"char", "Weight character 2-5-grams within word boundaries by TF-IDF.", 1},
			{"word-char", "Stack TF-IDF word 1-2-grams and character 2-5-grams.", 0.5},
			{"hashing", "Hash word unigrams and bigrams into 2^18 features.", 0.5},
			{"refit-test", "Weight word unigrams and bigrams by TF-IDF, fitting the vectoriser on the test text for the test features.", 0.15},
		}},
		{"vocab", []Option{
			{"default", "", 4},
			{"max200", "Keep the 200 most frequent terms.", 1},
			{"max5k", "Keep the 5000 most frequent terms.", 3},
			{"sublinear20k", "Keep up to 20000 terms seen in two documents, with sublinear term frequencies.", 1},
			{"stopwords", "Drop English stop words.", 2},
		}},
		{"reduce", []Option{
			{"none", "", 6},
			{"svd100", "Reduce the text features to 100 truncated-SVD components.", 1},
			{"svd300", "Reduce the text features to 300 truncated-SVD components.", 1},
			{"standardize", "Standardise the text features.", 0.1}, // cannot centre a sparse matrix: fails
			{"chi2-2k", "Keep the 2000 text features with the highest chi-squared score.", 1},
		}},
		{"numeric", []Option{
			{"none", "", 6},
			{"scaled", "Add the test file's numeric columns, standardised.", 1},
			{"log-scaled", "Add the test file's numeric columns, signed-log transformed and standardised.", 0.5},
			{"log1p", "Add the test file's numeric columns, log1p transformed and standardised.", 0.5}, // NaN from negative counts
			{"train-columns", "Add the train file's numeric columns, standardised.", 0.15},             // columns the test lacks: fails
			{"flags", "Add the test file's numeric columns, signed-log transformed and standardised, and flag categorical columns that differ from their most common value.", 0.5},
		}},
		{"model", []Option{
			{"naive-bayes", "Fit a multinomial naive Bayes model.", 2},
			{"gaussian-nb", "Fit a Gaussian naive Bayes model.", 0.1}, // dense data only
			{"logreg", "Fit a logistic regression.", 4},
			{"sgd", "Fit a logistic-loss linear model by stochastic gradient descent.", 1},
			{"linear-svc", "Fit a linear support vector classifier.", 0.15}, // no predict_proba: fails
			{"calibrated-svc", "Fit a linear support vector classifier with 5-fold sigmoid calibration.", 0.5},
			{"grid-logreg", "Grid-search the logistic regression's C by 3-fold cross-validation.", 0.5},
			{"random-forest", "Fit a random forest.", 2},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 1},
			{"nbsvm", "Fit an NB-SVM: logistic regression on features scaled by naive Bayes log-count ratios.", 0.5},
			{"stacking", "Stack an NB-SVM, a logistic regression and a calibrated linear SVC under a logistic regression, by 5-fold out-of-fold probabilities.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training data.", 5},
			{"holdout", "Check the loss on a stratified 20% hold-out, then refit on everything.", 2},
			{"holdout-no-refit", "Train on 80% and report the loss on a stratified 20% hold-out.", 2},
			{"cv5", "Estimate the loss from 5-fold out-of-fold probabilities, then refit on everything.", 1},
		}},
		{"submission", []Option{
			{"aligned", "Write the id and the predicted probabilities in the sample submission's columns.", 4},
			{"clip", "Clip the probabilities to [0.02, 0.98] and write them in the sample submission's columns.", 1},
			{"soften", "Soften the probabilities (power 0.7, renormalised) and write them in the sample submission's columns.", 0.5},
			{"hard-labels", "Write the predicted class as a 0/1 probability.", 2},
			{"model-classes", "Write the model's classes as columns.", 0.15}, // encoded classes: invalid
			{"no-id", "Write the probabilities without the id column.", 0.15},
		}},
	},
	Tunable:     []string{"strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly:  []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "cv5"}}},
	Clashes:     textClassificationClashes,
	render:      renderTextClassification,
})

// textClassificationClashes are the library's intended clashes, read off its renderer.
var textClassificationClashes = []ClashRule{
	{Reason: "scikit-learn is not imported: fails at the label encoder",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-sklearn") }},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-pandas") }},
	{Reason: "scipy's sparse is not imported: fails where sparse matrices are stacked or scaled",
		When: func(c Choice, s Schema) bool {
			return c.Is("imports", "no-scipy") && (c.Is("features", "word-char") || c.Is("model", "nbsvm", "stacking") ||
				(!c.Is("numeric", "none") && !textClsDense(c)))
		}},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "a JSON file read as CSV: fails while loading",
		When: func(c Choice, s Schema) bool {
			return c.Is("load", "read-csv") && (jsonTables(s) || strings.HasSuffix(s.Test, ".json") || strings.HasSuffix(s.Sample, ".json"))
		}},
	{Reason: "a data frame given to the vectoriser is vectorised by its column names: fails at fit",
		When: func(c Choice, s Schema) bool { return c.Is("text", "dataframe") }},
	{Reason: "the id is a text column, cleaned in place: the submission's ids do not match",
		When: func(c Choice, s Schema) bool {
			return c.Is("text", "strip-punct") && slices.Contains(s.Text, s.IDColumn)
		}},
	{Reason: "CountVectorizer has no sublinear_tf: fails at the vectoriser",
		When: func(c Choice, s Schema) bool { return c.Is("features", "counts") && c.Is("vocab", "sublinear20k") }},
	{Reason: "HashingVectorizer has no vocabulary to cap: fails at the vectoriser",
		When: func(c Choice, s Schema) bool {
			return c.Is("features", "hashing") && c.Is("vocab", "max200", "max5k", "sublinear20k")
		}},
	{Reason: "a vectoriser refitted on the test text has another vocabulary: fails at prediction",
		When: func(c Choice, s Schema) bool {
			return c.Is("features", "refit-test") && c.Is("vocab", "default", "stopwords")
		}},
	{Reason: "a vectoriser refitted on the test text: its capped vocabulary has the train's size only when both reach the cap",
		DataDependent: true,
		When:          func(c Choice, s Schema) bool { return c.Is("features", "refit-test") }},
	{Reason: "StandardScaler cannot centre a sparse matrix",
		When: func(c Choice, s Schema) bool { return c.Is("reduce", "standardize") }},
	{Reason: "300 SVD components of 200 terms",
		When: func(c Choice, s Schema) bool {
			return c.Is("reduce", "svd300") && c.Is("vocab", "max200") && !c.Is("features", "word-char", "hashing")
		}},
	{Reason: "chi-squared selection refuses the negative hashed features",
		When: func(c Choice, s Schema) bool { return c.Is("reduce", "chi2-2k") && c.Is("features", "hashing") }},
	{Reason: "the train's numeric columns include some the test lacks", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("numeric", "train-columns") }},
	{Reason: "log1p of a negative count is NaN", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("numeric", "log1p") }},
	{Reason: "multinomial naive Bayes refuses negative features (hashed, SVD)",
		When: func(c Choice, s Schema) bool {
			return c.Is("model", "naive-bayes") && (c.Is("features", "hashing") || textClsDense(c))
		}},
	{Reason: "multinomial naive Bayes refuses the standardised numeric columns (when the test has some)", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("model", "naive-bayes") && !c.Is("numeric", "none") }},
	{Reason: "Gaussian naive Bayes needs dense features: fails on sparse TF-IDF",
		When: func(c Choice, s Schema) bool { return c.Is("model", "gaussian-nb") && !textClsDense(c) }},
	{Reason: "LinearSVC has no predict_proba",
		When: func(c Choice, s Schema) bool { return c.Is("model", "linear-svc") }},
	{Reason: "the model's class codes as columns instead of the target or class columns: invalid",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "model-classes") && s.Output != OutputLabel }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
}

// textClsDense reports whether the text features are a dense SVD projection.
func textClsDense(c Choice) bool { return c.Is("reduce", "svd100", "svd300") }

// textClsStrengths are each model's hyper-parameters at strength s0..s5.
var textClsStrengths = map[string][6]string{
	"naive-bayes":    {"alpha=3.0", "alpha=1.0", "alpha=0.5", "alpha=0.3", "alpha=0.1", "alpha=0.03"},
	"gaussian-nb":    {"var_smoothing=1e-9", "var_smoothing=1e-6", "var_smoothing=1e-3", "var_smoothing=1e-2", "var_smoothing=0.1", "var_smoothing=0.5"},
	"logreg":         {"C=0.01", "C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0"},
	"sgd":            {"alpha=1e-2", "alpha=1e-3", "alpha=3e-4", "alpha=1e-4", "alpha=3e-5", "alpha=1e-5"},
	"linear-svc":     {"C=0.01", "C=0.03", "C=0.1", "C=0.3", "C=1.0", "C=3.0"},
	"calibrated-svc": {"C=0.003", "C=0.01", "C=0.03", "C=0.1", "C=0.3", "C=1.0"},
	"grid-logreg": {"[1.0]", "[0.1, 1.0]", "[0.1, 0.3, 1.0]", "[0.03, 0.1, 0.3, 1.0, 3.0]",
		"[0.03, 0.1, 0.3, 1.0, 3.0, 10.0]", "[0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]"},
	"random-forest": {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=400", "n_estimators=800"},
	"xgboost":       {"n_estimators=30", "n_estimators=100", "n_estimators=200", "n_estimators=400", "n_estimators=800", "n_estimators=1500"},
	"nbsvm":         {"C=0.03", "C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0"},
	"stacking":      {"C=0.03", "C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0"},
}

// textClsVectorizer is the vectoriser's constructor for a feature kind (word or char n-grams,
// counts, hashing) with the vocabulary option's arguments. The arguments are passed to every
// kind: counts reject sublinear_tf and hashing rejects any vocabulary size, as in real code.
func textClsVectorizer(kind, vocab string, keepCase bool) string {
	var args []string
	switch kind {
	case "word12":
		args = append(args, "ngram_range=(1, 2)")
	case "char":
		args = append(args, "analyzer=\"char_wb\"", "ngram_range=(2, 5)")
	case "hashing":
		args = append(args, "n_features=2**18", "ngram_range=(1, 2)")
	}
	switch vocab {
	case "max200":
		args = append(args, "max_features=200")
	case "max5k":
		args = append(args, "max_features=5000")
	case "sublinear20k":
		args = append(args, "max_features=20000", "min_df=2", "sublinear_tf=True")
	case "stopwords":
		args = append(args, "stop_words=\"english\"")
	}
	if keepCase {
		args = append(args, "lowercase=False")
	}
	cls := "TfidfVectorizer"
	switch kind {
	case "counts":
		cls = "CountVectorizer"
	case "hashing":
		cls = "HashingVectorizer"
	}
	return fmt.Sprintf("feature_extraction.text.%s(%s)", cls, strings.Join(args, ", "))
}

// renderTextClassification writes the program from templates/text_classification.py.tmpl.
func renderTextClassification(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := textClsStrengths[model][c.Strength()]
	keepCase, vocab := c.Is("text", "none"), c.Opt("vocab")
	kind := map[string]string{"counts": "counts", "tfidf": "word", "tfidf-12": "word12", "char": "char",
		"hashing": "hashing", "refit-test": "word12"}[c.Opt("features")]
	// The stack's SVC is ten times more regularised than its logistic models (see the template).
	var svcC float64
	fmt.Sscanf(params, "C=%g", &svcC)
	code := python("text_classification.py.tmpl", c, schema, map[string]any{
		"params": params, "svcC": fmt.Sprintf("%g", svcC/10),
		"binary": schema.Output == OutputProbabilities, "label": schema.Output == OutputLabel, "dense": textClsDense(c),
		"vec":     textClsVectorizer(kind, vocab, keepCase),
		"wordVec": textClsVectorizer("word12", vocab, keepCase),
		"charVec": textClsVectorizer("char", vocab, keepCase),
	})
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", params)), Code: code}
}
