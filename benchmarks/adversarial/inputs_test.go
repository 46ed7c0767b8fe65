package adversarial

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"mlerl/internal/testenv"
)

// inputEnv is what a bad-input case builds its command line from.
type inputEnv struct {
	t                testing.TB
	dataDir, tmp     string
	out              string // the case's --out, which must not be left holding a run
	sandboxKind      string
	goodSpec, answer string // the builtin leaf spec as YAML, and an answers file to grade
}

// inputCase is one careless user's command; want are the words its error must contain.
type inputCase struct {
	name, expect string
	only         string // "" for both sandboxes, else the one it concerns
	control      bool   // a control command: run once, not per sandbox
	args         func(e inputEnv) []string
	env          []string
	want         []string
	check        func(e inputEnv) string // extra checks after the command; "" when fine
}

// writeFile writes a file under the case's temporary folder and returns its path.
func (e inputEnv) writeFile(name, content string) string {
	p := filepath.Join(e.tmp, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
	return p
}

// run is `starter run` on the prepared data with a tiny budget, so a case the platform wrongly
// accepts ends in minutes rather than hours.
func (e inputEnv) run(extra ...string) []string {
	return append([]string{"run", "--task", task, "--data-dir", e.dataDir, "--out", e.out,
		"--sandbox", e.sandboxKind, "--iterations", "1", "--batch", "1", "--eval-samples", "1"}, extra...)
}

// specWith is the leaf spec with one line replaced, as a --task-spec file.
func (e inputEnv) specWith(name, from, to string) string {
	if !strings.Contains(e.goodSpec, from) {
		e.t.Fatalf("the leaf spec has no %q to replace", from)
	}
	return e.writeFile(name, strings.Replace(e.goodSpec, from, to, 1))
}

func inputCases() []inputCase {
	run := func(extra ...string) func(e inputEnv) []string {
		return func(e inputEnv) []string { return e.run(extra...) }
	}
	return []inputCase{
		{name: "unknown-task", expect: "refused, listing the known tasks",
			args: func(e inputEnv) []string {
				a := e.run()
				a[2] = "no-such-task"
				return a
			}, want: []string{"no-such-task", "leaf-classification"}},
		{name: "misspelt-flag", expect: "refused, naming the flag", args: run("--iteratons", "3"), want: []string{"iteratons"}},
		{name: "iterations-0", expect: "refused: at least 1", args: run("--iterations", "0"), want: []string{"--iterations", "at least 1"}},
		{name: "batch-negative", expect: "refused: at least 1", args: run("--batch", "-3"), want: []string{"--batch"}},
		{name: "slots-0", expect: "refused: at least 1", args: run("--slots", "0"), want: []string{"--slots"}},
		{name: "protocol-bogus", expect: "refused, naming the choices", args: run("--protocol", "bogus"), want: []string{"--protocol", "leak-free"}},
		{name: "reward-bogus", expect: "refused, naming the choices", args: run("--reward", "bogus"), want: []string{"--reward", "bounded"}},
		{name: "reward-folds-99", expect: "refused: more folds than the task has", args: run("--reward-folds", "99"), want: []string{"fold"}},
		{name: "improve-fraction-1.5", expect: "refused: a share in [0, 1]", args: run("--improve-fraction", "1.5"), want: []string{"--improve-fraction"}},
		{name: "learning-rate-negative", expect: "refused", args: run("--learning-rate", "-1"), want: []string{"learning-rate"}},
		{name: "improve-from-bogus", expect: "refused, naming the choices", args: run("--improve-from", "bogus"), want: []string{"--improve-from"}},
		{name: "instrumenter-bogus", expect: "refused, naming the choices", args: run("--instrumenter", "bogus"), want: []string{"--instrumenter"}},
		{name: "llm-policy-without-url", expect: "refused: --policy-url needed", args: run("--policy", "llm"), want: []string{"--policy-url"}},
		{name: "sandbox-bogus", expect: "refused, naming the choices",
			args: func(e inputEnv) []string {
				a := e.run()
				for i := range a {
					if a[i] == "--sandbox" {
						a[i+1] = "bogus"
					}
				}
				return a
			}, want: []string{"--sandbox", "bogus"}},
		{name: "preset-missing", expect: "refused: neither built in nor a file", args: run("--preset", "nosuch"), want: []string{"--preset", "nosuch"}},
		{name: "preset-garbage-yaml", expect: "refused, naming the file",
			args: func(e inputEnv) []string {
				return e.run("--preset", e.writeFile("garbage.yaml", "run: [batch: 3\n  ::"))
			},
			want: []string{"garbage.yaml"}},
		{name: "preset-misspelt-key", expect: "refused, naming the key",
			args: func(e inputEnv) []string {
				return e.run("--preset", e.writeFile("misspelt.yaml", "run:\n  bacth: 4\n"))
			},
			want: []string{"bacth"}},
		{name: "preset-impossible", expect: "refused, naming the setting",
			args: func(e inputEnv) []string {
				return e.run("--preset", e.writeFile("impossible.yaml", "run:\n  ppo:\n    clip_ratio: -1\n"))
			}, want: []string{"clip"}},
		{name: "task-spec-garbage", expect: "refused, naming the file",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.writeFile("spec-garbage.yaml", "id: [x\n::: "))
			},
			want: []string{"spec-garbage.yaml"}},
		{name: "task-spec-wall-overflow", expect: "refused before anything starts, naming wall_seconds",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-wall.yaml", "wall_seconds: 300", "wall_seconds: 99999999999"))
			}, want: []string{"wall_seconds"}},
		{name: "task-spec-negative-memory", expect: "refused, naming memory_mb",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-mem.yaml", "memory_mb: 4096", "memory_mb: -5"))
			}, want: []string{"memory_mb"}},
		{name: "task-spec-fractional-wall", expect: "refused, naming wall_seconds and the whole numbers to write (was truncated to 1 s)",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-wall-frac.yaml", "wall_seconds: 300", "wall_seconds: 1.5"))
			}, want: []string{"limits.wall_seconds", "not a whole number", "1 or 2"}},
		{name: "task-spec-fractional-memory", expect: "refused, naming memory_mb",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-mem-frac.yaml", "memory_mb: 4096", "memory_mb: 4095.5"))
			}, want: []string{"limits.memory_mb", "4095 or 4096"}},
		{name: "task-spec-fractional-disk", expect: "refused, naming disk_mb (0.5 was truncated to 0, the 1 GiB default)",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-disk-frac.yaml", "output_kb: 256", "output_kb: 256\n  disk_mb: 0.5"))
			}, want: []string{"limits.disk_mb", "not a whole number"}},
		{name: "task-spec-limit-text", expect: "refused, naming processes: not a number",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-proc-text.yaml", "processes: 64", "processes: lots"))
			}, want: []string{"limits.processes", "not a number"}},
		{name: "task-spec-limit-misspelt", expect: "refused, naming the unknown limit and the known ones",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-limit-key.yaml", "output_kb: 256", "outptu_kb: 256"))
			}, want: []string{"outptu_kb", "output_kb"}},
		{name: "task-spec-disk-huge", expect: "refused, naming disk_mb and its range",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-disk-huge.yaml", "output_kb: 256", "output_kb: 256\n  disk_mb: 99999999"))
			}, want: []string{"limits.disk_mb", "between"}},
		{name: "task-spec-processes-0", expect: "refused, naming processes and its range",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-proc-0.yaml", "processes: 64", "processes: 0"))
			}, want: []string{"limits.processes", "between 1"}},
		{name: "task-spec-unknown-metric", expect: "refused, naming the metric",
			args: func(e inputEnv) []string {
				return e.run("--task-spec", e.specWith("spec-metric.yaml", "metric: multi-class-log-loss", "metric: telepathy"))
			}, want: []string{"telepathy"}},
		{name: "data-unprepared", expect: "refused, with the prepare command",
			args: func(e inputEnv) []string {
				a := e.run()
				a[4] = filepath.Join(e.tmp, "empty-data")
				return a
			}, want: []string{"not prepared", "tasks prepare"}},
		{name: "python-missing", expect: "refused, naming the interpreter", only: "bubblewrap",
			args: run("--python", "/nonexistent/python3"), want: []string{"/nonexistent/python3"}},
		{name: "docker-image-missing", expect: "refused, with the command that builds it", only: "docker",
			args: run("--docker-image", "mlerl-no-such-image:latest"), want: []string{"mlerl-no-such-image"}},
		{name: "temporal-unreachable", expect: "refused, naming the address; no run.json left behind",
			args: run("--temporal-address", "127.0.0.1:1"), want: []string{"127.0.0.1:1"}},
		{name: "s3-store-without-endpoint", expect: "refused, naming the variable to set",
			args: run("--store", "s3://bucket/prefix"), env: []string{"MLERL_S3_ENDPOINT=", "AWS_ENDPOINT_URL="},
			want: []string{"MLERL_S3_ENDPOINT"}},
		{name: "out-holds-a-run", expect: "refused, advising resume; the old run untouched",
			args: func(e inputEnv) []string {
				if err := os.MkdirAll(e.out, 0o755); err != nil {
					e.t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(e.out, "run.json"), []byte(`{"task":"leaf-classification"}`), 0o644); err != nil {
					e.t.Fatal(err)
				}
				return e.run()
			}, want: []string{"already holds a run", "resume"},
			check: func(e inputEnv) string {
				b, err := os.ReadFile(filepath.Join(e.out, "run.json"))
				if err != nil || string(b) != `{"task":"leaf-classification"}` {
					return fmt.Sprintf("the existing run.json changed: %q %v", b, err)
				}
				return ""
			}},

		// The control commands: once, they do not depend on the sandbox.
		{name: "grade-missing-file", expect: "non-zero exit, naming the file", control: true,
			args: func(e inputEnv) []string {
				return []string{"grade", "--task", task, "--data-dir", e.dataDir, "--submission", filepath.Join(e.tmp, "nope.csv")}
			}, want: []string{"nope.csv"}},
		{name: "grade-garbage-file", expect: "exit 1: invalid, with the reason", control: true,
			args: func(e inputEnv) []string {
				return []string{"grade", "--task", task, "--data-dir", e.dataDir, "--submission", e.writeFile("garbage.csv", "\x00\x01garbage\n")}
			}, want: []string{"invalid"}},
		{name: "status-not-a-run", expect: "refused: no run.json", control: true,
			args: func(e inputEnv) []string { return []string{"status", e.tmp} }, want: []string{"not a run directory"}},
		{name: "resume-not-a-run", expect: "refused: no run.json", control: true,
			args: func(e inputEnv) []string { return []string{"resume", e.tmp} }, want: []string{"not a run directory"}},
		{name: "stop-not-a-run", expect: "refused: no run.json", control: true,
			args: func(e inputEnv) []string { return []string{"stop", e.tmp} }, want: []string{"not a run directory"}},
		{name: "prepare-missing-raw", expect: "refused, naming --raw", control: true,
			args: func(e inputEnv) []string {
				return []string{"tasks", "prepare", "--task", task, "--raw", filepath.Join(e.tmp, "none"), "--data-dir", filepath.Join(e.tmp, "d")}
			}, want: []string{"--raw"}},
		{name: "prepare-wrong-raw", expect: "refused, naming the missing Kaggle file", control: true,
			args: func(e inputEnv) []string {
				raw := filepath.Join(e.tmp, "wrong-raw")
				os.MkdirAll(raw, 0o755)
				os.WriteFile(filepath.Join(raw, "other.csv"), []byte("a,b\n1,2\n"), 0o644)
				return []string{"tasks", "prepare", "--task", task, "--raw", raw, "--data-dir", filepath.Join(e.tmp, "d")}
			}, want: []string{"train.csv"}},
	}
}

