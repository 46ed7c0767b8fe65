package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter"

	"mlerl/grading"
	"mlerl/tasks"
)

// taskFlags are shared by every command that needs a task and its data.
type taskFlags struct {
	task, specFile, dataDir, python string
}

func (t *taskFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&t.task, "task", "", "competition id, e.g. leaf-classification (see 'starter tasks list'); optional with --task-spec, whose id it defaults to")
	fs.StringVar(&t.specFile, "task-spec", "", "a task spec YAML file to add or override a task")
	fs.StringVar(&t.dataDir, "data-dir", tasks.DefaultDataDir(), "MLE-bench data directory")
	fs.StringVar(&t.python, "python", "/usr/bin/python3", "Python with pandas and scikit-learn (Debian's)")
}

func (t *taskFlags) registry() (*tasks.Registry, error) {
	r := tasks.Builtin()
	if t.specFile != "" {
		if _, err := r.AddFile(t.specFile); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (t *taskFlags) spec() (*tasks.Spec, error) {
	if t.task == "" && t.specFile == "" {
		return nil, fmt.Errorf("--task is required (one of %v), or --task-spec FILE for a task of your own", tasks.Builtin().IDs())
	}
	r, err := t.registry()
	if err != nil {
		return nil, err
	}
	if t.task == "" {
		// The spec file names its task: --task would only repeat its id.
		return r.AddFile(t.specFile)
	}
	return r.Get(t.task)
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	return nil
}

func tasksList(args []string) error {
	var tf taskFlags
	fs := newFlagSet("tasks list")
	tf.register(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	r, err := tf.registry()
	if err != nil {
		return err
	}
	layout := tasks.Layout{DataDir: tf.dataDir}
	tw := tablewriter.NewWriter(os.Stdout)
	tw.Header("id", "modality", "metric", "direction", "prepared")
	for _, id := range r.IDs() {
		s, _ := r.Get(id)
		prepared := "yes"
		if layout.CheckTestSplit(s) != nil {
			prepared = "no"
		} else if layout.CheckPrepared(s) != nil {
			prepared = "test split (no folds)"
		}
		tw.Append(s.ID, s.Modality, s.Metric, s.Direction, prepared)
	}
	return tw.Render()
}

func tasksPrepare(ctx context.Context, args []string) error {
	var tf taskFlags
	fs := newFlagSet("tasks prepare")
	tf.register(fs)
	raw := fs.String("raw", "", "folder or zip with Kaggle's raw competition files; without it, only the validation folds of a prepared test split are carved")
	ifNeeded := fs.Bool("if-needed", false, "do nothing when every split and validation fold is already prepared")
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := tf.spec()
	if err != nil {
		return err
	}
	if *ifNeeded && (tasks.Layout{DataDir: tf.dataDir}).CheckPrepared(s) == nil {
		fmt.Printf("%s is already prepared in %s\n", s.ID, tf.dataDir)
		return nil
	}
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: tf.dataDir}, Python: tf.python}
	folds := "a validation split"
	if n := s.Validation.FoldCount(); n > 1 {
		folds = fmt.Sprintf("%d validation folds", n)
	}
	if *raw == "" {
		// A test split prepared elsewhere (mlebench prepare) needs only the platform's folds.
		if err := p.Layout.CheckTestSplit(s); err != nil {
			return fmt.Errorf("--raw is required: the folder or zip of Kaggle's %s files (%w)", s.ID, err)
		}
		if err := p.CarveFolds(ctx, s); err != nil {
			return err
		}
		fmt.Printf("carved %s of %s from its prepared test split in %s\n", folds, s.ID, tf.dataDir)
		return nil
	}
	if err := p.Prepare(ctx, s, *raw); err != nil {
		return err
	}
	fmt.Printf("prepared %s in %s (test split and %s)\n", s.ID, tf.dataDir, folds)
	return nil
}

func gradeCommand(args []string, out io.Writer) error {
	var tf taskFlags
	fs := newFlagSet("grade")
	tf.register(fs)
	sub := fs.String("submission", "", "submission CSV to grade")
	jsonl := fs.String("jsonl", "", "grade many: a JSONL file of {\"competition_id\", \"submission_path\"} lines")
	outFile := fs.String("out", "", "with --jsonl: also write the aggregate report to this file")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	reg, err := tf.registry()
	if err != nil {
		return err
	}
	layout := tasks.Layout{DataDir: tf.dataDir}
	if *jsonl != "" {
		agg, err := gradeMany(reg, layout, *jsonl)
		if err != nil {
			return err
		}
		b, _ := json.MarshalIndent(agg, "", "  ")
		if *outFile != "" {
			if err := os.WriteFile(*outFile, b, 0o644); err != nil {
				return err
			}
		}
		fmt.Fprintln(out, string(b))
		return nil
	}
	s, err := tf.spec()
	if err != nil {
		return err
	}
	if *sub == "" {
		return fmt.Errorf("--submission FILE (or --jsonl FILE) is required")
	}
	if err := regularFile(*sub, "submission"); err != nil {
		return err
	}
	rep, reason, err := gradeOne(s, layout, *sub)
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if err := enc.Encode(rep); err != nil {
			return err
		}
		return invalidIf(rep.ValidSubmission, reason)
	}
	score := "null"
	if rep.Score != nil {
		score = fmt.Sprint(*rep.Score)
	}
	fmt.Fprintf(out, "%s: score %s, valid %v, %s\n", s.ID, score, rep.ValidSubmission, rep.MedalsText())
	return invalidIf(rep.ValidSubmission, reason)
}

