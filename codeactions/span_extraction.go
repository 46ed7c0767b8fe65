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

var spanConstructors = map[string]string{
	"logreg":        "linear_model.LogisticRegression(%s, max_iter=1000)",
	"naive-bayes":   "naive_bayes.MultinomialNB(%s)",
	"sgd":           "linear_model.SGDClassifier(loss=\"log_loss\", %s, random_state=0)",
	"linear-svc":    "svm.LinearSVC(%s)",
	"gaussian-nb":   "naive_bayes.GaussianNB(%s)",
	"random-forest": "ensemble.RandomForestClassifier(%s, min_samples_leaf=2, random_state=0)",
	"xgboost":       "xgb.XGBClassifier(%s, max_depth=6, learning_rate=0.1, tree_method=\"hist\", n_jobs=1, random_state=0)",
	"grid-logreg":   "model_selection.GridSearchCV(linear_model.LogisticRegression(max_iter=1000), {\"C\": %s}, cv=3, scoring=\"neg_log_loss\")",
}

// spanRankerStrengths are the ranker's longest window and its boosting rounds at s0..s5: the
// candidates (and the cost) grow with the window.
var spanRankerStrengths = [6][2]int{{3, 50}, {5, 100}, {8, 150}, {12, 200}, {20, 300}, {40, 400}}

// spanFeatureCode is each feature option's body of word_features(toks, sent): it appends one
// dict per word to out (w is the word lower-cased without punctuation).
var spanFeatureCode = map[string][]string{
	"word-sentiment": {
		"d[\"w=\" + w] = 1",
		"d[sent + \"|w=\" + w] = 1",
	},
	"word": {
		"d[\"w=\" + w] = 1",
	},
	"position": {},
	"neighbours": {
		"d[\"w=\" + w] = 1",
		"d[sent + \"|w=\" + w] = 1",
		"d[sent + \"|prev=\" + (norm(toks[i - 1]) if i > 0 else \"<s>\")] = 1",
		"d[sent + \"|next=\" + (norm(toks[i + 1]) if i < n - 1 else \"</s>\")] = 1",
		"d[sent + \"|punct\"] = float(t[-1:] in \"!?.,\")",
		"d[sent + \"|dist_start\"] = min(i, 10) / 10",
		"d[sent + \"|dist_end\"] = min(n - 1 - i, 10) / 10",
	},
	"char": {
		"d[\"w=\" + w] = 1",
		"d[sent + \"|w=\" + w] = 1",
		"padded = \"#\" + w + \"#\"",
		"for k in range(len(padded) - 2):",
		"    d[sent + \"|c=\" + padded[k : k + 3]] = 1",
	},
}

