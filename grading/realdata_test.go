package grading

import (
	"path/filepath"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// On every task prepared from ../shared: the sample submission is valid, and the answers graded
// as a submission get the metric's perfect score.
func TestPreparedTasksGradeTheirOwnFiles(t *testing.T) {
	perfect := map[string]float64{"multi-class-log-loss": 0, "roc-auc": 1, "mean-column-rmsle": 0}
	for _, id := range []string{"leaf-classification", "random-acts-of-pizza", "nomad2018-predict-transparent-conductors", "detecting-insults-in-social-commentary"} {
		t.Run(id, func(t *testing.T) {
			spec, _ := tasks.Builtin().Get(id)
			dirs := tasks.Layout{DataDir: testenv.PreparedData(t, id)}.Dirs(id, tasks.SplitTest)
			answers := filepath.Join(dirs.Private, spec.Files.Answers)
			r, err := Grade(spec, filepath.Join(dirs.Public, spec.Files.SampleSubmission), answers)
			if err != nil || !r.Valid {
				t.Fatalf("the sample submission must be valid: %+v %v", r, err)
			}
			r, err = Grade(spec, answers, answers)
			if err != nil || !r.Valid || *r.Score != perfect[spec.Metric] {
				t.Fatalf("the answers as a submission: %+v %v, want %v", r, err, perfect[spec.Metric])
			}
		})
	}
}
