package testenv

import (
	"crypto/rand"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MinIOServer returns bin/minio or fails the test saying how to build it.
func MinIOServer(t testing.TB) string {
	t.Helper()
	p := filepath.Join(RepoRoot(), "bin", "minio")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("bin/minio is missing: run `go tool task setup` (%v)", err)
	}
	return p
}

// StartMinIO runs bin/minio on a free loopback port with an empty data folder and random
// credentials until the test ends, and returns its host:port and the credentials.
func StartMinIO(t testing.TB) (endpoint, user, password string) {
	t.Helper()
	bin := MinIOServer(t)
	user, password = "test-"+rand.Text()[:12], rand.Text()
	// The port is free when picked but may be taken before MinIO binds it: then try another.
	var err error
	for range 3 {
		if endpoint, err = startMinIO(t, bin, user, password); err == nil {
			return endpoint, user, password
		}
		if !strings.Contains(err.Error(), "already in use") {
			break
		}
	}
	t.Fatal(err)
	return
}

func startMinIO(t testing.TB, bin, user, password string) (string, error) {
	dir := t.TempDir() // created before the cleanup below, so removed after MinIO stops
	addr, err := freeAddr()
	if err != nil {
		return "", err
	}
	logPath := filepath.Join(dir, "minio.log")
	log, err := os.Create(logPath)
	if err != nil {
		return "", err
	}
	defer log.Close()
	cmd := exec.Command(bin, "server", "--quiet", "--address", addr, filepath.Join(dir, "data"))
	cmd.Env = append(os.Environ(), "MINIO_ROOT_USER="+user, "MINIO_ROOT_PASSWORD="+password,
		"MINIO_BROWSER=off", "MINIO_UPDATE=off")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("starting %s: %v", bin, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})

	deadline := time.Now().Add(30 * time.Second)
	for {
		// Live answers 200 as soon as MinIO listens, and says "offline" until it serves objects.
		resp, err := http.Get("http://" + addr + "/minio/health/live")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && resp.Header.Get("X-Minio-Server-Status") != "offline" {
				return addr, nil
			}
		}
		select {
		case err := <-exited:
			out, _ := os.ReadFile(logPath)
			return "", fmt.Errorf("MinIO exited before answering on %s (%v):\n%s", addr, err, out)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			out, _ := os.ReadFile(logPath)
			return "", fmt.Errorf("MinIO did not answer on %s within 30s (last: %v):\n%s", addr, err, out)
		}
	}
}

// freeAddr is a loopback host:port nothing listens on: the kernel picked it, then it was freed.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}