func renderSpanExtraction(c Choice, schema Schema) Program {
	model := c.Opt("model")
	params := spanStrengths[model][c.Strength()]
	decode, validation := c.Opt("decode"), c.Opt("validation")
	ranker := decode == "ranker"
	window, rounds := spanRankerStrengths[c.Strength()][0], spanRankerStrengths[c.Strength()][1]
	sentCol := schema.Text[0]
	if len(schema.Text) > 1 {
		sentCol = schema.Text[1]
	}
	var b code
	w := b.w
	switch c.Opt("imports") {
	case "full":
		w("import csv")
		w("import re")
		w("import numpy as np")
		w("import pandas as pd")
		w("from sklearn import ensemble, linear_model, metrics, model_selection, naive_bayes, svm")
		w("from sklearn.feature_extraction import DictVectorizer, FeatureHasher")
	case "no-sklearn":
		w("import csv")
		w("import re")
		w("import numpy as np")
		w("import pandas as pd")
	case "no-pandas":
		w("import csv")
		w("import re")
		w("import numpy as np")
		w("from sklearn import ensemble, linear_model, metrics, model_selection, naive_bayes, svm")
		w("from sklearn.feature_extraction import DictVectorizer, FeatureHasher")
	}
	if model == "xgboost" || ranker {
		w("import xgboost as xgb")
	}
	w("")
	w("ID, TARGET = %q, %q", schema.IDColumn, schema.Targets[0])
	w("TEXT, SENT = %q, %q", schema.Text[0], sentCol)
	switch c.Opt("load") {
	case "cwd":
		loadTables(&b, "cwd", schema)
	default:
		loadTables(&b, "input", schema)
	}
	switch c.Opt("load") {
	case "input":
		w("for df in (train, test):")
		w("    df[TEXT] = df[TEXT].fillna(\"\").astype(str)")
		w("train[TARGET] = train[TARGET].fillna(\"\").astype(str)")
	case "dropna":
		w("train = train.dropna().reset_index(drop=True)")
	}
	w("")

	// Word labels from the selected text.
	w("def word_labels(text, sel):")
	switch c.Opt("labels") {
	case "in-span":
		w("    toks = text.split()")
		w("    start = text.find(sel) if sel.strip() else -1")
		w("    if start < 0:  # not found as written: fall back to the selected words")
		w("        words = set(sel.split())")
		w("        return [int(t in words) for t in toks]")
		w("    end, pos, labels = start + len(sel), 0, []")
		w("    for t in toks:")
		w("        s = text.index(t, pos)")
		w("        pos = s + len(t)")
		w("        labels.append(int(s < end and pos > start))")
		w("    return labels")
	default:
		w("    words = set(sel.split())")
		w("    return [int(t in words) for t in text.split()]")
	}
	w("")
	w("def norm(t):")
	w("    return re.sub(r\"[^\\w']+\", \"\", t.lower()) or t.lower()")
	w("")
	w("def word_features(toks, sent):")
	w("    n, out = len(toks), []")
	w("    for i, t in enumerate(toks):")
	w("        w = norm(t)")
	w("        d = {\"sent=\" + sent: 1, sent + \"|pos\": i / max(n - 1, 1), sent + \"|first\": float(i == 0),")
	w("             sent + \"|last\": float(i == n - 1), sent + \"|len\": min(n, 30) / 30}")
	for _, line := range spanFeatureCode[c.Opt("features")] {
		w("        %s", line)
	}
	w("        out.append(d)")
	w("    return out")
	w("")
	labelCol := "TARGET"
	if c.Opt("labels") == "wrong-column" {
		labelCol = "\"span\""
	}
	w("def word_table(df, labelled=False):")
	w("    feats, labels = [], []")
	w("    for text, sent in zip(df[TEXT], df[SENT]):")
	w("        feats += word_features(text.split(), sent)")
	w("    if labelled:")
	w("        for text, sel in zip(df[TEXT], df[%s]):", labelCol)
	w("            labels += word_labels(text, sel)")
	w("    return feats, np.array(labels)")
	w("")
	w("def per_tweet(p, df):")
	w("    # split word-level probabilities into one array per tweet")
	w("    lengths = [len(text.split()) for text in df[TEXT]]")
	w("    return np.split(np.asarray(p), np.cumsum(lengths)[:-1])")
	w("")
	w("def jaccard(a, b):")
	w("    a, b = set(str(a).lower().split()), set(str(b).lower().split())")
	w("    return len(a & b) / len(a | b) if a | b else 1.0")
	w("")
	w("def whole_text_rule(toks, sent):")
	switch c.Opt("neutral") {
	case "whole":
		w("    return sent == \"neutral\" or not toks")
	case "short-whole":
		w("    return sent == \"neutral\" or len(toks) <= 3")
	default:
		w("    return not toks")
	}
	w("")
	if ranker {
		spanRankerCode(&b, window, rounds)
	}

	// The decoder.
	if ranker {
		w("def decode(df, p, ranker):")
		w("    spans, todo = [], []")
		w("    for text, sent, q in zip(df[TEXT], df[SENT], per_tweet(p, df)):")
		w("        toks = text.split()")
		w("        spans.append(text)")
		w("        if not whole_text_rule(toks, sent):")
		w("            todo.append((len(spans) - 1, toks) + candidates(q, sent))")
		w("    if todo:")
		w("        # one prediction over every tweet's windows, split back per tweet")
		w("        scores = ranker.predict(np.vstack([rows for _, _, rows, _ in todo]))")
		w("        scores = np.split(scores, np.cumsum([len(rows) for _, _, rows, _ in todo])[:-1])")
		w("        for (k, toks, _, windows), s in zip(todo, scores):")
		w("            i, j = windows[int(np.argmax(s))]")
		w("            spans[k] = \" \".join(toks[i:j])")
		w("    return spans")
		w("")
	} else {
		w("def decode(df, p):")
		w("    spans = []")
		w("    for text, sent, q in zip(df[TEXT], df[SENT], per_tweet(p, df)):")
		w("        toks = text.split()")
		w("        if whole_text_rule(toks, sent):")
		w("            spans.append(text)")
		w("            continue")
		spanDecodeStep(&b, decode)
		w("    return spans")
		w("")
	}

	// Words of train and test.
	w("feats, y = word_table(train, labelled=True)")
	w("feats_test, _ = word_table(test)")
	switch c.Opt("vectorizer") {
	case "dict":
		w("vectorizer = DictVectorizer()")
		w("X = vectorizer.fit_transform(feats)")
		w("X_test = vectorizer.transform(feats_test)")
	case "hashing":
		w("vectorizer = FeatureHasher(n_features=2**18)")
		w("X = vectorizer.transform(feats)")
		w("X_test = vectorizer.transform(feats_test)")
	case "refit-test":
		w("vectorizer = DictVectorizer()")
		w("X = vectorizer.fit_transform(feats)")
		w("X_test = DictVectorizer().fit_transform(feats_test)")
	}
	w("")
	ctor := spanConstructors[model]
	w("model = %s", fmt.Sprintf(ctor, params))
	rankerArg := ""
	if ranker {
		rankerArg = ", ranker"
	}
	switch validation {
	case "none":
		w("model.fit(X, y)")
		w("train_loss = metrics.log_loss(y, model.predict_proba(X)[:, 1])")
	default:
		w("tr_df, val_df = model_selection.train_test_split(train, test_size=0.2, random_state=0)")
		w("feats_tr, y_tr = word_table(tr_df, labelled=True)")
		w("feats_val, y_val = word_table(val_df, labelled=True)")
		w("X_tr, X_val = vectorizer.transform(feats_tr), vectorizer.transform(feats_val)")
		w("model.fit(X_tr, y_tr)")
		w("train_loss = metrics.log_loss(y_tr, model.predict_proba(X_tr)[:, 1])")
		w("p_val = model.predict_proba(X_val)[:, 1]")
		if validation == "holdout-words" {
			w("val_loss = metrics.log_loss(y_val, p_val)")
			break
		}
		if ranker {
			w("ranker = fit_ranker(model, X_tr, y_tr, tr_df)")
		}
		w("pred_val = decode(val_df, p_val%s)", rankerArg)
		switch validation {
		case "holdout-jaccard":
			w("jaccard_val = np.array([jaccard(a, b) for a, b in zip(val_df[TARGET], pred_val)])")
			w("# the squared Jaccard distance: 0 when every span is exactly right")
			w("val_loss = metrics.mean_squared_error(np.ones(len(jaccard_val)), jaccard_val)")
			w("print(\"validation jaccard\", jaccard_val.mean())")
		case "holdout-exact":
			w("val_exact = metrics.accuracy_score([s.strip().lower() for s in val_df[TARGET]], [s.strip().lower() for s in pred_val])")
			w("print(\"validation jaccard\", np.mean([jaccard(a, b) for a, b in zip(val_df[TARGET], pred_val)]))")
		case "holdout-mse-text":
			w("val_loss = metrics.mean_squared_error(val_df[TARGET], pred_val)")
		}
	}
	if validation != "none" && validation != "holdout-mse-text" {
		w("model.fit(X, y)")
	}
	if ranker {
		w("ranker = fit_ranker(model, X, y, train)")
	}
	w("")
	w("p_test = model.predict_proba(X_test)[:, 1]")
	w("pred_test = decode(test, p_test%s)", rankerArg)
	switch c.Opt("submission") {
	case "frame":
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: pred_test})")
		w("sub.to_csv(\"submission.csv\", index=False)")
	case "quote-all":
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: pred_test})")
		w("sub.to_csv(\"submission.csv\", index=False, quoting=csv.QUOTE_ALL)")
	case "manual":
		w("with open(\"submission.csv\", \"w\") as f:")
		w("    f.write(ID + \",\" + TARGET + \"\\n\")")
		w("    for i, s in zip(test[ID], pred_test):")
		w("        f.write(f\"{i},{s}\\n\")")
	case "sentiment":
		w("sub = pd.DataFrame({ID: test[ID].values, TARGET: test[SENT].values})")
		w("sub.to_csv(\"submission.csv\", index=False)")
	case "no-id":
		w("sub = pd.DataFrame({TARGET: pred_test})")
		w("sub.to_csv(\"submission.csv\", index=False)")
	case "text-column":
		w("sub = pd.DataFrame({ID: test[ID].values, \"text\": pred_test})")
		w("sub.to_csv(\"submission.csv\", index=False)")
	}
	settings := params
	if model == "grid-logreg" {
		settings = "C in " + params
	}
	extra := []string{fmt.Sprintf("Word model settings: %s.", settings)}
	if ranker {
		extra = append(extra, fmt.Sprintf("Ranker: windows of up to %d words, %d boosting rounds.", window, rounds))
	}
	return Program{Plan: c.Plan(extra...), Code: b.String()}
}

