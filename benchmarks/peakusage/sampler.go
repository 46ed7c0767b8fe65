// Package peakusage measures what a run costs the host at its peak, disk and memory, while
// hostile programs push each limit through the real ExecuteProgram activity with several slots
// at once, and compares it with the spec's limits times the slot count. See README.md.
package peakusage

import (
	"bufio"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
)

// Peaks are the largest values seen over a sampling window, in bytes.
type Peaks struct {
	Workspace int64 // used inside the sandboxes' workspace file systems (the program's disk)
	Scratch   int64 // the worker's scratch folder: programs and copied-out work folders
	Runs      int64 // the run store: outputs, submissions, results
	Disk      int64 // the three together, at one moment
	HostDisk  int64 // the host file system's used space above its level at the start (shared: noisy)
	Sandbox   int64 // the sandboxes' memory cgroups together, at one moment (each at its own peak)
	WorkerHWM int64 // this process's peak resident memory (VmHWM): the worker, grading included
	AvailDrop int64 // MemAvailable's drop from the start (shared machine: noisy)
}

// Sampler records Peaks every Interval until Stop.
type Sampler struct {
	Scratch, Runs string
	// Docker, when set, lists the containers labelled DockerLabel=<this pid>, whose cgroups are
	// sampled; without it, the bubblewrap sandbox's cgroups (mlerl-<pid>-N) are.
	Docker      *client.Client
	DockerLabel string
	Interval    time.Duration

	mu          sync.Mutex
	peaks       Peaks
	hostBase    int64
	availBase   int64
	cgroupPeaks map[string]int64
	stop, done  chan struct{}
}

// Start resets this process's VmHWM and the baselines, and samples until Stop.
func (s *Sampler) Start() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		return fmt.Errorf("resetting VmHWM through /proc/self/clear_refs: %w", err)
	}
	var err error
	if s.hostBase, err = fsUsed(s.Scratch); err != nil {
		return err
	}
	if s.availBase, err = memAvailable(); err != nil {
		return err
	}
	s.peaks, s.cgroupPeaks = Peaks{}, map[string]int64{}
	if s.Interval == 0 {
		s.Interval = 100 * time.Millisecond
	}
	s.stop, s.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(s.done)
		t := time.NewTicker(s.Interval)
		defer t.Stop()
		for {
			s.sample()
			select {
			case <-s.stop:
				s.sample()
				return
			case <-t.C:
			}
		}
	}()
	return nil
}

// Stop ends the sampling and returns the peaks.
func (s *Sampler) Stop() Peaks {
	close(s.stop)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	s.peaks.WorkerHWM = statusKB("VmHWM") << 10
	return s.peaks
}

func (s *Sampler) sample() {
	var ws int64
	for _, m := range s.workspaces() {
		if used, err := fsUsed(m); err == nil {
			ws += used
		}
	}
	scratch, runs := DiskUsage(s.Scratch), DiskUsage(s.Runs)
	host, _ := fsUsed(s.Scratch)
	avail, _ := memAvailable()
	var mem int64
	for _, dir := range s.cgroups() {
		cur, peak := cgroupMemory(dir)
		s.cgroupPeaks[dir] = max(s.cgroupPeaks[dir], cur, peak)
		if cur > 0 || peak > 0 { // alive: a removed group reads as nothing
			mem += s.cgroupPeaks[dir]
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p := &s.peaks
	p.Workspace, p.Scratch, p.Runs = max(p.Workspace, ws), max(p.Scratch, scratch), max(p.Runs, runs)
	p.Disk = max(p.Disk, ws+scratch+runs)
	p.HostDisk = max(p.HostDisk, host-s.hostBase)
	p.Sandbox = max(p.Sandbox, mem)
	p.AvailDrop = max(p.AvailDrop, s.availBase-avail)
}

// workspaces are the mounted workspaces of this process's sandboxes (sandbox/workspace.go
// names them run-<pid>-*, under /run or /tmp). A folder not (or no longer) mounted is left
// out: its statfs would be the host's root file system.
func (s *Sampler) workspaces() []string {
	var out []string
	for _, base := range []string{"/run/mlerl-sandbox", "/tmp/mlerl-sandbox"} {
		var bst syscall.Stat_t
		if syscall.Stat(base, &bst) != nil {
			continue
		}
		m, _ := filepath.Glob(filepath.Join(base, fmt.Sprintf("run-%d-*", os.Getpid())))
		for _, d := range m {
			var st syscall.Stat_t
			if syscall.Stat(d, &st) == nil && st.Dev != bst.Dev {
				out = append(out, d)
			}
		}
	}
	return out
}

// cgroups are the memory cgroup folders of this process's live sandboxes.
func (s *Sampler) cgroups() []string {
	if s.Docker != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		list, err := s.Docker.ContainerList(ctx, container.ListOptions{Filters: filters.NewArgs(
			filters.Arg("label", s.DockerLabel+"="+strconv.Itoa(os.Getpid())))})
		if err != nil {
			return nil
		}
		var out []string
		for _, c := range list {
			for _, d := range []string{"/sys/fs/cgroup/memory/docker/" + c.ID,
				"/sys/fs/cgroup/system.slice/docker-" + c.ID + ".scope", "/sys/fs/cgroup/docker/" + c.ID} {
				if _, err := os.Stat(d); err == nil {
					out = append(out, d)
				}
			}
		}
		return out
	}
	// The bubblewrap sandbox puts its groups under our own memory group (v1), or our own, our
	// parent or the root (v2); see sandbox/cgroup.go.
	parents := []string{"/sys/fs/cgroup/memory", "/sys/fs/cgroup"}
	b, _ := os.ReadFile("/proc/self/cgroup")
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.SplitN(line, ":", 3)
		switch {
		case len(f) != 3:
		case f[1] == "memory":
			parents = append(parents, filepath.Join("/sys/fs/cgroup/memory", f[2]))
		case f[0] == "0" && f[1] == "":
			parents = append(parents, filepath.Join("/sys/fs/cgroup", f[2]), filepath.Join("/sys/fs/cgroup", filepath.Dir(f[2])))
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, p := range parents {
		m, _ := filepath.Glob(filepath.Join(p, fmt.Sprintf("mlerl-%d-*", os.Getpid())))
		for _, d := range m {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	return out
}

// cgroupMemory reads a memory cgroup's usage and its peak (v1 or v2); 0 where unreadable.
func cgroupMemory(dir string) (cur, peak int64) {
	read := func(name string) int64 {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return 0
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		return n
	}
	if _, err := os.Stat(filepath.Join(dir, "memory.current")); err == nil {
		return read("memory.current"), read("memory.peak")
	}
	return read("memory.usage_in_bytes"), read("memory.max_usage_in_bytes")
}

// DiskUsage is the space the files under dir take on disk: allocated blocks, so a sparse file
// counts only what it holds, and each inode once, so hard links count once. Files vanishing
// during the walk are skipped.
func DiskUsage(dir string) int64 {
	var total int64
	seen := map[[2]uint64]bool{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok {
			return nil
		}
		key := [2]uint64{st.Dev, st.Ino}
		if seen[key] {
			return nil
		}
		seen[key] = true
		total += st.Blocks * 512
		return nil
	})
	return total
}

// fsUsed is the used space of the file system holding path.
func fsUsed(path string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return 0, err
	}
	return int64(st.Blocks-st.Bfree) * st.Bsize, nil
}

func memAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "MemAvailable:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("no MemAvailable in /proc/meminfo")
}

// statusKB reads a "Name: N kB" line of /proc/self/status.
func statusKB(name string) int64 {
	b, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			return n
		}
	}
	return 0
}
