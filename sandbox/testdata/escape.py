# The escapes of issue 19, tried from inside the sandbox. Prints one "name: result" line per
# attempt; the test reads them and checks the host. "blocked" means the attempt failed.
import ctypes, os

libc = ctypes.CDLL(None, use_errno=True)
MS_REMOUNT, MS_BIND = 32, 4096
CLONE_NEWUSER, CLONE_NEWNS = 0x10000000, 0x00020000


def attempt(name, fn):
    try:
        r = fn()
        print(f"{name}: {'blocked ' + os.strerror(ctypes.get_errno()) if r is False else 'DONE'}", flush=True)
    except OSError as e:
        print(f"{name}: blocked {e}", flush=True)


def remount_write(target, path):
    def fn():
        if libc.mount(None, target.encode(), None, MS_REMOUNT | MS_BIND, None) != 0:
            return False
        with open(path, "w") as f:
            f.write("escaped")
    return fn


def write(path):
    def fn():
        with open(path, "w") as f:
            f.write("1")
    return fn


def unshare_mount():
    if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
        return False
    if libc.mount(b"none", b"/work/input", b"tmpfs", 0, None) != 0:
        return False


attempt("remount data", remount_write("/work/input", "/work/input/escaped.csv"))
attempt("remount usr", remount_write("/usr", "/usr/share/mlerl-escaped"))
attempt("write usr", write("/usr/share/mlerl-escaped"))
attempt("write proc sys", write("/proc/sys/kernel/printk_ratelimit"))
attempt("unshare user then mount", unshare_mount)
status = {l.split(":")[0]: l.split(":")[1].strip() for l in open("/proc/self/status") if ":" in l}
for k in ("CapEff", "CapPrm", "CapBnd", "CapAmb", "NoNewPrivs"):
    print(f"{k}: {status[k]}")
print(f"uid: {os.getuid()} {os.geteuid()}")
with open("owned-by", "w") as f:
    f.write("me")
