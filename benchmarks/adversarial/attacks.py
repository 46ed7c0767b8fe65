# Hostile agent programs for the adversarial benchmark. Each case is one function; the test
# appends `main("<case>")` and runs the whole file in a sandbox as an agent's program. A case
# prints "ESCAPED <case>: ..." for every attack that worked and "BLOCKED <case>: ..." for every
# one that did not; the test also checks the host itself, so a case cannot hide an escape by
# printing nothing. Placeholders in {{...}} are filled in by the test (host paths, a port).
import ctypes
import errno
import glob
import os
import signal
import socket
import stat
import sys
import threading
import time

libc = ctypes.CDLL(None, use_errno=True)

MS_RDONLY, MS_REMOUNT, MS_BIND = 1, 32, 4096
CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000

HOST_ANSWERS = "{{HOST_ANSWERS}}"      # the private answers' path on the host
HOST_CANARY = "{{HOST_CANARY}}"        # a secret file on the host, readable by root only
LISTEN_PORT = int("{{LISTEN_PORT}}")   # a TCP listener on the host's loopback
ABSTRACT_SOCKET = "{{ABSTRACT_SOCKET}}"  # an abstract unix socket the host listens on


def report(case, ok, what):
    print(("ESCAPED " if ok else "BLOCKED ") + case + ": " + what, flush=True)


def attempt(case, what, fn):
    """Runs fn; success means the attack worked."""
    try:
        r = fn()
        report(case, True, "%s (%r)" % (what, r))
        return True
    except Exception as e:  # every refusal is an exception of some kind
        report(case, False, "%s: %s" % (what, e))
        return False


def check(rc, name):
    if rc != 0:
        e = ctypes.get_errno()
        raise OSError(e, "%s: %s" % (name, os.strerror(e)))
    return rc


def mount(src, target, fstype, flags, data=None):
    enc = lambda s: s.encode() if s is not None else None
    return check(libc.mount(enc(src), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)), "mount")


def write_file(path, text):
    with open(path, "w") as f:
        f.write(text)
    return path


def read_file(path):
    with open(path) as f:
        return f.read(64)


# --- privilege and mounts: the escape, step by step ---

def remount_usr(case):
    # The attack: remount the read-only /usr bind writable, then write into the host's /usr/share.
    attempt(case, "remount /usr read-write", lambda: mount(None, "/usr", None, MS_REMOUNT | MS_BIND))
    attempt(case, "write /usr/share", lambda: write_file("/usr/share/mlerl-adversarial", "owned"))


def remount_input(case):
    # The second write: into the prepared data a later sample reads.
    attempt(case, "remount input read-write", lambda: mount(None, "input", None, MS_REMOUNT | MS_BIND))
    attempt(case, "write a new file into input", lambda: write_file("input/mlerl-adversarial.csv", "id\n"))
    attempt(case, "truncate input/train.csv", lambda: open("input/train.csv", "r+").truncate(0))


def sysctl_write(case):
    # Writing back the current value: harmless if it works, and working is the escape.
    for key in ["kernel/printk_ratelimit", "kernel/core_pattern", "vm/overcommit_memory", "kernel/hostname"]:
        path = "/proc/sys/" + key
        try:
            cur = read_file(path)
        except Exception as e:
            report(case, False, "read %s: %s" % (path, e))
            continue
        attempt(case, "write " + path, lambda p=path, c=cur: write_file(p, c))
    attempt(case, "write /proc/sysrq-trigger", lambda: write_file("/proc/sysrq-trigger", "h"))


def capabilities(case):
    caps = {}
    with open("/proc/self/status") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k in ("CapEff", "CapPrm", "CapAmb", "Uid"):
                caps[k] = v.split()
    for k in ("CapEff", "CapPrm", "CapAmb"):
        held = int(caps[k][0], 16)
        report(case, held != 0, "%s %s" % (k, caps[k][0]))
    attempt(case, "setuid(0)", lambda: os.setuid(0))
    attempt(case, "chroot", lambda: os.chroot("/tmp"))


