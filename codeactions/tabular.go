package codeactions

import (
	"fmt"
	"strings"
)

// TabularClassification writes probability-submission programs for tabular classification.
var TabularClassification = &Library{
	Modality: "tabular-classification",
	Slots: []Slot{
		{"imports", []Option{
			{"full", ""},
			{"no-sklearn", ""}, // fails where the first estimator is named
			{"no-pandas", ""},  // fails while loading
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder."},
			{"cwd", "Load the CSV files from the working directory."}, // wrong path: fails
			{"index-col", "Load the CSV files with the id as the index."},
		}},
		{"target", []Option{
			{"label-encoder", "Encode the species labels as integers."},
			{"raw", "Keep the class labels as they are."},
			{"label-column", "Take the labels from the label column."}, // no such column: fails
		}},
		{"features", []Option{
			{"all", "Use every feature column."},
			{"with-id", "Use every column including the id."},
			{"first-half", "Use the first half of the feature columns."},
			{"second-half", "Use the second half of the feature columns."},
			{"every-other", "Use every other feature column."},
			{"top-variance", "Keep the half of the features with the highest variance."},
		}},
		{"transform", []Option{
			{"none", ""},
			{"standard", "Standardise the features."},
			{"minmax", "Scale the features to [0, 1]."},
			{"power", "Apply a Yeo-Johnson power transform."},
			{"pca32", "Standardise, then reduce to 32 principal components."},
			{"pca64-whiten", "Standardise, then reduce to 64 whitened principal components."},
			{"log1p", "Take log(1+x) of the features, then standardise."},
		}},
		{"model", []Option{
			{"logreg", "Fit a multinomial logistic regression."},
			{"knn", "Fit a distance-weighted k-nearest-neighbours classifier."},
			{"random-forest", "Fit a random forest."},
			{"extra-trees", "Fit an extra-trees ensemble."},
			{"lda", "Fit a shrinkage linear discriminant analysis."},
			{"qda", "Fit a regularised quadratic discriminant analysis."},
			{"naive-bayes", "Fit a Gaussian naive Bayes model."},
			{"svc", "Fit an RBF support vector classifier with probability estimates."},
			{"mlp", "Fit a small neural network."},
			{"xgboost", "Fit gradient-boosted trees with XGBoost."},
			{"linear-svc", "Fit a linear support vector classifier."}, // no predict_proba: fails
		}},
		{"strength", []Option{{"s0", ""}, {"s1", ""}, {"s2", ""}, {"s3", ""}, {"s4", ""}, {"s5", ""}}},
		{"validation", []Option{
			{"none", "Train on all the training data."},
			{"holdout", "Check the loss on a stratified 20% hold-out, then refit on everything."},
			{"holdout-no-refit", "Train on 80% and report the loss on a stratified 20% hold-out."},
			{"cv3", "Estimate the loss with 3-fold cross-validation, then refit on everything."},
		}},
		{"postprocess", []Option{
			{"none", ""},
			{"clip-1e-3", "Clip probabilities at 0.001 and renormalise."},
			{"clip-1e-2", "Clip probabilities at 0.01 and renormalise."},
			{"soften", "Soften the probabilities (square root, renormalised)."},
			{"sharpen", "Sharpen the probabilities (squared, renormalised)."},
			{"calibrate", "Calibrate the probabilities with 3-fold sigmoid calibration."},
		}},
		{"submission", []Option{
			{"aligned", "Write one probability column per class, in the sample submission's order."},
			{"model-classes", "Write the model's classes as columns."},
			{"hard-labels", "Write the predicted class as a one-hot row."},
			{"no-id", "Write the probabilities without the id column."},
		}},
	},
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
	"linear-svc":    {"C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0", "C=1000.0"},
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
	"linear-svc":    "svm.LinearSVC(%s)",
}

