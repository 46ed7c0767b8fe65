package peakusage

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// DiskUsage must count what the host pays, not what names or sizes claim: a sparse file's
// holes and a hard link's second name are free, written bytes are not.
func TestDiskUsageCountsBlocksOnce(t *testing.T) {
	dir := t.TempDir()
	const mib = 1 << 20
	data := make([]byte, 4*mib)
	for i := range data {
		data[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(dir, "data"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"link1", "link2", "link3"} {
		if err := os.Link(filepath.Join(dir, "data"), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(dir, "sparse"))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if got := DiskUsage(dir); got < 4*mib || got > 5*mib {
		t.Errorf("DiskUsage = %d bytes, want 4-5 MiB: 4 MiB written, linked 3 times, plus a 1 GiB hole", got)
	}
}

// The sampler sees this process's own memory grow (VmHWM) and a file written to its scratch folder.
func TestSamplerSeesDiskAndWorkerMemory(t *testing.T) {
	s := &Sampler{Scratch: t.TempDir(), Runs: t.TempDir(), Interval: 10 * time.Millisecond}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	const mib = 1 << 20
	buf := make([]byte, 64*mib)
	for i := range buf {
		buf[i] = 1
	}
	if err := os.WriteFile(filepath.Join(s.Scratch, "f"), buf[:8*mib], 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	p := s.Stop()
	if p.Scratch < 8*mib || p.Disk < 8*mib {
		t.Errorf("scratch peak %d, disk peak %d: want at least the 8 MiB written", p.Scratch, p.Disk)
	}
	if p.WorkerHWM < 64*mib {
		t.Errorf("worker VmHWM %d: want at least the 64 MiB touched", p.WorkerHWM)
	}
	buf[0] = buf[len(buf)-1] // keep buf alive past the sample
}
