package codeactions

// Denoising writes programs that predict an image (denoising-dirty-documents): each pixel of a
// noisy scan is regressed on features of its neighbourhood (a window of grey levels, an
// estimate of the page's background and the pixel's contrast with it, local statistics), with
// a model fitted on a sample of the training pixels, and the clean page is written one row per
// pixel. The weak programs copy the noisy page or threshold it. Templates:
// templates/denoising.py.tmpl.
var Denoising = register(&Library{
	Modality: "image-denoising",
	Slots: []Slot{
		{"load", []Option{
			{"input", "Read the noisy and cleaned training pages and the test pages from the input folder as grey levels in [0, 1].", 5},
			{"cwd", "Read the page folders from the working directory.", 0.3}, // fails while loading
			{"uint8", "Read the pages as grey levels 0-255.", 0.5},            // predictions on 0-255: valid, far off
		}},
		{"window", []Option{
			{"pixel", "Use each pixel's own grey level.", 1},
			{"3x3", "Use the 3x3 window of grey levels around each pixel.", 3},
			{"5x5", "Use the 5x5 window of grey levels around each pixel.", 2},
			{"7x7", "Use the 7x7 window of grey levels around each pixel.", 0.5},
		}},
		{"background", []Option{
			{"none", "", 3},
			{"median", "Estimate the page's background with a large median filter and add it, the pixel's difference from it and their ratio.", 2},
			{"closing", "Estimate the page's background by a morphological closing (dark text removed) and add it, the pixel's difference from it and their ratio.", 1},
			{"blur", "Estimate the page's background with a wide Gaussian blur and add the pixel's difference from it.", 1},
		}},
		{"local", []Option{
			{"none", "", 3},
			{"stats", "Add the local mean, spread, minimum and maximum around each pixel.", 1.5},
			{"threshold", "Add Sauvola-style local threshold features (the pixel against its local mean and spread).", 1},
		}},
		{"sample", []Option{
			{"2k", "Fit on 2,000 random pixels of each training page.", 2},
			{"10k", "Fit on 10,000 random pixels of each training page.", 2},
			{"all", "Fit on every training pixel.", 0.3}, // tens of millions of rows: out of time or memory on the real pages
		}},
		{"model", []Option{
			{"identity", "Predict the noisy page itself.", 1},
			{"threshold", "Predict white above a global grey-level threshold chosen on the training pixels, black below.", 1},
			{"linear", "Fit a ridge regression.", 2},
			{"random-forest", "Fit a random forest regressor.", 1},
			{"hist-gbm", "Fit histogram gradient boosting.", 2},
			{"xgboost", "Fit gradient-boosted trees with XGBoost.", 2},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"validation", []Option{
			{"none", "Train on all the training pages.", 4},
			{"holdout", "Check the RMSE on every pixel of 20% of the training pages, then refit on all of them.", 3},
			{"holdout-no-refit", "Train on 80% of the training pages and report the RMSE on every pixel of the rest.", 2},
		}},
		{"postprocess", []Option{
			{"clip", "Clip the predictions to [0, 1].", 4},
			{"none", "", 2},
			{"binarize", "Round each prediction to black or white.", 0.5},
		}},
		{"submission", []Option{
			{"vectorised", "Write one row per pixel, id <image>_<row>_<col> counted from 1, built with numpy.", 4},
			{"sample", "Fill the sample submission's value column by id.", 2},
			{"transposed", "Write the pixels column by column under row-major ids.", 0.3},    // valid ids, values misplaced
			{"zero-based", "Write one row per pixel, rows and columns counted from 0.", 0.3}, // ids match no answer: invalid
			{"no-header", "Write the id,value rows without a header.", 0.2},                  // invalid
		}},
	},
	Tunable:     []string{"window", "background", "local", "strength"},
	PartialFits: []PartialFit{{Slot: "validation", Partial: "holdout-no-refit", Full: "holdout"}},
	ReportOnly:  []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout"}}},
	Clashes:     denoisingClashes,
	render:      renderDenoising,
})

// denoisingClashes are the library's intended clashes, read off its template.
var denoisingClashes = []ClashRule{
	{Reason: "the page folders are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "ids counted from 0 match none of the answers' 1-based ids",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "zero-based") }},
	{Reason: "a submission without a header has no id and value columns",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-header") }},
	{Reason: "every training pixel's features fill the memory or the time on full-size pages", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("sample", "all") && !c.Is("model", "identity", "threshold") }},
}

// denoisingStrengths are each model's hyper-parameters at strength s0..s5.
var denoisingStrengths = map[string][6]string{
	"identity":      {"", "", "", "", "", ""},
	"threshold":     {"", "", "", "", "", ""},
	"linear":        {"alpha=100.0", "alpha=10.0", "alpha=1.0", "alpha=0.1", "alpha=0.01", "alpha=0.001"},
	"random-forest": {"n_estimators=10, max_depth=8", "n_estimators=20, max_depth=12", "n_estimators=30, max_depth=16", "n_estimators=50, max_depth=20", "n_estimators=80, max_depth=24", "n_estimators=120, max_depth=None"},
	"hist-gbm":      {"max_iter=50", "max_iter=100", "max_iter=200", "max_iter=300", "max_iter=500", "max_iter=800"},
	"xgboost":       {"n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=300", "n_estimators=500", "n_estimators=800"},
}

func renderDenoising(c Choice, s Schema) Program {
	return Program{
		Plan: c.Plan(),
		Code: python("denoising.py.tmpl", c, s, map[string]any{"Params": denoisingStrengths[c.Opt("model")][c.Strength()]}),
	}
}
