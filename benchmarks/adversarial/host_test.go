package adversarial

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"mlerl/internal/testenv"
	"mlerl/sandbox"
)

// sandboxKinds are the sandboxes the platform offers, as --sandbox names them.
var sandboxKinds = []string{"bubblewrap", "docker"}

// openSandbox opens one; a missing Docker engine or image fails the test under CI.
func openSandbox(t *testing.T, kind string) sandbox.Sandbox {
	var sb sandbox.Sandbox
	var err error
	switch kind {
	case "bubblewrap":
		sb, err = sandbox.NewLocal(testenv.Python, false)
	case "docker":
		cli, image := testenv.RequireDockerImage(t)
		sb, err = sandbox.NewDocker(context.Background(), sandbox.DockerOptions{Client: cli, Image: image,
			Labels: map[string]string{ownLabel: strconv.Itoa(os.Getpid())}})
	}
	if err != nil {
		t.Fatal(err)
	}
	return sb
}

// ownLabel marks this process's containers: `go test ./...` runs other packages' sandboxes at
// the same time, and the watch must judge only what this test's programs did.
const ownLabel = "mlerl.adversarial"

// hostWatch takes the host's state that a contained program cannot change.
type hostWatch struct {
	t                     *testing.T
	dataDir, secret       string
	answerLine            string // a line of the private answers, which must never show up in output
	rootCanary, uidCanary *exec.Cmd
}

type hostState map[string]string

func newHostWatch(t *testing.T, dataDir, secret, answers string) *hostWatch {
	h := &hostWatch{t: t, dataDir: dataDir, secret: secret}
	f, err := os.Open(answers)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	sc.Scan()
	sc.Scan() // the first data row
	h.answerLine = sc.Text()
	f.Close()
	h.startCanaries()
	t.Cleanup(func() {
		for _, c := range []*exec.Cmd{h.rootCanary, h.uidCanary} {
			c.Process.Kill()
			c.Wait()
		}
	})
	return h
}

// startCanaries runs two sleeping host processes: one as root and one as the sandbox's uid
// (65534), the one a program could signal if it shared the host's pid namespace.
func (h *hostWatch) startCanaries() {
	start := func(cred *syscall.Credential) *exec.Cmd {
		c := exec.Command("sleep", "3600")
		c.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		if err := c.Start(); err != nil {
			h.t.Fatal(err)
		}
		go c.Wait() // reaped when it dies, so a kill is seen as ESRCH
		return c
	}
	h.rootCanary = start(nil)
	if os.Getuid() == 0 {
		h.uidCanary = start(&syscall.Credential{Uid: 65534, Gid: 65534})
	} else {
		h.uidCanary = start(nil)
	}
}

func alive(c *exec.Cmd) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", c.Process.Pid))
	return err == nil && !strings.Contains(string(b), ") Z ")
}

func (h *hostWatch) snapshot() hostState {
	s := hostState{}
	for _, k := range []string{"kernel/printk_ratelimit", "kernel/core_pattern", "vm/overcommit_memory", "kernel/hostname"} {
		b, _ := os.ReadFile("/proc/sys/" + k)
		s["sysctl "+k] = strings.TrimSpace(string(b))
	}
	_, err := os.Lstat("/usr/share/mlerl-adversarial")
	s["/usr/share/mlerl-adversarial exists"] = fmt.Sprint(err == nil)
	s["prepared data (sha256 of every file)"] = treeHash(h.t, h.dataDir)
	s["mlerl cgroups"] = strings.Join(mlerlCgroups(), " ")
	s["processes of uid 65534 other than the canary"] = strings.Join(uidProcesses(65534, h.uidCanary.Process.Pid), " ")
	out, _ := exec.Command("docker", "ps", "-aq", "--filter", "label="+ownLabel+"="+strconv.Itoa(os.Getpid())).Output()
	s["sandbox containers"] = strings.Join(strings.Fields(string(out)), " ")
	s["mounts"] = mounts()
	s["root canary alive"] = fmt.Sprint(alive(h.rootCanary))
	s["uid 65534 canary alive"] = fmt.Sprint(alive(h.uidCanary))
	return s
}

// diff lists what changed since before, and any secret the program's output shows.
func (h *hostWatch) diff(before hostState, output string) []string {
	after := h.snapshot()
	var d []string
	keys := make([]string, 0, len(after))
	for k := range after {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if before[k] != after[k] {
			d = append(d, fmt.Sprintf("%s: %q -> %q", k, before[k], after[k]))
		}
	}
	if strings.Contains(output, h.secret) {
		d = append(d, "the host's root-only canary file shows in the output")
	}
	if h.answerLine != "" && strings.Contains(output, h.answerLine) {
		d = append(d, "a private answers row shows in the output")
	}
	if !alive(h.rootCanary) || !alive(h.uidCanary) {
		h.startCanaries() // the next case starts from a clean host
	}
	return d
}

