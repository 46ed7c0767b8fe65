package codeactions

import "fmt"

// SpanExtraction writes programs that pick the words of a text supporting its label (tweet
// sentiment extraction) without neural networks: a classifier scores each word (its identity
// crossed with the sentiment, its neighbours, its position) as in or out of the span, and a
// decoder turns the scores into a span (the best-scoring window, a threshold, a learned ranker
// over candidate windows), with baselines that ignore the model (the whole text, the first or
// last words).
var SpanExtraction = register(&Library{
	Modality: "span-extraction",
	Slots: []Slot{
		{"imports", []Option{
			{"full", "", 8},
			{"no-sklearn", "", 0.2}, // fails at the vectoriser
			{"no-pandas", "", 0.2},  // fails while loading
		}},
		{"load", []Option{
			{"input", "Load train, test and the sample submission from the input folder and fill missing texts with empty strings.", 5},
			{"no-fillna", "Load train, test and the sample submission from the input folder.", 0.5}, // a missing tweet crashes .split()
			{"dropna", "Load the files from the input folder and drop training rows with missing values.", 0.5},
			{"cwd", "Load the CSV files from the working directory.", 0.3}, // wrong path: fails
		}},
		{"labels", []Option{
			{"in-span", "Label each word of a training text 1 if it overlaps the selected text's position in the text.", 2},
			{"word-set", "Label each word of a training text 1 if it appears among the selected text's words.", 4},
			{"wrong-column", "Take the selected words from the span column.", 0.2}, // no such column: fails
		}},
		{"features", []Option{
			{"word-sentiment", "Describe each word by itself, itself crossed with the sentiment, the sentiment and its position.", 3},
			{"word", "Describe each word by itself, the sentiment and its position.", 3},
			{"position", "Describe each word by its position in the text and the sentiment only.", 2},
			{"neighbours", "Describe each word by itself crossed with the sentiment, its neighbours crossed with the sentiment, punctuation and its position.", 1},
			{"char", "Describe each word by itself and its character 3-grams crossed with the sentiment, and its position.", 1},
		}},
		{"vectorizer", []Option{
			{"dict", "Vectorise the word features with a DictVectorizer fitted on train.", 4},
			{"hashing", "Hash the word features into 2^18 columns.", 2},
			{"refit-test", "Vectorise train and test each with their own DictVectorizer.", 0.3}, // columns differ: fails at prediction
		}},
		{"model", []Option{
			{"logreg", "Classify words with a logistic regression.", 5},
			{"naive-bayes", "Classify words with multinomial naive Bayes.", 1}, // fails on hashed (signed) features
			{"sgd", "Classify words with a logistic-loss SGD classifier.", 1},
			{"linear-svc", "Classify words with a linear support vector classifier.", 0.3}, // no predict_proba: fails
			{"gaussian-nb", "Classify words with Gaussian naive Bayes.", 0.2},              // sparse input: fails at fit
			{"random-forest", "Classify words with a random forest.", 1},
			{"xgboost", "Classify words with gradient-boosted trees (XGBoost).", 1},
			{"grid-logreg", "Grid-search the logistic regression's C by 3-fold cross-validated log loss.", 0.5},
		}},
		{"strength", []Option{{"s0", "", 2}, {"s1", "", 4}, {"s2", "", 4}, {"s3", "", 2}, {"s4", "", 1}, {"s5", "", 1}}},
		{"decode", []Option{
			{"whole", "Predict the whole text.", 3},
			{"first-words", "Predict the first three words.", 1},
			{"last-words", "Predict the last three words.", 1},
			{"top-word", "Predict the single most likely word.", 2},
			{"above-threshold", "Predict the words whose probability exceeds 0.5.", 2},
			{"first-last", "Predict everything from the first to the last word whose probability exceeds 0.5.", 1},
			{"best-window", "Predict the contiguous window that maximises the summed probability minus 0.4 per word.", 1},
			{"best-window-strict", "Predict the contiguous window that maximises the summed probability minus 0.6 per word.", 1},
			{"ranker", "Rank candidate windows with gradient-boosted trees trained to predict each window's Jaccard score from out-of-fold word probabilities, and predict the best window.", 0.5},
		}},
		{"neutral", []Option{
			{"whole", "Predict the whole text for neutral tweets.", 3},
			{"model", "Decode neutral tweets like the others.", 3},
			{"short-whole", "Predict the whole text for neutral tweets and for tweets of three words or fewer.", 1},
		}},
		{"validation", []Option{
			{"none", "Train on all the training data and report the word-level training log loss.", 5},
			{"holdout-words", "Check the word-level log loss on a 20% hold-out of tweets, then refit on everything.", 2},
			{"holdout-jaccard", "Decode a 20% hold-out of tweets and report the mean squared Jaccard distance, then refit on everything.", 1},
			{"holdout-exact", "Decode a 20% hold-out of tweets and report the exact-match accuracy, then refit on everything.", 1},
			{"holdout-mse-text", "Train on 80% of the tweets and report the squared error between predicted and true texts on the rest.", 0.2}, // strings: fails
		}},
		{"submission", []Option{
			{"frame", "Write the tweet id and the predicted text.", 5},
			{"quote-all", "Write the tweet id and the predicted text, quoting every field.", 1},
			{"manual", "Write the submission line by line.", 0.5}, // commas and quotes break the CSV: invalid
			{"sentiment", "Write the tweet id and its sentiment.", 1},
			{"no-id", "Write the predicted text without the id column.", 0.2},
			{"text-column", "Write the tweet id and the predicted text in a text column.", 0.2},
		}},
	},
	Tunable:    []string{"strength"},
	ReportOnly: []ReportOnly{{Slot: "validation", Options: []string{"none", "holdout-words", "holdout-jaccard", "holdout-exact"}}},
	Clashes:    spanExtractionClashes,
	render:     renderSpanExtraction,
})

