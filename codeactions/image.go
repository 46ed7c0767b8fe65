package codeactions

import (
	"fmt"
	"strings"
)

// Image writes programs for image classification with per-class probabilities (plant
// pathology) or one binary target's probability (aerial cactus: its two classes are the
// target's absence and presence, and the submission holds the presence's): images are decoded with Pillow, shrunk, turned into hand-made features (raw
// pixels, colour histograms, a numpy gradient-orientation histogram, texture statistics) and fed
// to scikit-learn or XGBoost models, framed as one multi-class model or one binary model per
// target column. Test images are featurised after training, so a wrong test folder fails late.
var Image = register(&Library{
	Modality: "image",
	Slots: []Slot{
		{"load", []Option{
			{"input", "Load the tables from the input folder and open each image with Pillow.", 5},
			{"cwd", "Load the CSV files from the working directory.", 0.3},                                       // fails while loading
			{"no-ext", "Open each image by its id under the images folder.", 0.2},                                // no extension: fails at the first image
			{"test-folder", "Open the training images from images/ and the test images from test_images/.", 0.2}, // fails after training
			{"no-pil", "Import PIL and open each image.", 0.2},                                                   // `import PIL` does not bind Image
			{"cv2", "Read the images with OpenCV.", 0.2},                                                         // not installed: fails at import
		}},
		{"decode", []Option{
			{"draft", "Let the JPEG decoder shrink each image while decoding (draft mode), then resize it to a square in RGB.", 1},
			{"full", "Decode each image in full, convert it to RGB and resize it to a square.", 4},
			{"thumbnail", "Shrink each image in place with thumbnail, keeping its aspect ratio.", 0.5}, // portrait pixels come transposed
			{"gray", "Decode each image as grayscale and resize it to a square.", 0.5},                 // 2-D arrays: colour features fail
		}},
		{"size", []Option{
			{"16", "Work at 16 pixels.", 1},
			{"32", "Work at 32 pixels.", 2},
			{"64", "Work at 64 pixels.", 3},
			{"128", "Work at 128 pixels.", 2},
			{"original", "Keep the images at their original size.", 1}, // raw pixels: different sizes or out of memory
		}},
		{"features", []Option{
			{"pixels", "Use the raw pixels as features.", 6},
			{"rgb-hist", "Describe each image by its RGB colour histograms (16 bins a channel).", 2},
			{"hsv-hist", "Describe each image by its hue, saturation and value histograms.", 1},
			{"hog", "Describe each image by gradient-orientation histograms over a 4x4 grid of cells.", 1},
			{"texture", "Describe each image by colour and texture statistics (channel means and spreads, gradient and Laplacian energy, dark and reddish pixel fractions).", 1},
			{"hist-hog", "Combine HSV histograms with gradient-orientation histograms.", 0.5},
			{"hist-hog-texture", "Combine HSV histograms, gradient-orientation histograms and texture statistics.", 0.5},
			{"all", "Combine raw pixels, RGB and HSV histograms, gradient-orientation histograms and texture statistics.", 0.5},
		}},
		{"augment", []Option{
			{"none", "", 6},
			{"hflip", "Add a horizontally mirrored copy of every training image.", 2},
			{"hvflip", "Add horizontally and vertically mirrored copies of every training image.", 0.5},
			{"hflip-x-only", "Add the features of horizontally mirrored training images.", 0.2}, // labels not repeated: fails at fitting
		}},
		{"transform", []Option{
			{"none", "", 4},
			{"standard", "Standardise the features.", 4},
			{"sqrt", "Take the square root of the features (Hellinger), then standardise.", 0.5},
			{"pca32", "Standardise, then reduce to 32 principal components.", 1},
			{"pca128", "Standardise, then reduce to 128 principal components.", 0.5}, // fails on fewer than 128 features
		}},
		{"target", []Option{
			{"argmax", "Train one multi-class model on the index of each row's positive column.", 3},
			{"argmax-names", "Train one multi-class model on the name of each row's positive column.", 3}, // XGBoost rejects string labels
			{"per-column", "Train one binary model per target column.", 1.5},
			{"healthy-only", "Train a binary healthy-or-not model and split the rest evenly among the diseases.", 1},
		}},
		{"model", []Option{
			{"prior", "Predict the class priors.", 1},
			{"naive-bayes", "Fit a Gaussian naive Bayes model.", 1},
			{"knn", "Fit a distance-weighted k-nearest-neighbours classifier.", 2},
			{"logreg", "Fit a logistic regression.", 3},
			{"grid-logreg", "Grid-search the logistic regression's C by 3-fold cross-validated log loss.", 0.5},
			{"random-forest", "Fit a random forest.", 4},
			{"extra-trees", "Fit an extra-trees ensemble.", 1},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 2},
			{"svc", "Fit an RBF support vector classifier with probability estimates.", 1},
			{"linear-svc", "Fit a linear support vector classifier.", 0.3}, // no predict_proba: fails after training
			{"stacking", "Stack logistic regression, extra trees and k-nearest neighbours under a logistic regression.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training images.", 4},
			{"holdout", "Check the column-mean ROC AUC and log loss on a stratified 20% hold-out, then refit on everything.", 3},
			{"holdout-no-refit", "Train on 80% and report the column-mean ROC AUC and log loss on a stratified 20% hold-out.", 2},
			{"cv3", "Estimate the column-mean ROC AUC and log loss by stratified 3-fold cross-validation, then refit on everything.", 1},
		}},
		{"submission", []Option{
			{"aligned", "Write the id and one probability column per target.", 3},
			{"sample", "Fill the sample submission's target columns with the probabilities.", 2},
			{"hard-onehot", "Write the predicted class as a one-hot row.", 2},
			{"no-id", "Write the probability columns without the id.", 0.3},                // invalid
			{"index-columns", "Write the id and the probability matrix as it comes.", 0.2}, // columns 0..3: invalid
		}},
	},
	Tunable:     []string{"transform", "strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly:  []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout", "cv3"}}},
	Clashes:     imageClashes,
	render:      renderImage,
})

