package devserver

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/client"

	"mlerl/internal/testenv"
)

// The embedded stack's server: starts on free ports with its SQLite file, serves the Web UI,
// keeps its state across a restart, and stops.
func TestDevServerKeepsStateAcrossRestart(t *testing.T) {
	cli := testenv.TemporalCLI(t)
	dir := t.TempDir()
	ctx := context.Background()
	opts := Options{CLI: cli, DBFile: filepath.Join(dir, "temporal.db"), LogFile: filepath.Join(dir, "temporal.log")}
	srv, err := Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Get(srv.UIURL)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("Web UI at %s: %v %v", srv.UIURL, err, resp)
	}
	resp.Body.Close()
	c, err := client.Dial(client.Options{HostPort: srv.Address, Logger: Quiet})
	if err != nil {
		t.Fatal(err)
	}
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "kept", TaskQueue: "nobody-polls"}, "NoSuchWorkflow")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	srv.Stop()
	if _, err := os.Stat(opts.DBFile); err != nil {
		t.Fatalf("no SQLite state file: %v", err)
	}

	srv, err = Start(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	c, err = client.Dial(client.Options{HostPort: srv.Address, Logger: Quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	desc, err := c.DescribeWorkflowExecution(ctx, "kept", run.GetRunID())
	if err != nil {
		t.Fatalf("the workflow started before the restart is gone: %v", err)
	}
	if !strings.Contains(desc.WorkflowExecutionInfo.GetType().GetName(), "NoSuchWorkflow") {
		t.Fatalf("unexpected workflow %v", desc.WorkflowExecutionInfo.GetType())
	}
}

func TestStartFailsClearlyWithABrokenCLI(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "temporal")
	os.WriteFile(fake, []byte("#!/bin/sh\necho 'no server here' >&2\nexit 3\n"), 0o755)
	_, err := Start(context.Background(), Options{CLI: fake, DBFile: filepath.Join(dir, "db"), LogFile: filepath.Join(dir, "log")})
	if err == nil || !strings.Contains(err.Error(), "no server here") {
		t.Fatalf("want the server's own words in the error, got %v", err)
	}
}