// gradeInputCases are hostile files given to `starter grade`: special files that would block an
// open, and data that would cost the grader far more than its size (issue 61 items 4 and 7).
func gradeInputCases() []inputCase {
	grade := func(sub func(e inputEnv) string) func(e inputEnv) []string {
		return func(e inputEnv) []string {
			return []string{"grade", "--task", task, "--data-dir", e.dataDir, "--submission", sub(e)}
		}
	}
	fifo := func(e inputEnv) string {
		p := filepath.Join(e.tmp, "fifo.csv")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			e.t.Fatal(err)
		}
		return p
	}
	header := "id"
	for i := range 99 {
		header += fmt.Sprintf(",c%d", i)
	}
	header += "\n"
	return []inputCase{
		{name: "grade-fifo", expect: "refused at once, naming a FIFO", control: true, args: grade(fifo), want: []string{"named pipe"}},
		{name: "grade-symlink-to-fifo", expect: "refused at once, naming a FIFO", control: true,
			args: grade(func(e inputEnv) string {
				p := filepath.Join(e.tmp, "link.csv")
				if err := os.Symlink(fifo(e), p); err != nil {
					e.t.Fatal(err)
				}
				return p
			}), want: []string{"named pipe"}},
		{name: "grade-device", expect: "refused, naming a device", control: true,
			args: grade(func(inputEnv) string { return "/dev/zero" }), want: []string{"character device"}},
		{name: "grade-jsonl-fifo", expect: "refused at once, naming a FIFO", control: true,
			args: func(e inputEnv) []string { return []string{"grade", "--data-dir", e.dataDir, "--jsonl", fifo(e)} },
			want: []string{"named pipe"}},
		{name: "grade-63MiB-of-commas", expect: "exit 1: invalid, over the byte limit", control: true,
			args: grade(func(e inputEnv) string { return e.writeFile("commas.csv", strings.Repeat(",", 63<<20)) }),
			want: []string{"invalid", "bytes"}},
		{name: "grade-huge-line", expect: "exit 1: invalid, over the line limit", control: true,
			args: grade(func(e inputEnv) string {
				return e.writeFile("line.csv", header+"1,"+strings.Repeat("0", 300<<10)+"\n")
			}), want: []string{"invalid", "longer than the limit"}},
		{name: "grade-too-many-columns", expect: "exit 1: invalid, over the column limit", control: true,
			args: grade(func(e inputEnv) string {
				return e.writeFile("wide.csv", "id"+strings.Repeat(",c", 5000)+"\n")
			}), want: []string{"invalid", "columns"}},
		{name: "grade-gzip", expect: "exit 1: invalid, named compressed", control: true,
			args: grade(func(e inputEnv) string { return e.writeFile("gz.csv", "\x1f\x8b\x08\x00rest") }),
			want: []string{"invalid", "gzip"}},
		{name: "grade-nul-bytes", expect: "exit 1: invalid, naming the NUL byte", control: true,
			args: grade(func(e inputEnv) string { return e.writeFile("nul.csv", header+"1"+strings.Repeat(",0\x00", 99)+"\n") }),
			want: []string{"invalid", "NUL byte"}},
		{name: "grade-not-utf8", expect: "exit 1: invalid, not UTF-8", control: true,
			args: grade(func(e inputEnv) string { return e.writeFile("latin1.csv", header+"1"+strings.Repeat(",\xe9", 99)+"\n") }),
			want: []string{"invalid", "UTF-8"}},
	}
}