// Render writes the plan paragraph and the program for tokens.
func (l *Library) Render(tokens []int, schema Schema) (Program, error) {
	if l != TabularClassification {
		return Program{}, fmt.Errorf("rendering for %s is not implemented", l.Modality)
	}
	ch, err := l.Choices(tokens)
	if err != nil {
		return Program{}, err
	}
	opt := func(slot string) string {
		for i, s := range l.Slots {
			if s.Name == slot {
				return s.Options[ch[i]].Name
			}
		}
		panic("unknown slot " + slot)
	}
	var plan []string
	for i, s := range l.Slots {
		if p := s.Options[ch[i]].Plan; p != "" {
			plan = append(plan, p)
		}
	}
	model := opt("model")
	strength := int(opt("strength")[1] - '0')
	params := strengths[model][strength]
	plan = append(plan, fmt.Sprintf("Model settings: %s.", params))

	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	id, target := schema.IDColumn, schema.TargetColumn

	switch opt("imports") {
	case "full":
		w("import numpy as np")
		w("import pandas as pd")
		w("from sklearn import calibration, decomposition, discriminant_analysis, ensemble, linear_model")
		w("from sklearn import metrics, model_selection, naive_bayes, neighbors, neural_network, preprocessing, svm")
		if model == "xgboost" {
			w("import xgboost as xgb")
		}
	case "no-sklearn":
		w("import numpy as np")
		w("import pandas as pd")
	case "no-pandas":
		w("import numpy as np")
		w("from sklearn import calibration, decomposition, discriminant_analysis, ensemble, linear_model")
		w("from sklearn import metrics, model_selection, naive_bayes, neighbors, neural_network, preprocessing, svm")
	}
	w("")
	w("ID, TARGET = %q, %q", id, target)
	switch opt("load") {
	case "input":
		w("train = pd.read_csv(\"input/train.csv\")")
		w("test = pd.read_csv(\"input/test.csv\")")
		w("sample = pd.read_csv(\"input/sample_submission.csv\")")
	case "cwd":
		w("train = pd.read_csv(\"train.csv\")")
		w("test = pd.read_csv(\"test.csv\")")
		w("sample = pd.read_csv(\"sample_submission.csv\")")
	case "index-col":
		w("train = pd.read_csv(\"input/train.csv\", index_col=0)")
		w("test = pd.read_csv(\"input/test.csv\", index_col=0)")
		w("sample = pd.read_csv(\"input/sample_submission.csv\")")
	}
	w("")
	switch opt("target") {
	case "label-encoder":
		w("le = preprocessing.LabelEncoder()")
		w("y = le.fit_transform(train[TARGET])")
		w("classes = list(le.classes_)")
	case "raw":
		w("y = train[TARGET].values")
		w("classes = sorted(train[TARGET].unique())")
	case "label-column":
		w("y = train[\"label\"].values")
		w("classes = sorted(set(y))")
	}
	w("feats = [c for c in test.columns if c != ID]")
	switch opt("features") {
	case "with-id":
		w("feats = list(test.columns)")
	case "first-half":
		w("feats = feats[: len(feats) // 2]")
	case "second-half":
		w("feats = feats[len(feats) // 2 :]")
	case "every-other":
		w("feats = feats[::2]")
	case "top-variance":
		w("feats = list(train[feats].var().sort_values(ascending=False).index[: len(feats) // 2])")
	}
	w("X = train[feats].values.astype(float)")
	w("X_test = test[feats].values.astype(float)")
	switch opt("transform") {
	case "standard":
		w("scaler = preprocessing.StandardScaler().fit(X)")
	case "minmax":
		w("scaler = preprocessing.MinMaxScaler().fit(X)")
	case "power":
		w("scaler = preprocessing.PowerTransformer().fit(X)")
	case "pca32":
		w("scaler = preprocessing.StandardScaler().fit(X)")
		w("X, X_test = scaler.transform(X), scaler.transform(X_test)")
		w("scaler = decomposition.PCA(n_components=min(32, X.shape[1]), random_state=0).fit(X)")
	case "pca64-whiten":
		w("scaler = preprocessing.StandardScaler().fit(X)")
		w("X, X_test = scaler.transform(X), scaler.transform(X_test)")
		w("scaler = decomposition.PCA(n_components=min(64, X.shape[1]), whiten=True, random_state=0).fit(X)")
	case "log1p":
		w("X, X_test = np.log1p(X), np.log1p(X_test)")
		w("scaler = preprocessing.StandardScaler().fit(X)")
	}
	if opt("transform") != "none" {
		w("X, X_test = scaler.transform(X), scaler.transform(X_test)")
	}
	w("")
	w("model = "+constructors[model], params)
	if opt("postprocess") == "calibrate" {
		w("model = calibration.CalibratedClassifierCV(model, cv=3, method=\"sigmoid\")")
	}
	switch opt("validation") {
	case "none":
		w("model.fit(X, y)")
		w("train_loss = metrics.log_loss(y, model.predict_proba(X), labels=model.classes_)")
	case "holdout", "holdout-no-refit":
		w("X_tr, X_val, y_tr, y_val = model_selection.train_test_split(X, y, test_size=0.2, random_state=0, stratify=y)")
		w("model.fit(X_tr, y_tr)")
		w("train_loss = metrics.log_loss(y_tr, model.predict_proba(X_tr), labels=model.classes_)")
		w("val_loss = metrics.log_loss(y_val, model.predict_proba(X_val), labels=model.classes_)")
		if opt("validation") == "holdout" {
			w("model.fit(X, y)")
		}
	case "cv3":
		w("cv_loss = -model_selection.cross_val_score(model, X, y, cv=3, scoring=\"neg_log_loss\").mean()")
		w("model.fit(X, y)")
		w("train_loss = metrics.log_loss(y, model.predict_proba(X), labels=model.classes_)")
	}
	w("")
	if opt("submission") == "hard-labels" {
		w("pred_test = model.predict(X_test)")
		w("proba = np.eye(len(model.classes_))[[list(model.classes_).index(p) for p in pred_test]]")
	} else {
		w("proba_test = model.predict_proba(X_test)")
		w("proba = proba_test")
	}
	switch opt("postprocess") {
	case "clip-1e-3":
		w("proba = np.clip(proba, 1e-3, 1.0)")
	case "clip-1e-2":
		w("proba = np.clip(proba, 1e-2, 1.0)")
	case "soften":
		w("proba = np.sqrt(proba)")
	case "sharpen":
		w("proba = proba ** 2 + 1e-12")
	}
	w("proba = proba / proba.sum(axis=1, keepdims=True)")
	switch opt("submission") {
	case "aligned", "hard-labels":
		w("sub = pd.DataFrame(proba, columns=[str(c) for c in classes])")
		w("sub.insert(0, ID, test[ID].values)")
		w("sub = sub[list(sample.columns)]")
	case "model-classes":
		w("sub = pd.DataFrame(proba, columns=[str(c) for c in model.classes_])")
		w("sub.insert(0, ID, test[ID].values)")
	case "no-id":
		w("sub = pd.DataFrame(proba, columns=[str(c) for c in classes])")
		w("sub = sub[list(sample.columns)]")
	}
	w("sub.to_csv(\"submission.csv\", index=False)")
	return Program{Plan: strings.Join(plan, " "), Code: b.String()}, nil
}
