package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// cgroup confines one run's processes and memory where the kernel lets us create groups
// (cgroup v1 pids+memory controllers, or v2 with both enabled). Elsewhere the caller falls back
// to rlimits.
type cgroup struct {
	procsFiles []string // cgroup.procs of every group the run joins
	dirs       []string
	memEvents  string // file whose counters show an OOM kill
}

func cgroupRoots() (pids, mem, unified string) {
	if dirWritable("/sys/fs/cgroup/pids") && dirWritable("/sys/fs/cgroup/memory") {
		return "/sys/fs/cgroup/pids", "/sys/fs/cgroup/memory", ""
	}
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.subtree_control"); err == nil {
		s := string(b)
		if strings.Contains(s, "pids") && strings.Contains(s, "memory") && dirWritable("/sys/fs/cgroup") {
			return "", "", "/sys/fs/cgroup"
		}
	}
	return "", "", ""
}

func dirWritable(dir string) bool {
	probe := filepath.Join(dir, fmt.Sprintf("mlerl-probe-%d", os.Getpid()))
	if err := os.Mkdir(probe, 0o755); err != nil {
		return false
	}
	os.Remove(probe)
	return true
}

func newCgroup(name string, l Limits) (*cgroup, error) {
	pids, mem, unified := cgroupRoots()
	cg := &cgroup{}
	write := func(dir, file, val string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(val), 0o644)
	}
	switch {
	case unified != "":
		d := filepath.Join(unified, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
		cg.dirs = []string{d}
		if err := write(d, "pids.max", strconv.Itoa(l.Processes)); err != nil {
			cg.remove()
			return nil, err
		}
		if err := write(d, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			cg.remove()
			return nil, err
		}
		write(d, "memory.swap.max", "0")
		cg.procsFiles = []string{filepath.Join(d, "cgroup.procs")}
		cg.memEvents = filepath.Join(d, "memory.events")
	case pids != "":
		pd, md := filepath.Join(pids, name), filepath.Join(mem, name)
		if err := os.Mkdir(pd, 0o755); err != nil {
			return nil, err
		}
		cg.dirs = []string{pd}
		if err := os.Mkdir(md, 0o755); err != nil {
			cg.remove()
			return nil, err
		}
		cg.dirs = append(cg.dirs, md)
		if err := write(pd, "pids.max", strconv.Itoa(l.Processes)); err != nil {
			cg.remove()
			return nil, err
		}
		if err := write(md, "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			cg.remove()
			return nil, err
		}
		write(md, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10))
		cg.procsFiles = []string{filepath.Join(pd, "cgroup.procs"), filepath.Join(md, "cgroup.procs")}
		cg.memEvents = filepath.Join(md, "memory.failcnt")
	default:
		return nil, nil
	}
	return cg, nil
}

// oomKilled reports whether the memory limit was hit.
func (c *cgroup) oomKilled() bool {
	b, err := os.ReadFile(c.memEvents)
	if err != nil {
		return false
	}
	s := strings.TrimSpace(string(b))
	if strings.HasSuffix(c.memEvents, "failcnt") {
		return s != "0"
	}
	for _, line := range strings.Split(s, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "oom_kill" && f[1] != "0" {
			return true
		}
	}
	return false
}

// killAll ends every process left in the group (a program's orphans included).
func (c *cgroup) killAll() {
	for _, f := range c.procsFiles {
		b, _ := os.ReadFile(f)
		for _, p := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(p); err == nil {
				if proc, err := os.FindProcess(pid); err == nil {
					proc.Kill()
				}
			}
		}
	}
}

func (c *cgroup) remove() {
	for _, d := range c.dirs {
		os.Remove(d)
	}
}