// TestBadInputs runs the starter binary on bad input of every kind and checks each is refused
// with a non-zero exit and an error naming the problem, leaving no run behind.
func TestBadInputs(t *testing.T) {
	dataDir := testenv.PreparedData(t, task)
	bin := testenv.BuildStarter(t)
	goodSpec, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "tasks", "specs", task+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	tb := newTable("case", "expected")
	columns := map[string]int{}
	for _, kind := range sandboxKinds {
		columns[kind] = tb.addColumn(kind)
	}
	for _, c := range append(inputCases(), gradeInputCases()...) {
		kinds := sandboxKinds
		switch {
		case c.control:
			kinds = []string{"control"}
		case c.only != "":
			kinds = []string{c.only}
		}
		for _, kind := range kinds {
			t.Run(c.name+"/"+kind, func(t *testing.T) {
				tmp := t.TempDir()
				e := inputEnv{t: t, dataDir: dataDir, tmp: tmp, out: filepath.Join(tmp, "run"), sandboxKind: kind, goodSpec: string(goodSpec)}
				if kind == "control" {
					e.sandboxKind = "bubblewrap"
				}
				cell, verdict := runInput(t, bin, e, c)
				if verdict != "" {
					t.Error(verdict)
				}
				if kind == "control" {
					for _, k := range sandboxKinds {
						tb.set(c.name, c.expect, columns[k], cell)
					}
				} else {
					tb.set(c.name, c.expect, columns[kind], cell)
				}
				for _, k := range sandboxKinds {
					if c.only != "" && k != c.only {
						tb.set(c.name, c.expect, columns[k], "n/a")
					}
				}
			})
		}
	}
	tb.write(t, "Bad input")
}

