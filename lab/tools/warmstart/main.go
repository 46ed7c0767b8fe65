// Command warmstart reports what a run's initial policy wrote: every training program sampled
// before the first update (iteration 1's sample ids), each valid, failed or never finished, and
// for the failures whether a clash rule of the library names them (an intended clash the policy
// learns to avoid) or not (a time or memory limit, or data the rules do not foresee).
//
// The run's own first-iteration valid rate counts the first B programs to finish, and a program
// that fails at once finishes before one that trains: this counts them all, and, for the
// comparison, how many of the first B to finish (by when their results were written) were valid.
//
//	go run ./lab/tools/warmstart RUN_DIR ...     # a paragraph per run
//	go run ./lab/tools/warmstart -csv RUN_DIR    # drawn,valid,failed,unfinished,clashes,first_valid,failures
package main

import (
	"encoding/csv"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"mlerl/codeactions"
	"mlerl/lab/tools/runread"
)

// Count is the warm start's programs sorted by outcome.
type Count struct {
	Task                             string
	Drawn, Valid, Failed, Unfinished int
	Clashes                          int            // failures a clash rule names
	ByReason                         map[string]int // failures by reason, clash rules' in their words
	// FirstValid of the first First programs to finish were valid.
	First, FirstValid int
}

func main() {
	asCSV := flag.Bool("csv", false, "one CSV line per run: drawn,valid,failed,unfinished,clashes,first_valid,failures")
	first := flag.Int("first", 8, "B: how many of the first programs to finish the run's first update learns from")
	flag.Parse()
	if flag.NArg() == 0 {
		fmt.Fprintln(os.Stderr, "usage: warmstart [-csv] RUN_DIR ... (the folders `starter run --out` wrote)")
		os.Exit(2)
	}
	for _, dir := range flag.Args() {
		c, err := Read(dir, *first)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", dir, err)
			os.Exit(1)
		}
		if *asCSV {
			writeCSV(os.Stdout, c)
			continue
		}
		fmt.Printf("%s (%s): the initial policy wrote %d programs before its first update: %d valid (%.0f%%), %d failed, %d never finished\n",
			dir, c.Task, c.Drawn, c.Valid, 100*float64(c.Valid)/float64(max(1, c.Drawn)), c.Failed, c.Unfinished)
		fmt.Printf("  of the first %d to finish, %d valid\n", c.First, c.FirstValid)
		fmt.Printf("  failures: %d an intended clash (a clash rule names it), %d not: %s\n", c.Clashes, c.Failed-c.Clashes, Reasons(c.ByReason))
	}
}

func writeCSV(w io.Writer, c Count) {
	cw := csv.NewWriter(w)
	cw.Write([]string{strconv.Itoa(c.Drawn), strconv.Itoa(c.Valid), strconv.Itoa(c.Failed), strconv.Itoa(c.Unfinished),
		strconv.Itoa(c.Clashes), strconv.Itoa(c.FirstValid), Reasons(c.ByReason)})
	cw.Flush()
}

// Read counts a run directory's warm-start programs, and the valid ones among the first `first`
// of them to finish.
func Read(dir string, first int) (Count, error) {
	var info struct {
		Input struct {
			Task string `json:"task"`
		} `json:"input"`
	}
	if err := runread.ReadJSON(filepath.Join(dir, "run.json"), &info); err != nil {
		return Count{}, fmt.Errorf("%w: give a run directory (`starter run --out DIR`)", err)
	}
	reg, err := runread.Registry(dir, "")
	if err != nil {
		return Count{}, err
	}
	spec, err := reg.Get(info.Input.Task)
	if err != nil {
		return Count{}, err
	}
	lib, err := codeactions.For(spec.Modality)
	if err != nil {
		return Count{}, err
	}
	progs, err := runread.Sampled(dir)
	if err != nil {
		return Count{}, err
	}
	return count(spec.ID, lib, codeactions.SchemaOf(spec), progs, first), nil
}

// count sorts the programs of iteration 1 (the initial policy's) by outcome, and counts the
// valid ones among the first `first` to finish (by when their results were written).
func count(task string, lib *codeactions.Library, schema codeactions.Schema, progs []runread.Program, first int) Count {
	c := Count{Task: task, ByReason: map[string]int{}}
	var finished []runread.Program
	for _, p := range progs {
		if p.Iteration != 1 {
			continue
		}
		c.Drawn++
		if p.Finished && !p.Stale {
			finished = append(finished, p)
		}
		switch {
		case !p.Finished || p.Stale:
			c.Unfinished++ // cancelled before it ran, or while it ran
		case p.Valid:
			c.Valid++
		default:
			c.Failed++
			if why := lib.MayClash(p.Tokens, schema); why != "" {
				c.Clashes++
				c.ByReason["clash: "+why]++
			} else {
				c.ByReason[shortReason(p.Reason)]++
			}
		}
	}
	slices.SortStableFunc(finished, func(a, b runread.Program) int { return a.FinishedAt.Compare(b.FinishedAt) })
	c.First = min(first, len(finished))
	for _, p := range finished[:c.First] {
		if p.Valid {
			c.FirstValid++
		}
	}
	return c
}

var foldPrefix = regexp.MustCompile(`^validation fold \d+: `)

// shortReason keeps a failure's reason short enough to tally: without the fold it failed in,
// and at most one line of 100 characters.
func shortReason(r string) string {
	r = foldPrefix.ReplaceAllString(strings.TrimSpace(r), "")
	if r == "" {
		return "no reason recorded"
	}
	if i := strings.IndexByte(r, '\n'); i >= 0 {
		r = r[:i]
	}
	if len(r) > 100 {
		r = r[:100] + "..."
	}
	return r
}

// Reasons lists the tally most frequent first: `reason (n); ...`.
func Reasons(by map[string]int) string {
	keys := make([]string, 0, len(by))
	for k := range by {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if by[a] != by[b] {
			return by[b] - by[a]
		}
		return strings.Compare(a, b)
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s (%d)", k, by[k])
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, "; ")
}
