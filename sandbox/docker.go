package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
)

// DefaultDockerImage is the image scripts/build-sandbox-image.sh builds (offline, with
// debootstrap) and deployments/sandbox/Dockerfile builds where a registry is reachable.
const DefaultDockerImage = "mlerl-sandbox:bookworm"

// DockerLabel marks every container this sandbox creates, so leftovers can be listed with
// `docker ps -a --filter label=mlerl.sandbox=1`.
const DockerLabel = "mlerl.sandbox"

// nobody in Debian: the program's uid when this process is root, so it owns nothing on the host.
const nobodyID = 65534

// programEnv is the environment bubblewrap gives programs (Local.baseArgs; keep the two in
// step): single-threaded numeric libraries, so a program's threads stay within its CPU limit.
var programEnv = []string{"PATH=/usr/bin:/bin", "HOME=" + WorkMount, "TMPDIR=/tmp", "MPLCONFIGDIR=/tmp",
	"PYTHONDONTWRITEBYTECODE=1", "OMP_NUM_THREADS=1", "OPENBLAS_NUM_THREADS=1", "MKL_NUM_THREADS=1"}

// DockerOptions configures the Docker sandbox; zero values take the defaults.
type DockerOptions struct {
	Image  string            // default DefaultDockerImage
	Python string            // interpreter inside the image, default /usr/bin/python3
	CPUs   float64           // CPU limit per run, default 1 (the programs' numeric libraries are single-threaded)
	UID    int               // the program's uid; 0 means this process's own, or 65534 (nobody) when it is root
	GID    int               // the program's gid, with UID
	Client *client.Client    // default: from the environment (DOCKER_HOST, else /var/run/docker.sock)
	Labels map[string]string // added to DockerLabel on every container, e.g. to tell workers apart
}

// Docker runs each program in a fresh container of a local Docker engine. The paths in a Spec
// are bind-mounted, so the engine must run on this host.
type Docker struct {
	cli      *client.Client
	image    string
	python   string
	nanoCPUs int64
	uid, gid int
	labels   map[string]string
}

// NewDocker checks that the engine answers, that the image is there (no image is ever pulled)
// and that a trivial program runs in it with every restriction applied.
func NewDocker(ctx context.Context, o DockerOptions) (*Docker, error) {
	d := &Docker{cli: o.Client, image: o.Image, python: o.Python, uid: o.UID, gid: o.GID,
		labels: map[string]string{DockerLabel: "1", ownerLabel: ownerOf(os.Getpid())}}
	for k, v := range o.Labels {
		d.labels[k] = v
	}
	if d.image == "" {
		d.image = DefaultDockerImage
	}
	if d.python == "" {
		d.python = "/usr/bin/python3"
	}
	if o.CPUs <= 0 {
		o.CPUs = 1
	}
	d.nanoCPUs = int64(o.CPUs * 1e9)
	if d.uid == 0 {
		d.uid, d.gid = os.Getuid(), os.Getgid()
		if d.uid == 0 {
			d.uid, d.gid = nobodyID, nobodyID
		}
	}
	if d.cli == nil {
		cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
		if err != nil {
			return nil, fmt.Errorf("docker client: %w", err)
		}
		d.cli = cli
	}
	err := checkDockerImage(ctx, d.cli, d.image)
	if err == nil {
		if os.Geteuid() == 0 {
			cleanStaleWorkspaces()
		}
		removeOrphanContainers(ctx, d.cli)
		err = d.probe(ctx)
	}
	if err != nil && o.Client == nil {
		d.cli.Close() // ours; a caller's client stays open
	}
	if err != nil {
		return nil, err
	}
	return d, nil
}

// checkDockerImage says why the engine cannot run the sandbox image, if it cannot.
func checkDockerImage(ctx context.Context, cli *client.Client, image string) error {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		return fmt.Errorf("the Docker engine at %s does not answer (%v): start it, or use the bubblewrap sandbox", cli.DaemonHost(), err)
	}
	if _, err := cli.ImageInspect(pctx, image); err != nil {
		if client.IsErrNotFound(err) {
			return fmt.Errorf("the sandbox image %s is not in the local Docker engine (images are never pulled): build it with scripts/build-sandbox-image.sh (offline, from Debian's packages) or `docker build -t %s deployments/sandbox`", image, image)
		}
		return fmt.Errorf("inspecting the sandbox image %s: %w", image, err)
	}
	return nil
}

