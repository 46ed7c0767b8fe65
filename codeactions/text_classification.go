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
			{"no-sklearn", "", 0.2}, // fails at the label encoder
			{"no-pandas", "", 0.2},  // fails while loading
			{"no-scipy", "", 0.5},   // fails where sparse matrices are stacked
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder.", 6},
			{"cwd", "Load the files from the working directory.", 0.3},                               // wrong path: fails
			{"read-csv", "Load every file with pandas' CSV reader.", 0.3},                            // a JSON file read as CSV fails
			{"head-1000", "Load the data and keep the first 1000 training rows to iterate fast.", 1}, // weak
		}},
		{"text", []Option{
			{"none", "Join the text columns and keep them exactly as written, case included.", 3},
			{"lower", "Join the text columns and lowercase them.", 4},
			{"clean", "Join the text columns, lowercase them, replace escaped characters and links, and collapse whitespace.", 1},
			{"strip-punct", "Lowercase the text columns in place and strip their punctuation.", 0.3}, // cleans an id that is text
			{"first-column", "Use only the first text column.", 1},
			{"dataframe", "Give the vectoriser the text columns as a data frame.", 0.2}, // vectorises the column names: fails
		}},
		{"features", []Option{
			{"counts", "Count word unigrams.", 3},
			{"tfidf", "Weight word unigrams by TF-IDF.", 4},
			{"tfidf-12", "Weight word unigrams and bigrams by TF-IDF.", 2},
			{"char", "Weight character 2-5-grams within word boundaries by TF-IDF.", 1},
			{"word-char", "Stack TF-IDF word 1-2-grams and character 2-5-grams.", 0.5},
			{"hashing", "Hash word unigrams and bigrams into 2^18 features.", 0.5},
			{"refit-test", "Weight word unigrams and bigrams by TF-IDF, fitting the vectoriser on the test text for the test features.", 0.3},
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
			{"standardize", "Standardise the text features.", 0.2}, // cannot centre a sparse matrix: fails
			{"chi2-2k", "Keep the 2000 text features with the highest chi-squared score.", 1},
		}},
		{"numeric", []Option{
			{"none", "", 6},
			{"scaled", "Add the test file's numeric columns, standardised.", 1},
			{"log-scaled", "Add the test file's numeric columns, signed-log transformed and standardised.", 0.5},
			{"log1p", "Add the test file's numeric columns, log1p transformed and standardised.", 0.5}, // NaN from negative counts
			{"train-columns", "Add the train file's numeric columns, standardised.", 0.3},              // columns the test lacks: fails
			{"flags", "Add the test file's numeric columns, signed-log transformed and standardised, and flag categorical columns that differ from their most common value.", 0.5},
		}},
		{"model", []Option{
			{"naive-bayes", "Fit a multinomial naive Bayes model.", 2},
			{"gaussian-nb", "Fit a Gaussian naive Bayes model.", 0.2}, // dense data only
			{"logreg", "Fit a logistic regression.", 4},
			{"sgd", "Fit a logistic-loss linear model by stochastic gradient descent.", 1},
			{"linear-svc", "Fit a linear support vector classifier.", 0.3}, // no predict_proba: fails
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
			{"model-classes", "Write the model's classes as columns.", 0.3}, // encoded classes: invalid
			{"no-id", "Write the probabilities without the id column.", 0.3},
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

// textClsConstructor is the model's constructor call with its strength's parameters.
func textClsConstructor(model, params string, binary bool) string {
	scoring := "neg_log_loss"
	if binary {
		scoring = "roc_auc"
	}
	switch model {
	case "naive-bayes":
		return fmt.Sprintf("naive_bayes.MultinomialNB(%s)", params)
	case "gaussian-nb":
		return fmt.Sprintf("naive_bayes.GaussianNB(%s)", params)
	case "logreg":
		return fmt.Sprintf("linear_model.LogisticRegression(%s, max_iter=1000)", params)
	case "sgd":
		return fmt.Sprintf("linear_model.SGDClassifier(loss=\"log_loss\", %s, max_iter=200, tol=1e-4, random_state=0)", params)
	case "linear-svc":
		return fmt.Sprintf("svm.LinearSVC(%s, random_state=0)", params)
	case "calibrated-svc":
		return fmt.Sprintf("calibration.CalibratedClassifierCV(svm.LinearSVC(%s, random_state=0), cv=5)", params)
	case "grid-logreg":
		return fmt.Sprintf("model_selection.GridSearchCV(linear_model.LogisticRegression(max_iter=1000), {\"C\": %s}, cv=3, scoring=%q)", params, scoring)
	case "random-forest":
		return fmt.Sprintf("ensemble.RandomForestClassifier(%s, min_samples_leaf=2, random_state=0)", params)
	case "xgboost":
		return fmt.Sprintf("xgb.XGBClassifier(%s, max_depth=4, learning_rate=0.05, subsample=0.8, colsample_bytree=0.5, tree_method=\"hist\", n_jobs=1, random_state=0)", params)
	case "nbsvm":
		return fmt.Sprintf("NBSVMClassifier(%s)", params)
	case "stacking":
		// The SVC is ten times more regularised than the logistic models: its hinge loss
		// overfits the same C sooner.
		var c float64
		fmt.Sscanf(params, "C=%g", &c)
		return fmt.Sprintf("ensemble.StackingClassifier([(\"nbsvm\", NBSVMClassifier(%s)), (\"lr\", linear_model.LogisticRegression(%s, max_iter=1000)), "+
			"(\"svc\", calibration.CalibratedClassifierCV(svm.LinearSVC(C=%g, random_state=0), cv=3))], "+
			"final_estimator=linear_model.LogisticRegression(max_iter=1000), cv=5)", params, params, c/10)
	}
	panic("codeactions: text-classification has no model " + model)
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

// textClsNBSVM is the NB-SVM estimator (Wang and Manning 2012) as a scikit-learn classifier, so
// that cross-validation and stacking can clone it. Its features are binarised for the ratios,
// which keeps them finite whatever the sign of the features.
const textClsNBSVM = `
class NBSVMClassifier(base.BaseEstimator, base.ClassifierMixin):
    def __init__(self, C=1.0, alpha=1.0):
        self.C = C
        self.alpha = alpha

    def _ratio(self, X, mask):
        seen = X > 0
        p = self.alpha + np.asarray(seen[mask].sum(axis=0)).ravel()
        q = self.alpha + np.asarray(seen[~mask].sum(axis=0)).ravel()
        return np.log((p / p.sum()) / (q / q.sum()))

    def _scaled(self, X, r):
        return X.multiply(r).tocsr() if sparse.issparse(X) else X * r

    def fit(self, X, y):
        y = np.asarray(y)
        self.classes_ = np.unique(y)
        # One binary model per class; with two classes, one for the positive class.
        ks = self.classes_[1:] if len(self.classes_) == 2 else self.classes_
        self.ratios_, self.models_ = [], []
        for k in ks:
            r = self._ratio(X, y == k)
            lr = linear_model.LogisticRegression(C=self.C, max_iter=1000)
            self.ratios_.append(r)
            self.models_.append(lr.fit(self._scaled(X, r), y == k))
        return self

    def predict_proba(self, X):
        p = np.column_stack([m.predict_proba(self._scaled(X, r))[:, 1] for r, m in zip(self.ratios_, self.models_)])
        if len(self.classes_) == 2:
            return np.column_stack([1 - p[:, 0], p[:, 0]])
        return p / p.sum(axis=1, keepdims=True)

    def predict(self, X):
        return self.classes_[self.predict_proba(X).argmax(axis=1)]
`

func renderTextClassification(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := textClsStrengths[model][c.Strength()]
	binary := schema.Output == OutputProbabilities
	var b code
	w := b.w
	switch c.Opt("imports") {
	case "full", "no-scipy":
		w("import numpy as np")
		w("import pandas as pd")
		if c.Opt("imports") == "full" {
			w("from scipy import sparse")
		}
		w("from sklearn import base, calibration, decomposition, ensemble, feature_extraction, feature_selection")
		w("from sklearn import linear_model, metrics, model_selection, naive_bayes, preprocessing, svm")
		if model == "xgboost" {
			w("import xgboost as xgb")
		}
	case "no-sklearn":
		w("import numpy as np")
		w("import pandas as pd")
		w("from scipy import sparse")
	case "no-pandas":
		w("import numpy as np")
		w("from scipy import sparse")
		w("from sklearn import base, calibration, decomposition, ensemble, feature_extraction, feature_selection")
		w("from sklearn import linear_model, metrics, model_selection, naive_bayes, preprocessing, svm")
	}
	if model == "nbsvm" || model == "stacking" {
		b.WriteString(textClsNBSVM)
	}
	w("")
	w("ID, TARGET = %q, %q", schema.IDColumn, schema.Targets[0])
	w("TEXT = %s", textClsStrList(schema.Text))
	folder := "input/"
	if c.Opt("load") == "cwd" {
		folder = ""
	}
	for _, f := range []struct{ name, file string }{{"train", schema.Train}, {"test", schema.Test}, {"sample", schema.Sample}} {
		load := readTable(folder, f.file, "")
		if c.Opt("load") == "read-csv" {
			load = fmt.Sprintf("pd.read_csv(%q)", folder+f.file)
		}
		w("%s = %s", f.name, load)
	}
	if c.Opt("load") == "head-1000" {
		w("train = train.head(1000)")
	}
	w("")
	w("le = preprocessing.LabelEncoder()")
	w("y = le.fit_transform(train[TARGET])")
	w("classes = [str(k) for k in le.classes_]")
	w("")
	text := c.Opt("text")
	switch text {
	case "none", "lower", "clean":
		w("text_train = train[TEXT].fillna(\"\").astype(str).apply(\" \".join, axis=1)")
		w("text_test = test[TEXT].fillna(\"\").astype(str).apply(\" \".join, axis=1)")
		if text == "lower" {
			w("text_train, text_test = text_train.str.lower(), text_test.str.lower()")
		}
		if text == "clean" {
			w("")
			w("def clean(s):")
			w("    s = s.str.lower()")
			w("    s = s.str.replace(r\"\\\\+(?:x[0-9a-f]{2}|u[0-9a-f]{4}|n|t)\", \" \", regex=True)  # escaped characters")
			w("    s = s.str.replace(r\"https?://\\S+\", \" url \", regex=True)")
			w("    return s.str.replace(r\"\\s+\", \" \", regex=True).str.strip()")
			w("")
			w("text_train, text_test = clean(text_train), clean(text_test)")
		}
	case "strip-punct":
		w("for col in TEXT:")
		w("    train[col] = train[col].fillna(\"\").astype(str).str.lower().str.replace(r\"[^\\w\\s]\", \" \", regex=True)")
		w("    test[col] = test[col].fillna(\"\").astype(str).str.lower().str.replace(r\"[^\\w\\s]\", \" \", regex=True)")
		w("text_train = train[TEXT].apply(\" \".join, axis=1)")
		w("text_test = test[TEXT].apply(\" \".join, axis=1)")
	case "first-column":
		w("text_train = train[TEXT[0]].fillna(\"\").astype(str)")
		w("text_test = test[TEXT[0]].fillna(\"\").astype(str)")
	case "dataframe":
		w("text_train = train[TEXT]")
		w("text_test = test[TEXT]")
	}
	keepCase := text == "none"
	vocab := c.Opt("vocab")
	switch f := c.Opt("features"); f {
	case "word-char":
		w("word_vectorizer = %s", textClsVectorizer("word12", vocab, keepCase))
		w("char_vectorizer = %s", textClsVectorizer("char", vocab, keepCase))
		w("X = sparse.hstack([word_vectorizer.fit_transform(text_train), char_vectorizer.fit_transform(text_train)]).tocsr()")
		w("X_test = sparse.hstack([word_vectorizer.transform(text_test), char_vectorizer.transform(text_test)]).tocsr()")
	default:
		kind := map[string]string{"counts": "counts", "tfidf": "word", "tfidf-12": "word12", "char": "char",
			"hashing": "hashing", "refit-test": "word12"}[f]
		w("vectorizer = %s", textClsVectorizer(kind, vocab, keepCase))
		w("X = vectorizer.fit_transform(text_train)")
		if f == "refit-test" {
			w("X_test = vectorizer.fit_transform(text_test)")
		} else {
			w("X_test = vectorizer.transform(text_test)")
		}
	}
	dense := false
	switch c.Opt("reduce") {
	case "svd100", "svd300":
		dense = true
		w("svd = decomposition.TruncatedSVD(n_components=%s, random_state=0)", strings.TrimPrefix(c.Opt("reduce"), "svd"))
		w("X = svd.fit_transform(X)")
		w("X_test = svd.transform(X_test)")
	case "standardize":
		w("scaler = preprocessing.StandardScaler()")
		w("X = scaler.fit_transform(X)")
		w("X_test = scaler.transform(X_test)")
	case "chi2-2k":
		w("selector = feature_selection.SelectKBest(feature_selection.chi2, k=min(2000, X.shape[1]))")
		w("X = selector.fit_transform(X, y)")
		w("X_test = selector.transform(X_test)")
	}
	if num := c.Opt("numeric"); num != "none" {
		w("")
		if num == "train-columns" {
			w("num_cols = [c for c in train.select_dtypes(\"number\").columns if c != TARGET]")
		} else {
			w("num_cols = [c for c in test.select_dtypes(\"number\").columns if c != ID]")
		}
		w("N = train[num_cols].fillna(0).values.astype(float)")
		w("N_test = test[num_cols].fillna(0).values.astype(float)")
		w("if num_cols:")
		switch num {
		case "log-scaled", "flags":
			w("    N, N_test = np.sign(N) * np.log1p(np.abs(N)), np.sign(N_test) * np.log1p(np.abs(N_test))")
		case "log1p":
			w("    N, N_test = np.log1p(N), np.log1p(N_test)")
		}
		w("    scaler = preprocessing.StandardScaler().fit(N)")
		w("    N, N_test = scaler.transform(N), scaler.transform(N_test)")
		if num == "flags" {
			w("# Flag categorical values other than the most common (a known giver, any subreddit...).")
			w("for col in [c for c in test.columns if c != ID and c not in TEXT and test[c].dtype == object]:")
			w("    common = train[col].astype(str).mode()[0]")
			w("    N = np.column_stack([N, (train[col].astype(str) != common).values])")
			w("    N_test = np.column_stack([N_test, (test[col].astype(str) != common).values])")
		}
		if dense {
			w("X, X_test = np.hstack([X, N]), np.hstack([X_test, N_test])")
		} else {
			w("X = sparse.hstack([X, sparse.csr_matrix(N)]).tocsr()")
			w("X_test = sparse.hstack([X_test, sparse.csr_matrix(N_test)]).tocsr()")
		}
	}
	w("")
	if model == "xgboost" && !dense {
		w("X, X_test = X.astype(np.float32), X_test.astype(np.float32)")
	}
	w("model = %s", textClsConstructor(model, params, binary))
	// The metric the task is graded by, on the class probabilities p.
	loss := func(yv, p string) string {
		if binary {
			return fmt.Sprintf("metrics.roc_auc_score(%s, %s[:, 1])", yv, p)
		}
		return fmt.Sprintf("metrics.log_loss(%s, %s, labels=np.arange(len(classes)))", yv, p)
	}
	switch v := c.Opt("validation"); v {
	case "none":
		w("model.fit(X, y)")
		w("train_loss = %s", loss("y", "model.predict_proba(X)"))
	case "holdout", "holdout-no-refit":
		w("X_tr, X_val, y_tr, y_val = model_selection.train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)")
		w("model.fit(X_tr, y_tr)")
		w("train_loss = %s", loss("y_tr", "model.predict_proba(X_tr)"))
		w("val_loss = %s", loss("y_val", "model.predict_proba(X_val)"))
		if v == "holdout" {
			w("model.fit(X, y)")
		}
	case "cv5":
		w("folds = model_selection.StratifiedKFold(n_splits=5, shuffle=True, random_state=0)")
		w("oof = model_selection.cross_val_predict(model, X, y, cv=folds, method=\"predict_proba\")")
		w("cv_loss = %s", loss("y", "oof"))
		w("model.fit(X, y)")
		w("train_loss = %s", loss("y", "model.predict_proba(X)"))
	}
	w("")
	sub := c.Opt("submission")
	if sub == "hard-labels" {
		w("pred_test = model.predict(X_test)")
		w("proba = np.eye(len(classes))[pred_test]")
	} else {
		w("proba_test = model.predict_proba(X_test)")
		w("proba = proba_test")
	}
	switch sub {
	case "clip":
		w("proba = np.clip(proba, 0.02, 0.98)")
		w("proba = proba / proba.sum(axis=1, keepdims=True)")
	case "soften":
		w("proba = proba ** 0.7")
		w("proba = proba / proba.sum(axis=1, keepdims=True)")
	}
	// The predicted class for accuracy tasks: its name, or its code for "model-classes".
	label := schema.Output == OutputLabel
	switch {
	case sub == "model-classes" && label: // the encoded class as the label: valid, mostly wrong
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: model.classes_[proba.argmax(axis=1)]})")
	case sub == "model-classes": // encoded classes as column names: no target or class columns
		w("sub = pd.DataFrame(proba, columns=[str(k) for k in model.classes_])")
		w("sub.insert(0, ID, test[ID].values)")
	case sub == "no-id" && binary:
		w("sub = pd.DataFrame({TARGET: proba[:, -1]})")
	case sub == "no-id" && label:
		w("sub = pd.DataFrame({TARGET: le.classes_[proba.argmax(axis=1)]})")
	case sub == "no-id":
		w("sub = pd.DataFrame(proba, columns=classes)")
	case binary:
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: proba[:, -1]})")
	case label:
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: le.classes_[proba.argmax(axis=1)]})")
	default:
		w("sub = pd.DataFrame(proba, columns=classes)")
		w("sub.insert(0, ID, test[ID].values)")
		w("sub = sub[list(sample.columns)]")
	}
	w("sub.to_csv(\"submission.csv\", index=False)")
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", params)), Code: b.String()}
}

// textClsStrList writes a Python list of string literals.
func textClsStrList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
