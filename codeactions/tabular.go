package codeactions

import (
	"fmt"
	"strings"
)

// TabularClassification writes programs for tabular classification: probabilities per class
// (leaf), the positive class's probability (binary, ROC AUC) or the label (accuracy).
var TabularClassification = register(&Library{
	Modality: "tabular-classification",
	Slots: []Slot{
		{"imports", []Option{
			{"full", "", 8},
			{"no-sklearn", "", 0.2}, // fails where the first estimator is named
			{"no-pandas", "", 0.2},  // fails while loading
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder.", 6},
			{"cwd", "Load the CSV files from the working directory.", 0.3},     // wrong path: fails
			{"index-col", "Load the CSV files with the id as the index.", 0.2}, // no id for the submission
		}},
		{"target", []Option{
			{"label-encoder", "Encode the class labels as integers.", 5},
			{"raw", "Keep the class labels as they are.", 4},
			{"label-column", "Take the labels from the label column.", 0.2}, // no such column: fails
		}},
		// Real tables mix numeric, categorical, compound ("a/b/c") and free-text columns with
		// missing values: every option but numeric uses them all (feature_frames in the
		// template); the subsets choose among the numeric columns.
		{"features", []Option{
			{"all", "Use every feature column, one-hot encoding the categorical ones.", 6},
			{"all-ordinal", "Use every feature column, the categorical ones as ordinal codes.", 2},
			{"all-frequency", "Use every feature column, each category as its frequency.", 1},
			{"numeric", "Use the numeric feature columns only.", 1},
			{"with-id", "Use every column including the id.", 1},
			{"first-half", "Use the first half of the numeric feature columns.", 1},
			{"second-half", "Use the second half of the numeric feature columns.", 1},
			{"every-other", "Use every other numeric feature column.", 1},
			{"top-variance", "Keep the half of the numeric features with the highest variance.", 1},
			{"crosses", "Add the pairwise products of the 8 highest-variance features.", 1},
		}},
		// Scaling before a linear model is the common habit, not the exception.
		{"transform", []Option{
			{"none", "", 4},
			{"standard", "Standardise the features.", 4},
			{"minmax", "Scale the features to [0, 1].", 1},
			{"power", "Apply a Yeo-Johnson power transform.", 1},
			{"pca32", "Standardise, then reduce to 32 principal components.", 1},
			{"pca64-whiten", "Standardise, then reduce to 64 whitened principal components.", 1},
			{"log1p", "Take log(1+x) of the features, then standardise.", 1},
		}},
		{"model", []Option{
			{"logreg", "Fit a multinomial logistic regression.", 4},
			{"knn", "Fit a distance-weighted k-nearest-neighbours classifier.", 1},
			{"random-forest", "Fit a random forest.", 4},
			{"extra-trees", "Fit an extra-trees ensemble.", 1},
			{"lda", "Fit a shrinkage linear discriminant analysis.", 1},
			{"qda", "Fit a regularised quadratic discriminant analysis.", 0.5},
			{"naive-bayes", "Fit a Gaussian naive Bayes model.", 1},
			{"svc", "Fit an RBF support vector classifier with probability estimates.", 1},
			{"mlp", "Fit a small neural network.", 1},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 3},
			{"hist-gb", "Fit histogram gradient boosting.", 3},
			{"linear-svc", "Fit a linear support vector classifier.", 0.3}, // no predict_proba: fails
			{"stacking", "Stack logistic regression, a random forest and k-nearest neighbours under a logistic regression.", 0.5},
			{"grid-logreg", "Grid-search the logistic regression's C by 3-fold cross-validated log loss.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training data.", 5},
			{"holdout", "Check the loss on a stratified 20% hold-out, then refit on everything.", 2},
			{"holdout-no-refit", "Train on 80% and report the loss on a stratified 20% hold-out.", 2},
			{"cv3", "Estimate the loss with 3-fold cross-validation, then refit on everything.", 1},
		}},
		{"postprocess", []Option{
			{"none", "", 7},
			{"clip-1e-3", "Clip probabilities at 0.001 and renormalise.", 1},
			{"clip-1e-2", "Clip probabilities at 0.01 and renormalise.", 1},
			{"soften", "Soften the probabilities (square root, renormalised).", 1},
			{"sharpen", "Sharpen the probabilities (squared, renormalised).", 1},
			{"calibrate", "Calibrate the probabilities with 3-fold sigmoid calibration.", 0.5},
		}},
		{"submission", []Option{
			{"aligned", "Write one probability column per class, in the sample submission's order.", 6},
			{"model-classes", "Write the model's classes as columns.", 0.5},
			{"hard-labels", "Write the predicted class as a one-hot row.", 1},
			{"no-id", "Write the probabilities without the id column.", 0.3},
		}},
	},
	// The model first, among its two most common alternatives: a setting's best value depends
	// on the family (strength is C for one, shrinkage or trees for another), so the family is
	// chosen before its settings.
	Tunable:     []string{"model", "transform", "strength"},
	TuneMost:    map[string]int{"model": 2},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly:  []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "cv3"}}},
	Clashes:     tabularClassificationClashes,
	render:      renderTabularClassification,
})