// spanExtractionClashes are the library's intended clashes, read off its renderer.
var spanExtractionClashes = []ClashRule{
	{Reason: "scikit-learn is not imported: fails at the vectoriser",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-sklearn") }},
	{Reason: "pandas is not imported: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("imports", "no-pandas") }},
	{Reason: "the files are read from the working directory, not input/: fails while loading",
		When: func(c Choice, s Schema) bool { return c.Is("load", "cwd") }},
	{Reason: "a missing tweet (Kaggle's train has one) crashes split without fillna", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("load", "no-fillna") }},
	{Reason: "dropna keeps a missing test tweet, which crashes split", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("load", "dropna") }},
	{Reason: "the train has no span column",
		When: func(c Choice, s Schema) bool { return c.Is("labels", "wrong-column") }},
	{Reason: "a DictVectorizer fitted on the test has other columns: fails at prediction",
		When: func(c Choice, s Schema) bool {
			return c.Is("vectorizer", "refit-test") && !c.Is("features", "position")
		}},
	// Position features have the same names in train and test: the same columns, unless a
	// sentiment is missing from one of them.
	{Reason: "a DictVectorizer fitted on the test has other columns when a sentiment is missing from it", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("vectorizer", "refit-test") }},
	{Reason: "multinomial naive Bayes refuses the hashed (signed) features",
		When: func(c Choice, s Schema) bool { return c.Is("model", "naive-bayes") && c.Is("vectorizer", "hashing") }},
	{Reason: "LinearSVC has no predict_proba",
		When: func(c Choice, s Schema) bool { return c.Is("model", "linear-svc") }},
	{Reason: "Gaussian naive Bayes needs dense features: fails on the sparse words",
		When: func(c Choice, s Schema) bool { return c.Is("model", "gaussian-nb") }},
	{Reason: "squared error between texts",
		When: func(c Choice, s Schema) bool { return c.Is("validation", "holdout-mse-text") }},
	{Reason: "a hand-written CSV breaks on the commas and quotes of the spans", DataDependent: true,
		When: func(c Choice, s Schema) bool { return c.Is("submission", "manual") }},
	{Reason: "the spans are written under a text column, not the target's",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "text-column") }},
	{Reason: "the submission has no id column",
		When: func(c Choice, s Schema) bool { return c.Is("submission", "no-id") && !s.ByPosition }},
}

// spanStrengths are each word model's hyper-parameters at strength s0..s5.
var spanStrengths = map[string][6]string{
	"logreg":        {"C=0.01", "C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0"},
	"naive-bayes":   {"alpha=3.0", "alpha=1.0", "alpha=0.3", "alpha=0.1", "alpha=0.03", "alpha=0.01"},
	"sgd":           {"alpha=0.01", "alpha=0.001", "alpha=0.0001", "alpha=3e-05", "alpha=1e-05", "alpha=1e-06"},
	"linear-svc":    {"C=0.01", "C=0.1", "C=0.3", "C=1.0", "C=3.0", "C=10.0"},
	"gaussian-nb":   {"var_smoothing=1e-9", "var_smoothing=1e-6", "var_smoothing=1e-3", "var_smoothing=1e-2", "var_smoothing=0.1", "var_smoothing=0.5"},
	"random-forest": {"n_estimators=10", "n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=150", "n_estimators=200"},
	"xgboost":       {"n_estimators=20", "n_estimators=50", "n_estimators=100", "n_estimators=200", "n_estimators=400", "n_estimators=800"},
	"grid-logreg":   {"[1.0]", "[0.3, 1.0]", "[0.3, 1.0, 3.0]", "[0.1, 0.3, 1.0, 3.0]", "[0.1, 0.3, 1.0, 3.0, 10.0]", "[0.03, 0.1, 0.3, 1.0, 3.0, 10.0, 30.0]"},
}

// spanRankerStrengths are the ranker's longest window and its boosting rounds at s0..s5: the
// candidates (and the cost) grow with the window.
var spanRankerStrengths = [6][2]int{{3, 50}, {5, 100}, {8, 150}, {12, 200}, {20, 300}, {40, 400}}

// renderSpanExtraction writes the program from templates/span_extraction.py.tmpl.
func renderSpanExtraction(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := spanStrengths[model][c.Strength()]
	ranker := c.Is("decode", "ranker")
	window, rounds := spanRankerStrengths[c.Strength()][0], spanRankerStrengths[c.Strength()][1]
	sentCol := schema.Text[0]
	if len(schema.Text) > 1 {
		sentCol = schema.Text[1]
	}
	code := python("span_extraction.py.tmpl", c, schema, map[string]any{"params": params, "sent": sentCol,
		"window": window, "rounds": rounds})
	settings := params
	if model == "grid-logreg" {
		settings = "C in " + params
	}
	extra := []string{fmt.Sprintf("Word model settings: %s.", settings)}
	if ranker {
		extra = append(extra, fmt.Sprintf("Ranker: windows of up to %d words, %d boosting rounds.", window, rounds))
	}
	return Program{Plan: c.Plan(extra...), Code: code}
}
