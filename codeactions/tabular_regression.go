package codeactions

import (
	"fmt"
	"strings"
)

// TabularRegression writes programs that predict one number per target column (nomad2018's
// formation and bandgap energies): one model per target or one multi-output model, a target
// transform, optional per-row geometry files, and post-processing that keeps RMSLE defined.
var TabularRegression = register(&Library{
	Modality: "tabular-regression",
	Slots: []Slot{
		{"setup", []Option{
			{"full", "Import numpy, pandas, scikit-learn and XGBoost, and load train, test and the sample submission from the input folder.", 8},
			{"no-xgboost", "Import numpy, pandas and scikit-learn, and load the CSV files from the input folder.", 0.5}, // xgb undefined: fails defining an XGBoost model
			{"no-sklearn", "Import numpy, pandas and XGBoost, and load the CSV files from the input folder.", 0.2},      // fails at the first sklearn module used
			{"no-pandas", "Import numpy and scikit-learn, and load the CSV files from the input folder.", 0.2},          // fails while loading
			{"cwd", "Import the usual libraries and load the CSV files from the working directory.", 0.3},               // wrong path: fails while loading
			{"index-col", "Import the usual libraries and load the CSV files with the id as the index.", 0.3},           // no id column where it is used
		}},
		{"features", []Option{
			{"all", "Use every feature column.", 6},
			{"with-id", "Use every column including the id.", 2},
			{"train-columns", "Use every column of the training file except the id.", 0.3}, // includes the targets: test lacks them
			{"top-variance", "Keep the half of the features with the highest variance.", 1},
			{"crosses", "Add the pairwise products of the 8 highest-variance features.", 1},
			{"geometry", "Add the cell's volume and density, nearest-neighbour distances per element, and cation-oxygen bond lengths and coordination numbers, computed from each row's geometry.xyz with periodic images.", 3},
			{"geometry-no-pbc", "Add the same geometry features computed from each row's geometry.xyz without periodic images.", 0.5}, // no periodic images: noisier
			// geometry's weight: where a task ships per-row structure files its description
			// says so, and a model that reads it parses them; at 0.5 a nomad run drew it twice
			// in 72 programs. Where a task has none the option adds nothing (see the guard).
		}},
		// String columns are always encoded (ordinal codes under raw); the slot decides how
		// those and the low-cardinality numeric columns (such as the space group) enter.
		{"categorical", []Option{
			{"raw", "", 6},
			{"one-hot", "One-hot encode the categorical and low-cardinality integer columns.", 2},
			{"frequency", "Encode the categorical and low-cardinality columns by each category's frequency.", 1},
			{"drop", "Drop the categorical and low-cardinality columns.", 1},
		}},
		{"transform", []Option{
			{"none", "", 5},
			{"standard", "Standardise the features.", 3},
			{"minmax", "Scale the features to [0, 1].", 1},
			{"power", "Apply a Yeo-Johnson power transform to the features.", 1},
			{"pca-half", "Standardise, then keep half as many principal components as features.", 1},
			{"log1p", "Take log(1+x) of the features.", 1},
		}},
		{"target", []Option{
			{"none", "", 4},
			{"log1p", "Fit on log(1+y), which makes squared error match RMSLE, and invert with expm1.", 3},
			{"sqrt", "Fit on the square root of the targets and square the predictions.", 1},
			{"log", "Fit on log(y) and exponentiate the predictions.", 0.3}, // log(0) = -inf: fails where a target is 0
			{"log1p-no-inverse", "Fit on log(1+y) to match RMSLE.", 1},      // forgets expm1: valid but bad
		}},
		{"outputs", []Option{
			{"per-target", "Fit one model per target column.", 4},
			{"multi-output", "Fit one model on all target columns at once.", 2}, // fails for single-output models
			{"wrapper", "Wrap the model in a multi-output regressor, one copy per target column.", 1},
			{"first-only", "Predict the target column.", 0.5}, // only the first target: the submission lacks the others
		}},
		{"model", []Option{
			{"mean", "Predict the training mean.", 1},
			{"linear", "Fit a linear regression.", 4},
			{"ridge", "Fit a ridge regression.", 2},
			{"lasso", "Fit a lasso regression.", 1},
			{"knn", "Fit a distance-weighted k-nearest-neighbours regressor.", 1},
			{"svr", "Fit an RBF support vector regressor.", 1},
			{"random-forest", "Fit a random forest.", 4},
			{"extra-trees", "Fit an extra-trees ensemble.", 1},
			{"gbr", "Fit scikit-learn's gradient boosting.", 2},
			{"hist-gb", "Fit histogram gradient boosting.", 2},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 3},
			{"logistic", "Fit a logistic regression.", 0.3}, // continuous targets: fails at fit
			{"stacking", "Stack XGBoost, extra trees and k-nearest neighbours under a ridge regression.", 0.5},
			{"grid-xgb", "Grid-search XGBoost's depth and learning rate by 3-fold cross-validated squared error.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training data.", 5},
			{"holdout", "Check the loss on a 20% hold-out, then refit on everything.", 2},
			{"holdout-no-refit", "Train on 80% and report the loss on a 20% hold-out.", 2},
			{"kfold", "Estimate the loss with 5-fold cross-validation, then refit on everything.", 1},
			{"holdout-rmse", "Check the root mean squared error on a 20% hold-out, then refit on everything.", 2},
		}},
		{"postprocess", []Option{
			{"none", "", 2},
			{"clip0", "Clip negative predictions to 0.", 5},
			{"abs", "Take the absolute value of the predictions.", 1},
			{"round1", "Round the predictions to one decimal.", 1},
		}},
		{"submission", []Option{
			{"aligned", "Write the id and one column per target.", 4},
			{"sample", "Fill the sample submission's target columns.", 2},
			{"no-id", "Write one column per target without the id.", 2},
			{"long-format", "Write one row per id and target.", 0.3}, // no target columns: invalid
		}},
	},
	Tunable:     []string{"transform", "strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly:  []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "kfold", "holdout-rmse"}}},
	// RMSLE refuses a negative prediction (the clash rule below); clipping at 0 moves only those.
	Guards: []Guard{{Slot: "postprocess", Unsafe: "none", Safe: "clip0",
		When: func(s Schema) bool { return s.Metric == "mean-column-rmsle" }}},
	Clashes: tabularRegressionClashes,
	render:  renderTabularRegression,
})