// imageClashes are the library's intended clashes, read off its renderer.
var imageClashes = []ClashRule{
	{Reason: "OpenCV is not installed",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cv2") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	// Where the ids are the file names (aerial cactus' "x.jpg") there is no extension to drop.
	{Reason: "image paths without the extension: fails at the first image",
		When: func(c Choice, s Schema) bool { return c.Is("load", "no-ext") && s.ImageExt != "" }},
	{Reason: "`import PIL` does not bind Image: fails at the first image",
		When: func(c Choice, s Schema) bool { return c.Is("load", "no-pil") }},
	{Reason: "there is no test_images folder: fails after training",
		When: func(c Choice, s Schema) bool { return c.Is("load", "test-folder") }},
	{Reason: "grayscale images have no colour channels for the RGB, gradient or texture features",
		When: func(c Choice, s Schema) bool {
			return c.Is("decode", "gray") && !c.Is("features", "pixels", "hsv-hist")
		}},
	{Reason: "raw pixels at the original sizes: images of different sizes cannot be stacked (and full-size ones fill the memory)",
		DataDependent: true,
		When:          func(c Choice, s Schema) bool { return c.Is("size", "original") && c.Is("features", "pixels", "all") }},
	{Reason: "thumbnails keep each image's aspect: raw pixels of different aspects cannot be stacked", DataDependent: true,
		When: func(c Choice, s Schema) bool {
			return c.Is("decode", "thumbnail") && !c.Is("size", "original") && c.Is("features", "pixels", "all")
		}},
	{Reason: "128 principal components of fewer than 128 features",
		When: func(c Choice, s Schema) bool {
			return c.Is("transform", "pca128") && c.Is("features", "rgb-hist", "hsv-hist", "texture")
		}},
	{Reason: "mirrored features without repeated labels: the counts differ",
		When: func(c Choice, s Schema) bool { return c.Is("augment", "hflip-x-only") }},
	{Reason: "XGBoost refuses the class names as labels",
		When: func(c Choice, s Schema) bool { return c.Is("target", "argmax-names") && c.Is("model", "xgboost") }},
	{Reason: "LinearSVC has no predict_proba",
		When: func(c Choice, s Schema) bool { return c.Is("model", "linear-svc") }},
	{Reason: "the probability matrix's column numbers instead of the target names",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "index-columns") }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
}