// probe runs a trivial program, so a misconfigured engine (no docker-init, a remote engine that
// cannot see our paths, an image without the interpreter) is refused now, not on every run.
func (d *Docker) probe(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "mlerl-docker-probe-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	prog, data := filepath.Join(dir, "probe.py"), filepath.Join(dir, "data")
	if err := os.WriteFile(prog, []byte("import os\nopen('probe', 'w').write('ok')\nprint(sorted(os.listdir('input')))\n"), 0o644); err != nil {
		return err
	}
	if err := os.Mkdir(data, 0o755); err != nil {
		return err
	}
	res, err := d.Run(ctx, Spec{Program: prog, DataDir: data, WorkDir: filepath.Join(dir, "work"),
		Limits: Limits{Wall: time.Minute, MemoryBytes: 256 << 20, Processes: 16, OutputBytes: 4096}}, nil)
	if err != nil {
		return fmt.Errorf("the Docker sandbox cannot run %s: %w", d.image, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "work", "probe")); res.ExitCode != 0 || string(b) != "ok" {
		return fmt.Errorf("the Docker sandbox cannot run %s in %s (exit %d): %s", d.python, d.image, res.ExitCode, strings.TrimSpace(res.Output))
	}
	return nil
}

// Name says which isolation is in force.
func (d *Docker) Name() string { return "docker" }

// Image is the image programs run in.
func (d *Docker) Image() string { return d.image }

// Close releases the engine connection.
func (d *Docker) Close() error { return d.cli.Close() }

// Run executes spec.Program in a new container, spec.DataDir visible read-only as ./input.
// The container is removed however the run ends.
//
// As root, the work folder and /tmp are a per-run workspace of Limits.DiskBytes (workspace.go:
// an ext4 image, or a tmpfs) mounted on the host and bind-mounted into the container (the engine
// runs on this host; a tmpfs of the engine's own would vanish with the container, before the
// submission could be read), with
// spec.WorkDir copied in before and out after. Otherwise spec.WorkDir is bind-mounted as it
// is, its size watched, and /tmp is a tmpfs of the engine's limited to Limits.DiskBytes.
func (d *Docker) Run(ctx context.Context, spec Spec, progress func(Progress)) (res Result, err error) {
	work, data, prog, err := absPaths(spec)
	if err != nil {
		return Result{}, err
	}
	lim := spec.Limits
	disk := lim.disk()
	var ws *workspace
	mounts := []mount.Mount{
		{Type: mount.TypeBind, Source: data, Target: WorkMount + "/" + InputDir, ReadOnly: true},
		{Type: mount.TypeBind, Source: prog, Target: "/code/solution.py", ReadOnly: true},
	}
	// Charged to the container's memory limit, like bubblewrap's private /tmp.
	tmpfs := map[string]string{"/tmp": "rw,nosuid,nodev,mode=1777,size=" + strconv.FormatInt(disk, 10)}
	if os.Geteuid() == 0 {
		if err := os.MkdirAll(work, 0o755); err != nil {
			return Result{}, fmt.Errorf("creating work dir: %w", err)
		}
		if ws, err = newWorkspace(disk, d.uid, d.gid); err != nil {
			return Result{}, err
		}
		defer func() {
			if cerr := ws.close(); cerr != nil {
				fmt.Fprintf(os.Stderr, "WARNING: docker sandbox: %v\n", cerr)
			}
		}()
		if err := ws.copyIn(work); err != nil {
			return Result{}, fmt.Errorf("copying the work dir into the workspace: %w", err)
		}
		mounts = append([]mount.Mount{{Type: mount.TypeBind, Source: ws.Work(), Target: WorkMount},
			{Type: mount.TypeBind, Source: ws.Tmp(), Target: "/tmp"}}, mounts...)
		tmpfs = nil
	} else {
		if err := d.prepareWorkDir(work); err != nil {
			return Result{}, fmt.Errorf("preparing work dir: %w", err)
		}
		mounts = append([]mount.Mount{{Type: mount.TypeBind, Source: work, Target: WorkMount}}, mounts...)
	}
	pids := int64(lim.Processes)
	useInit := true // python must not be PID 1: PID 1 ignores default signals and reaps no orphans
	cfg := &container.Config{
		Image:           d.image,
		User:            strconv.Itoa(d.uid) + ":" + strconv.Itoa(d.gid),
		Cmd:             []string{d.python, "-u", "/code/solution.py"},
		Env:             programEnv,
		WorkingDir:      WorkMount,
		Hostname:        "sandbox",
		Labels:          d.labels,
		AttachStdout:    true,
		AttachStderr:    true,
		NetworkDisabled: true,
	}
	host := &container.HostConfig{
		NetworkMode:    "none",
		Mounts:         mounts,
		Tmpfs:          tmpfs,
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		Init:           &useInit,
		// The output is read from the attached streams; a logging driver would also keep all of
		// it on the engine's disk, unbounded.
		LogConfig: container.LogConfig{Type: "none"},
		Resources: container.Resources{
			Memory:     lim.MemoryBytes,
			MemorySwap: lim.MemoryBytes, // equal to Memory: no swap
			NanoCPUs:   d.nanoCPUs,
			PidsLimit:  &pids,
		},
	}
	created, err := d.cli.ContainerCreate(ctx, cfg, host, nil, nil, containerName())
	if err != nil {
		return cancelled(ctx, fmt.Errorf("creating container: %w", err))
	}
	id := created.ID
	defer d.remove(id)

	att, err := d.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return cancelled(ctx, fmt.Errorf("attaching to container: %w", err))
	}
	defer att.Close()
	out := newTailBuffer(lim.OutputBytes)
	copied := make(chan struct{})
	go func() {
		stdcopy.StdCopy(out, out, att.Reader)
		close(copied)
	}()
	// The wait outlives ctx: after a cancellation the container is killed, not abandoned.
	waitCtx, stopWait := context.WithCancel(context.Background())
	defer stopWait()
	waitC, waitErrC := d.cli.ContainerWait(waitCtx, id, container.WaitConditionNextExit)

	start := time.Now()
	if err := d.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return cancelled(ctx, fmt.Errorf("starting container: %w", err))
	}
	var watch *diskWatch
	var killedForDisk atomic.Bool
	if ws == nil {
		watch = watchDisk(work, disk, func() { killedForDisk.Store(true); d.kill(id) })
	}
	// diskState reads whether the run filled its quota and brings the work folder home.
	diskState := func() error {
		if watch != nil {
			res.DiskFull = watch.close() || diskErrorIn(res.Output)
		}
		if ws != nil {
			res.DiskFull = ws.checkFull() || diskErrorIn(res.Output) // a program faking it only mislabels its own failure
			failure, err := ws.copyOut(work)
			if err != nil {
				return fmt.Errorf("copying the work dir out of the workspace: %w", err)
			}
			res.Failure = failure
		}
		return nil
	}
	var peakMem int64 // the highest memory use seen while it ran, for the OOM hint below
	deadline := time.NewTimer(lim.Wall)
	defer deadline.Stop()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
