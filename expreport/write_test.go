package expreport

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"image"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
)

var (
	wantTables  = []string{"table1", "table1-chosen", "table1-answer", "ablations", "budget", "pass", "cells"}
	wantFigures = []string{"fig7-programs", "fig7-wall", "fig8-duration", "fig9-instrumentation", "fig10-training"}
)

func wantFiles() []string {
	var out []string
	for _, t := range wantTables {
		out = append(out, t+".md", t+".csv")
	}
	for _, f := range wantFigures {
		out = append(out, f+".png")
	}
	return append(out, "report.md", "index.html")
}

// checkPNG decodes a PNG and checks it is a real picture: large enough, and not one colour.
func checkPNG(t *testing.T, name string, b []byte, minW, minH int) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	bd := img.Bounds()
	if bd.Dx() < minW || bd.Dy() < minH {
		t.Fatalf("%s is %dx%d, want at least %dx%d", name, bd.Dx(), bd.Dy(), minW, minH)
	}
	colours := map[[4]uint32]bool{}
	for y := bd.Min.Y; y < bd.Max.Y; y += 3 {
		for x := bd.Min.X; x < bd.Max.X; x += 3 {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	if len(colours) < 10 {
		t.Fatalf("%s has %d colours: blank", name, len(colours))
	}
	return img
}

func TestWrite(t *testing.T) {
	dir := writeFixtureDir(t, fixtureSpec())
	out := filepath.Join(dir, "report")
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	// a table4 from an earlier report (of a spec with scratch-only) must not survive
	if err := os.WriteFile(filepath.Join(out, "table4.md"), []byte("stale"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range res.Files {
		got = append(got, filepath.Base(f))
		if filepath.Dir(f) != out {
			t.Errorf("%s written outside %s", f, out)
		}
	}
	if !slices.Equal(got, wantFiles()) {
		t.Fatalf("files written:\n got %v\nwant %v", got, wantFiles())
	}
	if len(res.Skipped) != 1 || !strings.HasPrefix(res.Skipped[0], "table4: ") {
		t.Fatalf("skipped: %v", res.Skipped)
	}
	if _, err := os.Stat(filepath.Join(out, "table4.md")); !os.IsNotExist(err) {
		t.Fatalf("the stale table4.md is still there: %v", err)
	}
	files := map[string][]byte{}
	for _, n := range wantFiles() {
		b, err := os.ReadFile(filepath.Join(out, n))
		if err != nil {
			t.Fatal(err)
		}
		if len(b) == 0 {
			t.Fatalf("%s is empty", n)
		}
		files[n] = b
	}
	for _, f := range wantFigures {
		if len(files[f+".png"]) < 15_000 {
			t.Errorf("%s.png is only %d bytes", f, len(files[f+".png"]))
		}
		checkPNG(t, f+".png", files[f+".png"], 600, 400)
	}
	for _, tb := range wantTables {
		c := files[tb+".csv"]
		for i, ch := range c {
			if ch > 127 {
				t.Fatalf("%s.csv is not ASCII at byte %d: %q", tb, i, c[max(0, i-20):min(len(c), i+20)])
			}
		}
		rows, err := csv.NewReader(bytes.NewReader(c)).ReadAll()
		if err != nil || len(rows) < 2 {
			t.Fatalf("%s.csv: %v, %d rows", tb, err, len(rows))
		}
		if !strings.Contains(string(files[tb+".md"]), "| ") {
			t.Fatalf("%s.md has no table", tb)
		}
	}
	// the CSV has the same cells as the table, with +/- for ±
	rows, _ := csv.NewReader(bytes.NewReader(files["table1.csv"])).ReadAll()
	if rows[0][0] != "Task" || rows[1][0] != leaf || rows[1][slices.Index(rows[0], "ours: rl")] != "0.200 +/- 0.058 (1 gold, 1 silver)" {
		t.Fatalf("table1.csv: %q", rows[:2])
	}
	md := string(files["report.md"])
	for _, want := range []string{"# Experiment report: fixture", "## Protocol", Protocol, "Tasks without data**: " + spooky,
		"`batch=8 iterations=4`", "in at least 2 of the 3 seeds",
		"**Task settings (each task spec's run: section, under the experiment's)**: leaf-classification: final_tune_budget=8", "## Table 1: best training program",
		"| leaf-classification", "Table 4: improve-previous (rl) vs scratch-only\n\nSkipped: the spec has no scratch-only arm.",
		"runs/random-acts-of-pizza-rl-s2/metrics.jsonl: 1 unreadable lines skipped"} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	for _, f := range wantFigures {
		if !strings.Contains(md, "]("+f+".png)") {
			t.Errorf("report.md has no image link to %s.png", f)
		}
	}
	page := string(files["index.html"])
	for _, tb := range wantTables {
		if !strings.Contains(page, `<table id="table-`+tb+`">`) {
			t.Errorf("index.html has no table-%s", tb)
		}
	}
	for _, f := range wantFigures {
		if !strings.Contains(page, `<img id="fig-`+f+`" `) {
			t.Errorf("index.html has no fig-%s", f)
		}
	}
	for _, ext := range []string{`src="http`, `href="http`, `src="//`, `<link`, `url(`} {
		if strings.Contains(page, ext) {
			t.Errorf("index.html refers to an external resource: %s", ext)
		}
	}
	if !strings.Contains(page, "<td>0.200 ± 0.058 (1 gold, 1 silver)</td>") || !strings.Contains(page, `<td class="pass">PASS</td>`) {
		t.Error("index.html lacks table1's rl cell or the pass result")
	}

	// the same input gives the same bytes
	if _, err := Write(dir); err != nil {
		t.Fatal(err)
	}
	for _, n := range wantFiles() {
		b, _ := os.ReadFile(filepath.Join(out, n))
		if !bytes.Equal(b, files[n]) {
			t.Errorf("%s differs between two writes of the same experiment", n)
		}
	}
}

func TestWriteWithoutAnyData(t *testing.T) {
	// every cell no-data, no runs directory: a report that lists the tasks, without figures
	dir := t.TempDir()
	spec := fixtureSpec()
	led := experiment.Ledger{Spec: spec}
	for _, c := range spec.Cells() {
		led.Cells = append(led.Cells, experiment.CellRecord{Cell: c, Status: experiment.StatusNoData, Reason: "no prepared data"})
	}
	b, _ := json.Marshal(led)
	if err := os.WriteFile(filepath.Join(dir, runstore.LedgerFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Write(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Skipped) != 2+len(wantFigures) { // table4, table1-answer and the figures
		t.Fatalf("skipped %v", res.Skipped)
	}
	md, err := os.ReadFile(filepath.Join(dir, "report", "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Tasks without data**: " + strings.Join(spec.Tasks, ", "), "| " + spooky, "no data", "0 of 0 with data"} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "report", "index.html")); err != nil {
		t.Fatal(err)
	}
}

func TestWriteNeedsTheLedger(t *testing.T) {
	if _, err := Write(t.TempDir()); err == nil {
		t.Fatal("no error without experiment.json or cells.csv")
	}
}