// errInvalidSubmission makes `starter grade` exit with status 1 after its report, so a script
// (grade && submit) stops at an invalid file; bad usage and missing files exit with 2.
type errInvalidSubmission struct{ reason string }

func (e errInvalidSubmission) Error() string { return "invalid submission: " + e.reason }

func invalidIf(valid bool, reason string) error {
	if valid {
		return nil
	}
	return errInvalidSubmission{reason}
}

func gradeOne(s *tasks.Spec, layout tasks.Layout, sub string) (grading.Report, string, error) {
	if err := layout.CheckTestSplit(s); err != nil { // grading reads the test answers alone
		return grading.Report{}, "", err
	}
	ans := filepath.Join(layout.Dirs(s.ID, tasks.SplitTest).Private, s.Files.Answers)
	res, err := grading.Grade(s, sub, ans)
	if err != nil {
		return grading.Report{}, "", err
	}
	return grading.NewReport(s, res, sub, time.Now()), res.Reason, nil
}

// aggregate has the fields of `mlebench grade`'s report.
type aggregate struct {
	TotalRuns                int              `json:"total_runs"`
	TotalRunsWithSubmissions int              `json:"total_runs_with_submissions"`
	TotalValidSubmissions    int              `json:"total_valid_submissions"`
	TotalMedals              int              `json:"total_medals"`
	TotalGoldMedals          int              `json:"total_gold_medals"`
	TotalSilverMedals        int              `json:"total_silver_medals"`
	TotalBronzeMedals        int              `json:"total_bronze_medals"`
	TotalAboveMedian         int              `json:"total_above_median"`
	CompetitionReports       []grading.Report `json:"competition_reports"`
}

// regularFile refuses a path that is not a regular file (or a symlink to one) without opening
// it: opening a FIFO with no writer would block for good.
func regularFile(path, what string) error {
	st, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist) && what == "submission":
		return fmt.Errorf("submission %s does not exist: give the path of the CSV to grade (a run keeps each program's under samples/<id>/submission.csv)", path)
	case err != nil:
		return fmt.Errorf("%s %s: %w", what, path, err)
	case st.IsDir():
		return fmt.Errorf("%s %s is a folder: give the CSV file in it", what, path)
	case !st.Mode().IsRegular():
		f, err := grading.OpenRegular(path) // names the kind of special file
		if err == nil {
			f.Close()
		}
		return fmt.Errorf("%s: %v", what, err)
	}
	return nil
}