// tabularRegressionClashes are the library's intended clashes, read off its renderer.
var tabularRegressionClashes = []ClashRule{
	{Reason: "scikit-learn is not imported: fails at the first sklearn module used",
		When: func(c Choice, s Schema) bool { return c.Is("setup", "no-sklearn") }},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("setup", "no-pandas") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("setup", "cwd") }},
	{Reason: "xgboost is not imported: fails defining an XGBoost model",
		When: func(c Choice, s Schema) bool {
			return c.Is("setup", "no-xgboost") && tabRegUsesXGB[c.Opt("model")]
		}},
	{Reason: "the id column became the index: fails writing the id",
		When: func(c Choice, s Schema) bool {
			return c.Is("setup", "index-col") && !jsonTables(s) && c.Is("submission", "aligned", "long-format")
		}},
	{Reason: "the id column became the index: fails reading each row's geometry file by id (where the task has them)",
		DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return c.Is("setup", "index-col") && !jsonTables(s) && c.Is("features", "geometry", "geometry-no-pbc")
		}},
	{Reason: "the train's columns include the targets, which the test lacks",
		When: func(c Choice, s Schema) bool { return c.Is("features", "train-columns") }},
	{Reason: "log of a target of 0 is -inf: fails at fit", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("target", "log") }},
	{Reason: "the square root or log1p of a negative target is NaN", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			// RMSLE's targets are never negative.
			return c.Is("target", "sqrt", "log1p", "log1p-no-inverse") && s.Metric != "mean-column-rmsle"
		}},
	{Reason: "a single-output model fit on several target columns at once",
		When: func(c Choice, s Schema) bool {
			return c.Is("outputs", "multi-output") && len(s.Targets) > 1 && c.Is("model", "svr", "gbr", "hist-gb", "stacking")
		}},
	{Reason: "only the first target is predicted: the submission lacks the others",
		When: func(c Choice, s Schema) bool {
			return c.Is("outputs", "first-only") && len(s.Targets) > 1 && c.Is("submission", "aligned", "no-id")
		}},
	{Reason: "LogisticRegression refuses continuous targets",
		When: func(c Choice, s Schema) bool {
			return c.Is("model", "logistic") && (!s.Integer || !c.Is("target", "none"))
		}},
	{Reason: "LogisticRegression on whole-number targets", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("model", "logistic") }},
	{Reason: "long format: no target columns",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "long-format") }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
	{Reason: "a model that extrapolates can predict below 0, which RMSLE refuses (unless clipped)", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return s.Metric == "mean-column-rmsle" && c.Is("postprocess", "none", "round1") &&
				c.Is("target", "none", "log1p", "log1p-no-inverse") &&
				!c.Is("model", "mean", "knn", "random-forest", "extra-trees")
		}},
}

