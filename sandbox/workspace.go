package sandbox

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// DefaultDiskBytes bounds a run's work folder and /tmp together when Limits.DiskBytes is 0.
const DefaultDiskBytes = 1 << 30

func (l Limits) disk() int64 {
	if l.DiskBytes > 0 {
		return l.DiskBytes
	}
	return DefaultDiskBytes
}

// workspace is one run's writable storage when this process is root: a file system of
// Limits.DiskBytes mounted on the host, holding the program's work folder (work/) and /tmp
// (tmp/), so both together are bounded by the kernel and a program that fills them gets ENOSPC.
// The caller's Spec.WorkDir is copied in before and out after the run.
//
// The file system is ext4 in a sparse image under /var/tmp, loop-mounted: it takes host disk as
// it fills, at most DiskBytes, and the image is unlinked as soon as it is mounted, so it goes
// with the mount. Where that cannot be done (no loop devices or mkfs.ext4) it is a tmpfs, which
// lives in RAM: a full workspace then costs the host DiskBytes of memory, charged to the memory
// cgroup of the program that wrote it, so it counts against Limits.MemoryBytes too and a
// program filling its disk may be reported out of memory first.
//
// For bubblewrap, which runs as the unprivileged uid and so cannot open paths under root's 0700
// folders, the public data and the program are also bind-mounted read-only into the workspace
// (data/, solution.py), whose root is open to that uid's group only.
type workspace struct {
	root  string // the mount point; its parent is the per-run folder
	limit int64
	uid   int
	gid   int
	inRAM bool     // a tmpfs, not a disk image
	binds []string // read-only bind mounts made inside root, unmounted before it
	full  atomic.Bool
}

// workspaceBase holds the per-run mount points: a folder every uid can traverse (the mount
// points themselves are not), whatever $TMPDIR says.
func workspaceBase() (string, error) {
	base := "/run/mlerl-sandbox"
	if st, err := os.Stat("/run"); err != nil || !st.IsDir() {
		base = "/tmp/mlerl-sandbox"
	}
	if err := os.MkdirAll(base, 0o711); err != nil {
		return "", err
	}
	return base, os.Chmod(base, 0o711)
}

// cleanStaleWorkspaces unmounts and removes the workspaces of processes that are gone (a
// platform killed mid-run leaves its mounts behind). Those of live processes are left alone.
func cleanStaleWorkspaces() {
	base, err := workspaceBase()
	if err != nil {
		return
	}
	entries, _ := os.ReadDir(base)
	for _, e := range entries {
		var pid int
		var rest string
		if n, _ := fmt.Sscanf(e.Name(), "run-%d-%s", &pid, &rest); n != 2 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // alive (or a reused pid: left for a later start)
		}
		dir := filepath.Join(base, e.Name())
		for _, sub := range []string{"data", "solution.py", ""} {
			syscall.Unmount(filepath.Join(dir, sub), syscall.MNT_DETACH)
		}
		if err := os.Remove(dir); err != nil {
			fmt.Fprintf(os.Stderr, "WARNING: sandbox: removing a stale workspace %s: %v\n", dir, err)
		}
	}
}

// newWorkspace mounts a workspace (a disk image, else a tmpfs), with work/ and tmp/ owned by uid:gid.
func newWorkspace(limit int64, uid, gid int) (*workspace, error) {
	base, err := workspaceBase()
	if err != nil {
		return nil, fmt.Errorf("creating the workspace base: %w", err)
	}
	root, err := os.MkdirTemp(base, fmt.Sprintf("run-%d-", os.Getpid()))
	if err != nil {
		return nil, err
	}
	// Inodes cost space (and in a tmpfs, memory) outside the size limit: a program creating
	// millions of empty files must hit a bound too. One inode per 16 KiB, within [4096, 1<<20].
	inodes := min(max(limit/(16<<10), 4096), 1<<20)
	w := &workspace{root: root, limit: limit, uid: uid, gid: gid}
	if diskErr := mountDiskImage(root, limit, inodes, gid); diskErr != nil {
		opts := fmt.Sprintf("size=%d,nr_inodes=%d,mode=0750,uid=0,gid=%d", limit, inodes, gid)
		if err := syscall.Mount("tmpfs", root, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
			os.Remove(root)
			return nil, fmt.Errorf("mounting a %d-byte workspace on %s: a disk image failed (%v), and a tmpfs: %w", limit, root, diskErr, err)
		}
		w.inRAM = true
	}
	for _, d := range []string{w.Work(), w.Tmp()} {
		if err := os.Mkdir(d, 0o700); err == nil {
			err = os.Chown(d, uid, gid)
		}
		if err != nil {
			w.close()
			return nil, err
		}
	}
	return w, nil
}