// tabularClassificationClashes are the library's intended clashes, read off its renderer.
var tabularClassificationClashes = []ClashRule{
	{Reason: "scikit-learn is not imported: fails at the first estimator",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-sklearn") }},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-pandas") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "the id column became the index: the submission has no id",
		When: func(c Choice, s Schema) bool {
			// Without an id a submission is still valid where rows match by position, except
			// the class probabilities, which take the sample submission's columns (the id too).
			return c.Is("load", "index-col") && !jsonTables(s) &&
				!(s.ByPosition && c.Is("submission", "no-id") && s.Output != OutputClassProbabilities)
		}},
	{Reason: "the train has no label column: fails reading the labels",
		When: func(c Choice, s Schema) bool { return c.Is("target", "label-column") && s.Targets[0] != "label" }},
	{Reason: "LinearSVC has no predict_proba (unless calibrated)",
		When: func(c Choice, s Schema) bool { return c.Is("model", "linear-svc") && !c.Is("postprocess", "calibrate") }},
	{Reason: "XGBoost needs the labels 0..k-1, and the class names are not",
		When: func(c Choice, s Schema) bool {
			return c.Is("model", "xgboost") && c.Is("target", "raw") && s.Output == OutputClassProbabilities
		}},
	{Reason: "XGBoost needs the labels 0..k-1: labels that are names or start at 1 fail", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return c.Is("model", "xgboost") && c.Is("target", "raw") && s.Output == OutputLabel
		}},
	{Reason: "a cross-validation fold without some class gives XGBoost labels that are not 0..k-1", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("model", "xgboost") && c.Is("validation", "cv3") }},
	{Reason: "the label encoder's codes as columns instead of the class names: invalid",
		When: func(c Choice, s Schema) bool {
			return c.Is("submission", "model-classes") && c.Is("target", "label-encoder") && s.Output == OutputClassProbabilities
		}},
	{Reason: "one column per class instead of the target column: invalid",
		When: func(c Choice, s Schema) bool {
			return c.Is("submission", "model-classes") && s.Output == OutputProbabilities
		}},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool {
			return c.Is("submission", "no-id") && (!s.ByPosition || s.Output == OutputClassProbabilities)
		}},
	// Kaggle's dec-2021 train has a single row of cover type 5.
	{Reason: "3-fold calibration needs 3 rows of every class", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return c.Is("postprocess", "calibrate") && s.Output != OutputProbabilities
		}},
	{Reason: "QDA's class covariance is singular (a class of one row, a feature constant within a class): no fit or NaN probabilities",
		DataDependent: true,
		When:          func(c Choice, s Schema) bool { return c.Is("model", "qda") }},
}