loop:
	for {
		select {
		case w := <-waitC:
			if w.Error != nil && w.Error.Message != "" {
				return Result{}, fmt.Errorf("waiting for container: %s", w.Error.Message)
			}
			res.ExitCode = int(w.StatusCode)
			break loop
		case err := <-waitErrC:
			return cancelled(ctx, fmt.Errorf("waiting for container: %w", err))
		case <-deadline.C:
			res.TimedOut = true
			d.kill(id)
		case <-ctx.Done():
			// Cancelled by the caller: the partial result (output so far) comes with the error,
			// so the caller can still credit the markers the program reached.
			d.kill(id)
			drain(copied, att.Close)
			res.Duration, res.TimedOut, res.ExitCode = time.Since(start), true, -1
			res.Output, res.OutputBytes, _ = out.snapshot()
			d.waitGone(waitC, waitErrC)
			if err := diskState(); err != nil {
				fmt.Fprintf(os.Stderr, "WARNING: docker sandbox: %v\n", err)
			}
			return res, ctx.Err()
		case <-tick.C:
			if ws != nil {
				ws.checkFull()
			}
			peakMem = max(peakMem, d.memoryUsage(id))
			if progress != nil {
				_, n, last := out.snapshot()
				progress(Progress{Elapsed: time.Since(start), OutputBytes: n, LastLine: last})
			}
		}
	}
	res.Duration = time.Since(start)
	drain(copied, att.Close)
	res.Output, res.OutputBytes, _ = out.snapshot()
	if err := diskState(); err != nil {
		return Result{}, err
	}
	ictx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := d.cli.ContainerInspect(ictx, id)
	if err != nil {
		return Result{}, fmt.Errorf("inspecting container: %w", err)
	}
	res.OutOfMemory = st.State != nil && st.State.OOMKilled
	// Where the engine misses the OOM event: SIGKILLed, not by us, after using the memory limit.
	if !res.OutOfMemory && res.ExitCode == 137 && !res.TimedOut && !killedForDisk.Load() && lim.MemoryBytes > 0 &&
		peakMem >= lim.MemoryBytes-lim.MemoryBytes/20 {
		res.OutOfMemory = true
	}
	return res, nil
}