// spanDecodeStep writes the loop body that turns one tweet's word probabilities q into a span.
func spanDecodeStep(b *code, decode string) {
	w := b.w
	switch decode {
	case "whole":
		w("        spans.append(text)")
	case "first-words":
		w("        spans.append(\" \".join(toks[:3]))")
	case "last-words":
		w("        spans.append(\" \".join(toks[-3:]))")
	case "top-word":
		w("        spans.append(toks[int(np.argmax(q))])")
	case "above-threshold":
		w("        spans.append(\" \".join(t for t, v in zip(toks, q) if v > 0.5))")
	case "first-last":
		w("        keep = np.flatnonzero(q > 0.5)")
		w("        i, j = (keep[0], keep[-1] + 1) if len(keep) else (int(np.argmax(q)), int(np.argmax(q)) + 1)")
		w("        spans.append(\" \".join(toks[i:j]))")
	case "best-window", "best-window-strict":
		thr := "0.4"
		if decode == "best-window-strict" {
			thr = "0.6"
		}
		w("        # the maximum-sum subarray of (probability - %s): Kadane's algorithm", thr)
		w("        best, cur, start, i, j = -np.inf, 0.0, 0, 0, 1")
		w("        for k, v in enumerate(q - %s):", thr)
		w("            if cur <= 0:")
		w("                cur, start = v, k")
		w("            else:")
		w("                cur += v")
		w("            if cur > best:")
		w("                best, i, j = cur, start, k + 1")
		w("        spans.append(\" \".join(toks[i:j]))")
	}
}