// imageDir holds the workspaces' disk images (unlinked once mounted): on disk, unlike /run.
const imageDir = "/var/tmp/mlerl-sandbox"

// mountDiskImage mounts at root a fresh ext4 image with room for size bytes of files.
func mountDiskImage(root string, size, inodes int64, gid int) error {
	mkfs, err := exec.LookPath("mkfs.ext4")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(imageDir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(imageDir, "disk-*.img")
	if err != nil {
		return err
	}
	img := f.Name()
	// The loop device keeps the image open: unlinked now, its blocks go when it is unmounted.
	defer os.Remove(img)
	// ext4's own metadata (bitmaps, inode tables) takes a few percent: added so the program's
	// files get about size bytes.
	err = f.Truncate(size + size/64 + inodes*256 + 4<<20)
	f.Close()
	if err != nil {
		return err
	}
	if out, err := exec.Command(mkfs, "-q", "-F", "-m", "0", "-O", "^has_journal", "-N", strconv.FormatInt(inodes, 10),
		"-E", "lazy_itable_init=1,root_owner=0:"+strconv.Itoa(gid), img).CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4: %v: %s", err, strings.TrimSpace(string(out)))
	}
	if out, err := exec.Command("mount", "-o", "loop,nosuid,nodev", img, root).CombinedOutput(); err != nil {
		return fmt.Errorf("mount -o loop: %v: %s", err, strings.TrimSpace(string(out)))
	}
	os.Remove(filepath.Join(root, "lost+found"))
	if err := os.Chmod(root, 0o750); err != nil {
		syscall.Unmount(root, syscall.MNT_DETACH)
		return err
	}
	return nil
}

func (w *workspace) Work() string    { return filepath.Join(w.root, "work") }
func (w *workspace) Tmp() string     { return filepath.Join(w.root, "tmp") }
func (w *workspace) Data() string    { return filepath.Join(w.root, "data") }
func (w *workspace) Program() string { return filepath.Join(w.root, "solution.py") }

// bindInputs makes data and program readable at Data() and Program(), read-only.
func (w *workspace) bindInputs(data, program string) error {
	if err := os.Mkdir(w.Data(), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(w.Program(), nil, 0o644); err != nil {
		return err
	}
	for _, b := range [][2]string{{data, w.Data()}, {program, w.Program()}} {
		if err := syscall.Mount(b[0], b[1], "", syscall.MS_BIND, ""); err != nil {
			return fmt.Errorf("bind-mounting %s: %w", b[0], err)
		}
		w.binds = append(w.binds, b[1])
		// A bind is writable until remounted read-only; the sandbox cannot undo this (its
		// user namespace locks the flags of mounts it inherits).
		if err := syscall.Mount("", b[1], "", syscall.MS_BIND|syscall.MS_REMOUNT|syscall.MS_RDONLY|syscall.MS_NOSUID|syscall.MS_NODEV, ""); err != nil {
			return fmt.Errorf("making %s read-only: %w", b[1], err)
		}
	}
	return nil
}

// fullSlack is how little free space counts as full: a tmpfs fails writes page by page, so a
// program that hit ENOSPC leaves under a page; ext4 refuses a write while it still holds a few
// hundred KiB to a few MiB for metadata and delayed allocation (1.9 MiB free after ENOSPC at a
// 256 MiB quota), so more is allowed there.
func (w *workspace) fullSlack() int64 {
	if w.inRAM {
		return min(256<<10, w.limit/16)
	}
	return max(4<<20, w.limit/128)
}

// checkFull records whether the quota is (or was at any check) used up, in bytes or inodes.
func (w *workspace) checkFull() bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(w.root, &st); err == nil {
		// ext4 refuses new files with a few dozen inodes still free (16,304 files made of
		// 16,384 inodes): under 1/64 of them left counts as out of inodes.
		if int64(st.Bavail)*st.Bsize < w.fullSlack() || (st.Files > 0 && st.Ffree <= st.Files/64) {
			w.full.Store(true)
		}
	}
	return w.full.Load()
}

// copyIn copies the caller's work dir into the workspace (normally empty: nothing to do). Its
// ./input (a symlink the unsandboxed runner leaves, say) is not: the data is mounted there.
func (w *workspace) copyIn(dir string) error {
	return copyTree(dir, w.Work(), w.uid, w.gid, map[string]bool{InputDir: true}, nil)
}

