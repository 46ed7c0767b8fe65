package tasks_test

import (
	"os"
	"strings"
	"testing"

	"mlerl/tasks"
)

// limits.disk_mb is optional (DefaultDiskMB), taken when given, and refused out of range.
func TestDiskLimit(t *testing.T) {
	good, err := os.ReadFile("specs/leaf-classification.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := tasks.Parse(good, "leaf.yaml")
	if err != nil || s.Limits.DiskMB != 0 || s.Limits.Disk() != tasks.DefaultDiskMB {
		t.Fatalf("without disk_mb the quota is the default %d MiB: %v, %+v", tasks.DefaultDiskMB, err, s)
	}
	with := func(v string) string {
		out := strings.Replace(string(good), "output_kb: 256", "output_kb: 256\n  disk_mb: "+v, 1)
		if out == string(good) {
			t.Fatal("the fixture no longer contains output_kb: 256")
		}
		return out
	}
	if s, err := tasks.Parse([]byte(with("300")), "leaf.yaml"); err != nil || s.Limits.Disk() != 300 {
		t.Fatalf("disk_mb: 300 must be taken: %v", err)
	}
	for _, v := range []string{"-1", "99999999"} {
		if _, err := tasks.Parse([]byte(with(v)), "leaf.yaml"); err == nil || !strings.Contains(err.Error(), "limits.disk_mb") {
			t.Errorf("disk_mb: %s must be refused naming the field, got %v", v, err)
		}
	}
}