// tabRegXGB are XGBoost's rounds and learning rate by strength: more rounds, slower learning.
var tabRegXGB = [6]string{
	"n_estimators=30, learning_rate=0.1", "n_estimators=100, learning_rate=0.1", "n_estimators=300, learning_rate=0.05",
	"n_estimators=600, learning_rate=0.03", "n_estimators=1000, learning_rate=0.02", "n_estimators=3000, learning_rate=0.01",
}

// tabRegStrengths are each model's hyper-parameters at strength s0..s5.
var tabRegStrengths = map[string][6]string{
	"mean":          {`strategy="median"`, `strategy="median"`, `strategy="mean"`, `strategy="mean"`, `strategy="mean"`, `strategy="mean"`},
	"linear":        {"", "", "", "", "", ""},
	"ridge":         {"alpha=100.0", "alpha=30.0", "alpha=10.0", "alpha=1.0", "alpha=0.1", "alpha=0.01"},
	"lasso":         {"alpha=1.0", "alpha=0.1", "alpha=0.01", "alpha=0.001", "alpha=0.0001", "alpha=1e-05"},
	"knn":           {"n_neighbors=1", "n_neighbors=2", "n_neighbors=3", "n_neighbors=5", "n_neighbors=10", "n_neighbors=20"},
	"svr":           {"C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0", "C=30.0"},
	"random-forest": {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"extra-trees":   {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"gbr":           tabRegXGB,
	"hist-gb": {"max_iter=30, learning_rate=0.1", "max_iter=100, learning_rate=0.1", "max_iter=300, learning_rate=0.05",
		"max_iter=600, learning_rate=0.03", "max_iter=1000, learning_rate=0.02", "max_iter=3000, learning_rate=0.01"},
	"xgboost":  tabRegXGB,
	"logistic": {"C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0", "C=1000.0"},
	// Stacking: the trees of each tree ensemble in it.
	"stacking": {"n_estimators=10", "n_estimators=30", "n_estimators=100", "n_estimators=200", "n_estimators=300", "n_estimators=500"},
	// The grid search: XGBoost's rounds, then the grid searched.
	"grid-xgb": {
		`n_estimators=100), {"max_depth": [2, 4]`,
		`n_estimators=200), {"max_depth": [3, 5], "learning_rate": [0.05, 0.1]`,
		`n_estimators=300), {"max_depth": [3, 4, 5], "learning_rate": [0.03, 0.05]`,
		`n_estimators=500), {"max_depth": [3, 4, 5], "learning_rate": [0.02, 0.05]`,
		`n_estimators=600), {"max_depth": [3, 4, 5, 6], "learning_rate": [0.02, 0.05]`,
		`n_estimators=1000), {"max_depth": [3, 4, 5], "learning_rate": [0.02, 0.04]`,
	},
}

// tabRegConstructors take the strength's parameters (%[1]s, possibly used more than once).
var tabRegConstructors = map[string]string{
	"mean":          "dummy.DummyRegressor(%s)",
	"linear":        "linear_model.LinearRegression(%s)",
	"ridge":         "linear_model.Ridge(%s)",
	"lasso":         "linear_model.Lasso(%s, max_iter=10000)",
	"knn":           "neighbors.KNeighborsRegressor(%s, weights=\"distance\")",
	"svr":           "svm.SVR(%s, epsilon=0.01)",
	"random-forest": "ensemble.RandomForestRegressor(%s, random_state=0)",
	"extra-trees":   "ensemble.ExtraTreesRegressor(%s, random_state=0)",
	"gbr":           "ensemble.GradientBoostingRegressor(%s, max_depth=4, subsample=0.8, random_state=0)",
	"hist-gb":       "ensemble.HistGradientBoostingRegressor(%s, random_state=0)",
	"xgboost":       "xgb.XGBRegressor(%s, max_depth=4, subsample=0.8, colsample_bytree=0.8, n_jobs=1, random_state=0)",
	"logistic":      "linear_model.LogisticRegression(%s, max_iter=1000)",
	"stacking": "ensemble.StackingRegressor([(\"xgb\", xgb.XGBRegressor(%[1]s, learning_rate=0.05, max_depth=4, subsample=0.8, " +
		"colsample_bytree=0.8, n_jobs=1, random_state=0)), (\"et\", ensemble.ExtraTreesRegressor(%[1]s, random_state=0)), " +
		"(\"knn\", neighbors.KNeighborsRegressor(n_neighbors=10, weights=\"distance\"))], final_estimator=linear_model.RidgeCV(), cv=5)",
	"grid-xgb": "model_selection.GridSearchCV(xgb.XGBRegressor(subsample=0.8, colsample_bytree=0.8, n_jobs=1, random_state=0, %s}, " +
		"cv=3, scoring=\"neg_mean_squared_error\")",
}

// tabRegUsesXGB are the models whose code names xgb.
var tabRegUsesXGB = map[string]bool{"xgboost": true, "stacking": true, "grid-xgb": true}

// tabRegTransforms are each transform's pipeline steps, between the columns and the model.
var tabRegTransforms = map[string]string{
	"none":     "",
	"standard": "preprocessing.StandardScaler(), ",
	"minmax":   "preprocessing.MinMaxScaler(), ",
	"power":    "preprocessing.PowerTransformer(), ",
	"pca-half": "preprocessing.StandardScaler(), decomposition.PCA(n_components=max(1, width // 2), random_state=0), ",
	"log1p":    "preprocessing.FunctionTransformer(signed_log1p), ",
}

// tabRegNaN are the regressors that take missing values themselves: their numeric columns are
// not imputed, unless a PCA (which cannot) comes first.
var tabRegNaN = map[string]bool{"xgboost": true, "hist-gb": true, "grid-xgb": true}

// tabRegCapped are the regressors whose cost grows with the square of the rows (an RBF SVR's,
// k-nearest neighbours' on a test as large as the train, a stack's refits), and the rows each
// is fitted on at most, so that a table of 10^5 rows finishes in a task's time.
var tabRegCapped = map[string]int{"svr": 5000, "knn": 20000, "stacking": 20000}

func renderTabularRegression(c Choice, schema Schema) Program {
	model, outputs := c.Opt("model"), c.Opt("outputs")
	params := tabRegStrengths[model][c.Strength()]
	targets := schema.Targets
	if outputs == "first-only" {
		targets = targets[:1]
	}
	load := "input"
	switch c.Opt("setup") {
	case "cwd", "index-col":
		load = c.Opt("setup")
	}
	var tables code
	loadTables(&tables, load, schema)
	// The target transform, its inverse and the post-processing, shared by validation and test.
	fwd, inv := "y", "p"
	switch c.Opt("target") {
	case "log1p":
		fwd, inv = "np.log1p(y)", "np.expm1(p)"
	case "log1p-no-inverse":
		fwd = "np.log1p(y)"
	case "sqrt":
		fwd, inv = "np.sqrt(y)", "np.square(p)"
	case "log":
		fwd, inv = "np.log(y)", "np.exp(p)"
	}
	post := "p"
	switch c.Opt("postprocess") {
	case "clip0":
		post = "np.clip(p, 0, None)"
	case "abs":
		post = "np.abs(p)"
	case "round1":
		post = "np.round(p, 1)"
	}
	if schema.Integer {
		post = "np.round(" + post + ")"
	}
	estimator := fmt.Sprintf(tabRegConstructors[model], params)
	if n := tabRegCapped[model]; n > 0 {
		estimator = fmt.Sprintf("Subsampled(%s, %d)", estimator, n)
	}
	ctor := "pipeline.make_pipeline(columns, " + tabRegTransforms[c.Opt("transform")] + estimator + ")"
	if outputs == "wrapper" {
		ctor = "multioutput.MultiOutputRegressor(" + ctor + ")"
	}
	// The loss the validation prints: RMSLE per target column for RMSLE tasks, else RMSE.
	loss := "mean_squared_error"
	if schema.Metric == "mean-column-rmsle" {
		loss = "mean_squared_log_error"
	}
	holdoutLoss := loss
	if c.Is("validation", "holdout-rmse") {
		holdoutLoss = "mean_squared_error"
	}
	code := python("tabular_regression.py.tmpl", c, schema, map[string]any{
		"ctor": ctor, "xgb": tabRegUsesXGB[model], "targets": targets, "cap": tabRegCapped[model],
		"impute": !tabRegNaN[model] || c.Is("transform", "pca-half"),
		"load":   strings.TrimSuffix(tables.String(), "\n"),
		"fwd":    fwd, "inv": inv, "post": post, "loss": loss, "holdoutLoss": holdoutLoss,
	})
	settings := params
	if settings == "" {
		settings = "defaults"
	}
	if model == "grid-xgb" {
		settings = strings.Replace(params, "), ", "; grid ", 1) + "}"
	}
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", settings)), Code: code}
}
