package sandbox

import (
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A descriptor this process holds without close-on-exec (inherited from its parent, or opened
// by a library) must not reach the program: here one to a root-only file and one to a
// listening socket.
func TestSandboxNoInheritedDescriptors(t *testing.T) {
	sb := newTestSandbox(t)
	secret := "mlerl-fd-secret-" + fmt.Sprint(time.Now().UnixNano())
	file := filepath.Join(t.TempDir(), "root-only")
	if err := os.WriteFile(file, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	fd, err := syscall.Open(file, syscall.O_RDWR, 0) // no O_CLOEXEC, as a C library might
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(fd)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	sock := -1
	if cerr := rc.Control(func(fd uintptr) { sock, err = syscall.Dup(int(fd)) }); cerr != nil || err != nil { // a dup has no close-on-exec
		t.Fatal(cerr, err)
	}
	defer syscall.Close(sock)
	res, _ := mustRun(t, sb, `import os
fds = [int(n) for n in os.listdir('/proc/self/fd')]
held = []
for fd in fds:
    if fd > 2:
        try:
            os.fstat(fd)
        except OSError:
            continue  # the listing's own descriptor, closed by now
        held.append((fd, os.readlink('/proc/self/fd/%d' % fd)))
        try:
            print('read', os.pread(fd, 64, 0))
        except OSError as e:
            print('unreadable', fd, e)
print('held', held)
`, Limits{})
	if res.ExitCode != 0 || !strings.Contains(res.Output, "held []") || strings.Contains(res.Output, secret) {
		t.Fatalf("the program holds descriptors of the platform's (exit %d):\n%s", res.ExitCode, res.Output)
	}
}

// The platform's environment (API keys, AWS_*) is readable nowhere in the sandbox: not in the
// program's own, not at /proc/1/environ (bwrap, the sandbox's pid 1), not in any process's.
func TestSandboxNoPlatformEnvironment(t *testing.T) {
	sb := newTestSandbox(t)
	secret := "mlerl-env-secret-" + fmt.Sprint(time.Now().UnixNano())
	t.Setenv("AWS_SECRET_ACCESS_KEY", secret)
	t.Setenv("MLERL_POLICY_API_KEY", secret)
	res, _ := mustRun(t, sb, `import glob, os
print(dict(os.environ))
n = 0
for p in glob.glob('/proc/*/environ'):
    try:
        print(p, open(p, 'rb').read())
        n += 1
    except OSError as e:
        print(p, e)
print('read', n, 'environments')
`, Limits{})
	if res.ExitCode != 0 || strings.Contains(res.Output, secret) || strings.Contains(res.Output, "AWS_SECRET_ACCESS_KEY") {
		t.Fatalf("the platform's environment reached the sandbox (exit %d):\n%s", res.ExitCode, res.Output)
	}
	// The check above means something only if other processes' environments were readable.
	if !strings.Contains(res.Output, "/proc/1/environ b'") {
		t.Fatalf("the program could not read /proc/1/environ, so the test shows nothing:\n%s", res.Output)
	}
}

// bubblewrap's own tmpfs areas are not storage outside the disk quota: /, the folders bwrap
// makes in it, and /dev are read-only; /dev/shm holds at most shmBytes.
func TestSandboxSystemAreasBounded(t *testing.T) {
	sb := newTestSandbox(t)
	res, _ := mustRun(t, sb, `import os
chunk = b'x' * (8 << 20)
for d in ['/', '/code', '/etc', '/dev', '/dev/shm', '/usr']:
    n = 0
    p = os.path.join(d, 'mlerl-fill')
    try:
        with open(p, 'wb') as f:
            while n < (96 << 20):
                f.write(chunk)
                f.flush()
                n += len(chunk)
    except OSError as e:
        pass
    try:
        n = os.stat(p).st_size
        os.remove(p)
    except OSError:
        pass
    print('wrote', d, n)
# What programs need of /dev and /dev/shm still works: POSIX semaphores (multiprocessing,
# joblib) and the device nodes.
import multiprocessing
multiprocessing.Lock()
open('/dev/null', 'w').write('x')
print('semaphore ok', len(open('/dev/urandom', 'rb').read(8)))
`, Limits{Wall: 30 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096})
	if res.ExitCode != 0 {
		t.Fatalf("exit %d:\n%s", res.ExitCode, res.Output)
	}
	if !strings.Contains(res.Output, "semaphore ok 8") {
		t.Errorf("semaphores or device nodes broken:\n%s", res.Output)
	}
	for _, d := range []string{"/", "/code", "/etc", "/dev", "/usr"} {
		if !strings.Contains(res.Output, "wrote "+d+" 0\n") {
			t.Errorf("%s must be read-only:\n%s", d, res.Output)
		}
	}
	var shm int64
	for _, l := range strings.Split(res.Output, "\n") {
		fmt.Sscanf(l, "wrote /dev/shm %d", &shm)
	}
	if shm > shmBytes {
		t.Errorf("/dev/shm took %d bytes, over its %d:\n%s", shm, shmBytes, res.Output)
	}
}

func TestSandboxCopyOutBounded(t *testing.T) { requireCopyOutBounded(t, newTestSandbox(t)) }

// requireCopyOutBounded: what a program leaves costs the host at most the disk limit once
// copied out, however it is stored in the workspace (sparse, hard-linked), and a tree the
// host cannot hold or that passes copy-out's own bounds is the program's failure with a reason,
// never the sandbox's error.
func requireCopyOutBounded(t *testing.T, sb Sandbox) {
	t.Helper()
	requireOrSkip(t, os.Geteuid() == 0, "not root: no workspace, the work folder is used in place and never copied")
	lim := Limits{Wall: 30 * time.Second, MemoryBytes: 512 << 20, Processes: 32, OutputBytes: 4096, DiskBytes: 64 << 20}
	cases := []struct{ name, program, want string }{
		{"sparse file", "open('big.bin', 'wb').truncate(1 << 30)", "disk limit"},
		{"hard links", "open('f.bin', 'wb').write(b'x' * (8 << 20))\nimport os\nfor i in range(20): os.link('f.bin', 'l%d' % i)", "hard links"},
		{"deep tree", "import os\nos.makedirs('/'.join(['d'] * 100))", "nested"},
		{"path over 4096 bytes", "import os\nfor i in range(20):\n    os.mkdir('x' * 250)\n    os.chdir('x' * 250)\nopen('f', 'w').write('f')", "path of"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res, work := mustRun(t, sb, c.program+"\nopen('/work/submission.csv', 'w').write('id\\n')\nprint('done')", lim)
			if !strings.Contains(res.Output, "done") {
				t.Fatalf("the program did not run to its end: %+v", res)
			}
			if !strings.Contains(res.Failure, "cannot be copied out") || !strings.Contains(res.Failure, c.want) {
				t.Errorf("failure %q, want one saying the work folder cannot be copied out, with %q", res.Failure, c.want)
			}
			n := duBytes(work)
			if n > lim.DiskBytes {
				t.Errorf("the copy took %d bytes of host disk, over the %d-byte limit", n, lim.DiskBytes)
			}
			t.Logf("host disk after copy-out: %.1f MiB (limit %d MiB): %s", float64(n)/(1<<20), lim.DiskBytes>>20, res.Failure)
		})
	}
	// Within the limits everything arrives, and nothing is called a failure.
	res, work := mustRun(t, sb, "import os\nos.makedirs('a/b')\nopen('a/b/c', 'wb').write(b'c' * (40 << 20))\nos.link('a/b/c', 'hl')\nos.truncate('hl', 10 << 20)\nos.symlink('/etc/passwd', 's')\nprint('done')", lim)
	if res.Failure != "" || res.ExitCode != 0 {
		t.Fatalf("a work folder within the limits must copy out: %+v", res)
	}
	for _, f := range []string{"a/b/c", "hl"} {
		if st, err := os.Stat(filepath.Join(work, f)); err != nil || st.Size() != 10<<20 {
			t.Errorf("%s must arrive whole: %v", f, err)
		}
	}
	if st, err := os.Lstat(filepath.Join(work, "s")); err != nil || st.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the symlink must arrive as one: %v", err)
	}
}
