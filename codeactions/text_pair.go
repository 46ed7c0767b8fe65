package codeactions

import (
	"fmt"
	"strings"
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

var textPairConstructors = map[string]string{
	"mean":          "dummy.DummyRegressor(strategy=\"mean\")",
	"linear":        "linear_model.LinearRegression()",
	"ridge":         "linear_model.Ridge(%s)",
	"knn":           "neighbors.KNeighborsRegressor(%s)",
	"svr":           "svm.SVR(%s)",
	"random-forest": "ensemble.RandomForestRegressor(%s, min_samples_leaf=3, random_state=0)",
	"extra-trees":   "ensemble.ExtraTreesRegressor(%s, min_samples_leaf=3, random_state=0)",
	"gbr":           "ensemble.GradientBoostingRegressor(%s, max_depth=3, learning_rate=0.05, subsample=0.8, random_state=0)",
	"hist-gbm":      "ensemble.HistGradientBoostingRegressor(%s, learning_rate=0.05, random_state=0)",
	"xgboost":       "xgb.XGBRegressor(%s, max_depth=6, learning_rate=0.03, subsample=0.8, colsample_bytree=0.8, tree_method=\"hist\", n_jobs=1, random_state=0)",
	"logreg":        "linear_model.LogisticRegression(%s, max_iter=1000)",
	"stacking": "ensemble.StackingRegressor([(\"ridge\", linear_model.Ridge(alpha=1.0)), " +
		"(\"rf\", ensemble.RandomForestRegressor(%[1]s, min_samples_leaf=3, random_state=0)), " +
		"(\"xgb\", xgb.XGBRegressor(%[1]s, max_depth=6, learning_rate=0.03, subsample=0.8, tree_method=\"hist\", n_jobs=1, random_state=0))], " +
		"final_estimator=linear_model.RidgeCV(), cv=3)",
	"grid-xgb": "model_selection.GridSearchCV(xgb.XGBRegressor(learning_rate=0.03, subsample=0.8, colsample_bytree=0.8, tree_method=\"hist\", n_jobs=1, random_state=0), " +
		"{\"max_depth\": %s}, cv=3, scoring=\"neg_mean_squared_error\")",
}

// textPairFeatureCode is each feature option's features(df) function body (df holds the
// cleaned phrases in columns A and B).
var textPairFeatureCode = map[string][]string{
	"char-cosine": {"return np.column_stack([cosine(char_vectorizer, df)])"},
	"word-cosine": {"return np.column_stack([cosine(word_vectorizer, df)])"},
	"overlap": {
		"wa, wb = df[A].str.split().apply(set), df[B].str.split().apply(set)",
		"inter = np.array([len(x & y) for x, y in zip(wa, wb)], dtype=float)",
		"union = np.array([len(x | y) for x, y in zip(wa, wb)], dtype=float)",
		"dlen = (df[A].str.len() - df[B].str.len()).values",
		"return np.column_stack([inter / np.maximum(union, 1), inter, dlen, np.abs(dlen), wa.apply(len) - wb.apply(len)])",
	},
	"difflib": {
		"ms = [difflib.SequenceMatcher(None, a, b) for a, b in zip(df[A], df[B])]",
		"ratio = [m.ratio() for m in ms]",
		"block = [m.find_longest_match(0, len(m.a), 0, len(m.b)).size / max(len(m.a), len(m.b), 1) for m in ms]",
		"return np.column_stack([ratio, block])",
	},
	"all": {
		"wa, wb = df[A].str.split().apply(set), df[B].str.split().apply(set)",
		"inter = np.array([len(x & y) for x, y in zip(wa, wb)], dtype=float)",
		"union = np.array([len(x | y) for x, y in zip(wa, wb)], dtype=float)",
		"la, lb = df[A].str.len().values, df[B].str.len().values",
		"ms = [difflib.SequenceMatcher(None, a, b) for a, b in zip(df[A], df[B])]",
		"ratio = [m.ratio() for m in ms]",
		"block = [m.find_longest_match(0, len(m.a), 0, len(m.b)).size / max(len(m.a), len(m.b), 1) for m in ms]",
		"prefix = [len(os.path.commonprefix([a, b])) / max(min(len(a), len(b)), 1) for a, b in zip(df[A], df[B])]",
		"contains = [float(a in b or b in a) for a, b in zip(df[A], df[B])]",
		"head = [float(a.split()[-1:] == b.split()[-1:]) for a, b in zip(df[A], df[B])]",
		"first = [float(a.split()[:1] == b.split()[:1]) for a, b in zip(df[A], df[B])]",
		"return np.column_stack([cosine(char_vectorizer, df), cosine(char35_vectorizer, df), cosine(word_vectorizer, df),",
		"                        inter / np.maximum(union, 1), inter, wa.apply(len), wb.apply(len), la, lb, la - lb,",
		"                        np.abs(la - lb) / np.maximum(np.maximum(la, lb), 1), ratio, block, prefix, contains, head, first])",
	},
	"tfidf-product": {
		"shared_chars = char_vectorizer.transform(df[A]).multiply(char_vectorizer.transform(df[B]))",
		"shared_words = word_vectorizer.transform(df[A]).multiply(word_vectorizer.transform(df[B]))",
		"cosines = np.column_stack([cosine(char_vectorizer, df), cosine(word_vectorizer, df)])",
		"return sparse.hstack([shared_chars, shared_words, sparse.csr_matrix(cosines)]).tocsr()",
	},
	"raw-text": {"return df[[A, B]].values"},
}

func renderTextPair(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := textPairStrengths[model][c.Strength()]
	feats, ctxOpt, target := c.Opt("features"), c.Opt("context"), c.Opt("target")
	sparseX := feats == "tfidf-product"
	usesXGB := model == "xgboost" || model == "stacking" || model == "grid-xgb"
	ctxCol := ""
	if len(schema.Text) > 2 {
		ctxCol = schema.Text[2]
	}
	if ctxCol == "" && ctxOpt != "raw-string" {
		ctxOpt = "none" // a task without a context column: nothing to encode
	}
	var b code
	w := b.w
	switch c.Opt("imports") {
	case "full":
		w("import difflib")
		w("import os")
		w("import numpy as np")
		w("import pandas as pd")
		w("from scipy import sparse")
		w("from sklearn import dummy, ensemble, linear_model, metrics, model_selection, neighbors, preprocessing, svm")
		w("from sklearn.feature_extraction.text import TfidfVectorizer")
	case "no-sklearn":
		w("import difflib")
		w("import os")
		w("import numpy as np")
		w("import pandas as pd")
		w("from scipy import sparse")
	case "no-pandas":
		w("import difflib")
		w("import os")
		w("import numpy as np")
		w("from scipy import sparse")
		w("from sklearn import dummy, ensemble, linear_model, metrics, model_selection, neighbors, preprocessing, svm")
		w("from sklearn.feature_extraction.text import TfidfVectorizer")
	}
	if usesXGB {
		w("import xgboost as xgb")
	}
	if c.Opt("preprocess") == "nltk" {
		w("from nltk.stem import PorterStemmer")
	}
	w("")
	w("ID, TARGET = %q, %q", schema.IDColumn, schema.Targets[0])
	if ctxCol != "" {
		w("A, B, CTX = %q, %q, %q", schema.Text[0], schema.Text[1], ctxCol)
	} else {
		w("A, B, CTX = %q, %q, None", schema.Text[0], textPairSecond(schema))
	}
	loadTables(&b, c.Opt("load"), schema)
	w("")

	// Clean the phrases.
	switch c.Opt("preprocess") {
	case "lower":
		w("def clean(s):")
		w("    return s.fillna(\"\").astype(str).str.lower().str.strip()")
	case "none":
		w("def clean(s):")
		w("    return s.fillna(\"\").astype(str)")
	case "stem":
		w("def stem(word):")
		w("    for suffix in (\"ing\", \"ed\", \"es\", \"s\"):")
		w("        if word.endswith(suffix) and len(word) > len(suffix) + 2:")
		w("            return word[: -len(suffix)]")
		w("    return word")
		w("")
		w("def clean(s):")
		w("    return s.fillna(\"\").astype(str).str.lower().apply(lambda p: \" \".join(stem(x) for x in p.split()))")
	case "nltk":
		w("stemmer = PorterStemmer()")
		w("def clean(s):")
		w("    return s.fillna(\"\").astype(str).str.lower().apply(lambda p: \" \".join(stemmer.stem(x) for x in p.split()))")
	}
	w("")
	w("for df in (train, test):")
	w("    df[A], df[B] = clean(df[A]), clean(df[B])")
	if ctxOpt == "as-text" {
		w("    df[A] = df[CTX].str.lower() + \" \" + df[A]")
		w("    df[B] = df[CTX].str.lower() + \" \" + df[B]")
	}
	w("")

	// Pair features.
	if feats != "raw-text" {
		w("phrases = pd.concat([train[A], train[B]])")
		w("char_vectorizer = TfidfVectorizer(analyzer=\"char_wb\", ngram_range=(2, 4)).fit(phrases)")
		if feats == "all" {
			w("char35_vectorizer = TfidfVectorizer(analyzer=\"char_wb\", ngram_range=(3, 5)).fit(phrases)")
		}
		w("word_vectorizer = TfidfVectorizer(token_pattern=r\"\\w+\").fit(phrases)")
		w("")
		w("def cosine(vectorizer, df):")
		w("    # the TF-IDF rows are L2-normalised, so the dot product is the cosine")
		w("    return np.asarray(vectorizer.transform(df[A]).multiply(vectorizer.transform(df[B])).sum(axis=1)).ravel()")
		w("")
	}
	w("def features(df):")
	for _, line := range textPairFeatureCode[feats] {
		w("    %s", line)
	}
	w("")
	w("X = features(train)")
	w("X_test = features(test)")

	// The context.
	ctxMatrix := true
	switch ctxOpt {
	case "onehot":
		w("ctx_encoder = preprocessing.OneHotEncoder(handle_unknown=\"ignore\").fit(train[[CTX]])")
		w("C, C_test = ctx_encoder.transform(train[[CTX]]).toarray(), ctx_encoder.transform(test[[CTX]]).toarray()")
	case "onehot-separate":
		w("C, C_test = pd.get_dummies(train[CTX]).values.astype(float), pd.get_dummies(test[CTX]).values.astype(float)")
	case "section":
		w("sections = np.array(sorted(train[CTX].str[0].unique()))")
		w("C = (train[CTX].str[0].values[:, None] == sections).astype(float)")
		w("C_test = (test[CTX].str[0].values[:, None] == sections).astype(float)")
	case "target-mean":
		w("prior = train[TARGET].mean()")
		w("ctx_stats = train.groupby(CTX)[TARGET].agg([\"sum\", \"count\"])")
		w("ctx_mean = (ctx_stats[\"sum\"] + 10 * prior) / (ctx_stats[\"count\"] + 10)")
		w("C = train[CTX].map(ctx_mean).fillna(prior).values[:, None]")
		w("C_test = test[CTX].map(ctx_mean).fillna(prior).values[:, None]")
	case "raw-string":
		if ctxCol == "" {
			w("C, C_test = train[[A]].values, test[[A]].values")
		} else {
			w("C, C_test = train[[CTX]].values, test[[CTX]].values")
		}
	default:
		ctxMatrix = false
	}
	if ctxMatrix {
		if sparseX {
			w("X = sparse.hstack([X, sparse.csr_matrix(C)]).tocsr()")
			w("X_test = sparse.hstack([X_test, sparse.csr_matrix(C_test)]).tocsr()")
		} else {
			w("X, X_test = np.hstack([X, C]), np.hstack([X_test, C_test])")
		}
	}
	w("")

	// The target and its inverse.
	inverse := ""
	switch target {
	case "score":
		w("y = train[TARGET].values.astype(float)")
	case "classes":
		w("y = np.round(train[TARGET].values * 4).astype(int)")
		inverse = "pred = pred / 4"
	case "binary":
		w("y = (train[TARGET].values >= 0.5).astype(int)")
	case "square":
		w("y = train[TARGET].values.astype(float) ** 2")
		inverse = "pred = np.sqrt(pred)"
	case "logit":
		w("p = np.clip(train[TARGET].values.astype(float), 0.05, 0.95)")
		w("y = np.log(p / (1 - p))")
		inverse = "pred = 1 / (1 + np.exp(-pred))"
	case "wrong-column":
		w("y = train[\"similarity\"].values.astype(float)")
	}
	w("")
	ctor := textPairConstructors[model]
	if strings.Contains(ctor, "%") {
		ctor = fmt.Sprintf(ctor, params)
	}
	w("model = %s", ctor)

	switch c.Opt("validation") {
	case "none":
		w("model.fit(X, y)")
		w("train_loss = metrics.mean_squared_error(y, model.predict(X))")
	case "holdout", "holdout-no-refit":
		w("X_tr, X_val, y_tr, y_val = model_selection.train_test_split(X, y, test_size=0.2, random_state=0)")
		w("model.fit(X_tr, y_tr)")
		w("train_loss = metrics.mean_squared_error(y_tr, model.predict(X_tr))")
		w("pred_val = model.predict(X_val)")
		w("val_loss = metrics.mean_squared_error(y_val, pred_val)")
		w("print(\"validation pearson\", np.corrcoef(y_val, pred_val)[0, 1])")
		if c.Opt("validation") == "holdout" {
			w("model.fit(X, y)")
		}
	case "cv3":
		w("model.fit(X, y)")
		w("train_loss = metrics.mean_squared_error(y, model.predict(X))")
		w("pred_cv = model_selection.cross_val_predict(model, X, y, cv=3)")
		w("cv_loss = metrics.mean_squared_error(y, pred_cv)")
		w("print(\"cross-validated pearson\", np.corrcoef(y, pred_cv)[0, 1])")
	case "cv-old-scoring":
		w("model.fit(X, y)")
		w("train_loss = metrics.mean_squared_error(y, model.predict(X))")
		w("cv_mse = -model_selection.cross_val_score(model, X, y, cv=3, scoring=\"mean_squared_error\").mean()")
		w("print(\"cv mse\", cv_mse)")
	case "holdout-msle":
		w("X_tr, X_val, y_tr, y_val = model_selection.train_test_split(X, y, test_size=0.2, random_state=0)")
		w("model.fit(X_tr, y_tr)")
		w("train_loss = metrics.mean_squared_log_error(y_tr, model.predict(X_tr))")
		w("val_loss = metrics.mean_squared_log_error(y_val, model.predict(X_val))")
	}
	w("")
	w("pred_test = model.predict(X_test)")
	w("pred = pred_test.astype(float)")
	if inverse != "" {
		w(inverse)
	}
	switch c.Opt("postprocess") {
	case "clip":
		w("pred = np.clip(pred, 0, 1)")
	case "round-quarter":
		w("pred = np.round(pred * 4) / 4")
	case "round":
		w("pred = np.round(pred)")
	case "minmax":
		w("pred = (pred - pred.min()) / (pred.max() - pred.min())")
	}
	switch c.Opt("submission") {
	case "frame":
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: pred})")
	case "sample":
		w("sub = sample.copy()")
		w("sub[TARGET] = pred")
	case "no-id":
		w("sub = pd.DataFrame({TARGET: pred})")
	case "prediction-column":
		w("sub = pd.DataFrame({ID: test[ID].values, \"prediction\": pred})")
	}
	w("sub.to_csv(\"submission.csv\", index=False)")
	settings := "defaults"
	if params != "" {
		settings = params
	}
	if model == "grid-xgb" {
		settings = "max_depth in " + params
	}
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", settings)), Code: b.String()}
}

// textPairSecond is the second phrase's column (the first text column again when the task
// names only one, so the program still renders).
func textPairSecond(s Schema) string {
	if len(s.Text) > 1 {
		return s.Text[1]
	}
	return s.Text[0]
}