// spanRankerCode writes the candidate-window ranker: out-of-fold word probabilities (folds by
// tweet) give each window of up to window words (and the whole text) its features, and
// gradient-boosted trees learn the window's Jaccard score with the selected text. Tweets the
// neutral rule answers with the whole text are left out.
func spanRankerCode(b *code, window, rounds int) {
	w := b.w
	w("SENTS = [\"negative\", \"neutral\", \"positive\"]")
	w("")
	w("def candidates(q, sent):")
	w("    # every window [i, j) of up to %d words, and the whole text", window)
	w("    n, c = len(q), np.concatenate([[0.0], np.cumsum(q)])")
	w("    i, j = np.triu_indices(n + 1, 1)")
	w("    keep = (j - i <= %d) | ((i == 0) & (j == n))", window)
	w("    i, j = i[keep], j[keep]")
	w("    # running maxima and minima: top[a, b] = max(q[a..b])")
	w("    top = np.array([np.concatenate([np.zeros(a), np.maximum.accumulate(q[a:])]) for a in range(n)])")
	w("    bottom = np.array([np.concatenate([np.ones(a), np.minimum.accumulate(q[a:])]) for a in range(n)])")
	w("    padded = np.concatenate([[-1.0], q, [-1.0]])")
	w("    inside, length = c[j] - c[i], j - i")
	w("    rows = np.column_stack([inside, inside / length, c[n] - inside, top[i, j - 1], bottom[i, j - 1], q[i], q[j - 1],")
	w("                            padded[i], padded[j + 1], length / n, i / n, (n - j) / n, np.full(len(i), n), length,")
	w("                            (i == 0) & (j == n)] + [np.full(len(i), float(sent == s)) for s in SENTS])")
	w("    return rows, list(zip(i, j))")
	w("")
	w("def fit_ranker(model, X, y, df):")
	w("    groups = np.repeat(np.arange(len(df)), [len(text.split()) for text in df[TEXT]])")
	w("    folds = model_selection.GroupKFold(n_splits=3)")
	w("    p_oof = model_selection.cross_val_predict(model, X, y, groups=groups, cv=folds, method=\"predict_proba\")[:, 1]")
	w("    rows, scores = [], []")
	w("    for text, sent, sel, q in zip(df[TEXT], df[SENT], df[TARGET], per_tweet(p_oof, df)):")
	w("        toks = text.split()")
	w("        if whole_text_rule(toks, sent):")
	w("            continue")
	w("        r, windows = candidates(q, sent)")
	w("        rows.append(r)")
	w("        scores += [jaccard(\" \".join(toks[i:j]), sel) for i, j in windows]")
	w("    rows, scores = np.vstack(rows), np.array(scores)")
	w("    ranker = xgb.XGBRegressor(n_estimators=%d, max_depth=6, learning_rate=0.1, subsample=0.8, tree_method=\"hist\", n_jobs=1, random_state=0)", rounds)
	w("    ranker.fit(rows, scores)")
	w("    ranker_train_loss = metrics.mean_squared_error(scores, ranker.predict(rows))")
	w("    print(\"ranker training loss\", ranker_train_loss)")
	w("    return ranker")
	w("")
}
