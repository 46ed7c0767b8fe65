package codeactions

import (
	"fmt"
	"strings"
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
			{"log", "Predict the log of the score and exponentiate predictions back.", 0.5},
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
			{"round-clip", "Round the predictions and clip them to the 1-6 range.", 5},
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
	{Reason: "unrounded predictions of the mode: a median may be a half, exp(log(3)) is not exactly 3", DataDependent: true,
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

// ordinalModel is the constructor of a model in the regression or the classification framing.
func ordinalModel(model string, classify bool, p string) string {
	// One thread: programs run side by side, and threads beyond the free cores slow XGBoost many-fold.
	const xgbArgs = "learning_rate=0.05, max_depth=4, subsample=0.8, colsample_bytree=0.5, tree_method=\"hist\", n_jobs=1, random_state=0"
	pick := func(reg, cls string) string {
		if classify {
			return strings.ReplaceAll(cls, "{p}", p)
		}
		return strings.ReplaceAll(reg, "{p}", p)
	}
	switch model {
	case "mode":
		return pick("dummy.DummyRegressor(strategy=\"median\")", "dummy.DummyClassifier(strategy=\"most_frequent\")")
	case "linear":
		return pick("linear_model.LinearRegression()", "linear_model.LogisticRegression(C={p}, max_iter=300)")
	case "ridge":
		return pick("linear_model.Ridge(alpha={p})", "linear_model.RidgeClassifier(alpha={p})")
	case "svm":
		return pick("svm.LinearSVR(C={p}, max_iter=5000, random_state=0)", "svm.LinearSVC(C={p}, max_iter=5000, random_state=0)")
	case "random-forest":
		return pick("ensemble.RandomForestRegressor(n_estimators={p}, max_features=\"sqrt\", min_samples_leaf=2, random_state=0)",
			"ensemble.RandomForestClassifier(n_estimators={p}, max_features=\"sqrt\", min_samples_leaf=2, random_state=0)")
	case "knn":
		// Cosine distances: scikit-learn 1.2's Euclidean neighbour search on sparse TF-IDF is very slow.
		return pick("neighbors.KNeighborsRegressor(n_neighbors={p}, weights=\"distance\", metric=\"cosine\")",
			"neighbors.KNeighborsClassifier(n_neighbors={p}, weights=\"distance\", metric=\"cosine\")")
	case "xgboost":
		return pick("xgb.XGBRegressor(n_estimators={p}, "+xgbArgs+")", "xgb.XGBClassifier(n_estimators={p}, "+xgbArgs+")")
	case "stacking":
		// XGBoost sees 100 SVD components: on the raw TF-IDF columns it would take hours.
		const svd = "make_pipeline(decomposition.TruncatedSVD(n_components=min(100, X.shape[1] - 1), random_state=0), "
		return pick("ensemble.StackingRegressor([(\"ridge\", linear_model.Ridge(alpha=3.0)), (\"svm\", svm.LinearSVR(C=0.1, max_iter=5000, random_state=0)), "+
			"(\"xgb\", "+svd+"xgb.XGBRegressor(n_estimators={p}, "+xgbArgs+")))], final_estimator=linear_model.Ridge(alpha=1.0), cv=5)",
			"ensemble.StackingClassifier([(\"logistic\", linear_model.LogisticRegression(C=10.0, max_iter=300)), (\"svm\", svm.LinearSVC(C=0.1, max_iter=5000, random_state=0)), "+
				"(\"xgb\", "+svd+"xgb.XGBClassifier(n_estimators={p}, "+xgbArgs+")))], final_estimator=linear_model.LogisticRegression(max_iter=1000), cv=5)")
	case "grid":
		return pick("model_selection.GridSearchCV(linear_model.Ridge(), {\"alpha\": {p}}, cv=3, scoring=\"neg_mean_squared_error\")",
			"model_selection.GridSearchCV(linear_model.LogisticRegression(max_iter=300), {\"C\": {p}}, cv=3, scoring=\"neg_log_loss\")")
	}
	panic("codeactions: ordinal has no model " + model)
}

func renderOrdinal(c Choice, schema Schema) Program {
	model, framing := c.Opt("model"), c.Opt("framing")
	classify := framing != "regression"
	params := ""
	if model != "mode" {
		params = ordinalStrengths[model][c.Strength()]
	}
	ctor := ordinalModel(model, classify, params)
	feats := c.Opt("features")
	var b code
	w := b.w
	switch c.Opt("imports") {
	case "full", "no-vectorizer":
		w("import numpy as np")
		w("import pandas as pd")
		w("from scipy import sparse")
		w("from sklearn import decomposition, dummy, ensemble, linear_model, metrics, model_selection, neighbors, preprocessing, svm")
		if c.Opt("imports") == "full" {
			w("from sklearn.feature_extraction.text import TfidfVectorizer")
		}
	case "no-pandas":
		w("import numpy as np")
		w("from scipy import sparse")
		w("from sklearn import decomposition, dummy, ensemble, linear_model, metrics, model_selection, neighbors, preprocessing, svm")
		w("from sklearn.feature_extraction.text import TfidfVectorizer")
	}
	if model == "xgboost" || model == "stacking" {
		w("import xgboost as xgb")
	}
	if model == "stacking" {
		w("from sklearn.pipeline import make_pipeline")
	}
	w("")
	w("ID, TARGET, TEXT = %q, %q, %q", schema.IDColumn, schema.Targets[0], schema.Text[0])
	loadTables(&b, c.Opt("load"), schema)
	w("")

	// The target and the map from the model's scale back to scores.
	switch c.Opt("target") {
	case "score", "label-column":
		w("scores = train[TARGET].values.astype(int)")
		if c.Opt("target") == "label-column" {
			w("y = train[\"label\"].values")
		} else {
			w("y = scores")
		}
		w("def back(p):")
		w("    return p")
	case "shifted":
		w("scores = train[TARGET].values.astype(int)")
		w("y = scores - 1")
		w("def back(p):")
		w("    return p + 1")
	case "log":
		w("scores = train[TARGET].values.astype(int)")
		w("y = np.log(scores)")
		w("def back(p):")
		w("    return np.exp(p)")
	}
	w("")

	if feats == "length" || feats == "tfidf-length" || feats == "all" {
		w("def essay_stats(texts):")
		w("    # Length statistics: words, sentences, unique words, mean word length, paragraphs.")
		w("    words = texts.str.split()")
		w("    n_words = words.str.len().clip(lower=1)")
		w("    n_unique = words.apply(lambda ws: len({x.lower().strip(\".,;:!?\\\"'()\") for x in ws}))")
		w("    n_sentences = texts.str.count(r\"[.!?]+(?:\\s|$)\").clip(lower=1)")
		w("    n_paragraphs = texts.str.count(r\"\\n\\s*\\n\") + 1")
		w("    mean_word = texts.str.count(r\"\\w\") / n_words")
		w("    return np.column_stack([np.log1p(n_words), np.log1p(n_sentences), np.log1p(n_unique), n_unique / n_words,")
		w("                            mean_word, np.log1p(n_paragraphs), n_words / n_sentences])")
		w("")
	}
	wordVec := "TfidfVectorizer(ngram_range=(1, 2), min_df=2, max_features=50000, sublinear_tf=True)"
	charVec := "TfidfVectorizer(analyzer=\"char_wb\", ngram_range=(2, 5), min_df=3, max_features=50000, sublinear_tf=True)"
	switch feats {
	case "length":
		w("X = essay_stats(train[TEXT])")
		w("X_test = essay_stats(test[TEXT])")
	case "tfidf-word", "tfidf-char":
		vec := wordVec
		if feats == "tfidf-char" {
			vec = charVec
		}
		w("vectorizer = %s", vec)
		w("X = vectorizer.fit_transform(train[TEXT])")
		w("X_test = vectorizer.transform(test[TEXT])")
	case "tfidf-length", "all":
		w("vectorizer = %s", wordVec)
		w("X_words = vectorizer.fit_transform(train[TEXT])")
		w("X_test_words = vectorizer.transform(test[TEXT])")
		w("S, S_test = essay_stats(train[TEXT]), essay_stats(test[TEXT])")
		w("scaler = preprocessing.StandardScaler().fit(S)")
		if feats == "all" {
			w("char_vectorizer = %s", charVec)
			w("X_chars = char_vectorizer.fit_transform(train[TEXT])")
			w("X_test_chars = char_vectorizer.transform(test[TEXT])")
			w("X = sparse.hstack([X_words, X_chars, scaler.transform(S)]).tocsr()")
			w("X_test = sparse.hstack([X_test_words, X_test_chars, scaler.transform(S_test)]).tocsr()")
		} else {
			w("X = sparse.hstack([X_words, scaler.transform(S)]).tocsr()")
			w("X_test = sparse.hstack([X_test_words, scaler.transform(S_test)]).tocsr()")
		}
	case "raw-text":
		w("X = train[[TEXT]].values")
		w("X_test = test[[TEXT]].values")
	case "tfidf-refit":
		w("vectorizer = TfidfVectorizer(min_df=2, sublinear_tf=True)")
		w("X = vectorizer.fit_transform(train[TEXT])")
		w("X_test = vectorizer.fit_transform(test[TEXT])")
	}
	switch c.Opt("transform") {
	case "standard":
		w("scaler = preprocessing.StandardScaler(with_mean=False).fit(X)")
		w("X, X_test = scaler.transform(X), scaler.transform(X_test)")
	case "svd":
		w("transformer = decomposition.TruncatedSVD(n_components=min(100, X.shape[1] - 1), random_state=0)")
		w("X = transformer.fit_transform(X)")
		w("X_test = transformer.transform(X_test)")
	case "pca":
		w("pca = decomposition.PCA(n_components=min(50, X.shape[1]), random_state=0).fit(X)")
		w("X, X_test = pca.transform(X), pca.transform(X_test)")
	}
	w("")

	w("model = " + ctor)
	// predict writes the model's predictions on M in the score scale.
	predict := func(m string) string {
		if framing == "expected-value" {
			return fmt.Sprintf("back(model.predict_proba(%s) @ model.classes_)", m)
		}
		return fmt.Sprintf("back(model.predict(%s))", m)
	}
	const rounded = "np.clip(np.rint(%s), 1, 6).astype(int)"
	switch v := c.Opt("validation"); v {
	case "none":
		w("model.fit(X, y)")
		w("raw_train = %s", predict("X"))
		w("train_loss = metrics.mean_squared_error(scores, raw_train)")
		w("fit_raw, fit_true = raw_train, scores")
	case "holdout", "holdout-no-refit", "holdout-raw-kappa":
		w("X_tr, X_val, y_tr, y_val, s_tr, s_val = model_selection.train_test_split(X, y, scores, test_size=0.2, random_state=0, stratify=scores)")
		w("model.fit(X_tr, y_tr)")
		w("raw_tr = %s", predict("X_tr"))
		w("train_loss = metrics.mean_squared_error(s_tr, raw_tr)")
		w("raw_val = %s", predict("X_val"))
		if v == "holdout-raw-kappa" {
			w("val_loss = metrics.cohen_kappa_score(s_val, raw_val, weights=\"quadratic\")")
		} else {
			w("val_loss = metrics.cohen_kappa_score(s_val, "+rounded+", weights=\"quadratic\")", "raw_val")
		}
		w("fit_raw, fit_true = raw_val, s_val")
		if v != "holdout-no-refit" {
			w("model.fit(X, y)")
		}
	case "oof5":
		w("folds = model_selection.KFold(n_splits=5, shuffle=True, random_state=0)")
		if framing == "expected-value" {
			w("raw_oof = back(model_selection.cross_val_predict(model, X, y, cv=folds, method=\"predict_proba\") @ np.unique(y))")
		} else {
			w("raw_oof = back(model_selection.cross_val_predict(model, X, y, cv=folds))")
		}
		w("cv_loss = metrics.cohen_kappa_score(scores, "+rounded+", weights=\"quadratic\")", "raw_oof")
		w("model.fit(X, y)")
		w("raw_train = %s", predict("X"))
		w("train_loss = metrics.mean_squared_error(scores, raw_train)")
		w("fit_raw, fit_true = raw_oof, scores")
	}
	w("")
	w("raw_test = %s", predict("X_test"))
	switch c.Opt("postprocess") {
	case "none":
		w("pred = raw_test")
	case "round-clip":
		w("pred = "+rounded, "raw_test")
	case "round":
		w("pred = np.rint(raw_test).astype(int)")
	case "floor":
		w("pred = raw_test.astype(int)")
	case "thresholds":
		w("")
		w("def fit_cuts(raw, true):")
		w("    # Coordinate search of the five cut points between scores, maximising kappa.")
		w("    cuts = np.array([1.5, 2.5, 3.5, 4.5, 5.5])")
		w("    def kappa(cs):")
		w("        return metrics.cohen_kappa_score(true, np.digitize(raw, cs) + 1, weights=\"quadratic\")")
		w("    best = kappa(cuts)")
		w("    for _ in range(3):")
		w("        for i in range(5):")
		w("            lo = cuts[i - 1] if i > 0 else cuts[0] - 1.0")
		w("            hi = cuts[i + 1] if i < 4 else cuts[4] + 1.0")
		w("            for cut in np.linspace(lo, hi, 22)[1:-1]:")
		w("                trial = cuts.copy()")
		w("                trial[i] = cut")
		w("                k = kappa(trial)")
		w("                if k > best:")
		w("                    best, cuts = k, trial")
		w("    return cuts")
		w("")
		w("cuts = fit_cuts(fit_raw, fit_true)")
		w("pred = np.digitize(raw_test, cuts) + 1")
	}
	switch c.Opt("submission") {
	case "aligned":
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: pred})")
	case "sample-fill":
		w("sub = sample.copy()")
		w("sub[TARGET] = pred")
	case "no-id":
		w("sub = pd.DataFrame({TARGET: pred})")
	case "prediction-column":
		w("sub = pd.DataFrame({ID: test[ID].values, \"prediction\": pred})")
	}
	w("sub.to_csv(\"submission.csv\", index=False)")
	settings := "Model settings: defaults."
	if params != "" && !(model == "linear" && !classify) {
		settings = fmt.Sprintf("Model settings: %s %s.", ordinalParamNames[model], params)
	}
	return Program{Plan: c.Plan(settings), Code: b.String()}
}
