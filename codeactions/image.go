package codeactions

import "fmt"

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
			{"16", "Work at 16 pixels, or the largest size whose features fit in memory.", 1},
			{"32", "Work at 32 pixels, or the largest size whose features fit in memory.", 2},
			{"64", "Work at 64 pixels, or the largest size whose features fit in memory.", 3},
			{"128", "Work at 128 pixels, or the largest size whose features fit in memory.", 2},
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

// imageFeatureBlocks are the feature functions (templates/image.py.tmpl) each features option
// concatenates.
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

// imageFlips are the PIL transpositions each augment option adds as copies of a training image.
var imageFlips = map[string][]string{"hflip": {"FLIP_LEFT_RIGHT"}, "hflip-x-only": {"FLIP_LEFT_RIGHT"},
	"hvflip": {"FLIP_LEFT_RIGHT", "FLIP_TOP_BOTTOM"}}

// defaultMemoryMB stands for the memory limit of a schema that does not say it: the smallest
// any built-in image task gives (aerial cactus).
const defaultMemoryMB = 4096

// renderImage writes the program from templates/image.py.tmpl.
// imageCapped are the models whose fit grows with the square of the rows (an RBF SVC's, five
// times over for its probability estimates), and the rows each is fitted on at most, so that
// tens of thousands of images finish in a task's time.
var imageCapped = map[string]int{"svc": 5000}

func renderImage(c Choice, s Schema) Program {
	params := imageStrengths[c.Opt("model")][c.Strength()]
	flips := imageFlips[c.Opt("augment")]
	memoryMB := s.MemoryMB
	if memoryMB <= 0 {
		memoryMB = defaultMemoryMB
	}
	code := python("image.py.tmpl", c, s, map[string]any{
		"params": params, "blocks": imageFeatureBlocks[c.Opt("features")],
		"flips": flips, "copies": len(flips) + 1, "others": len(s.Targets) - 1, "memoryMB": memoryMB,
		"cap": imageCapped[c.Opt("model")],
	})
	return Program{Plan: c.Plan(fmt.Sprintf("Model settings: %s.", params)), Code: code}
}
