package peakusage

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/grading"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// BenchmarkGradingPeak grades maximal hostile submissions (at grading's byte bound for the
// answers) against the task's real answers scaled up 200 times, in this process as the worker
// does, and reports grading's peak resident memory. Issue 61 measured 4.75-6.2 GB for 63 MiB
// of commas before grading had limits.
func BenchmarkGradingPeak(b *testing.B) {
	dataDir := testenv.PreparedData(b, task)
	spec, err := tasks.Builtin().Get(task)
	if err != nil {
		b.Fatal(err)
	}
	real := filepath.Join(tasks.Layout{DataDir: dataDir}.Dirs(task, tasks.SplitValidation).Private, spec.Files.Answers)
	raw, err := os.ReadFile(real)
	if err != nil {
		b.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	header, rows := lines[0], lines[1:]
	cols := len(strings.Split(header, ","))
	dir := b.TempDir()
	ans := filepath.Join(dir, "answers.csv")
	const scale = 200
	write(b, ans, func(w *bufio.Writer) {
		w.WriteString(header + "\n")
		for k := range scale {
			for i, r := range rows {
				_, rest, _ := strings.Cut(r, ",")
				fmt.Fprintf(w, "%d,%s\n", k*len(rows)+i+1, rest)
			}
		}
	})
	st, err := os.Stat(ans)
	if err != nil {
		b.Fatal(err)
	}
	// grading/limits.go's byte bound: 4 x the answers' size + 24 bytes a cell + 1 MiB.
	nrows := scale * len(rows)
	maxBytes := 4*st.Size() + 24*int64(nrows+1)*int64(cols) + 1<<20
	fill := func(name string, line func(i int) string) string {
		p := filepath.Join(dir, name)
		write(b, p, func(w *bufio.Writer) {
			n, _ := w.WriteString(header + "\n")
			written := int64(n)
			for i := 0; ; i++ {
				l := line(i)
				if written+int64(len(l)) > maxBytes {
					return
				}
				w.WriteString(l)
				written += int64(len(l))
			}
		})
		return p
	}
	commas := fill("commas.csv", func(int) string { return strings.Repeat(",", cols-1) + "\n" })
	floats := fill("floats.csv", func(i int) string {
		return fmt.Sprint(i%nrows+1) + strings.Repeat(",0.0101010101010101010", cols-1) + "\n"
	})
	// Read the answers once (grading caches them, as a worker's later samples find them).
	if _, err := grading.Grade(spec, commas, ans); err != nil {
		b.Fatal(err)
	}
	const mib = 1 << 20
	base := statusKB("VmRSS") << 10
	for range b.N {
		for _, sub := range []string{commas, floats} {
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Fatal(err)
			}
			r, err := grading.Grade(spec, sub, ans)
			if err != nil {
				b.Fatal(err)
			}
			hwm := statusKB("VmHWM") << 10
			size, _ := os.Stat(sub)
			name := strings.TrimSuffix(filepath.Base(sub), ".csv")
			b.ReportMetric(float64(size.Size())/mib, name+"-sub-MiB")
			b.ReportMetric(float64(hwm-base)/mib, name+"-HWM-above-base-MiB")
			fmt.Printf("grading %s: %d MiB submission against %d MiB of answers (%d rows): VmHWM %d MiB, %d MiB above the worker's %d MiB; valid %v %q\n",
				name, size.Size()/mib, st.Size()/mib, nrows, hwm/mib, (hwm-base)/mib, base/mib, r.Valid, trunc(r.Reason))
		}
	}
}

func trunc(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}

func write(b *testing.B, path string, fill func(w *bufio.Writer)) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fill(w)
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