// imageStrengths are each model's hyper-parameters at strength s0..s5.
var imageStrengths = map[string][6]string{
	"prior":         {`strategy="prior"`, `strategy="prior"`, `strategy="prior"`, `strategy="prior"`, `strategy="prior"`, `strategy="prior"`},
	"naive-bayes":   {"var_smoothing=1e-9", "var_smoothing=1e-6", "var_smoothing=1e-3", "var_smoothing=1e-2", "var_smoothing=0.1", "var_smoothing=0.5"},
	"knn":           {"n_neighbors=1", "n_neighbors=3", "n_neighbors=5", "n_neighbors=10", "n_neighbors=20", "n_neighbors=40"},
	"logreg":        {"C=0.001", "C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0"},
	"grid-logreg":   {"[1.0]", "[0.1, 1.0]", "[0.01, 0.1, 1.0]", "[0.01, 0.1, 1.0, 10.0]", "[0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0]", "[0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]"},
	"random-forest": {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"extra-trees":   {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"xgboost":       {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
	"svc":           {"C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0", "C=30.0"},
	"linear-svc":    {"C=0.001", "C=0.01", "C=0.1", "C=1.0", "C=10.0", "C=100.0"},
	"stacking":      {"n_estimators=10", "n_estimators=50", "n_estimators=100", "n_estimators=300", "n_estimators=600", "n_estimators=1000"},
}

var imageConstructors = map[string]string{
	"prior":         "dummy.DummyClassifier(%s)",
	"naive-bayes":   "naive_bayes.GaussianNB(%s)",
	"knn":           `neighbors.KNeighborsClassifier(%s, weights="distance")`,
	"logreg":        "linear_model.LogisticRegression(%s, max_iter=2000)",
	"grid-logreg":   `model_selection.GridSearchCV(linear_model.LogisticRegression(max_iter=2000), {"C": %s}, cv=3, scoring="neg_log_loss")`,
	"random-forest": "ensemble.RandomForestClassifier(%s, random_state=0)",
	"extra-trees":   "ensemble.ExtraTreesClassifier(%s, random_state=0)",
	"xgboost": `xgb.XGBClassifier(%s, max_depth=4, learning_rate=0.05, subsample=0.8, colsample_bytree=0.5, ` +
		`tree_method="hist", n_jobs=1, random_state=0)`,
	"svc":        "svm.SVC(%s, probability=True, random_state=0)",
	"linear-svc": "svm.LinearSVC(%s)",
	"stacking": `ensemble.StackingClassifier([("lr", linear_model.LogisticRegression(C=0.1, max_iter=2000)), ` +
		`("et", ensemble.ExtraTreesClassifier(%s, random_state=0)), ("knn", neighbors.KNeighborsClassifier(10, weights="distance"))], ` +
		`final_estimator=linear_model.LogisticRegression(max_iter=2000), cv=3)`,
}

// imageFeatureBlocks are the feature functions each features option concatenates.
var imageFeatureBlocks = map[string][]string{
	"pixels":           {"pixels"},
	"rgb-hist":         {"rgb_hist"},
	"hsv-hist":         {"hsv_hist"},
	"hog":              {"gradient_hist"},
	"texture":          {"texture"},
	"hist-hog":         {"hsv_hist", "gradient_hist"},
	"hist-hog-texture": {"hsv_hist", "gradient_hist", "texture"},
	"all":              {"pixels", "rgb_hist", "hsv_hist", "gradient_hist", "texture"},
}

// imageFeatureCode is the Python of each feature function.
var imageFeatureCode = map[string]string{
	"pixels": `def pixels(img):
    return np.asarray(img, dtype=np.float32).ravel() / 255.0
`,
	"rgb_hist": `def rgb_hist(img):
    arr = np.asarray(img)
    hists = [np.histogram(arr[:, :, c], bins=16, range=(0, 256))[0] for c in range(3)]
    return np.concatenate(hists) / (arr.shape[0] * arr.shape[1])
`,
	"hsv_hist": `def hsv_hist(img):
    arr = np.asarray(img.convert("HSV"))
    hists = [np.histogram(arr[:, :, c], bins=bins, range=(0, 256))[0] for c, bins in enumerate((24, 8, 8))]
    return np.concatenate(hists) / (arr.shape[0] * arr.shape[1])
`,
	// A HOG-like descriptor: gradient magnitudes binned by unsigned orientation in each cell of a
	// grid, each cell's histogram L2-normalised.
	"gradient_hist": `def gradient_hist(img, cells=4, bins=9):
    gray = np.asarray(img, dtype=np.float32) @ np.array([0.299, 0.587, 0.114], dtype=np.float32)
    gy, gx = np.gradient(gray)
    magnitude = np.hypot(gx, gy)
    orientation = np.minimum((np.arctan2(gy, gx) % np.pi) / np.pi * bins, bins - 1).astype(int)
    h, w = gray.shape
    out = []
    for i in range(cells):
        for j in range(cells):
            cell = (slice(i * h // cells, (i + 1) * h // cells), slice(j * w // cells, (j + 1) * w // cells))
            hist = np.bincount(orientation[cell].ravel(), weights=magnitude[cell].ravel(), minlength=bins)
            out.append(hist / (np.linalg.norm(hist) + 1e-6))
    return np.concatenate(out)
`,
	"texture": `def texture(img):
    arr = np.asarray(img, dtype=np.float32) / 255.0
    gray = arr.mean(axis=2)
    gy, gx = np.gradient(gray)
    magnitude = np.hypot(gx, gy)
    laplacian = np.abs(4 * gray[1:-1, 1:-1] - gray[:-2, 1:-1] - gray[2:, 1:-1] - gray[1:-1, :-2] - gray[1:-1, 2:])
    r, g, b = arr[:, :, 0], arr[:, :, 1], arr[:, :, 2]
    stats = [r.mean(), g.mean(), b.mean(), r.std(), g.std(), b.std(), magnitude.mean(), magnitude.std(),
             laplacian.mean(), laplacian.std(), *np.percentile(gray, [5, 50, 95]),
             (r > g).mean(), (gray < 0.25).mean(), ((r > 0.6) & (g > 0.4) & (b < 0.3)).mean()]
    return np.array(stats, dtype=np.float32)
`,
}

func renderImage(c Choice, s Schema) Program {
	model := c.Opt("model")
	params := imageStrengths[model][c.Strength()]
	load, decode, size := c.Opt("load"), c.Opt("decode"), c.Opt("size")
	augment, transform, target := c.Opt("augment"), c.Opt("transform"), c.Opt("target")
	var b code
	w := b.w

	w("import numpy as np")
	w("import pandas as pd")
	if load == "cv2" {
		w("import cv2")
	}
	if load == "no-pil" {
		w("import PIL")
	} else {
		w("from PIL import Image")
	}
	w("from sklearn import base, decomposition, dummy, ensemble, linear_model, metrics, model_selection")
	w("from sklearn import naive_bayes, neighbors, preprocessing, svm")
	if model == "xgboost" {
		w("import xgboost as xgb")
	}
	w("")
	w("ID, TARGETS = %q, %s", s.IDColumn, imagePyList(s.Targets))
	images, ext := "input/"+s.Images+"/", s.ImageExt
	testImages := images
	switch load {
	case "no-ext":
		ext = ""
	case "test-folder":
		testImages = "input/test_" + s.Images + "/"
	}
	w("IMAGES, TEST_IMAGES, EXT = %q, %q, %q", images, testImages, ext)
	if size != "original" {
		w("SIZE = %s", size)
	}
	loadTables(&b, load, s) // only "cwd" of the image load options changes the tables' folder
	w("")
	w("")
	imageOpen(&b, load, decode, size)
	blocks := imageFeatureBlocks[c.Opt("features")]
	for _, f := range blocks {
		w("")
		w("")
		b.WriteString(imageFeatureCode[f])
	}
	w("")
	w("")
	w("def features(img):")
	w("    return np.concatenate([%s])", strings.Join(imageCalls(blocks), ", "))
	w("")
	w("")
	w("def as_distribution(P):")
	w("    P = np.clip(P, 1e-6, 1.0)")
	w("    return P / P.sum(axis=1, keepdims=True)")
	w("")
	w("")

	// Train features, with mirrored copies computed from the same decoded image.
	flips := map[string][]string{"hflip": {"FLIP_LEFT_RIGHT"}, "hflip-x-only": {"FLIP_LEFT_RIGHT"},
		"hvflip": {"FLIP_LEFT_RIGHT", "FLIP_TOP_BOTTOM"}}[augment]
	names := []string{"X"} // the features and one array per mirroring
	for k := range flips {
		names = append(names, fmt.Sprintf("X_flip%d", k))
	}
	if len(flips) == 0 {
		w("X = np.stack([features(open_image(i)) for i in train[ID]])")
	} else {
		w("%s = %s", strings.Join(names, ", "), strings.TrimSuffix(strings.Repeat("[], ", len(names)), ", "))
		w("for image_id in train[ID]:")
		w("    img = open_image(image_id)")
		w("    X.append(features(img))")
		for k, f := range flips {
			w("    X_flip%d.append(features(img.transpose(Image.Transpose.%s)))", k, f)
		}
		w("%s = %s", strings.Join(names, ", "), strings.Join(imageWrap("np.stack(%s)", names), ", "))
	}
	binary := len(s.Targets) == 1
	if binary {
		w("Y = np.column_stack([1 - train[TARGETS[0]].values, train[TARGETS[0]].values])  # one-hot truth (absent, present)")
	} else {
		w("Y = train[TARGETS].values  # one-hot truth, for the losses")
	}
	w("labels = Y.argmax(axis=1)")
	switch {
	case target == "argmax" || (binary && target == "healthy-only"):
		w("y = labels")
	case target == "per-column":
		w("y = Y")
	case target == "argmax-names" && binary:
		w(`y = np.array(["absent", "present"])[labels]  # sorted as the model's classes`)
	case target == "argmax-names":
		w("y = train[TARGETS].idxmax(axis=1).values")
	case target == "healthy-only":
		w("y = train[%q].values", s.Targets[0])
	}
	if len(flips) > 0 {
		copies := len(names)
		w("X = np.vstack([%s])", strings.Join(names, ", "))
		if augment != "hflip-x-only" {
			w("y = np.concatenate([y] * %d)", copies)
			w("Y = np.vstack([Y] * %d)", copies)
			w("labels = np.concatenate([labels] * %d)", copies)
		}
	}
	switch transform {
	case "standard":
		w("scaler = preprocessing.StandardScaler().fit(X)")
		w("X = scaler.transform(X)")
	case "sqrt":
		w("scaler = preprocessing.StandardScaler().fit(np.sqrt(X))")
		w("X = scaler.transform(np.sqrt(X))")
	case "pca32", "pca128":
		n := "min(32, X.shape[1])"
		if transform == "pca128" {
			n = "128"
		}
		w("scaler = preprocessing.StandardScaler().fit(X)")
		w("pca = decomposition.PCA(n_components=%s, random_state=0).fit(scaler.transform(X))", n)
		w("X = pca.transform(scaler.transform(X))")
	}
	w("")
	w("model = "+imageConstructors[model], params)
	w("")
	w("")
	switch target {
	case "per-column":
		w("def fit(X_fit, y_fit):")
		w("    fitted = [base.clone(model).fit(X_fit, y_fit[:, k]) for k in range(y_fit.shape[1])]")
		w("    return fitted")
		w("")
		w("")
		w("def predict(fitted, X_new):")
		w("    return np.column_stack([m.predict_proba(X_new)[:, 1] for m in fitted])")
	default:
		w("def fit(X_fit, y_fit):")
		w("    fitted = base.clone(model).fit(X_fit, y_fit)")
		w("    return fitted")
		w("")
		w("")
		w("def predict(fitted, X_new):")
		if target == "healthy-only" && !binary {
			w("    p = fitted.predict_proba(X_new)[:, 1]")
			w("    return np.column_stack([p] + [(1 - p) / %d] * %d)", len(s.Targets)-1, len(s.Targets)-1)
		} else {
			w("    return fitted.predict_proba(X_new)")
		}
	}
	w("")
	w("")
	w("CLASSES = list(range(Y.shape[1]))")
	switch c.Opt("validation") {
	case "none":
		w("fitted = fit(X, y)")
		w("P = predict(fitted, X)")
		w("train_auc = metrics.roc_auc_score(Y, P)")
		w("train_loss = metrics.log_loss(labels, as_distribution(P), labels=CLASSES)")
	case "holdout", "holdout-no-refit":
		w("X_tr, X_val, y_tr, y_val, Y_tr, Y_val = model_selection.train_test_split(")
		w("    X, y, Y, test_size=0.2, random_state=0, stratify=labels)")
		w("fitted = fit(X_tr, y_tr)")
		w("P_tr, P_val = predict(fitted, X_tr), predict(fitted, X_val)")
		w("train_auc = metrics.roc_auc_score(Y_tr, P_tr)")
		w("train_loss = metrics.log_loss(Y_tr.argmax(axis=1), as_distribution(P_tr), labels=CLASSES)")
		w("val_auc = metrics.roc_auc_score(Y_val, P_val)")
		w("val_loss = metrics.log_loss(Y_val.argmax(axis=1), as_distribution(P_val), labels=CLASSES)")
		if c.Opt("validation") == "holdout" {
			w("fitted = fit(X, y)")
		}
	case "cv3":
		w("folds = model_selection.StratifiedKFold(n_splits=3, shuffle=True, random_state=0)")
		w("P_cv = np.zeros(Y.shape)")
		w("for tr, va in folds.split(X, labels):")
		w("    P_cv[va] = predict(fit(X[tr], y[tr]), X[va])")
		w("cv_auc = metrics.roc_auc_score(Y, P_cv)")
		w("cv_loss = metrics.log_loss(labels, as_distribution(P_cv), labels=CLASSES)")
		w("fitted = fit(X, y)")
		w("P = predict(fitted, X)")
		w("train_auc = metrics.roc_auc_score(Y, P)")
	}
	w("")
	w("X_test = np.stack([features(open_image(i, TEST_IMAGES)) for i in test[ID]])")
	switch transform {
	case "standard":
		w("X_test = scaler.transform(X_test)")
	case "sqrt":
		w("X_test = scaler.transform(np.sqrt(X_test))")
	case "pca32", "pca128":
		w("X_test = pca.transform(scaler.transform(X_test))")
	}
	w("proba_test = predict(fitted, X_test)")
	if binary {
		w("proba_test = proba_test[:, 1:]  # the target's presence")
	}
	w("")
	switch c.Opt("submission") {
	case "aligned":
		w("sub = pd.DataFrame(proba_test, columns=TARGETS)")
		w("sub.insert(0, ID, test[ID].values)")
	case "sample":
		w("sub = sample.copy()")
		w("sub[TARGETS] = proba_test")
	case "hard-onehot":
		if binary {
			w("sub = pd.DataFrame((proba_test >= 0.5).astype(int), columns=TARGETS)")
		} else {
			w("sub = pd.DataFrame(np.eye(len(TARGETS))[proba_test.argmax(axis=1)], columns=TARGETS)")
		}
		w("sub.insert(0, ID, test[ID].values)")
	case "no-id":
		w("sub = pd.DataFrame(proba_test, columns=TARGETS)")
	case "index-columns":
		w("sub = pd.DataFrame(proba_test)")
		w("sub.insert(0, ID, test[ID].values)")
	}
	w("sub.to_csv(\"submission.csv\", index=False)")
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", params)), Code: b.String()}
}

// imageOpen writes open_image(image_id, folder), the decoding step.
func imageOpen(b *code, load, decode, size string) {
	w := b.w
	w("def open_image(image_id, folder=IMAGES):")
	if load == "cv2" {
		w("    arr = cv2.cvtColor(cv2.imread(folder + image_id + EXT), cv2.COLOR_BGR2RGB)")
		if size != "original" {
			w("    arr = cv2.resize(arr, (SIZE, SIZE), interpolation=cv2.INTER_AREA)")
		}
		w("    return Image.fromarray(arr)")
		return
	}
	// With `import PIL` alone, Image is unbound: NameError at the first image.
	w("    img = Image.open(folder + image_id + EXT)")
	mode := "RGB"
	if decode == "gray" {
		mode = "L"
	}
	if size == "original" {
		w("    return img.convert(%q)", mode)
		return
	}
	switch decode {
	case "draft", "gray":
		// The JPEG decoder can scale by 1/2, 1/4 or 1/8 while decoding: much faster on large images.
		w("    img.draft(%q, (SIZE, SIZE))", mode)
		w("    return img.convert(%q).resize((SIZE, SIZE), Image.Resampling.BILINEAR)", mode)
	case "full":
		w("    return img.convert(\"RGB\").resize((SIZE, SIZE), Image.Resampling.BILINEAR)")
	case "thumbnail":
		w("    img.thumbnail((SIZE, SIZE))")
		w("    return img.convert(\"RGB\")")
	}
}

func imagePyList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = fmt.Sprintf("%q", x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func imageCalls(fns []string) []string { return imageWrap("%s(img)", fns) }

func imageWrap(format string, xs []string) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = fmt.Sprintf(format, x)
	}
	return out
}
