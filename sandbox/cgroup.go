package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cgroup confines one run's processes and memory where the kernel lets us create groups
// (cgroup v1 pids+memory controllers, or v2 with both enabled). Elsewhere the caller falls back
// to rlimits.
//
// The groups are created under this process's own cgroup (read from /proc/self/cgroup), so a
// platform confined by its supervisor (a systemd slice, a container, a job's cgroup) keeps its
// programs inside its own limits and accounting instead of escaping to the hierarchy's root.
type cgroup struct {
	procsFiles []string // cgroup.procs of every group the run joins
	dirs       []string
	v2         bool
	memDir     string // the memory controller's group (v1) or the unified group (v2)
	memLimit   int64
}

// cgroupFS is where the hierarchies are mounted; a variable so tests can read it.
var cgroupFS = "/sys/fs/cgroup"

// ownCgroups parses /proc/self/cgroup: the v1 path per controller, and the v2 path ("0::").
func ownCgroups() (v1 map[string]string, v2 string, ok2 bool) {
	v1 = map[string]string{}
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return v1, "", false
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		if f[0] == "0" && f[1] == "" {
			v2, ok2 = f[2], true
			continue
		}
		for _, ctrl := range strings.Split(f[1], ",") {
			v1[ctrl] = f[2]
		}
	}
	return v1, v2, ok2
}

// v1Parent is where a v1 controller's groups for our runs go: our own group in that hierarchy,
// or the hierarchy's root when our group is not visible under the mount (a container that bind
// mounts its own subtree at the root without a cgroup namespace shows the host's path).
func v1Parent(ctrl string, own map[string]string) string {
	root := filepath.Join(cgroupFS, ctrl)
	if p, ok := own[ctrl]; ok {
		d := filepath.Join(root, p)
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			return d
		}
	}
	return root
}

// v2Parent picks the unified-hierarchy group that can hold our runs' groups with the pids and
// memory controllers. v2 forbids processes in a non-root group that hands controllers to its
// children ("no internal processes"), so our own group only works if it already delegates
// them (its subtree_control lists both, which means no process sits in it). Otherwise the runs
// go beside us, under our parent, if that delegates them; else at the root (the fallback the
// code had before: correct limits, but outside our own group's accounting).
func v2Parent(own string) string {
	delegates := func(d string) bool {
		b, err := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
		s := string(b)
		return err == nil && strings.Contains(s, "pids") && strings.Contains(s, "memory") && dirWritable(d)
	}
	if own != "" {
		if d := filepath.Join(cgroupFS, own); delegates(d) {
			return d
		}
		if own != "/" {
			if d := filepath.Join(cgroupFS, filepath.Dir(own)); delegates(d) {
				return d
			}
		}
	}
	if delegates(cgroupFS) {
		return cgroupFS
	}
	return ""
}