func treeHash(t *testing.T, dir string) string {
	sum := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintf(sum, "%s %v\n", p, d.Type())
		if d.Type().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			io.Copy(sum, f)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(sum.Sum(nil))
}

// mlerlCgroups are the sandbox's cgroups anywhere in the hierarchy.
func mlerlCgroups() []string {
	var found []string
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.HasPrefix(d.Name(), fmt.Sprintf("mlerl-%d-", os.Getpid())) {
			found = append(found, p)
			return filepath.SkipDir
		}
		return nil
	})
	return found
}

func uidProcesses(uid, except int) []string {
	var pids []string
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid := e.Name()
		if pid == fmt.Sprint(except) || strings.Trim(pid, "0123456789") != "" {
			continue
		}
		b, err := os.ReadFile("/proc/" + pid + "/status")
		if err != nil || !ours(pid) {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[0] == "Uid:" && f[1] == fmt.Sprint(uid) {
				cmd, _ := os.ReadFile("/proc/" + pid + "/cmdline")
				pids = append(pids, pid+":"+strings.ReplaceAll(string(cmd), "\x00", " "))
			}
		}
	}
	return pids
}

// ours: a descendant of this test process (a bubblewrap program), or a process in a container
// with this process's label or in one already removed (a Docker program).
func ours(pid string) bool {
	self := strconv.Itoa(os.Getpid())
	for p, i := pid, 0; p != "" && p != "0" && i < 64; i++ {
		if p == self {
			return true
		}
		b, err := os.ReadFile("/proc/" + p + "/stat")
		if err != nil {
			break
		}
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 2 {
			break
		}
		p = f[1]
	}
	cg, _ := os.ReadFile("/proc/" + pid + "/cgroup")
	m := containerID.FindStringSubmatch(string(cg))
	if m == nil {
		return false
	}
	label, err := exec.Command("docker", "inspect", "-f", `{{index .Config.Labels "`+ownLabel+`"}}`, m[1]).Output()
	return err != nil || strings.TrimSpace(string(label)) == self
}

var containerID = regexp.MustCompile(`docker[/-]([0-9a-f]{64})`)

// mounts are the host mount namespace's mount points (a per-run workspace must be gone after
// it), without other processes' sandbox workspaces.
func mounts() string {
	b, _ := os.ReadFile("/proc/1/mountinfo")
	var points []string
	own := fmt.Sprintf("/run/mlerl-sandbox/run-%d-", os.Getpid())
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 4 && strings.HasPrefix(f[4], "/run/mlerl-sandbox/run-") && !strings.HasPrefix(f[4], own) {
			continue
		}
		if len(f) > 4 && !strings.HasPrefix(f[4], "/var/lib/docker") && !strings.HasPrefix(f[4], "/run/docker") {
			points = append(points, f[4])
		}
	}
	sort.Strings(points)
	return strings.Join(points, " ")
}

// table is the case / expected / per-sandbox observed table.
type table struct {
	head []string
	rows [][]string
	idx  map[string]int
}

func newTable(head ...string) *table { return &table{head: head, idx: map[string]int{}} }

func (tb *table) addColumn(name string) int {
	tb.head = append(tb.head, name)
	return len(tb.head) - 1
}

func (tb *table) set(name, expect string, col int, cell string) {
	i, ok := tb.idx[name]
	if !ok {
		i = len(tb.rows)
		tb.idx[name] = i
		tb.rows = append(tb.rows, []string{name, expect})
	}
	for len(tb.rows[i]) <= col {
		tb.rows[i] = append(tb.rows[i], "")
	}
	tb.rows[i][col] = cell
}

// write appends the table, in Markdown, to $MLERL_ADVERSARIAL_TABLE when it is set.
func (tb *table) write(t *testing.T, title string) {
	var b strings.Builder
	esc := func(s string) string {
		s = strings.Map(func(r rune) rune { // a program's bytes must not break the Markdown
			if r < 0x20 || r == 0x7f {
				return '?'
			}
			return r
		}, s)
		return strings.ReplaceAll(s, "|", `\|`)
	}
	fmt.Fprintf(&b, "### %s (%d cases, run as uid %d)\n\n| %s |\n|%s\n", title, len(tb.rows), os.Getuid(),
		strings.Join(tb.head, " | "), strings.Repeat("---|", len(tb.head)))
	for _, r := range tb.rows {
		for len(r) < len(tb.head) {
			r = append(r, "")
		}
		for i := range r {
			r[i] = esc(r[i])
		}
		fmt.Fprintf(&b, "| %s |\n", strings.Join(r, " | "))
	}
	t.Log("\n" + b.String())
	path := os.Getenv("MLERL_ADVERSARIAL_TABLE")
	if path == "" {
		return
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintln(f, b.String())
}
