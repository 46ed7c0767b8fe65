package artifacts

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/minio/minio-go/v7"

	"mlerl/internal/testenv"
)

// minioServer is a running MinIO's address and credentials.
type minioServer struct{ endpoint, user, password string }

func startMinIO(t *testing.T) minioServer {
	e, u, p := testenv.StartMinIO(t)
	return minioServer{e, u, p}
}

// runs opens s3://<fresh bucket>/runs at endpoint through OpenRuns, as a worker would, with a
// short backoff so failures show quickly.
func (m minioServer) runs(t *testing.T, endpoint string) *S3Runs {
	t.Helper()
	r, err := OpenRuns("s3://"+freshBucket()+"/runs", envOf(map[string]string{"AWS_ENDPOINT_URL": endpoint,
		"MINIO_ROOT_USER": m.user, "MINIO_ROOT_PASSWORD": m.password, "AWS_REGION": "us-east-1"}))
	if err != nil {
		t.Fatal(err)
	}
	s := r.(*S3Runs)
	s.Retry = Backoff{Attempts: 4, Initial: 50 * time.Millisecond, Max: 200 * time.Millisecond}
	return s
}

func freshBucket() string { return "test-" + strings.ToLower(rand.Text()[:10]) }

func mustRun(t *testing.T, r Runs, id string) Store {
	t.Helper()
	s, err := r.Run(id)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStoresBehaveAlike runs one table of behaviours over FS and S3: activities must not
// notice which one they were given.
func TestStoresBehaveAlike(t *testing.T) {
	m := startMinIO(t)
	backends := []struct {
		name string
		runs func(t *testing.T) Runs
	}{
		{"fs", func(t *testing.T) Runs { return FSRuns{Root: t.TempDir()} }},
		{"s3", func(t *testing.T) Runs { return m.runs(t, m.endpoint) }},
	}
	ctx := context.Background()
	cases := []struct {
		name string
		test func(t *testing.T, r Runs)
	}{
		{"round trip and overwrite", func(t *testing.T, r Runs) {
			s := mustRun(t, r, "run1")
			for _, v := range []string{"print(1)", "print(2)", ""} {
				if err := s.Put(ctx, "samples/a/program.py", []byte(v)); err != nil {
					t.Fatal(err)
				}
				if b, err := s.Get(ctx, "samples/a/program.py"); err != nil || string(b) != v {
					t.Fatalf("got %q, %v; want %q", b, err, v)
				}
			}
		}},
		{"missing key is ErrNotFound naming the key", func(t *testing.T, r Runs) {
			_, err := mustRun(t, r, "run1").Get(ctx, "checkpoints/missing.json")
			if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "run1/checkpoints/missing.json") {
				t.Fatalf("got %v", err)
			}
		}},
		{"keys are cleaned the same way", func(t *testing.T, r Runs) {
			s := mustRun(t, r, "run1")
			if err := s.Put(ctx, "/a//b/./c", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if b, err := s.Get(ctx, "a/b/c"); err != nil || string(b) != "x" {
				t.Fatalf("got %q, %v", b, err)
			}
		}},
		{"keys leaving the run are refused", func(t *testing.T, r Runs) {
			s := mustRun(t, r, "run1")
			for _, k := range []string{"", "/", "..", "../run2/x", "a/../../b"} {
				if err := s.Put(ctx, k, []byte("x")); err == nil {
					t.Errorf("Put(%q) succeeded", k)
				}
				if _, err := s.Get(ctx, k); err == nil || errors.Is(err, ErrNotFound) {
					t.Errorf("Get(%q): %v", k, err)
				}
			}
		}},
		{"runs are isolated", func(t *testing.T, r Runs) {
			a, b := mustRun(t, r, "a"), mustRun(t, r, "b")
			if err := a.Put(ctx, "state.json", []byte("a")); err != nil {
				t.Fatal(err)
			}
			if _, err := b.Get(ctx, "state.json"); !errors.Is(err, ErrNotFound) {
				t.Fatalf("run b sees run a's key: %v", err)
			}
			if a.Location("state.json") == b.Location("state.json") {
				t.Fatal("two runs share a location")
			}
			for _, id := range []string{"", ".", "..", "a/b", `a\b`} {
				if _, err := r.Run(id); err == nil {
					t.Errorf("run id %q accepted", id)
				}
			}
		}},
		{"content round trip", func(t *testing.T, r Runs) {
			s := mustRun(t, r, "run1")
			k1, err := PutContent(ctx, s, []byte("weights"))
			if err != nil {
				t.Fatal(err)
			}
			k2, err := PutContent(ctx, s, []byte("weights"))
			if err != nil || k1 != k2 || !strings.HasPrefix(k1, "blobs/sha256/") || len(k1) != len("blobs/sha256/")+64 {
				t.Fatalf("keys %q %q, %v", k1, k2, err)
			}
			if b, err := GetContent(ctx, s, k1); err != nil || string(b) != "weights" {
				t.Fatalf("got %q, %v", b, err)
			}
		}},
		{"corrupt content is detected", func(t *testing.T, r Runs) {
			s := mustRun(t, r, "run1")
			key, err := PutContent(ctx, s, []byte("weights"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Put(ctx, key, []byte("weightz")); err != nil {
				t.Fatal(err)
			}
			_, err = GetContent(ctx, s, key)
			if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), s.Location(key)) {
				t.Fatalf("got %v", err)
			}
		}},
		{"content key errors", func(t *testing.T, r Runs) {
			s := mustRun(t, r, "run1")
			missing := "blobs/sha256/" + strings.Repeat("0", 64)
			if _, err := GetContent(ctx, s, missing); !errors.Is(err, ErrNotFound) {
				t.Errorf("missing blob: %v", err)
			}
			for _, k := range []string{"checkpoints/iter-0001.json", "blobs/sha256/abc", "blobs/sha256/" + strings.Repeat("g", 64)} {
				if _, err := GetContent(ctx, s, k); err == nil || !strings.Contains(err.Error(), "not a content key") {
					t.Errorf("GetContent(%q): %v", k, err)
				}
			}
		}},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			for _, c := range cases {
				t.Run(c.name, func(t *testing.T) { c.test(t, b.runs(t)) })
			}
		})
	}
}

