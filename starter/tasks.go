package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
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
	fs.StringVar(&t.task, "task", "", "competition id, e.g. leaf-classification (see `starter tasks list`)")
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
	if t.task == "" {
		return nil, fmt.Errorf("--task is required (one of %v)", tasks.Builtin().IDs())
	}
	r, err := t.registry()
	if err != nil {
		return nil, err
	}
	return r.Get(t.task)
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (flags start with --)", fs.Arg(0))
	}
	return nil
}

func tasksList(args []string) error {
	var tf taskFlags
	fs := flag.NewFlagSet("tasks list", flag.ContinueOnError)
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
		if layout.CheckPrepared(s) != nil {
			prepared = "no"
		}
		tw.Append(s.ID, s.Modality, s.Metric, s.Direction, prepared)
	}
	return tw.Render()
}

func tasksPrepare(ctx context.Context, args []string) error {
	var tf taskFlags
	fs := flag.NewFlagSet("tasks prepare", flag.ContinueOnError)
	tf.register(fs)
	raw := fs.String("raw", "", "folder or zip with Kaggle's raw competition files")
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := tf.spec()
	if err != nil {
		return err
	}
	if *raw == "" {
		return fmt.Errorf("--raw is required: the folder or zip of Kaggle's %s files", s.ID)
	}
	p := tasks.Preparer{Layout: tasks.Layout{DataDir: tf.dataDir}, Python: tf.python}
	if err := p.Prepare(ctx, s, *raw); err != nil {
		return err
	}
	fmt.Printf("prepared %s in %s (test split and validation split)\n", s.ID, tf.dataDir)
	return nil
}

func gradeCommand(args []string) error {
	var tf taskFlags
	fs := flag.NewFlagSet("grade", flag.ContinueOnError)
	tf.register(fs)
	sub := fs.String("submission", "", "submission CSV to grade")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	s, err := tf.spec()
	if err != nil {
		return err
	}
	if *sub == "" {
		return fmt.Errorf("--submission is required")
	}
	layout := tasks.Layout{DataDir: tf.dataDir}
	if err := layout.CheckPrepared(s); err != nil {
		return err
	}
	ans := layout.Dirs(s.ID, tasks.SplitTest).Private + "/" + s.Files.Answers
	res, err := grading.Grade(s, *sub, ans)
	if err != nil {
		return err
	}
	rep := grading.NewReport(s, res, *sub, time.Now())
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	score := "null"
	if rep.Score != nil {
		score = fmt.Sprint(*rep.Score)
	}
	fmt.Printf("%s: score %s, valid %v, any medal %v (gold %v, silver %v, bronze %v), above median %v\n",
		s.ID, score, rep.ValidSubmission, rep.AnyMedal, rep.GoldMedal, rep.SilverMedal, rep.BronzeMedal, rep.AboveMedian)
	if res.Reason != "" {
		fmt.Println("invalid submission:", res.Reason)
	}
	return nil
}
