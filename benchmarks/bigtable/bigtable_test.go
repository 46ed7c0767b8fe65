// Package bigtable measures what the final answer's steps cost the worker on an image-output
// task's out-of-fold predictions: one row per pixel, 16 million rows (denoising's public train).
package bigtable

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"mlerl/ensemble"
	"mlerl/grading"
	"mlerl/tasks"
)

// pages x height x width pixels: the public train's 115 pages, 540 wide, most 258 high.
func size() (pages, height, width int) {
	pages = 115
	if s := os.Getenv("MLERL_BIGTABLE_PAGES"); s != "" {
		pages, _ = strconv.Atoi(s)
	}
	return pages, 258, 540
}

var spec = &tasks.Spec{ID: "denoising-dirty-documents", Metric: "rmse", Direction: "min", IDColumn: "id",
	Answers: tasks.Answers{Format: "columns", Columns: []string{"value"}, MatchBy: "id"}}

func clean(p, r, c int) float64 { return float64((p*7+r*13+c*3)%256) / 255 }

func noisy(s int) func(p, r, c int) float64 {
	return func(p, r, c int) float64 { return min(1, clean(p, r, c)+float64((p+r*c+s*17)%9)/100) }
}

// writePages writes the pixels of pages, in that order, with their values.
func writePages(b *testing.B, path string, pages []int, value func(p, r, c int) float64) string {
	_, height, width := size()
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("id,value\n")
	for _, p := range pages {
		for r := 1; r <= height; r++ {
			for c := 1; c <= width; c++ {
				fmt.Fprintf(w, "%d_%d_%d,%s\n", p+1, r, c, strconv.FormatFloat(value(p, r, c), 'g', -1, 64))
			}
		}
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// files writes the answers and k submissions of every page (each a different image, its pages
// in a different order, as folds' predictions are joined) and returns their paths.
func files(b *testing.B, k int) (answers string, subs []string) {
	dir := b.TempDir()
	pages, _, _ := size()
	all := make([]int, pages)
	for i := range all {
		all[i] = i
	}
	answers = writePages(b, filepath.Join(dir, "answers.csv"), all, clean)
	for s := range k {
		// Pages as written, reversed, rotated.
		order := slices.Clone(all)
		switch s % 3 {
		case 1:
			slices.Reverse(order)
		case 2:
			order = append(order[pages/2:], order[:pages/2]...)
		}
		subs = append(subs, writePages(b, filepath.Join(dir, fmt.Sprintf("sub%d.csv", s)), order, noisy(s)))
	}
	return answers, subs
}

// folds writes the answers and one program's predictions on k folds of the pages (page p in
// fold p mod k), and returns their paths.
func folds(b *testing.B, k int) (answers string, parts []string) {
	dir := b.TempDir()
	pages, _, _ := size()
	var order []int
	for f := range k {
		var fold []int
		for p := f; p < pages; p += k {
			fold = append(fold, p)
		}
		parts = append(parts, writePages(b, filepath.Join(dir, fmt.Sprintf("fold%d.csv", f)), fold, noisy(0)))
		order = append(order, fold...)
	}
	return writePages(b, filepath.Join(dir, "answers.csv"), order, clean), parts
}

// resetPeak restarts this process's VmHWM; peakMiB reads it.
func resetPeak(b *testing.B) {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		b.Fatalf("resetting VmHWM: %v", err)
	}
}

func peakMiB(b *testing.B) float64 {
	s, err := os.ReadFile("/proc/self/status")
	if err != nil {
		b.Fatal(err)
	}
	for _, l := range strings.Split(string(s), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			return kb / 1024
		}
	}
	b.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkGrade grades one submission of every pixel, as CrossValidate grades a program's
// joined out-of-fold predictions.
func BenchmarkGrade(b *testing.B) {
	answers, subs := files(b, 1)
	resetPeak(b)
	for b.Loop() {
		r, err := grading.Grade(spec, subs[0], answers)
		if err != nil || !r.Valid {
			b.Fatalf("%+v %v", r, err)
		}
	}
	b.ReportMetric(peakMiB(b), "peak-MiB")
}

// BenchmarkJoinAndGradeFolds joins a program's 5 folds' predictions and grades them, as
// CrossValidate does.
func BenchmarkJoinAndGradeFolds(b *testing.B) {
	answers, parts := folds(b, 5)
	out := filepath.Join(b.TempDir(), "oof.csv")
	resetPeak(b)
	for b.Loop() {
		var raw [][]byte
		for _, p := range parts {
			r, err := os.ReadFile(p)
			if err != nil {
				b.Fatal(err)
			}
			raw = append(raw, r)
		}
		joined, err := ensemble.ConcatCSV(raw)
		if err != nil {
			b.Fatal(err)
		}
		raw = nil
		if err := os.WriteFile(out, joined, 0o644); err != nil {
			b.Fatal(err)
		}
		if r, err := grading.Grade(spec, out, answers); err != nil || !r.Valid {
			b.Fatalf("%+v %v", r, err)
		}
	}
	b.ReportMetric(peakMiB(b), "peak-MiB")
}

// BenchmarkEnsembleSelection runs greedy ensemble selection (25 rounds) over 3 programs'
// predictions of every pixel, as SelectEnsemble does: read and matched once, blended and
// scored as numbers.
func BenchmarkEnsembleSelection(b *testing.B) {
	answers, subs := files(b, 3)
	resetPeak(b)
	for b.Loop() {
		start := time.Now()
		num, err := grading.NewNumeric(spec, answers)
		if err != nil {
			b.Fatal(err)
		}
		preds := make([][][]float64, len(subs))
		for i, s := range subs {
			var r grading.Result
			if preds[i], r, err = num.Read(s); err != nil || !r.Valid {
				b.Fatalf("%+v %v", r, err)
			}
		}
		read := time.Since(start)
		blends := 0
		sel, err := ensemble.Greedy(len(subs), 25, true, func(counts []int) (float64, bool, error) {
			blends++
			w := make([]float64, len(counts))
			for i, c := range counts {
				w[i] = float64(c)
			}
			blend, err := ensemble.BlendColumns(preds, w, ensemble.Align{IDColumn: "id"})
			if err != nil {
				return 0, false, err
			}
			g, err := num.Score(blend)
			if err != nil || !g.Valid {
				return 0, false, err
			}
			return *g.Score, true, nil
		})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(read.Seconds(), "read-s")
		b.ReportMetric((time.Since(start)-read).Seconds()/float64(blends), "s/blend")
		b.Logf("selection %v over %d blends", sel.Counts, blends)
	}
	b.ReportMetric(peakMiB(b), "peak-MiB")
}

// BenchmarkBlendAsText blends 3 programs' predictions of every pixel as text and grades the
// blend, as selection does for metrics that vote (labels, texts) and did for every metric: the
// cost of one blend that way.
func BenchmarkBlendAsText(b *testing.B) {
	answers, subs := files(b, 3)
	resetPeak(b)
	tables := make([]ensemble.Table, len(subs))
	for i, s := range subs {
		raw, err := os.ReadFile(s)
		if err != nil {
			b.Fatal(err)
		}
		if tables[i], err = ensemble.ReadCSV(raw); err != nil {
			b.Fatal(err)
		}
	}
	out := filepath.Join(b.TempDir(), "blend.csv")
	for b.Loop() {
		blend, err := ensemble.Blend(tables, []float64{2, 1, 1}, ensemble.Align{IDColumn: "id"})
		if err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(out, blend.CSV(), 0o644); err != nil {
			b.Fatal(err)
		}
		if r, err := grading.Grade(spec, out, answers); err != nil || !r.Valid {
			b.Fatalf("%+v %v", r, err)
		}
	}
	b.ReportMetric(peakMiB(b), "peak-MiB")
}
