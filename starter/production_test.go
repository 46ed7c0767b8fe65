package main

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"go.temporal.io/sdk/testsuite"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/internal/testenv"
)

// The production path on this machine: an existing Temporal server, artifacts in a real MinIO
// over S3, programs in Docker containers.
func TestRunWithS3StoreAndDockerSandbox(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: production-stack run in -short mode")
	}
	testenv.RequireDockerImage(t)
	dataDir := testenv.PreparedData(t, "leaf-classification")
	endpoint, user, password := testenv.StartMinIO(t)
	t.Setenv("MLERL_S3_ENDPOINT", endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", user)
	t.Setenv("AWS_SECRET_ACCESS_KEY", password)
	ctx := context.Background()
	srv, err := testsuite.StartDevServer(ctx, testsuite.DevServerOptions{ExistingPath: testenv.TemporalCLI(t), LogLevel: "error"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	runDir := filepath.Join(t.TempDir(), "prod")
	var out bytes.Buffer
	err = runCommand(ctx, []string{"--task", "leaf-classification", "--iterations", "2", "--batch", "4", "--eval-samples", "1", "--final-candidates", "2", "--final-folds", "2", "--final-tune", "0",
		"--reward-folds", "1", "--store", "s3://mlerl-test/runs", "--sandbox", "docker", "--temporal-address", srv.FrontendHostPort(),
		"--data-dir", dataDir, "--out", runDir}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "sandbox docker") || !strings.Contains(out.String(), "report: s3://mlerl-test/runs/prod/"+runstore.ReportKey) {
		t.Fatalf("output:\n%s", out.String())
	}
	runs, err := artifacts.OpenRuns("s3://mlerl-test/runs", nil)
	if err != nil {
		t.Fatal(err)
	}
	store, _ := runs.Run("prod")
	metrics, err := store.Get(ctx, runstore.MetricsKey)
	if err != nil || strings.Count(string(metrics), "\n") != 2 {
		t.Fatalf("metrics in MinIO: %q %v", metrics, err)
	}
	if _, err := getCheckpointForTest(ctx, store, runstore.CheckpointKey(2)); err != nil {
		t.Fatalf("the last checkpoint is not readable from MinIO: %v", err)
	}
	// A program the updates learnt from (the buffer lists them) has its result in MinIO; which
	// ones those are depends on which finished first (a straggler cancelled at the end may
	// have none).
	buffer, err := store.Get(ctx, runstore.BufferKey)
	var learnt []struct {
		SampleID string `json:"sample_id"`
	}
	if err != nil || json.Unmarshal(buffer, &learnt) != nil || len(learnt) == 0 {
		t.Fatalf("the self-improve buffer in MinIO: %q %v", buffer, err)
	}
	for _, key := range []string{runstore.Sample("it0001-s000").Program(), runstore.Sample(learnt[0].SampleID).Result(), runstore.ReportKey} {
		if _, err := store.Get(ctx, key); err != nil {
			t.Errorf("%s is not in MinIO: %v", key, err)
		}
	}
}

// getCheckpointForTest follows a checkpoint pointer to its content-addressed blob.
func getCheckpointForTest(ctx context.Context, store artifacts.Store, name string) ([]byte, error) {
	b, err := store.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	var ptr struct{ Blob string }
	if err := json.Unmarshal(b, &ptr); err != nil {
		return nil, err
	}
	return artifacts.GetContent(ctx, store, ptr.Blob)
}
