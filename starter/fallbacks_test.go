package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"mlerl/activities"
	"mlerl/artifacts/runstore"
)

// status lists every fallback the run's recovery log holds as well as those the workflow
// reports, each once: a checkpoint load the workflow never heard of (it used to print the log
// only when the workflow reported none) still shows.
func TestStatusFallbacksMergeTheRecoveryLog(t *testing.T) {
	dir := t.TempDir()
	heard := activities.CheckpointFallback{Damaged: runstore.CheckpointKey(2), Used: runstore.CheckpointKey(1), Reason: "truncated", At: time.Now()}
	unheard := activities.CheckpointFallback{Damaged: runstore.CheckpointKey(4), Used: runstore.CheckpointKey(3), Reason: "sha256 mismatch", At: time.Now()}
	var log []byte
	for _, f := range []activities.CheckpointFallback{heard, unheard} {
		b, _ := json.Marshal(f)
		log = append(append(log, b...), '\n')
	}
	if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, runstore.RecoveryKey)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, runstore.RecoveryKey), log, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printFallbacks(&out, dir, runInfo{}, []string{heard.String()})
	for _, f := range []activities.CheckpointFallback{heard, unheard} {
		if n := strings.Count(out.String(), f.String()); n != 1 {
			t.Errorf("%q shown %d times, want once:\n%s", f.String(), n, out.String())
		}
	}
	if !strings.Contains(out.String(), "checkpoint fallbacks (2;") {
		t.Errorf("the count must be 2:\n%s", out.String())
	}
}