// runInput runs one case and returns the table cell and a verdict ("" when as expected).
func runInput(t *testing.T, bin string, e inputEnv, c inputCase) (cell, verdict string) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, c.args(e)...)
	cmd.Dir = e.tmp
	cmd.Env = append(os.Environ(), c.env...)
	cmd.Stdin = nil
	start := time.Now()
	outb, err := cmd.CombinedOutput()
	out := string(outb)
	took := time.Since(start).Round(100 * time.Millisecond)
	var exit *exec.ExitError
	code := 0
	switch {
	case ctx.Err() != nil:
		return "FAILED: still running after 2 minutes", fmt.Sprintf("%s: not refused within 2 minutes:\n%s", c.name, tail(out, 1500))
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	// The table names the case's temporary folders, not their random paths.
	line := firstErrorLine(strings.NewReplacer(e.tmp, "$TMP", e.dataDir, "$DATA").Replace(out))
	var problems []string
	if code == 0 {
		problems = append(problems, "exit code 0")
	}
	for _, w := range c.want {
		if !strings.Contains(strings.ToLower(out), strings.ToLower(w)) {
			problems = append(problems, fmt.Sprintf("the message does not name %q", w))
		}
	}
	if strings.Contains(out, "Traceback (most recent call last)") || strings.Contains(out, "goroutine ") {
		problems = append(problems, "a traceback instead of a message")
	}
	if c.name != "out-holds-a-run" {
		if _, err := os.Stat(filepath.Join(e.out, "run.json")); err == nil {
			problems = append(problems, "a run.json was left behind")
		}
	}
	if c.check != nil {
		if p := c.check(e); p != "" {
			problems = append(problems, p)
		}
	}
	cell = fmt.Sprintf("rc %d in %s: %s", code, took, line)
	if len(problems) > 0 {
		return "FAILED (" + strings.Join(problems, "; ") + "): " + cell,
			fmt.Sprintf("%s: %s\n%s", c.name, strings.Join(problems, "; "), tail(out, 1500))
	}
	return cell, ""
}

// firstErrorLine is the line a user reads: the first "error:" line, else the last line.
func firstErrorLine(out string) string {
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "error:") {
			return tail(strings.TrimSpace(l), 200)
		}
	}
	return tail(strings.TrimSpace(lines[len(lines)-1]), 200)
}
