// Package benchmarks measures the platform's performance claims; results and the commands that
// produced them are in RESULTS.md.
package benchmarks

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/grading"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// BenchmarkGrade1000Leaf grades 1,000 distinct valid leaf-classification submissions against
// the real private answers (issue: under 2 s for 1,000 on this machine). One op = 1,000 grades.
func BenchmarkGrade1000Leaf(b *testing.B) {
	dataDir := testenv.PreparedData(b, "leaf-classification")
	spec, _ := tasks.Builtin().Get("leaf-classification")
	dirs := tasks.Layout{DataDir: dataDir}.Dirs(spec.ID, tasks.SplitTest)
	answers := filepath.Join(dirs.Private, spec.Files.Answers)
	sample, err := os.ReadFile(filepath.Join(dirs.Public, spec.Files.SampleSubmission))
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(sample)), "\n")
	k := len(strings.Split(lines[0], ",")) - 1
	dir := b.TempDir()
	rng := rand.New(rand.NewPCG(1, 1))
	files := make([]string, 1000)
	for i := range files {
		var sb strings.Builder
		sb.WriteString(lines[0] + "\n")
		for _, l := range lines[1:] {
			id := l[:strings.IndexByte(l, ',')]
			p := make([]float64, k)
			s := 0.0
			for j := range p {
				p[j] = rng.Float64()
				s += p[j]
			}
			sb.WriteString(id)
			for _, v := range p {
				fmt.Fprintf(&sb, ",%v", v/s)
			}
			sb.WriteString("\n")
		}
		files[i] = filepath.Join(dir, fmt.Sprintf("sub%04d.csv", i))
		os.WriteFile(files[i], []byte(sb.String()), 0o644)
	}
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		for _, f := range files {
			r, err := grading.Grade(spec, f, answers)
			if err != nil || !r.Valid {
				b.Fatalf("%s: %+v %v", f, r, err)
			}
		}
	}
}
