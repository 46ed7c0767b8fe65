package peakusage

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/activities"
	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/instrument"
	"mlerl/internal/testenv"
	"mlerl/sandbox"
	"mlerl/tasks"
)

//go:embed programs.py
var programsPy string

const task = "leaf-classification"

// The spec's limits for every program: small, so each push to a limit ends in seconds.
var limits = tasks.Limits{WallSeconds: 20, MemoryMB: 256, Processes: 64, OutputKB: 64, DiskMB: 128}

// The platform's overhead beyond S x the limits, stated in README.md and checked here. Disk,
// per slot: the work folder copied out (charged against disk_mb, so at most disk_mb more)
// while the workspace still holds it, the stored submission (at most 64 MiB) and output
// (output_kb), and the ext4 image's own metadata and journal. Memory: the worker's resident set,
// grading included; the sandboxes' groups are held to S x memory_mb by the kernel.
const (
	submissionMiB     = 64 // activities' maxSubmissionBytes
	ext4MetadataMiB   = 16
	workerOverheadMiB = 256
)

func diskOverheadPerSlotMiB(l tasks.Limits) int64 {
	return int64(l.Disk()) + submissionMiB + int64(l.OutputKB)>>10 + ext4MetadataMiB
}

var cases = []string{"disk-fill", "fill-and-exit", "tmp-fill", "sparse-file", "hard-links", "many-small-files",
	"memory-hog", "shm-fill", "output-flood", "max-submission"}

const dockerLabel = "mlerl.peakusage"

// BenchmarkPeakUsage runs each hostile program in S slots at once (MLERL_PEAK_SLOTS, default
// 2) in both sandboxes and reports the host's peak disk and memory against S x the limits.
func BenchmarkPeakUsage(b *testing.B) {
	dataDir := testenv.PreparedData(b, task)
	slots := []int{2}
	if v := os.Getenv("MLERL_PEAK_SLOTS"); v != "" {
		slots = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				b.Fatalf("MLERL_PEAK_SLOTS=%q: want slot counts like 1,2,4", v)
			}
			slots = append(slots, n)
		}
	}
	if os.Geteuid() != 0 {
		testenv.SkipOrFail(b, "the peak-usage benchmark runs the sandboxes as root, as the platform does")
	}
	var table []string
	for _, kind := range []string{"bubblewrap", "docker"} {
		for _, s := range slots {
			b.Run(fmt.Sprintf("%s/slots=%d", kind, s), func(b *testing.B) {
				for range b.N {
					table = append(table, measure(b, kind, s, dataDir)...)
				}
			})
		}
	}
	fmt.Printf("\n%-10s %5s %-17s %9s %9s %9s %9s %9s %9s %9s %9s\n", "sandbox", "slots", "program",
		"disk", "hostdisk", "diskcap", "sandboxmem", "memcap", "workerHWM", "availdrop", "verdict")
	for _, row := range table {
		fmt.Println(row)
	}
}