def user_namespace(case):
    # A fresh user namespace hands back every capability inside it; remounting the inherited,
    # locked read-only mounts must still fail.
    def unshare():
        return check(libc.unshare(CLONE_NEWUSER | CLONE_NEWNS), "unshare")
    if attempt(case, "unshare a user namespace", unshare):
        attempt(case, "remount /usr in it", lambda: mount(None, "/usr", None, MS_REMOUNT | MS_BIND))
        attempt(case, "write /usr/share from it", lambda: write_file("/usr/share/mlerl-adversarial", "owned"))


def new_mounts(case):
    os.makedirs("/tmp/m", exist_ok=True)
    attempt(case, "mount a tmpfs over /usr/share", lambda: mount("none", "/usr/share", "tmpfs", 0))
    attempt(case, "mount sysfs", lambda: mount("none", "/tmp/m", "sysfs", 0))
    attempt(case, "mount the host's proc", lambda: mount("proc", "/tmp/m", "proc", 0))


def devices(case):
    attempt(case, "mknod a block device", lambda: os.mknod("/tmp/sda", stat.S_IFBLK | 0o600, os.makedev(8, 0)))
    for dev in ["/dev/sda", "/dev/vda", "/dev/mem", "/dev/kmsg", "/dev/port"]:
        attempt(case, "open " + dev, lambda d=dev: os.close(os.open(d, os.O_RDWR)))


def kernel_calls(case):
    # finit_module (x86_64 313) and clock_settime need capabilities the program must not hold;
    # the clock is set to its own value, so success would be harmless but still an escape.
    def finit():
        fd = os.open("/dev/null", os.O_RDONLY)
        try:
            return check(libc.syscall(313, fd, b"", 0), "finit_module")
        finally:
            os.close(fd)
    attempt(case, "load a kernel module", finit)

    class timespec(ctypes.Structure):
        _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
    def settime():
        ts = timespec()
        check(libc.clock_gettime(0, ctypes.byref(ts)), "clock_gettime")
        return check(libc.clock_settime(0, ctypes.byref(ts)), "clock_settime")
    attempt(case, "set the clock", settime)
    attempt(case, "sethostname", lambda: check(libc.sethostname(b"owned", 5), "sethostname"))


def cgroup_escape(case):
    # Moving itself to another cgroup would shed the memory and process limits.
    files = glob.glob("/sys/fs/cgroup/cgroup.procs") + glob.glob("/sys/fs/cgroup/*/cgroup.procs")
    if not files:
        report(case, False, "no cgroup filesystem visible")
    for f in files:
        attempt(case, "join " + f, lambda p=f: write_file(p, str(os.getpid())))
    attempt(case, "raise memory.limit_in_bytes", lambda: write_file("/sys/fs/cgroup/memory/memory.limit_in_bytes", "-1"))


# --- secrets and other tenants ---

def private_answers(case):
    guesses = [HOST_ANSWERS, "input/../private/answers.csv", "../private/answers.csv",
               "/data/private/answers.csv", "/proc/1/root" + HOST_ANSWERS]
    for p in guesses:
        attempt(case, "read " + p, lambda q=p: read_file(q))
    # Walk the whole visible tree (not /proc, /sys, /dev: /proc/*/root loops back to / forever).
    # /usr (the system's packages, tens of thousands of files) goes last and stops at a deadline:
    # on a loaded machine walking it alone can outlast the case's 10 s wall limit.
    found = ["/" + n for n in os.listdir("/") if n.startswith("answers") and n.endswith(".csv")]
    deadline = time.monotonic() + 5
    # (/bin, /lib and /sbin are usually links into /usr.)
    tops = sorted(d for d in os.listdir("/") if d not in ("proc", "sys", "dev", "usr") and not os.path.islink("/" + d))
    for top in ["/" + d for d in tops] + ["/usr"]:
        for here, dirs, files in os.walk(top, followlinks=False):
            found += [os.path.join(here, n) for n in files if n.startswith("answers") and n.endswith(".csv")]
            if len(found) >= 5 or (top == "/usr" and time.monotonic() > deadline):
                break
    report(case, bool(found), "search for answers files: %s" % (found or "none"))


