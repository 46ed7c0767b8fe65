package codeactions

import (
	"fmt"
	"strings"
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

// One thread: programs run side by side, and threads beyond the free cores slow XGBoost many-fold.
const preferenceXGB = "learning_rate=0.05, max_depth=4, subsample=0.8, colsample_bytree=0.8, tree_method=\"hist\", n_jobs=1, random_state=0"

var preferenceConstructors = map[string]string{
	"prior":       "dummy.DummyClassifier(strategy=\"prior\")",
	"logreg":      "linear_model.LogisticRegression(%s)",
	"naive-bayes": "naive_bayes.GaussianNB(%s)",
	"linear-svc":  "svm.LinearSVC(%s, max_iter=5000, random_state=0)",
	// Cosine distances: scikit-learn 1.2's Euclidean neighbour search on sparse TF-IDF is very slow.
	"knn":               "neighbors.KNeighborsClassifier(%s, metric=\"cosine\")",
	"random-forest":     "ensemble.RandomForestClassifier(%s, max_features=\"sqrt\", min_samples_leaf=5, random_state=0)",
	"gradient-boosting": "ensemble.GradientBoostingClassifier(%s, learning_rate=0.05, max_depth=3, subsample=0.8, random_state=0)",
	"xgboost":           "xgb.XGBClassifier(%s, " + preferenceXGB + ")",
	// XGBoost sees at most 64 SVD components: on the raw TF-IDF columns it would take hours.
	"stacking": "ensemble.StackingClassifier([(\"logistic\", linear_model.LogisticRegression(C=1.0, max_iter=2000)), " +
		"(\"forest\", ensemble.RandomForestClassifier(n_estimators=200, max_features=\"sqrt\", min_samples_leaf=5, random_state=0)), " +
		"(\"xgb\", make_pipeline(decomposition.TruncatedSVD(n_components=min(64, X.shape[1] - 1), random_state=0), xgb.XGBClassifier(%s, " + preferenceXGB + ")))], " +
		"final_estimator=linear_model.LogisticRegression(max_iter=2000), cv=3)",
	"grid-logreg": "model_selection.GridSearchCV(linear_model.LogisticRegression(max_iter=3000), {\"C\": %s}, cv=3, scoring=\"neg_log_loss\")",
}

// preferenceText is the task's i-th text column, or the competition's name for it.
func preferenceText(s Schema, i int) string {
	if i < len(s.Text) {
		return s.Text[i]
	}
	return []string{"prompt", "response_a", "response_b"}[i]
}

func renderPreference(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := ""
	ctor := preferenceConstructors[model]
	if model != "prior" {
		params = preferenceStrengths[model][c.Strength()]
		ctor = fmt.Sprintf(ctor, params)
	}
	feats, aug, parse := c.Opt("features"), c.Opt("augment"), c.Opt("parse")
	var b code
	w := b.w
	imp := c.Opt("imports")
	if imp != "no-json" {
		w("import json")
	}
	if parse == "literal-eval" {
		w("import ast")
	}
	w("import numpy as np")
	if imp != "no-pandas" {
		w("import pandas as pd")
	}
	w("from scipy import sparse")
	w("from sklearn import calibration, decomposition, dummy, ensemble, linear_model, metrics, model_selection, naive_bayes, neighbors, preprocessing, svm")
	w("from sklearn.feature_extraction.text import TfidfVectorizer")
	if model == "xgboost" || model == "stacking" {
		w("import xgboost as xgb")
	}
	if model == "stacking" {
		w("from sklearn.pipeline import make_pipeline")
	}
	w("")
	w("ID = %q", schema.IDColumn)
	quoted := make([]string, len(schema.Targets))
	for i, t := range schema.Targets {
		quoted[i] = fmt.Sprintf("%q", t)
	}
	// The outcome columns: A wins, B wins, tie.
	w("TARGETS = [%s]", strings.Join(quoted, ", "))
	w("PROMPT, A, B = %q, %q, %q", preferenceText(schema, 0), preferenceText(schema, 1), preferenceText(schema, 2))
	loadTables(&b, c.Opt("load"), schema)
	w("")

	w("def parse(cell):")
	switch parse {
	case "json":
		w("    # A JSON list of turns; null turns are dropped.")
		w("    try:")
		w("        turns = json.loads(cell)")
		w("    except (TypeError, ValueError):")
		w("        return str(cell)")
		w("    return \"\\n\".join(t for t in turns if isinstance(t, str))")
	case "raw":
		w("    return str(cell)")
	case "literal-eval":
		w("    return \"\\n\".join(ast.literal_eval(cell))")
	case "first-turn":
		w("    return json.loads(cell)[0] or \"\"")
	}
	w("")
	w("for df in (train, test):")
	w("    for col in (PROMPT, A, B):")
	w("        df[col] = df[col].map(parse)")
	w("")

	switch c.Opt("target") {
	case "argmax", "winner-column":
		if c.Opt("target") == "winner-column" {
			w("y = train[\"winner\"].values")
		} else {
			w("y = train[TARGETS].values.argmax(axis=1)")
		}
		w("labels = [0, 1, 2]  # the label of each outcome column")
		w("swap = {0: 1, 1: 0, 2: 2}  # a label once A and B are swapped")
	case "idxmax":
		w("y = train[TARGETS].idxmax(axis=1).values")
		w("labels = list(TARGETS)")
		w("swap = {TARGETS[0]: TARGETS[1], TARGETS[1]: TARGETS[0], TARGETS[2]: TARGETS[2]}")
	case "sign":
		w("y = (train[TARGETS[0]] - train[TARGETS[1]]).values")
		w("labels = [1, -1, 0]")
		w("swap = {1: -1, -1: 1, 0: 0}")
	}
	w("")

	structure := feats != "length-diff" && feats != "raw-text"
	tfidf := feats == "similarity" || feats == "tfidf-diff" || feats == "tfidf-both"
	if feats != "raw-text" {
		w("def stats(texts):")
		w("    cols = [np.log1p(texts.str.len()), np.log1p(texts.str.split().str.len())]")
		if structure {
			w("    # Structure: line breaks, list items, code fences, headers, bold text.")
			w("    for pattern in (r\"\\n\", r\"(?m)^\\s*(?:[-*]|\\d+\\.)\\s\", r\"```\", r\"(?m)^#+\\s\", r\"\\*\\*\"):")
			w("        cols.append(np.log1p(texts.str.count(pattern)))")
		}
		w("    return np.column_stack(cols)")
		w("")
	}
	if tfidf {
		w("vectorizer = TfidfVectorizer(ngram_range=(1, 2), min_df=3, max_features=30000, sublinear_tf=True).fit(pd.concat([train[PROMPT], train[A], train[B]]))")
		w("")
		w("def cosine(u, v):")
		w("    return np.asarray(u.multiply(v).sum(axis=1)).ravel()")
		w("")
	}
	if feats == "model-names" {
		w("encoder = preprocessing.OneHotEncoder(handle_unknown=\"ignore\").fit(np.concatenate([train[\"model_a\"].values, train[\"model_b\"].values])[:, None])")
		w("")
	}
	w("def features(df, a, b):")
	w("    # Features of each row's pair, response a first.")
	if feats == "raw-text" {
		w("    return df[[PROMPT, a, b]].values")
	} else {
		w("    sa, sb = stats(df[a]), stats(df[b])")
		w("    parts = [sa, sb, sa - sb]")
		if structure {
			w("    parts.append(np.log1p(df[PROMPT].str.len().values)[:, None])")
		}
		if tfidf {
			w("    tp, ta, tb = vectorizer.transform(df[PROMPT]), vectorizer.transform(df[a]), vectorizer.transform(df[b])")
			w("    sims = np.column_stack([cosine(tp, ta), cosine(tp, tb), cosine(ta, tb)])")
			w("    parts += [sims, sims[:, :1] - sims[:, 1:2]]")
		}
		if feats == "model-names" {
			w("    ma, mb = a.replace(\"response\", \"model\"), b.replace(\"response\", \"model\")")
			w("    parts.append(encoder.transform(df[ma].values[:, None]).toarray() - encoder.transform(df[mb].values[:, None]).toarray())")
		}
		switch feats {
		case "tfidf-diff":
			w("    return sparse.hstack([sparse.csr_matrix(np.hstack(parts)), ta - tb]).tocsr()")
		case "tfidf-both":
			w("    return sparse.hstack([sparse.csr_matrix(np.hstack(parts)), ta, tb]).tocsr()")
		default:
			w("    return np.hstack(parts)")
		}
	}
	w("")
	w("X = features(train, A, B)")
	switch aug {
	case "none":
		w("def augment(rows):")
		w("    return X[rows], y[rows]")
	default:
		w("X_sw = features(train, B, A)")
		if aug == "swap" {
			w("y_sw = np.array([swap[v] for v in y])")
		} else {
			w("y_sw = y")
		}
		w("")
		w("def augment(rows):")
		w("    # The rows as they are, then with A and B swapped.")
		w("    if sparse.issparse(X):")
		w("        return sparse.vstack([X[rows], X_sw[rows]]).tocsr(), np.concatenate([y[rows], y_sw[rows]])")
		w("    return np.vstack([X[rows], X_sw[rows]]), np.concatenate([y[rows], y_sw[rows]])")
		w("")
		w("def proba_rows(M, M_sw):")
		w("    # Average with the swapped pair's probabilities, their A and B columns swapped back.")
		w("    perm = [list(model.classes_).index(swap[c]) for c in model.classes_]")
		w("    return (model.predict_proba(M) + model.predict_proba(M_sw)[:, perm]) / 2")
	}
	w("")

	post := c.Opt("postprocess")
	w("model = " + ctor)
	if post == "calibrate" {
		w("model = calibration.CalibratedClassifierCV(model, cv=3, method=\"sigmoid\")")
	}
	heldOut := func(rows string) string {
		if aug == "none" {
			return fmt.Sprintf("model.predict_proba(X[%s])", rows)
		}
		return fmt.Sprintf("proba_rows(X[%[1]s], X_sw[%[1]s])", rows)
	}
	trainLoss := func(x, y string) {
		w("train_loss = metrics.log_loss(%s, model.predict_proba(%s), labels=model.classes_)", y, x)
	}
	switch v := c.Opt("validation"); v {
	case "none":
		w("X_fit, y_fit = augment(np.arange(len(y)))")
		w("model.fit(X_fit, y_fit)")
		trainLoss("X_fit", "y_fit")
		if post == "temperature" {
			w("fit_proba, fit_true = model.predict_proba(X_fit), y_fit")
		}
	case "holdout", "holdout-no-refit":
		w("rows_tr, rows_val = model_selection.train_test_split(np.arange(len(y)), test_size=0.2, random_state=0, stratify=y)")
		w("X_tr, y_tr = augment(rows_tr)")
		w("model.fit(X_tr, y_tr)")
		trainLoss("X_tr", "y_tr")
		w("proba_val = %s", heldOut("rows_val"))
		w("val_loss = metrics.log_loss(y[rows_val], proba_val, labels=model.classes_)")
		w("fit_proba, fit_true = proba_val, y[rows_val]")
		if v == "holdout" {
			w("X_fit, y_fit = augment(np.arange(len(y)))")
			w("model.fit(X_fit, y_fit)")
		}
	case "cv5":
		w("proba_oof = np.zeros((len(y), len(labels)))")
		w("folds = model_selection.StratifiedKFold(n_splits=5, shuffle=True, random_state=0)")
		w("for rows_tr, rows_val in folds.split(np.zeros(len(y)), y):")
		w("    X_tr, y_tr = augment(rows_tr)")
		w("    model.fit(X_tr, y_tr)")
		w("    proba_oof[rows_val] = %s", heldOut("rows_val"))
		w("cv_loss = metrics.log_loss(y, proba_oof, labels=model.classes_)")
		w("fit_proba, fit_true = proba_oof, y")
		w("X_fit, y_fit = augment(np.arange(len(y)))")
		w("model.fit(X_fit, y_fit)")
		trainLoss("X_fit", "y_fit")
	}
	w("")
	w("X_test = features(test, A, B)")
	w("proba_test = model.predict_proba(X_test)")
	if aug != "none" {
		w("X_test_sw = features(test, B, A)")
		w("perm = [list(model.classes_).index(swap[c]) for c in model.classes_]")
		w("proba_test = (proba_test + model.predict_proba(X_test_sw)[:, perm]) / 2")
	}
	w("proba = proba_test")
	switch post {
	case "clip":
		w("proba = np.clip(proba, 0.02, 0.98)")
		w("proba = proba / proba.sum(axis=1, keepdims=True)")
	case "clip-no-renorm":
		w("proba = np.clip(proba, 0.05, 0.95)")
	case "temperature":
		w("")
		w("def soften(p, t):")
		w("    q = np.clip(p, 1e-15, 1.0) ** (1.0 / t)")
		w("    return q / q.sum(axis=1, keepdims=True)")
		w("")
		w("temperature = min(np.linspace(0.5, 3.0, 26), key=lambda t: metrics.log_loss(fit_true, soften(fit_proba, t), labels=model.classes_))")
		w("proba = soften(proba, temperature)")
	case "sharpen":
		w("proba = proba ** 2")
		w("proba = proba / proba.sum(axis=1, keepdims=True)")
	}
	sub := c.Opt("submission")
	if sub == "hard-labels" {
		w("proba = np.eye(proba.shape[1])[proba.argmax(axis=1)]")
	}
	switch sub {
	case "aligned", "hard-labels", "no-id":
		w("order = [list(model.classes_).index(label) for label in labels]")
		w("sub = pd.DataFrame(proba[:, order], columns=TARGETS)")
	case "sample-columns":
		w("sub = pd.DataFrame(proba, columns=list(sample.columns[1:]))")
	case "model-classes":
		w("sub = pd.DataFrame(proba, columns=[str(c) for c in model.classes_])")
	}
	if sub != "no-id" {
		w("sub.insert(0, ID, test[ID].values)")
	}
	w("sub.to_csv(\"submission.csv\", index=False)")
	settings := "Model settings: defaults."
	if params != "" {
		settings = fmt.Sprintf("Model settings: %s.", params)
	}
	return Program{Plan: c.Plan(settings), Code: b.String()}
}
