package codeactions_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"mlerl/codeactions"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

var preferenceWords = strings.Fields("the answer is that you can use a simple approach to solve this problem by first " +
	"looking at each part and then combining them into one result which should work well in most cases here " +
	"we see how data model code function value list time people world example step idea way")

// preferenceJSON encodes turns as the competition does: a JSON list of strings, nil as null.
func preferenceJSON(turns []*string) string {
	parts := make([]string, len(turns))
	for i, t := range turns {
		b, _ := json.Marshal(t)
		parts[i] = string(b)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// preferenceRows are synthetic chatbot battles shaped like Kaggle's train.csv: the longer
// response, one with a list or opening with "Certainly!", tends to win, a refusal tends to lose,
// ties are likelier when the two are alike, and stronger chatbots (named in the train only) write
// longer answers. Some second turns are null, as in the real data.
func preferenceRows(n int) [][]string {
	rng := rand.New(rand.NewPCG(3, 5))
	type bot struct {
		name  string
		skill float64
	}
	bots := []bot{{"gpt-4-1106-preview", 0.6}, {"claude-2.1", 0.4}, {"gpt-3.5-turbo-0613", 0.1},
		{"llama-2-70b-chat", -0.1}, {"mistral-medium", 0}, {"vicuna-13b", -0.3}}
	sentence := func(words int) string {
		w := make([]string, words)
		for i := range w {
			w[i] = preferenceWords[rng.IntN(len(preferenceWords))]
		}
		return strings.Join(w, " ")
	}
	// respond writes one turn and its hidden quality.
	respond := func(b bot) (string, float64) {
		if rng.Float64() < 0.06 {
			return "I'm sorry, but I cannot help with that request.", -2
		}
		words := min(600, max(3, int(math.Exp(4.0+0.5*b.skill+0.7*rng.NormFloat64()))))
		text, q := sentence(words)+".", 0.9*math.Log(float64(words))+0.3*b.skill
		if rng.Float64() < 0.25+0.2*b.skill {
			text, q = "Certainly! "+text, q+1.0
		}
		if rng.Float64() < 0.25+0.2*b.skill {
			text += "\n\n- " + sentence(4) + "\n- " + sentence(5) + "\n- " + sentence(3)
			q += 0.6
		}
		if rng.Float64() < 0.08 {
			text += "\n\n```python\nprint(" + sentence(2) + ")\n```"
		}
		return text, q
	}
	rows := [][]string{{"id", "model_a", "model_b", "prompt", "response_a", "response_b", "winner_model_a", "winner_model_b", "winner_tie"}}
	for i := 0; i < n; i++ {
		ia := rng.IntN(len(bots))
		ib := (ia + 1 + rng.IntN(len(bots)-1)) % len(bots)
		turns := 1
		if rng.Float64() < 0.15 {
			turns = 2
		}
		var prompt, ra, rb []*string
		qa, qb := 0.0, 0.0
		for k := 0; k < turns; k++ {
			p := "Question " + strconv.Itoa(k+1) + ": " + sentence(5+rng.IntN(15)) + "?"
			a, q1 := respond(bots[ia])
			b, q2 := respond(bots[ib])
			prompt, ra, rb = append(prompt, &p), append(ra, &a), append(rb, &b)
			qa, qb = qa+q1/float64(turns), qb+q2/float64(turns)
		}
		if turns == 2 && rng.Float64() < 0.3 {
			ra[1] = nil
		}
		d := qa - qb
		ea, eb, et := math.Exp(d), math.Exp(-d), math.Exp(0.3)
		win := []string{"0", "0", "0"}
		switch u := rng.Float64() * (ea + eb + et); {
		case u < ea:
			win[0] = "1"
		case u < ea+eb:
			win[1] = "1"
		default:
			win[2] = "1"
		}
		rows = append(rows, append([]string{strconv.Itoa(30192 + 104729*i), bots[ia].name, bots[ib].name,
			preferenceJSON(prompt), preferenceJSON(ra), preferenceJSON(rb)}, win...))
	}
	return rows
}

func preferenceBase() map[string]string {
	return map[string]string{"imports": "full", "load": "input", "parse": "json", "target": "argmax",
		"features": "similarity", "augment": "swap", "model": "logreg", "strength": "s3", "validation": "holdout",
		"postprocess": "none", "submission": "aligned"}
}

func preferenceWith(kv ...string) map[string]string { return override(preferenceBase(), kv...) }

// Programs of the preference library on synthetic battles prepared as the real task: the strong
// program (parsed turns, structure and similarity features, swap augmentation, logistic
// regression) clearly beats the class prior, and each failure mode fails at its stage.
func TestPreferencePrograms(t *testing.T) {
	testenv.RequirePython(t)
	t.Parallel()
	spec, err := tasks.Builtin().Get("lmsys-chatbot-arena")
	if err != nil {
		t.Fatal(err)
	}
	dirs := preparedSynthetic(t, spec, preferenceRows(2000))
	lib := codeactions.Preference
	t.Run("strong beats weak", func(t *testing.T) {
		checkStrongBeatsWeak(t, lib, spec, dirs, preferenceBase(),
			preferenceWith("model", "prior", "augment", "none", "features", "length-diff"), 0.95, 0.1)
	})
	checkPrograms(t, lib, spec, dirs, []programCase{
		{"forgetting to import json fails while parsing", preferenceWith("imports", "no-json"), false, 0, 2},
		{"literal_eval fails on null turns", preferenceWith("parse", "literal-eval"), false, 0, 2},
		{"text fed to logistic regression fails at fit", preferenceWith("features", "raw-text"), false, 0, 3},
		{"XGBoost refuses string labels", preferenceWith("target", "idxmax", "model", "xgboost", "strength", "s0"), false, 0, 3},
		{"a linear SVC has no probabilities", preferenceWith("model", "linear-svc", "validation", "none"), false, 0, 4},
		{"the test has no model names", preferenceWith("features", "model-names"), false, 0, 6},
		{"an id index leaves no id for the submission", preferenceWith("load", "index-col"), false, 0, 7},
		{"encoded labels as columns make an invalid submission", preferenceWith("submission", "model-classes"), false, 0, 7},
		{"clipped rows that no longer sum to one are invalid", preferenceWith("postprocess", "clip-no-renorm"), false, 0, 7},
	})
}

// On the synthetic arena with some prompts and responses missing (empty cells): every parser
// reads a missing text as empty, so the programs stay valid.
func TestPreferenceProgramsOnMissingTexts(t *testing.T) {
	testenv.RequirePython(t)
	t.Parallel()
	spec, err := tasks.Builtin().Get("lmsys-chatbot-arena")
	if err != nil {
		t.Fatal(err)
	}
	rows := preferenceRows(1200)
	for i := 1; i < len(rows); i++ {
		if i%29 == 0 {
			rows[i][5] = "" // response_b
		}
		if i%31 == 0 {
			rows[i][3] = "" // prompt
		}
	}
	dirs := preparedSynthetic(t, spec, rows)
	checkPrograms(t, codeactions.Preference, spec, dirs, []programCase{
		{"the strong program", preferenceBase(), true, 0.9, 7},
		{"the first turn, outcomes as signs", preferenceWith("parse", "first-turn", "target", "sign"), true, 0.9, 7},
	})
}