// waitGone waits (bounded) for a killed container to exit, so its processes are gone before
// its work folder is read.
func (d *Docker) waitGone(waitC <-chan container.WaitResponse, waitErrC <-chan error) {
	select {
	case <-waitC:
	case <-waitErrC:
	case <-time.After(30 * time.Second):
	}
}

// memoryUsage is the container's current (cgroup v2) or peak (v1) memory use, 0 if unknown.
func (d *Docker) memoryUsage(id string) int64 {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	st, err := d.cli.ContainerStatsOneShot(ctx, id)
	if err != nil {
		return 0
	}
	defer st.Body.Close()
	var s container.StatsResponse
	if json.NewDecoder(st.Body).Decode(&s) != nil {
		return 0
	}
	return int64(max(s.MemoryStats.MaxUsage, s.MemoryStats.Usage))
}

// absPaths makes the Spec's paths absolute, as bind mounts need.
func absPaths(spec Spec) (work, data, prog string, err error) {
	if work, err = filepath.Abs(spec.WorkDir); err == nil {
		if data, err = filepath.Abs(spec.DataDir); err == nil {
			prog, err = filepath.Abs(spec.Program)
		}
	}
	return work, data, prog, err
}

// prepareWorkDir makes the work dir writable for the program's uid. Only root can hand it
// over; otherwise the program runs as this process's own uid, which already owns it.
func (d *Docker) prepareWorkDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The unsandboxed runner leaves ./input as a symlink to the host's data; mount over a dir.
	input := filepath.Join(dir, InputDir)
	if st, err := os.Lstat(input); err == nil && st.Mode()&fs.ModeSymlink != 0 {
		os.Remove(input)
	}
	if os.Geteuid() != 0 || d.uid == os.Getuid() {
		return nil
	}
	return filepath.WalkDir(dir, func(p string, _ fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, d.uid, d.gid)
	})
}

// cancelled turns a failure caused by the caller's cancellation into the cancelled result.
func cancelled(ctx context.Context, err error) (Result, error) {
	if ctx.Err() != nil {
		return Result{TimedOut: true, ExitCode: -1}, ctx.Err()
	}
	return Result{}, err
}

// drain waits for the output stream to end (it does once the container's processes are
// gone), closing it if the engine keeps it open.
func drain(copied <-chan struct{}, closeStream func()) {
	select {
	case <-copied:
	case <-time.After(5 * time.Second):
		closeStream()
		<-copied
	}
}

// kill and remove use a fresh context: they must happen even when the caller's is cancelled.
func (d *Docker) kill(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	d.cli.ContainerKill(ctx, id, "KILL")
}

func (d *Docker) remove(id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := d.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !client.IsErrNotFound(err) {
		fmt.Fprintf(os.Stderr, "WARNING: docker sandbox: removing container %s: %v (remove it with `docker rm -f %s`)\n", id[:12], err, id[:12])
	}
}

// ownerLabel names the process that started a container: host and pid. A worker killed
// mid-run cannot remove its containers, and the engine keeps running them (a program's wall
// clock is kept by the worker), so the next sandbox started on the host removes them.
const ownerLabel = "mlerl.sandbox.owner"

func ownerOf(pid int) string {
	host, _ := os.Hostname()
	return host + "/" + strconv.Itoa(pid)
}

// removeOrphanContainers force-removes the sandbox containers whose owner on this host is gone.
// Containers of live processes, and of other hosts sharing the engine, are left alone.
func removeOrphanContainers(ctx context.Context, cli *client.Client) {
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: filters.NewArgs(filters.Arg("label", DockerLabel+"=1"))})
	if err != nil {
		return // the probe that follows reports an engine that does not answer
	}
	host, _ := os.Hostname()
	for _, c := range list {
		owner, pidText, ok := strings.Cut(c.Labels[ownerLabel], "/")
		pid, err := strconv.Atoi(pidText)
		if !ok || err != nil || owner != host || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); err == nil || errors.Is(err, syscall.EPERM) {
			continue // alive (or a reused pid: left for a later start)
		}
		rctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = cli.ContainerRemove(rctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		cancel()
		if err != nil && !client.IsErrNotFound(err) {
			fmt.Fprintf(os.Stderr, "WARNING: docker sandbox: removing the orphan container %s of a dead worker: %v\n", c.ID[:12], err)
		}
	}
}

func containerName() string {
	b := make([]byte, 6)
	rand.Read(b)
	return "mlerl-sandbox-" + hex.EncodeToString(b)
}

var _ Sandbox = (*Docker)(nil)