// copyOut copies what the program left in its work folder to dir, owned by the program's
// uid as if it had written there. The mount point of the public data is left out. The program's
// processes are all gone by now, so nothing changes under the walk; symlinks are copied as
// links, never followed.
//
// The copy has limits of its own (copyLimits), since what costs the program little in its
// workspace can cost the host much more once copied: a sparse file, hard links to one file.
// Over a limit, or a file the host cannot hold (a path too long), the copy stops and failure
// says why: the program failed, not the sandbox. err is the host's own failure (its disk full).
func (w *workspace) copyOut(dir string) (failure string, err error) {
	err = copyTree(w.Work(), dir, w.uid, w.gid, map[string]bool{InputDir: true}, newCopyLimits(w.limit))
	var over *overLimit
	switch {
	case err == nil:
		return "", nil
	case errors.As(err, &over):
		return "its work folder cannot be copied out: " + over.why, nil
	case hostFault(err):
		return "", err
	}
	return "its work folder cannot be copied out: " + err.Error(), nil
}

// Copy-out's bounds besides the bytes (the disk limit): enough for any real program's outputs,
// and far below what makes the walk slow or the host's paths fail (PATH_MAX is 4096 bytes,
// including the host folder the copy goes to).
const (
	maxCopyEntries = 100_000
	maxCopyDepth   = 64
	maxCopyPath    = 2048
)

// copyLimits is what copy-out may still write. Every file is charged its full length rounded
// up to a block, as it is written (a sparse file's holes become data; each hard link is a copy),
// and every entry a block, for its inode and folder entry.
type copyLimits struct {
	limit, bytes int64
	entries      int
}

func newCopyLimits(bytes int64) *copyLimits { return &copyLimits{limit: bytes, bytes: bytes} }

const copyBlock = 4096

// overLimit is a copy-out stopped by copyLimits; why names the limit and the file.
type overLimit struct{ why string }

func (o *overLimit) Error() string { return o.why }

// charge takes size bytes (plus the entry's block) for rel, or says which limit it passes.
func (c *copyLimits) charge(rel string, size int64) error {
	if c == nil {
		return nil
	}
	c.entries++
	depth := strings.Count(rel, string(filepath.Separator)) + 1
	cost := (size+copyBlock-1)/copyBlock*copyBlock + copyBlock
	switch {
	case len(rel) > maxCopyPath:
		return &overLimit{fmt.Sprintf("a path of %d bytes (%q...), over the limit of %d", len(rel), rel[:60], maxCopyPath)}
	case depth > maxCopyDepth:
		return &overLimit{fmt.Sprintf("folders nested %d deep at %q, over the limit of %d", depth, tail60(rel), maxCopyDepth)}
	case c.entries > maxCopyEntries:
		return &overLimit{fmt.Sprintf("more than %d files and folders", maxCopyEntries)}
	case cost > c.bytes:
		return &overLimit{fmt.Sprintf("its files take more than the %d MiB disk limit once copied (sparse files and hard links count at their full size; %q alone is %d bytes)",
			c.limit>>20, tail60(rel), size)}
	}
	c.bytes -= cost
	return nil
}

// tail60 shortens a program's path for a reason, where it is always quoted (%q): its names may
// hold newlines and terminal escapes, and reasons reach consoles, tables and prompts.
func tail60(s string) string {
	if len(s) > 60 {
		return "..." + s[len(s)-60:]
	}
	return s
}

