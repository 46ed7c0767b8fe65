package grading

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"mlerl/tasks"
)

// memCase is one submission graded in a child process whose peak resident memory is measured.
type memCase struct {
	name             string
	answers, sub     string // file names in the shared folder
	valid            bool
	maxPeakMiB       int64 // the bound the limits must keep
	reasonContaining string
}

// TestGradePeakMemory grades hostile and large submissions, each in a fresh child process, and
// bounds each one's peak resident memory (VmHWM): issue 61 measured 4.75-6.2 GB for a 63 MiB
// file of commas. The child is this test binary run again with memCaseEnv set.
func TestGradePeakMemory(t *testing.T) {
	if c := os.Getenv(memCaseEnv); c != "" {
		gradeMemCase(t, c)
		return
	}
	dir := t.TempDir()
	const mib = 1 << 20
	write := func(name string, fill func(w *bufio.Writer)) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriterSize(f, mib)
		fill(w)
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	// The commas take issue 61's 63 MiB; the valid submission is a quarter of that (16 MiB,
	// 600,000 rows of full-precision floats) to keep the test fast.
	const bigRows = 600_000
	write("small-answers.csv", func(w *bufio.Writer) {
		w.WriteString("id,target\n")
		for i := range 1000 {
			fmt.Fprintf(w, "%d,%d\n", i, i%2)
		}
	})
	write("big-answers.csv", func(w *bufio.Writer) {
		w.WriteString("id,target\n")
		for i := range bigRows {
			fmt.Fprintf(w, "%d,%d\n", i, i%2)
		}
	})
	write("commas.csv", func(w *bufio.Writer) {
		w.Write(bytes.Repeat([]byte{','}, 63*mib))
	})
	write("commas-32.csv", func(w *bufio.Writer) { // within the byte limit of the 600,000 answers
		w.Write(bytes.Repeat([]byte{','}, 32*mib))
	})
	write("big-valid.csv", func(w *bufio.Writer) {
		w.WriteString("id,target\n")
		for i := range bigRows {
			fmt.Fprintf(w, "%d,%.17f\n", i, float64(i%1000)/1000+1e-9)
		}
	})
	cases := []memCase{
		{name: "63 MiB of commas, 1,000 answers", answers: "small-answers.csv", sub: "commas.csv", maxPeakMiB: 64, reasonContaining: "bytes"},
		{name: "32 MiB of commas, 600,000 answers", answers: "big-answers.csv", sub: "commas-32.csv", maxPeakMiB: 150, reasonContaining: "line"},
		{name: "a valid submission, 600,000 answers", answers: "big-answers.csv", sub: "big-valid.csv", valid: true, maxPeakMiB: 400},
	}
	for _, c := range cases {
		st, _ := os.Stat(filepath.Join(dir, c.sub))
		cmd := exec.Command(os.Args[0], "-test.run=^TestGradePeakMemory$", "-test.count=1")
		cmd.Env = append(os.Environ(), memCaseEnv+"="+filepath.Join(dir, c.answers)+","+filepath.Join(dir, c.sub))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: the child failed: %v\n%s", c.name, err, out)
		}
		var peak int64
		var valid bool
		var reason string
		for _, l := range strings.Split(string(out), "\n") {
			if rest, ok := strings.CutPrefix(l, "grade-memory: "); ok {
				f := strings.SplitN(rest, " ", 3)
				peak, _ = strconv.ParseInt(f[0], 10, 64)
				valid = f[1] == "true"
				reason = f[2]
			}
		}
		if peak == 0 {
			t.Fatalf("%s: the child printed no measurement:\n%s", c.name, out)
		}
		t.Logf("%s (%d MiB submission): peak RSS %d MiB, valid %v %s", c.name, st.Size()/mib, peak/1024, valid, reason)
		switch {
		case valid != c.valid || !strings.Contains(reason, c.reasonContaining):
			t.Errorf("%s: valid %v (%s), want valid %v with a reason containing %q", c.name, valid, reason, c.valid, c.reasonContaining)
		case peak/1024 > c.maxPeakMiB && os.Getenv(memBeforeEnv) == "":
			t.Errorf("%s: peak RSS %d MiB, over the bound of %d MiB", c.name, peak/1024, c.maxPeakMiB)
		}
	}
}

const (
	memCaseEnv = "MLERL_GRADE_MEMORY_CASE"
	// memBeforeEnv reports the numbers without the bounds, to measure a grader without limits.
	memBeforeEnv = "MLERL_GRADE_MEMORY_REPORT_ONLY"
)

// gradeMemCase is the child: it grades one submission and prints its peak resident memory.
func gradeMemCase(t *testing.T, c string) {
	answers, sub, _ := strings.Cut(c, ",")
	spec := &tasks.Spec{ID: "tabular-playground-series-may-2022", Metric: "roc-auc", Direction: "max", IDColumn: "id",
		Answers: tasks.Answers{Format: "columns", Columns: []string{"target"}, MatchBy: "id"}}
	r, err := Grade(spec, sub, answers)
	if err != nil {
		t.Fatal(err)
	}
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb := strings.TrimSuffix(strings.TrimSpace(rest), " kB")
			reason := strings.ReplaceAll(r.Reason, "\n", " ")
			if len(reason) > 200 {
				reason = reason[:200]
			}
			fmt.Printf("grade-memory: %s %v %s\n", kb, r.Valid, reason)
		}
	}
}
