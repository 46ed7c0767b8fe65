package tasks_test

import (
	"os"
	"strings"
	"testing"

	"mlerl/tasks"
)

// A limit that is not a whole number is refused, naming the field and the whole numbers to
// write: the YAML decoder used to truncate it (wall_seconds: 1.5 ran with 1 s).
func TestFractionalLimitsRefused(t *testing.T) {
	good, _ := os.ReadFile("specs/leaf-classification.yaml")
	cases := []struct{ from, to, want string }{
		{"wall_seconds: 300", "wall_seconds: 1.5", "field limits.wall_seconds: 1.5 is not a whole number"},
		{"memory_mb: 4096", "memory_mb: 4095.9", "write 4095 or 4096"},
		{"output_kb: 256", "output_kb: 1e-3", "field limits.output_kb"},
		{"processes: 64", "processes: ten", `field limits.processes: "ten" is not a number`},
		{"processes: 64", "processes: .inf", "not a finite number"},
		{"processes: 64", "processes: [1, 2]", "field limits.processes"},
		{"processes: 64", "procceses: 64", "field limits.procceses not found"},
		{"output_kb: 256", "output_kb: 256\n  disk_mb: 0.5", "field limits.disk_mb"},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			bad := strings.Replace(string(good), c.from, c.to, 1)
			if bad == string(good) {
				t.Fatalf("the fixture no longer contains %q", c.from)
			}
			_, err := tasks.Parse([]byte(bad), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
	// Whole numbers are taken exactly, however they are written.
	ok := strings.NewReplacer("wall_seconds: 300", "wall_seconds: 2.0", "memory_mb: 4096", "memory_mb: 1e3",
		"processes: 64", "processes: 0x40").Replace(string(good))
	s, err := tasks.Parse([]byte(ok), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if s.Limits.WallSeconds != 2 || s.Limits.MemoryMB != 1000 || s.Limits.Processes != 64 || s.Limits.OutputKB != 256 {
		t.Fatalf("limits %+v, want wall 2, memory 1000, processes 64, output 256", s.Limits)
	}
}