func TestS3(t *testing.T) {
	m := startMinIO(t)
	ctx := context.Background()

	t.Run("location", func(t *testing.T) {
		r := m.runs(t, m.endpoint)
		if got, want := mustRun(t, r, "run7").Location("/checkpoints/a.json"), "s3://"+r.Bucket+"/runs/run7/checkpoints/a.json"; got != want {
			t.Fatalf("got %s, want %s", got, want)
		}
	})

	t.Run("bucket is created on first use", func(t *testing.T) {
		r := m.runs(t, m.endpoint)
		if ok, err := r.Client.BucketExists(ctx, r.Bucket); err != nil || ok {
			t.Fatalf("bucket exists before use: %v %v", ok, err)
		}
		if err := mustRun(t, r, "run1").Put(ctx, "k", []byte("v")); err != nil {
			t.Fatal(err)
		}
		if ok, err := r.Client.BucketExists(ctx, r.Bucket); err != nil || !ok {
			t.Fatalf("bucket missing after Put: %v %v", ok, err)
		}
		// A second process meets an existing bucket and shares its objects.
		again := NewS3Runs(r.Client, r.Bucket, r.Prefix)
		if b, err := mustRun(t, again, "run1").Get(ctx, "k"); err != nil || string(b) != "v" {
			t.Fatalf("got %q, %v", b, err)
		}
	})

	t.Run("blob corrupted through the S3 API is detected", func(t *testing.T) {
		r := m.runs(t, m.endpoint)
		s := mustRun(t, r, "run1")
		key, err := PutContent(ctx, s, []byte("checkpoint"))
		if err != nil {
			t.Fatal(err)
		}
		bad := []byte("checkpoinT")
		if _, err := r.Client.PutObject(ctx, r.Bucket, "runs/run1/"+key, bytes.NewReader(bad), int64(len(bad)), minio.PutObjectOptions{}); err != nil {
			t.Fatal(err)
		}
		_, err = GetContent(ctx, s, key)
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "s3://"+r.Bucket+"/runs/run1/"+key) {
			t.Fatalf("got %v", err)
		}
		t.Log(err)
	})

	t.Run("throttling is retried, a missing key or a bad credential is not", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := newProxy(t, l, m.endpoint)
		p.failNext.Store(2)
		r := m.runs(t, p.addr)
		s := mustRun(t, r, "run1")
		if err := s.Put(ctx, "k", []byte("v")); err != nil {
			t.Fatalf("Put through two 503 SlowDown: %v", err)
		}
		// Two 503s, then the bucket check, the bucket's creation and the upload.
		if n := p.requests.Load(); n != 5 {
			t.Fatalf("%d requests, want 5", n)
		}
		before := p.requests.Load()
		if _, err := s.Get(ctx, "missing"); !errors.Is(err, ErrNotFound) {
			t.Fatal(err)
		}
		if n := p.requests.Load() - before; n != 1 {
			t.Fatalf("a missing key took %d requests, want 1", n)
		}

		wrong := m
		wrong.password = "not-the-password"
		before = p.requests.Load()
		err = mustRun(t, wrong.runs(t, p.addr), "run1").Put(ctx, "k", []byte("v"))
		if err == nil || p.requests.Load()-before != 1 {
			t.Fatalf("bad credentials: %v after %d requests, want an error after 1", err, p.requests.Load()-before)
		}
		t.Log(err)
	})

	t.Run("Put waits for a server that comes back", func(t *testing.T) {
		port := reservePort(t) // refuses connections until listen
		r := m.runs(t, port.addr)
		r.Retry = Backoff{Attempts: 10, Initial: 100 * time.Millisecond, Max: 2 * time.Second} // waits 11 s at most
		back := make(chan struct{})
		go func() {
			defer close(back)
			time.Sleep(1500 * time.Millisecond)
			if l := port.listen(t); l != nil {
				newProxy(t, l, m.endpoint)
			}
		}()
		start := time.Now()
		s := mustRun(t, r, "run1")
		err := s.Put(ctx, "state.json", []byte("{}"))
		<-back // the server goroutine must finish within the test
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d < 1500*time.Millisecond {
			t.Fatalf("Put succeeded after %v, before the server came back", d)
		}
		if b, err := s.Get(ctx, "state.json"); err != nil || string(b) != "{}" {
			t.Fatalf("got %q, %v", b, err)
		}
	})

	t.Run("Put gives up on a server that stays down", func(t *testing.T) {
		r := m.runs(t, reservePort(t).addr)
		start := time.Now()
		err := mustRun(t, r, "run1").Put(ctx, "state.json", []byte("{}"))
		if err == nil || !strings.Contains(err.Error(), "gave up after 4 attempts") ||
			!strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("got %v", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("gave up after %v; the backoff allows well under a second", d)
		}
		t.Log(err)
	})

	t.Run("a cancelled context stops the retries", func(t *testing.T) {
		r := m.runs(t, reservePort(t).addr)
		r.Retry = Backoff{Attempts: 100, Initial: time.Second, Max: time.Second}
		cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
		defer cancel()
		err := mustRun(t, r, "run1").Put(cctx, "k", nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v", err)
		}
	})
}