// measure runs every case with s slots in one sandbox kind, returns the table's rows (MiB)
// and reports the peaks over all cases.
func measure(b *testing.B, kind string, s int, dataDir string) []string {
	var sb sandbox.Sandbox
	var err error
	smp := &Sampler{}
	switch kind {
	case "bubblewrap":
		sb, err = sandbox.NewLocal(testenv.Python, false)
	case "docker":
		cli, image := testenv.RequireDockerImage(b)
		smp.Docker, smp.DockerLabel = cli, dockerLabel
		sb, err = sandbox.NewDocker(context.Background(), sandbox.DockerOptions{Client: cli, Image: image,
			Labels: map[string]string{dockerLabel: strconv.Itoa(os.Getpid())}})
	}
	if err != nil {
		b.Fatal(err)
	}
	reg := tasks.Builtin()
	spec, err := reg.Get(task)
	if err != nil {
		b.Fatal(err)
	}
	spec.Limits = limits
	root, scratch := b.TempDir(), b.TempDir()
	smp.Scratch, smp.Runs = scratch, root
	a := &activities.Activities{Runs: artifacts.FSRuns{Root: root}, Sandbox: sb,
		Instrumenter: instrument.AST{Python: testenv.Python}, Tasks: reg,
		Layout: tasks.Layout{DataDir: dataDir}, ScratchDir: scratch}
	store := artifacts.FS{Root: filepath.Join(root, "r")}
	envs := make([]*testsuite.TestActivityEnvironment, s)
	for i := range envs {
		var suite testsuite.WorkflowTestSuite
		envs[i] = suite.NewTestActivityEnvironment()
		envs[i].RegisterActivity(a)
	}
	const mib = 1 << 20
	diskCap := int64(s) * (int64(limits.Disk()) + diskOverheadPerSlotMiB(limits))
	memCap := int64(s)*int64(limits.MemoryMB) + workerOverheadMiB
	var all Peaks
	var rows []string
	for _, c := range cases {
		if err := smp.Start(); err != nil {
			b.Fatal(err)
		}
		var wg sync.WaitGroup
		reasons := make([]string, s)
		for i := range s {
			wg.Add(1)
			go func() {
				defer wg.Done()
				reasons[i] = runOne(b, envs[i], a, store, fmt.Sprintf("%s-%d", c, i), c)
			}()
		}
		wg.Wait()
		p := smp.Stop()
		mem := p.Sandbox + p.WorkerHWM
		verdict := "within"
		if p.Disk/mib > diskCap || mem/mib > memCap {
			verdict = "OVER"
			b.Errorf("%s, %d slots, %s: disk %d MiB (cap %d), memory %d MiB (cap %d)", kind, s, c, p.Disk/mib, diskCap, mem/mib, memCap)
		} else if p.HostDisk/mib > diskCap {
			// The host file system is shared with every other process: reported, not failed.
			verdict = "host>cap?"
		}
		b.Logf("%s/%s: %s", kind, c, strings.Join(reasons, " | "))
		rows = append(rows, fmt.Sprintf("%-10s %5d %-17s %9d %9d %9d %9d %9d %9d %9d %9s", kind, s, c,
			p.Disk/mib, p.HostDisk/mib, diskCap, p.Sandbox/mib, memCap, p.WorkerHWM/mib, p.AvailDrop/mib, verdict))
		all.Disk, all.HostDisk = max(all.Disk, p.Disk), max(all.HostDisk, p.HostDisk)
		all.Sandbox, all.WorkerHWM, all.AvailDrop = max(all.Sandbox, p.Sandbox), max(all.WorkerHWM, p.WorkerHWM), max(all.AvailDrop, p.AvailDrop)
		if c == "max-submission" {
			b.ReportMetric(float64(p.WorkerHWM)/mib, "grading-worker-HWM-MiB")
		}
	}
	b.ReportMetric(float64(all.Disk)/mib, "peak-disk-MiB")
	b.ReportMetric(float64(int64(s)*int64(limits.Disk())), "S*disk_mb")
	b.ReportMetric(float64(all.Disk)/mib-float64(int64(s)*int64(limits.Disk())), "disk-overhead-MiB")
	b.ReportMetric(float64(all.HostDisk)/mib, "host-disk-delta-MiB")
	b.ReportMetric(float64(all.Sandbox)/mib, "peak-sandbox-mem-MiB")
	b.ReportMetric(float64(int64(s)*int64(limits.MemoryMB)), "S*memory_mb")
	b.ReportMetric(float64(all.WorkerHWM)/mib, "worker-HWM-MiB")
	b.ReportMetric(float64(all.AvailDrop)/mib, "MemAvailable-drop-MiB")
	return rows
}

// runOne stores, instruments and executes one program, returning its result's reason.
func runOne(b *testing.B, env *testsuite.TestActivityEnvironment, a *activities.Activities, store artifacts.FS, id, c string) string {
	ctx := context.Background()
	if err := store.Put(ctx, runstore.Sample(id).Program(), []byte(programsPy+fmt.Sprintf("\nmain(%q)\n", c))); err != nil {
		b.Error(err)
		return ""
	}
	if _, err := env.ExecuteActivity(a.InstrumentPrograms, activities.InstrumentInput{Run: "r", SampleIDs: []string{id}}); err != nil {
		b.Error(err)
		return ""
	}
	v, err := env.ExecuteActivity(a.ExecuteProgram, activities.ExecuteInput{Run: "r", Task: task, SampleID: id, Split: tasks.SplitValidation})
	if err != nil {
		b.Errorf("%s: the activity failed (an infrastructure failure, not the program's): %v", id, err)
		return ""
	}
	var res activities.ExecuteResult
	if err := v.Get(&res); err != nil {
		b.Error(err)
	}
	if res.Valid && c != "max-submission" {
		b.Errorf("%s: graded valid", id)
	}
	return res.Reason
}