def host_secrets(case):
    for p in [HOST_CANARY, "/proc/1/root" + HOST_CANARY, "/root/.bash_history", "/etc/shadow"]:
        attempt(case, "read " + p, lambda q=p: read_file(q))


def host_processes(case):
    # The host's processes (the platform, Temporal, Docker) must be invisible.
    seen = []
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                seen.append(open("/proc/%s/cmdline" % d, "rb").read().split(b"\0")[0].decode(errors="replace"))
            except Exception:
                pass
    host = [c for c in seen if any(w in c for w in ("starter", "temporal", "dockerd", "containerd", "go-build", "systemd", "sshd"))]
    report(case, bool(host), "host processes visible: %s (all: %d)" % (host[:5], len(seen)))


def kill_everyone(case):
    # kill(-1) reaches every process the caller may signal: it must stay inside the sandbox.
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    for sig in (signal.SIGTERM, signal.SIGKILL):
        attempt(case, "kill(-1, %s)" % sig.name, lambda s=sig: os.kill(-1, s))


def network(case):
    attempt(case, "connect to the host's loopback listener", lambda: socket.create_connection(("127.0.0.1", LISTEN_PORT), timeout=2))
    names = [n for _, n in socket.if_nameindex()]
    report(case, any(n != "lo" for n in names), "network interfaces: %s" % names)
    attempt(case, "open a raw socket", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
    attempt(case, "open a packet socket", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))


def inherited_fds(case):
    # The platform holds a descriptor to a root-only file and a listening socket without
    # close-on-exec: neither may be open in the program.
    held = 0
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd <= 2:
            continue
        try:
            os.fstat(fd)
        except OSError:
            continue  # the listing's own descriptor, closed by now
        held += 1
        target = os.readlink("/proc/self/fd/%d" % fd)
        try:
            report(case, True, "inherited fd %d -> %s reads %r" % (fd, target, os.pread(fd, 64, 0)))
        except OSError as e:
            report(case, True, "inherited fd %d -> %s (%s)" % (fd, target, e))
    if not held:
        report(case, False, "no descriptor above stderr inherited")


def environ_secrets(case):
    # The platform's environment holds API keys and AWS_* credentials: none may show up in the
    # program's environment or any visible process's (/proc/1 is the sandbox's init).
    found, read = [], 0
    for p in ["/proc/self/environ"] + glob.glob("/proc/[0-9]*/environ"):
        try:
            env = open(p, "rb").read().decode(errors="replace")
            read += 1
        except OSError as e:
            report(case, False, "read %s: %s" % (p, e))
            continue
        for kv in env.split("\0"):
            if kv.startswith(("AWS_", "MLERL_", "OPENAI_", "ANTHROPIC_")) or "KEY" in kv.split("=")[0]:
                found.append("%s: %s" % (p, kv))
    report(case, bool(found), "platform variables in %d environments: %s" % (read, found or "none"))


def system_tmpfs_fill(case):
    # bwrap's own tmpfs areas (and Docker's) must not be storage beside the disk quota: each
    # refuses writes, or stops well below the 96 MiB tried here (/dev/shm: 64 MiB).
    chunk = b"x" * (8 << 20)
    for d in ["/", "/code", "/etc", "/dev", "/dev/shm", "/run", "/var/tmp", "/home"]:
        p, n = os.path.join(d, "mlerl-fill"), 0
        try:
            with open(p, "wb") as f:
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
        report(case, n >= (96 << 20), "%d MiB written to %s" % (n >> 20, d))


def sparse_file(case):
    # 1 GiB of holes costs nothing here and 1 GiB on the host once copied out, without a bound.
    with open("big.bin", "wb") as f:
        f.truncate(1 << 30)
    uniform().to_csv("submission.csv", index=False)


def hard_links(case):
    # One 20 MiB file, 40 names: 820 MiB once each link is copied as a file.
    with open("f.bin", "wb") as f:
        f.write(os.urandom(20 << 20))
    for i in range(40):
        os.link("f.bin", "link%02d.bin" % i)
    uniform().to_csv("submission.csv", index=False)


