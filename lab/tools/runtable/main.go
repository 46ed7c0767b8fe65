// Command runtable writes a lab run page's ledger (its plan.csv and results.csv, under
// lab/runs/) as one Markdown table, a row per task: each seed's final answer on the test
// answers beside the paper's RL and the task's medal thresholds, the valid-program rate at the
// warm start and in the last iteration, and the mean reward's first and last iterations, each
// with how many of the plan's seeds meet the rule it stands for (issue 60's goals). Pages quote it between
// `<!-- runtable PAGE -->` and `<!-- /runtable -->`; a test keeps every quote equal to its ledger.
//
//	go run ./lab/tools/runtable PAGE             # print the table
//	go run ./lab/tools/runtable -write FILE ...  # rewrite the quotes in the files
package main

import (
	"bytes"
	"encoding/csv"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"mlerl/report"
	"mlerl/tasks"
)

// paperRL is the system the goals compare with: the paper's Table 1 RL agent.
const paperRL = "Qwen2.5-3B RL"

// run is one row of a page's results.csv.
type run struct {
	seed                    string
	validFirst, validLast   float64
	rewardFirst, rewardLast float64
	test                    *float64 // nil: no valid final answer
	medal                   string   // "G", "S", "B" or ""
	minutes                 float64
}

func main() {
	write := flag.Bool("write", false, "rewrite every `<!-- runtable PAGE -->` quote in the files given")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: runtable PAGE (e.g. lab/runs/freshseeds), or runtable -write FILE ...")
		os.Exit(2)
	}
	if !*write {
		out, err := Table(flag.Arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fmt.Print(out)
		return
	}
	for _, f := range flag.Args() {
		b, err := os.ReadFile(f)
		if err == nil {
			var out string
			out, _, err = Requote(string(b), ".")
			if err == nil {
				err = os.WriteFile(f, []byte(out), 0o644)
			}
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", f, err)
			os.Exit(1)
		}
	}
}

// quote is a page's table quoted in Markdown; its page is relative to the repository root.
var quote = regexp.MustCompile(`(?s)<!-- runtable (\S+) -->\n(.*?)<!-- /runtable -->`)

// Requote rewrites every quote in text from its page's ledger under root and returns the text
// and the pages whose quote changed.
func Requote(text, root string) (string, []string, error) {
	var changed []string
	var err error
	out := quote.ReplaceAllStringFunc(text, func(q string) string {
		m := quote.FindStringSubmatch(q)
		table, e := Table(filepath.Join(root, m[1]))
		if e != nil {
			err = e
			return q
		}
		if table != m[2] {
			changed = append(changed, m[1])
		}
		return "<!-- runtable " + m[1] + " -->\n" + table + "<!-- /runtable -->"
	})
	return out, changed, err
}