// hostFault reports whether a copy failed for want of the host's own resources, which is the
// platform's failure (retried elsewhere), not the program's.
func hostFault(err error) bool {
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EIO, syscall.EROFS, syscall.ENOMEM, syscall.EMFILE, syscall.ENFILE} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// close unmounts everything (lazily if busy) and removes the mount point.
func (w *workspace) close() error {
	var errs []error
	for i := len(w.binds) - 1; i >= 0; i-- {
		if err := syscall.Unmount(w.binds[i], 0); err != nil {
			errs = append(errs, syscall.Unmount(w.binds[i], syscall.MNT_DETACH))
		}
	}
	if err := syscall.Unmount(w.root, 0); err != nil {
		// Busy (a straggler's open file): detach it now; the kernel frees it when released.
		if err := syscall.Unmount(w.root, syscall.MNT_DETACH); err != nil {
			errs = append(errs, fmt.Errorf("unmounting workspace %s: %w", w.root, err))
		}
	}
	if err := os.Remove(w.root); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// copyTree copies regular files, folders, symlinks and FIFOs from src into dst (created if
// needed), skipping top-level names in skip and anything else (sockets, devices). Files are
// chowned to uid:gid when uid >= 0 and we are root. An existing non-folder at a destination
// path is replaced, so a planted symlink is never written through.
//
// lim (nil: none) bounds what is written; errors name paths relative to src.
func copyTree(src, dst string, uid, gid int, skip map[string]bool, lim *copyLimits) error {
	if err := os.MkdirAll(dst, 0o755); err != nil {
		return err
	}
	chown := func(p string) error {
		if uid < 0 || os.Geteuid() != 0 {
			return nil
		}
		return os.Lchown(p, uid, gid)
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		rel, rerr := filepath.Rel(src, p)
		if rerr != nil {
			return rerr
		}
		if err != nil {
			return relError(rel, err)
		}
		if rel == "." {
			return nil
		}
		if skip[rel] {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return relError(rel, err)
		}
		var size int64
		if d.Type().IsRegular() {
			size = info.Size()
		}
		if err := lim.charge(rel, size); err != nil {
			return err
		}
		if err := copyEntry(p, target, d, info, chown); err != nil {
			return relError(rel, err)
		}
		return nil
	})
}

// relError names the failing file by its path in the copied tree (the host's folders are
// nobody's business in a program's failure reason), keeping the cause for errors.Is.
func relError(rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s %q: %w", pe.Op, tail60(rel), pe.Err)
	}
	return fmt.Errorf("%q: %w", tail60(rel), err)
}

// copyEntry copies one entry of copyTree.
func copyEntry(p, target string, d fs.DirEntry, info fs.FileInfo, chown func(string) error) error {
	if st, err := os.Lstat(target); err == nil && !(st.IsDir() && d.IsDir()) {
		if err := os.RemoveAll(target); err != nil {
			return err
		}
	}
	switch {
	case d.IsDir():
		if err := os.Mkdir(target, info.Mode().Perm()|0o700); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		return chown(target)
	case d.Type()&fs.ModeSymlink != 0:
		link, err := os.Readlink(p)
		if err != nil {
			return err
		}
		if err := os.Symlink(link, target); err != nil {
			return err
		}
		return chown(target)
	case d.Type().IsRegular():
		return copyFile(p, target, info.Size(), info.Mode().Perm(), chown)
	case d.Type()&fs.ModeNamedPipe != 0:
		// Recreated, not read (a read would block): the caller sees what the program left,
		// e.g. a FIFO named submission.csv, and refuses it as not a regular file.
		if err := syscall.Mkfifo(target, uint32(info.Mode().Perm())); err != nil {
			return err
		}
		return chown(target)
	}
	return nil // sockets and devices (which nodev makes useless anyway) are dropped
}

func copyFile(src, dst string, size int64, perm fs.FileMode, chown func(string) error) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, perm)
	if err != nil {
		return err
	}
	// Never more than the length charged for it (the program is gone; this is a guard).
	if _, err := io.Copy(out, io.LimitReader(in, size)); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	if err := chown(dst); err != nil {
		return err
	}
	return os.Chmod(dst, perm) // after chown, which clears setuid bits; perm has none anyway
}

// diskWatch bounds a work folder where no workspace can be mounted (this process is not root):
// it sums the folder's allocated blocks a few times a second and calls over once they pass the
// limit. The bound is approximate: a fast writer gets a few hundred MB/s times the period past it.
type diskWatch struct {
	stop chan struct{}
	done chan struct{}
	full atomic.Bool
}

const diskWatchPeriod = 200 * time.Millisecond

func watchDisk(dir string, limit int64, over func()) *diskWatch {
	w := &diskWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		t := time.NewTicker(diskWatchPeriod)
		defer t.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-t.C:
				if duBytes(dir) >= limit {
					w.full.Store(true)
					over()
					return
				}
			}
		}
	}()
	return w
}

// close stops the watch and reports whether the limit was passed.
func (w *diskWatch) close() bool {
	close(w.stop)
	<-w.done
	return w.full.Load()
}

// diskErrorIn reports whether the output's tail shows a write refused for space, the one sign
// of a full /tmp (a tmpfs inside the sandbox, not visible from here) without a workspace.
func diskErrorIn(output string) bool {
	return strings.Contains(output, "No space left on device") || strings.Contains(output, "File too large")
}

// duBytes is the space allocated under dir, like du.
func duBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if info, err := d.Info(); err == nil {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				n += st.Blocks * 512
			}
		}
		return nil
	})
	return n
}