// proxy forwards to MinIO, counting requests; it answers 503 SlowDown while failNext > 0.
type proxy struct {
	addr     string
	requests atomic.Int64
	failNext atomic.Int64
}

func newProxy(t *testing.T, l net.Listener, target string) *proxy {
	p := &proxy{addr: l.Addr().String()}
	forward := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: target})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		p.requests.Add(1)
		if p.failNext.Add(-1) >= 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`))
			return
		}
		forward.ServeHTTP(w, req)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return p
}

// reservedPort is a loopback port bound but not listening: connections are refused, as by a
// server that is down, and no other socket can take the port (freeing it and binding it again
// later races with the rest of the machine).
type reservedPort struct {
	fd   int
	addr string
}

func reservePort(t *testing.T) *reservedPort {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := &reservedPort{fd: fd}
	t.Cleanup(func() {
		if p.fd >= 0 {
			syscall.Close(p.fd)
		}
	})
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	p.addr = fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
	return p
}

// listen brings the port up; the listener takes the socket over.
func (p *reservedPort) listen(t *testing.T) net.Listener {
	if err := syscall.Listen(p.fd, 128); err != nil {
		t.Error(err) // may run in a goroutine: no Fatal
		return nil
	}
	f := os.NewFile(uintptr(p.fd), p.addr)
	p.fd = -1
	defer f.Close()
	l, err := net.FileListener(f) // a duplicate of the socket
	if err != nil {
		t.Error(err)
		return nil
	}
	return l
}