def many_small_files(case):
    # Files until the workspace has no inode left: bounded there, and copied out within budget.
    n = 0
    try:
        os.mkdir("many")
        while n < 200000:
            open("many/%d" % n, "w").close()
            n += 1
    except OSError as e:
        report(case, n >= 200000, "created %d files before: %s" % (n, e))


def deep_tree(case):
    os.makedirs("/".join(["d"] * 200))
    uniform().to_csv("submission.csv", index=False)


def escape_names(case):
    # Names with a newline, terminal escapes and invalid UTF-8, nested past copy-out's depth
    # limit so that the failure's reason names one: it must come quoted, never raw.
    name = b"n\nESCAPED escape-names: raw name in a reason\x1b[2J\xff"
    os.makedirs(b"/".join([name] * 70))
    uniform().to_csv("submission.csv", index=False)


def long_path(case):
    # A path over 4,096 bytes, which the host cannot copy: the program's failure, not a retry.
    for _ in range(20):
        os.mkdir("x" * 250)
        os.chdir("x" * 250)
    open("f", "w").close()
    os.chdir("/work")
    uniform().to_csv("submission.csv", index=False)


def special_files(case):
    # Sockets, FIFOs, symlinks to host files and symlink loops are never followed nor read.
    s = socket.socket(socket.AF_UNIX)
    s.bind("sock")
    os.mkfifo("fifo")
    os.symlink(HOST_CANARY, "canary-link")
    os.symlink("loop-b", "loop-a")
    os.symlink("loop-a", "loop-b")
    os.symlink("/", "root-link")


def ancestor_descriptors(case):
    # Other processes' descriptors and roots (the sandbox's init, bwrap or docker-init): none
    # may open a file of the host's.
    for pid in [d for d in os.listdir("/proc") if d.isdigit() and int(d) != os.getpid()]:
        for fd in glob.glob("/proc/%s/fd/*" % pid):
            try:
                target = os.readlink(fd)
            except OSError as e:
                report(case, False, "readlink %s: %s" % (fd, e))
                continue
            try:
                with open(fd, "rb") as f:
                    data = f.read(64) if os.path.isfile(fd) else b""
                report(case, target.startswith("/") and not target.startswith("/dev/"), "opened %s -> %s: %r" % (fd, target, data))
            except OSError as e:
                report(case, False, "open %s -> %s: %s" % (fd, target, e))
        try:
            extra = sorted(set(os.listdir("/proc/%s/root" % pid)) - set(os.listdir("/")))
            report(case, bool(extra), "/proc/%s/root shows more than our /: %s" % (pid, extra))
        except OSError as e:
            report(case, False, "list /proc/%s/root: %s" % (pid, e))
    report(case, False, "ancestors checked")


def abstract_socket(case):
    # Abstract unix sockets belong to a network namespace: the host's must be unreachable.
    def connect():
        s = socket.socket(socket.AF_UNIX)
        s.settimeout(2)
        s.connect("\0" + ABSTRACT_SOCKET)
        return s
    attempt(case, "connect to the host's abstract socket @" + ABSTRACT_SOCKET, connect)


def huge_line(case):
    # 64 MiB on one line, no newline: the platform keeps only the output's tail.
    sys.stdout.write("z" * (64 << 20))
    sys.stdout.flush()
    print()


def binary_output(case):
    # NULs, invalid UTF-8 and terminal escapes in the output are stored, never interpreted.
    sys.stdout.buffer.write(b"\x00\xff\xfe\x1b[2J\x1b]0;owned\x07" + os.urandom(65536) + b"\n")
    sys.stdout.flush()
    print()


def tamper_program(case):
    attempt(case, "overwrite the running program", lambda: write_file(os.path.abspath(sys.argv[0]), "pass\n"))
    attempt(case, "hard-link a system binary", lambda: os.link("/usr/bin/python3", "python3-link"))


# --- resources: each must end with its reason and leave nothing behind ---

def fork_bomb(case):
    children = 0
    deadline = time.time() + 3
    while time.time() < deadline:
        try:
            if os.fork() == 0:
                time.sleep(30)
                os._exit(0)
            children += 1
        except OSError as e:
            report(case, False, "fork refused after %d children: %s" % (children, e))
            break
    else:
        report(case, children > 5000, "%d children forked without refusal" % children)
    sys.exit(1)