func gradeMany(reg *tasks.Registry, layout tasks.Layout, file string) (aggregate, error) {
	if err := regularFile(file, "--jsonl file"); err != nil {
		return aggregate{}, err
	}
	f, err := os.Open(file)
	if err != nil {
		return aggregate{}, err
	}
	defer f.Close()
	var agg aggregate
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var entry struct {
			CompetitionID  string `json:"competition_id"`
			SubmissionPath string `json:"submission_path"`
		}
		if err := json.Unmarshal(sc.Bytes(), &entry); err != nil || entry.CompetitionID == "" {
			return aggregate{}, fmt.Errorf("%s line %d: want {\"competition_id\": ..., \"submission_path\": ...}: %v", file, line, err)
		}
		s, err := reg.Get(entry.CompetitionID)
		if err != nil {
			return aggregate{}, fmt.Errorf("%s line %d: %w", file, line, err)
		}
		rep, _, err := gradeOne(s, layout, entry.SubmissionPath)
		if err != nil {
			return aggregate{}, fmt.Errorf("%s line %d: %w", file, line, err)
		}
		agg.TotalRuns++
		if rep.SubmissionExist {
			agg.TotalRunsWithSubmissions++
		}
		if rep.ValidSubmission {
			agg.TotalValidSubmissions++
		}
		if rep.AnyMedal {
			agg.TotalMedals++
		}
		if rep.GoldMedal {
			agg.TotalGoldMedals++
		}
		if rep.SilverMedal {
			agg.TotalSilverMedals++
		}
		if rep.BronzeMedal {
			agg.TotalBronzeMedals++
		}
		if rep.AboveMedian {
			agg.TotalAboveMedian++
		}
		agg.CompetitionReports = append(agg.CompetitionReports, rep)
	}
	return agg, sc.Err()
}

// tasksThresholds prints the medal thresholds MLE-bench computes from a Kaggle leaderboard, and
// the spec's thresholds line to paste.
func tasksThresholds(args []string, out io.Writer) error {
	var tf taskFlags
	fs := newFlagSet("tasks thresholds")
	tf.register(fs)
	board := fs.String("leaderboard", "", "Kaggle private leaderboard CSV in MLE-bench's format (teamName, score, ...), best first")
	direction := fs.String("direction", "", "min (lower is better) or max; default: the --task spec's direction, else read off the leaderboard")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *board == "" {
		return errors.New("--leaderboard FILE is required: the competition's leaderboard.csv (MLE-bench keeps one per competition)")
	}
	dir := *direction
	if dir == "" && tf.task != "" {
		s, err := tf.spec()
		if err != nil {
			return err
		}
		dir = s.Direction
	}
	if err := regularFile(*board, "leaderboard"); err != nil {
		return err
	}
	f, err := os.Open(*board)
	if err != nil {
		return err
	}
	defer f.Close()
	scores, err := grading.ReadLeaderboard(f)
	if err != nil {
		return fmt.Errorf("leaderboard %s: %w", *board, err)
	}
	th, lower, note, err := grading.ThresholdsFor(scores, dir)
	if err != nil {
		return fmt.Errorf("leaderboard %s: %w", *board, err)
	}
	if note != "" {
		fmt.Fprintln(out, "note:", note)
	}
	// 10 significant digits: the median's mean of two scores carries float noise past them.
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', 10, 64) }
	better := map[bool]string{true: "min (lower is better)", false: "max (higher is better)"}[lower]
	fmt.Fprintf(out, "teams %d, direction %s\ngold %s\nsilver %s\nbronze %s\nmedian %s\n", len(scores), better, g(th.Gold), g(th.Silver), g(th.Bronze), g(th.Median))
	fmt.Fprintf(out, "spec: thresholds: {gold: %s, silver: %s, bronze: %s, median: %s}\n", g(th.Gold), g(th.Silver), g(th.Bronze), g(th.Median))
	return nil
}