// cgroupParents returns where the run's groups go: v1 pids and memory parents, or a v2 parent.
func cgroupParents() (pids, mem, unified string) {
	own1, own2, has2 := ownCgroups()
	if _, ok := own1["pids"]; ok {
		if _, ok := own1["memory"]; ok {
			p, m := v1Parent("pids", own1), v1Parent("memory", own1)
			if dirWritable(p) && dirWritable(m) {
				return p, m, ""
			}
		}
	}
	if has2 {
		if d := v2Parent(own2); d != "" {
			return "", "", d
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
	pids, mem, unified := cgroupParents()
	cg := &cgroup{memLimit: l.MemoryBytes}
	write := func(dir, file, val string) error {
		return os.WriteFile(filepath.Join(dir, file), []byte(val), 0o644)
	}
	fail := func(err error) (*cgroup, error) {
		cg.remove()
		return nil, err
	}
	switch {
	case unified != "":
		d := filepath.Join(unified, name)
		if err := os.Mkdir(d, 0o755); err != nil {
			return nil, err
		}
		cg.dirs, cg.v2, cg.memDir = []string{d}, true, d
		if err := write(d, "pids.max", strconv.Itoa(l.Processes)); err != nil {
			return fail(err)
		}
		if err := write(d, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return fail(err)
		}
		write(d, "memory.swap.max", "0")
		cg.procsFiles = []string{filepath.Join(d, "cgroup.procs")}
	case pids != "":
		pd, md := filepath.Join(pids, name), filepath.Join(mem, name)
		if err := os.Mkdir(pd, 0o755); err != nil {
			return nil, err
		}
		cg.dirs = []string{pd}
		if err := os.Mkdir(md, 0o755); err != nil {
			return fail(err)
		}
		cg.dirs, cg.memDir = append(cg.dirs, md), md
		if err := write(pd, "pids.max", strconv.Itoa(l.Processes)); err != nil {
			return fail(err)
		}
		if err := write(md, "memory.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
			return fail(err)
		}
		// Only where swap accounting is on; elsewhere swap is whatever the host allows.
		write(md, "memory.memsw.limit_in_bytes", strconv.FormatInt(l.MemoryBytes, 10))
		cg.procsFiles = []string{filepath.Join(pd, "cgroup.procs"), filepath.Join(md, "cgroup.procs")}
	default:
		return nil, nil
	}
	return cg, nil
}

// counter reads "key value" lines (memory.events, memory.oom_control).
func counter(file, key string) int64 {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == key {
			n, _ := strconv.ParseInt(f[1], 10, 64)
			return n
		}
	}
	return 0
}

// oomKilled reports whether the kernel's OOM killer ended a process of the run. v2 counts it in
// memory.events; v1 in memory.oom_control's oom_kill (memory.failcnt counts failed charges,
// which reclaim usually absorbs, and stays 0 when the killer fires: it is no signal). A kernel
// too old for oom_kill in v1 leaves one hint: the run was SIGKILLed (not by us) with its peak
// usage at the limit.
func (c *cgroup) oomKilled(killedBySignal9 bool) bool {
	if c.v2 {
		return counter(filepath.Join(c.memDir, "memory.events"), "oom_kill") > 0
	}
	if counter(filepath.Join(c.memDir, "memory.oom_control"), "oom_kill") > 0 {
		return true
	}
	if !killedBySignal9 || c.memLimit <= 0 {
		return false
	}
	b, err := os.ReadFile(filepath.Join(c.memDir, "memory.max_usage_in_bytes"))
	if err != nil {
		return false
	}
	peak, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return err == nil && peak >= c.memLimit-c.memLimit/20
}

// procs lists the pids in any of the run's groups.
func (c *cgroup) procs() []int {
	var out []int
	for _, f := range c.procsFiles {
		b, _ := os.ReadFile(f)
		for _, p := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(p); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// killAll sends SIGKILL to every process in the group (a program's orphans included). v2 has
// cgroup.kill for this; on v1 each pid is opened (os.FindProcess holds a pidfd) and checked to
// still be in our group before the signal, so a pid reused by a host process is never hit.
// Processes for which spare is true are left alone (spare may be nil).
func (c *cgroup) killAll(spare func(pid int) bool) {
	if c.v2 && spare == nil {
		if os.WriteFile(filepath.Join(c.memDir, "cgroup.kill"), []byte("1"), 0o644) == nil {
			return
		}
	}
	for _, pid := range c.procs() {
		if spare != nil && spare(pid) {
			continue
		}
		proc, err := os.FindProcess(pid)
		if err != nil {
			continue
		}
		if c.holds(pid) {
			proc.Kill()
		}
		proc.Release()
	}
}

// parentOf is pid's parent pid, 0 if unknown.
func parentOf(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses, so parse after the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}

// holds reports whether pid is in one of the run's groups, from the host's view of it.
func (c *cgroup) holds(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
	if err != nil {
		return false
	}
	for _, d := range c.dirs {
		if strings.Contains(string(b), "/"+filepath.Base(d)+"\n") {
			return true
		}
	}
	return false
}

// destroyTimeout bounds how long destroy waits for killed processes to finish exiting.
const destroyTimeout = 10 * time.Second

// destroy kills every process left in the groups, waits until they have all exited (a killed
// process lingers while the kernel tears it down, and rmdir fails with EBUSY meanwhile), then
// removes the groups. It fails if a process outlives the wait or a group cannot be removed.
func (c *cgroup) destroy() error {
	deadline := time.Now().Add(destroyTimeout)
	for {
		left := c.procs()
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup %s: %d processes still running %s after SIGKILL (pids %v); the group is left in place", c.dirs[0], len(left), destroyTimeout, left)
		}
		c.killAll(nil)
		time.Sleep(20 * time.Millisecond)
	}
	var errs []error
	for _, d := range c.dirs {
		for {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("removing cgroup %s: %w", d, err))
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return errors.Join(errs...)
}

// remove drops groups no process has joined yet (a failed setup).
func (c *cgroup) remove() {
	for _, d := range c.dirs {
		os.Remove(d)
	}
}

// cleanStaleCgroups ends whatever is left in the groups of processes that are gone, then
// removes the groups: a platform killed mid-run leaves its runs' groups behind, and with them
// any process that escaped the parent-death signal. Groups of live processes are left alone.
func cleanStaleCgroups() {
	pids, mem, unified := cgroupParents()
	stale := map[string]*cgroup{} // by name: v1 spreads one run over two hierarchies
	for _, parent := range []string{unified, pids, mem} {
		if parent == "" {
			continue
		}
		entries, _ := os.ReadDir(parent)
		for _, e := range entries {
			var pid, n int
			if c, _ := fmt.Sscanf(e.Name(), "mlerl-%d-%d", &pid, &n); c != 2 || !e.IsDir() || pid == os.Getpid() {
				continue
			}
			if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
				continue // alive (or a reused pid: left for a later start)
			}
			cg := stale[e.Name()]
			if cg == nil {
				cg = &cgroup{v2: parent == unified}
				stale[e.Name()] = cg
			}
			d := filepath.Join(parent, e.Name())
			cg.dirs = append(cg.dirs, d)
			cg.procsFiles = append(cg.procsFiles, filepath.Join(d, "cgroup.procs"))
			cg.memDir = d
		}
	}
	for _, cg := range stale {
		if err := cg.destroy(); err != nil {
			fmt.Fprintf(os.Stderr, "WARNING: sandbox: removing a stale cgroup: %v\n", err)
		}
	}
}