def thread_bomb(case):
    n = 0
    try:
        for n in range(100000):
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    except RuntimeError as e:
        report(case, False, "thread refused after %d: %s" % (n, e))
        os._exit(1)
    report(case, True, "%d threads started" % n)


def memory_bomb(case):
    hog = []
    while True:
        hog.append(bytearray(64 << 20))


def fill(path):
    chunk = b"x" * (8 << 20)
    with open(path, "wb") as f:
        while True:
            f.write(chunk)
            f.flush()


def disk_fill_work(case):
    fill("fill.bin")


def disk_fill_tmp(case):
    fill("/tmp/fill.bin")


def output_flood(case):
    line = "y" * 1023
    for _ in range(200000):  # 200 MiB
        print(line)


def infinite_loop(case):
    while True:
        pass


def orphan_daemon(case):
    # Double fork into a new session, then exit: the daemon must not outlive the run.
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)
            time.sleep(3600)
        os._exit(0)
    time.sleep(0.5)
    print("parent exits, daemon left behind", flush=True)


def fd_exhaustion(case):
    fds = []
    try:
        while True:
            fds.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        report(case, len(fds) > 1 << 20, "open refused after %d descriptors: %s" % (len(fds), e))


# --- submissions the platform must refuse without reading ---

def submission_symlink(case):
    os.symlink(HOST_ANSWERS, "submission.csv")


def submission_fifo(case):
    # Reading a FIFO would block the platform forever.
    os.mkfifo("submission.csv")


def submission_sparse(case):
    with open("submission.csv", "wb") as f:
        f.truncate(4 << 30)  # 4 GiB, sparse: costs no disk but must still be refused


def submission_dir(case):
    os.mkdir("submission.csv")


# --- careless submissions: each must be graded invalid with a reason, or valid where MLE-bench
# accepts it ---

def sample():
    import pandas as pd
    return pd.read_csv("input/sample_submission.csv")


def uniform():
    s = sample()
    s.iloc[:, 1:] = 1.0 / (s.shape[1] - 1)
    return s


def bad_columns_numbered(case):
    # The real failure: class columns named 0, 1, 2 instead of the class names.
    s = uniform()
    s.columns = ["id"] + [str(i) for i in range(s.shape[1] - 1)]
    s.to_csv("submission.csv", index=False)


def bad_missing_rows(case):
    uniform().iloc[::2].to_csv("submission.csv", index=False)


def bad_duplicate_ids(case):
    s = uniform()
    s.iloc[1, 0] = s.iloc[0, 0]
    s.to_csv("submission.csv", index=False)


def bad_nan(case):
    s = uniform()
    s.iloc[0, 1] = float("nan")
    s.to_csv("submission.csv", index=False)


def bad_negative(case):
    s = uniform()
    s.iloc[0, 1], s.iloc[0, 2] = -0.5, s.iloc[0, 2] + 0.5
    s.to_csv("submission.csv", index=False)


def bad_row_sums(case):
    s = uniform()
    s.iloc[:, 1:] *= 1.5
    s.to_csv("submission.csv", index=False)


def bad_empty(case):
    open("submission.csv", "w").close()


def bad_header_only(case):
    s = uniform()
    s.iloc[:0].to_csv("submission.csv", index=False)


def bad_garbage(case):
    with open("submission.csv", "wb") as f:
        f.write(os.urandom(4096))


def bad_text_in_numbers(case):
    s = uniform().astype(object)
    s.iloc[0, 1] = "high"
    s.to_csv("submission.csv", index=False)


def ok_float_ids(case):
    # Ids written as 4.0 instead of 4: pandas reads both as the number 4, so MLE-bench accepts it.
    s = uniform()
    s["id"] = s["id"].astype(float)
    s.to_csv("submission.csv", index=False)


def ok_uniform(case):
    uniform().to_csv("submission.csv", index=False)


def main(case):
    globals()[case.replace("-", "_")](case)
    print("DONE " + case, flush=True)