// Table renders the page's ledger.
func Table(page string) (string, error) {
	plan, err := readCSV(filepath.Join(page, "plan.csv"))
	if err != nil {
		return "", err
	}
	results, err := readCSV(filepath.Join(page, "results.csv"))
	if err != nil {
		return "", err
	}
	runs := map[string]run{} // by task and seed
	col := func(name string) int { return slices.Index(results[0], name) }
	for _, name := range []string{"task", "seed", "wall_s", "valid_first", "valid_last", "reward_first", "reward_last", "answer_test", "medal"} {
		if col(name) < 0 {
			return "", fmt.Errorf("%s/results.csv has no %s column: it is written by lab/runs/defaultbudget/run.sh", page, name)
		}
	}
	for _, r := range results[1:] {
		var x run
		x.seed = r[col("seed")]
		nums := []*float64{&x.validFirst, &x.validLast, &x.rewardFirst, &x.rewardLast, &x.minutes}
		for i, name := range []string{"valid_first", "valid_last", "reward_first", "reward_last", "wall_s"} {
			if *nums[i], err = strconv.ParseFloat(r[col(name)], 64); err != nil {
				return "", fmt.Errorf("%s/results.csv, %s seed %s: %s %q is not a number", page, r[col("task")], x.seed, name, r[col(name)])
			}
		}
		x.minutes /= 60
		if v, err := strconv.ParseFloat(r[col("answer_test")], 64); err == nil {
			x.test = &v
		}
		x.medal = map[string]string{"gold medal": "G", "silver medal": "S", "bronze medal": "B"}[r[col("medal")]]
		runs[r[col("task")]+","+x.seed] = x
	}

	var buf bytes.Buffer
	t := tablewriter.NewTable(&buf, tablewriter.WithRenderer(renderer.NewMarkdown()), tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone))
	t.Header("task", "seeds", "final answer on the test answers", "paper's RL", "bronze / silver / gold",
		"warm start valid (first 8 to finish)", "last iteration valid", "mean reward, first → last", "minutes")
	var order []string
	seeds := map[string][]string{}
	for _, r := range plan[1:] {
		if !slices.Contains(order, r[0]) {
			order = append(order, r[0])
		}
		seeds[r[0]] = append(seeds[r[0]], r[1])
	}
	specs := tasks.Builtin()
	for _, task := range order {
		spec, err := specs.Get(task)
		if err != nil {
			return "", fmt.Errorf("%s/plan.csv: %w", page, err)
		}
		rl, better := "-", ""
		var rlMean *float64
		bs, err := report.Baselines(task)
		if err != nil {
			return "", err
		}
		for _, b := range bs {
			if b.System == paperRL && b.Mean != nil {
				rl, rlMean, better = strconv.FormatFloat(*b.Mean, 'f', -1, 64), b.Mean, b.Better
			}
		}
		th := "not known"
		if spec.Thresholds != (tasks.Thresholds{}) {
			f := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
			th = f(spec.Thresholds.Bronze) + " / " + f(spec.Thresholds.Silver) + " / " + f(spec.Thresholds.Gold)
		}
		var answers, first, last, rewards, minutes []string
		var medals, beats, warm, warmStrict, rises int
		for _, s := range seeds[task] {
			x, ok := runs[task+","+s]
			if !ok {
				for _, c := range []*[]string{&answers, &first, &last, &rewards, &minutes} {
					*c = append(*c, "pending")
				}
				continue
			}
			a := "no valid answer"
			if x.test != nil {
				a = strconv.FormatFloat(*x.test, 'f', 5, 64)
				if x.medal != "" {
					a += " " + x.medal
					medals++
				}
				if rlMean != nil && (better == "max" && *x.test >= *rlMean || better == "min" && *x.test <= *rlMean) {
					beats++
				}
			}
			answers = append(answers, a)
			first = append(first, percent(x.validFirst))
			last = append(last, percent(x.validLast))
			rewards = append(rewards, fmt.Sprintf("%.2f → %.2f", x.rewardFirst, x.rewardLast))
			minutes = append(minutes, fmt.Sprintf("%.1f", x.minutes))
			// The pages' rule is at least half valid; the words, under half failing.
			if x.validFirst >= 0.5 {
				warm++
			}
			if x.validFirst > 0.5 {
				warmStrict++
			}
			if x.rewardLast > x.rewardFirst {
				rises++
			}
		}
		n := len(seeds[task])
		answer := strings.Join(answers, ", ")
		var counts []string
		if th != "not known" {
			counts = append(counts, fmt.Sprintf("a medal %d of %d", medals, n))
		}
		if rlMean != nil {
			counts = append(counts, fmt.Sprintf("the paper's RL or better %d of %d", beats, n))
		}
		if len(counts) > 0 {
			answer += " (" + strings.Join(counts, "; ") + ")"
		}
		if err := t.Append(task, strings.Join(seeds[task], ", "), answer, rl, th,
			strings.Join(first, ", ")+fmt.Sprintf(" (≥ 50%%: %d of %d; over 50%%: %d of %d)", warm, n, warmStrict, n),
			strings.Join(last, ", "),
			strings.Join(rewards, ", ")+fmt.Sprintf(" (rises: %d of %d)", rises, n),
			strings.Join(minutes, ", ")); err != nil {
			return "", err
		}
	}
	if err := t.Render(); err != nil {
		return "", err
	}
	return strings.TrimRight(buf.String(), "\n") + "\n", nil
}

func percent(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" }

func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: a run page holds plan.csv and results.csv (lab/runs/defaultbudget/run.sh writes the latter)", err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) < 1 {
		return nil, fmt.Errorf("%s is empty: it needs its header row", path)
	}
	return rows, nil
}