// strengths are each model's hyper-parameters at strength s0..s5.
var strengths = map[string][6]string{
	"logreg":        {"C=0.01, max_iter=200", "C=0.1, max_iter=200", "C=1.0, max_iter=300", "C=10.0, max_iter=500", "C=100.0, max_iter=1000", "C=1000.0, max_iter=2000"},
	"knn":           {"n_neighbors=1", "n_neighbors=2", "n_neighbors=3", "n_neighbors=5", "n_neighbors=10", "n_neighbors=20"},
	"random-forest": {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"extra-trees":   {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"lda":           {"shrinkage=0.0", "shrinkage=0.001", "shrinkage=0.01", "shrinkage=0.1", "shrinkage=0.3", "shrinkage=\"auto\""},
	"qda":           {"reg_param=0.0", "reg_param=0.01", "reg_param=0.1", "reg_param=0.3", "reg_param=0.6", "reg_param=0.9"},
	"naive-bayes":   {"var_smoothing=1e-9", "var_smoothing=1e-6", "var_smoothing=1e-3", "var_smoothing=1e-2", "var_smoothing=0.1", "var_smoothing=0.5"},
	"svc":           {"C=0.1", "C=1.0", "C=3.0", "C=10.0", "C=30.0", "C=100.0"},
	"mlp":           {"hidden_layer_sizes=(16,), max_iter=100", "hidden_layer_sizes=(32,), max_iter=200", "hidden_layer_sizes=(64,), max_iter=300", "hidden_layer_sizes=(128,), max_iter=500", "hidden_layer_sizes=(256,), max_iter=800", "hidden_layer_sizes=(256, 128), max_iter=1000"},
	"xgboost":       {"n_estimators=10", "n_estimators=30", "n_estimators=60", "n_estimators=100", "n_estimators=200", "n_estimators=400"},
	"hist-gb": {"max_iter=30, learning_rate=0.1", "max_iter=100, learning_rate=0.1", "max_iter=200, learning_rate=0.1",
		"max_iter=300, learning_rate=0.05", "max_iter=600, learning_rate=0.03", "max_iter=1000, learning_rate=0.02"},
	"linear-svc":  {"C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0", "C=1000.0"},
	"stacking":    {"n_estimators=10", "n_estimators=30", "n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=300"},
	"grid-logreg": {"[1.0]", "[1.0, 10.0]", "[1.0, 10.0, 100.0]", "[10.0, 100.0, 1000.0]", "[1.0, 10.0, 100.0, 1000.0]", "[0.1, 1.0, 10.0, 100.0, 1000.0, 10000.0]"},
}

var constructors = map[string]string{
	"logreg":        "linear_model.LogisticRegression(%s)",
	"knn":           "neighbors.KNeighborsClassifier(%s, weights=\"distance\")",
	"random-forest": "ensemble.RandomForestClassifier(%s, random_state=0)",
	"extra-trees":   "ensemble.ExtraTreesClassifier(%s, random_state=0)",
	"lda":           "discriminant_analysis.LinearDiscriminantAnalysis(solver=\"lsqr\", %s)",
	"qda":           "discriminant_analysis.QuadraticDiscriminantAnalysis(%s)",
	"naive-bayes":   "naive_bayes.GaussianNB(%s)",
	"svc":           "svm.SVC(%s, probability=True, random_state=0)",
	"mlp":           "neural_network.MLPClassifier(%s, random_state=0)",
	"xgboost":       "xgb.XGBClassifier(%s, max_depth=4, learning_rate=0.1, n_jobs=1, random_state=0)",
	"hist-gb":       "ensemble.HistGradientBoostingClassifier(%s, random_state=0)",
	"linear-svc":    "svm.LinearSVC(%s)",
	"stacking": "ensemble.StackingClassifier([(\"lr\", linear_model.LogisticRegression(C=100.0, max_iter=1000)), " +
		"(\"rf\", ensemble.RandomForestClassifier(%s, random_state=0)), (\"knn\", neighbors.KNeighborsClassifier(5, weights=\"distance\"))], " +
		"final_estimator=linear_model.LogisticRegression(max_iter=1000), cv=3)",
	// The grid-search strength is the list of C values searched.
	"grid-logreg": "model_selection.GridSearchCV(linear_model.LogisticRegression(max_iter=2000), {\"C\": %s}, cv=3, scoring=\"neg_log_loss\")",
}

// tabNaN are the classifiers that take missing values themselves: their numeric columns are
// not imputed, unless a PCA (which cannot) comes first.
var tabNaN = map[string]bool{"xgboost": true, "hist-gb": true}

// tabCapped are the classifiers whose fit or prediction costs grow with the square of the rows
// (an RBF SVC's, k-nearest neighbours' on a test as large as the train, a stack's refits), and
// the rows each is fitted on at most, so that a table of 10^5 rows finishes in a task's time.
var tabCapped = map[string]int{"svc": 5000, "knn": 20000, "stacking": 20000}

func renderTabularClassification(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := strengths[model][c.Strength()]
	var load code
	loadTables(&load, c.Opt("load"), schema)
	estimator := fmt.Sprintf(constructors[model], params)
	if n := tabCapped[model]; n > 0 {
		estimator = fmt.Sprintf("Subsampled(%s, %d)", estimator, n)
	}
	code := python("tabular.py.tmpl", c, schema, map[string]any{
		"estimator": estimator,
		"load":      strings.TrimSuffix(load.String(), "\n"),
		"impute":    !tabNaN[model] || c.Is("transform", "pca32", "pca64-whiten"),
		"cap":       tabCapped[model],
	})
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", params)), Code: code}
}

// holdoutSplit writes holdout_split(y): the rows of a stratified 20% hold-out. A class too rare
// to split (Kaggle's dec-2021 train has one row of cover type 5) stays in training instead of
// making train_test_split refuse to stratify; otherwise the split is train_test_split's own.
func holdoutSplit(b *code) { b.WriteString(snippet("holdout_split", nil)) }
