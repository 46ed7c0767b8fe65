// Command provenance says where an experiment's final answers came from: for each done cell,
// the iteration that sampled each member of the answer's ensemble and its weight, the weight on
// programs sampled in the first iteration, and the weight on programs that the cell's paired
// arms (same task and seed) also ran. The arms of a seed start from the same policy and seed,
// so their first batches can coincide: an answer built from them owes nothing to training, and
// RL cannot beat broad sampling with it.
//
//	go run ./lab/tools/provenance EXPERIMENT_DIR
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
	"mlerl/runrecord"
)

// iterationOf reads the iteration from a training sample id (it0003-s001, it0003-r1-s001);
// 0 for the evaluation samples drawn after training.
var iterationRE = regexp.MustCompile(`^it(\d+)-`)

func iterationOf(id string) int {
	m := iterationRE.FindStringSubmatch(id)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// runPrograms maps each program text's hash to the first iteration that ran it (0: evaluation
// only) in one run directory.
func runPrograms(runDir string) (map[string]int, error) {
	progs, err := filepath.Glob(filepath.Join(runDir, runstore.Sample("*").Program()))
	if err != nil {
		return nil, err
	}
	first := map[string]int{}
	for _, p := range progs {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		h := fmt.Sprintf("%x", sha256.Sum256(b))
		it := iterationOf(filepath.Base(filepath.Dir(p)))
		if old, ok := first[h]; !ok || (it > 0 && (old == 0 || it < old)) {
			first[h] = it
		}
	}
	return first, nil
}

func programHash(runDir, id string) (string, error) {
	b, err := os.ReadFile(filepath.Join(runDir, runstore.Sample(id).Program()))
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", sha256.Sum256(b)), nil
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: provenance EXPERIMENT_DIR")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "provenance:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	b, err := os.ReadFile(filepath.Join(dir, runstore.LedgerFile))
	if err != nil {
		return fmt.Errorf("%w: give an experiment directory (it holds %s)", err, runstore.LedgerFile)
	}
	var ledger experiment.Ledger
	if err := json.Unmarshal(b, &ledger); err != nil {
		return fmt.Errorf("%s: %w", runstore.LedgerFile, err)
	}
	type key struct {
		task string
		seed uint64
	}
	programs := map[string]map[string]int{} // run -> program hash -> first iteration
	byPair := map[key][]string{}
	for _, c := range ledger.Cells {
		if c.Status != experiment.StatusDone {
			continue
		}
		p, err := runPrograms(runstore.ExperimentRunDir(dir, c.Run))
		if err != nil {
			return err
		}
		programs[c.Run] = p
		k := key{c.Task, c.Seed}
		byPair[k] = append(byPair[k], c.Run)
	}
	fmt.Println("| cell | members (iteration: weight) | weight from iteration 1 | weight also run by the paired arm | iteration-1 programs shared with the paired arm |")
	fmt.Println("|---|---|---|---|---|")
	for _, c := range ledger.Cells {
		if c.Status != experiment.StatusDone {
			continue
		}
		runDir := runstore.ExperimentRunDir(dir, c.Run)
		var ans runrecord.FinalAnswer
		b, err := os.ReadFile(filepath.Join(runDir, runstore.AnswerKey))
		if err != nil || json.Unmarshal(b, &ans) != nil || len(ans.Members) == 0 {
			fmt.Printf("| %s | no answer | | | |\n", c.Run)
			continue
		}
		var others []string
		for _, r := range byPair[key{c.Task, c.Seed}] {
			if r != c.Run {
				others = append(others, r)
			}
		}
		type member struct {
			iteration int
			weight    float64
		}
		var members []member
		first, shared := 0.0, 0.0
		for _, m := range ans.Members {
			h, err := programHash(runDir, m.SampleID)
			if err != nil {
				return err
			}
			it := programs[c.Run][h] // the first iteration this run ran the program
			members = append(members, member{it, m.Weight})
			if it == 1 {
				first += m.Weight
			}
			for _, o := range others {
				if _, ok := programs[o][h]; ok {
					shared += m.Weight
					break
				}
			}
		}
		sort.Slice(members, func(i, j int) bool { return members[i].iteration < members[j].iteration })
		parts := make([]string, len(members))
		for i, m := range members {
			parts[i] = fmt.Sprintf("%d: %.2f", m.iteration, m.weight)
		}
		// How alike the arms' first batches are: programs both ran in iteration 1.
		ones, common := 0, 0
		for h, it := range programs[c.Run] {
			if it != 1 {
				continue
			}
			ones++
			for _, o := range others {
				if programs[o][h] == 1 {
					common++
					break
				}
			}
		}
		fmt.Printf("| %s | %s | %.2f | %.2f | %d of %d |\n", c.Run, strings.Join(parts, ", "), first, shared, common, ones)
	}
	return nil
}
