package tasks_test

import (
	"os"
	"strings"
	"testing"

	"mlerl/tasks"
)

// Every limit has an upper bound, checked when the spec is read: 99999999999 wall seconds used to
// pass and then wrap as a time.Duration after Temporal had started, naming no field.
func TestLimitsOutOfRangeNameTheFieldAndRange(t *testing.T) {
	good, _ := os.ReadFile("specs/leaf-classification.yaml")
	cases := []struct{ from, to, field, rng string }{
		{"wall_seconds: 300", "wall_seconds: 99999999999", "limits.wall_seconds", "between 1 and 604800"},
		{"wall_seconds: 300", "wall_seconds: -1", "limits.wall_seconds", "between 1 and 604800"},
		{"memory_mb: 4096", "memory_mb: 99999999999", "limits.memory_mb", "between 1 and 1048576"},
		{"memory_mb: 4096", "memory_mb: 0", "limits.memory_mb", "between 1 and 1048576"},
		{"processes: 64", "processes: 1000000", "limits.processes", "between 1 and 65536"},
		{"output_kb: 256", "output_kb: 99999999999", "limits.output_kb", "between 1 and 1048576"},
	}
	for _, c := range cases {
		t.Run(c.to, func(t *testing.T) {
			bad := strings.Replace(string(good), c.from, c.to, 1)
			if bad == string(good) {
				t.Fatalf("the fixture no longer contains %q", c.from)
			}
			_, err := tasks.Parse([]byte(bad), "test.yaml")
			if err == nil || !strings.Contains(err.Error(), "field "+c.field) || !strings.Contains(err.Error(), c.rng) {
				t.Fatalf("got %v, want an error naming field %s and the range %q", err, c.field, c.rng)
			}
		})
	}
	// The largest allowed values are accepted.
	ok := strings.NewReplacer("wall_seconds: 300", "wall_seconds: 604800", "memory_mb: 4096", "memory_mb: 1048576",
		"processes: 64", "processes: 65536", "output_kb: 256", "output_kb: 1048576").Replace(string(good))
	if _, err := tasks.Parse([]byte(ok), "test.yaml"); err != nil {
		t.Fatalf("the upper bounds themselves must be allowed: %v", err)
	}
	for _, id := range tasks.Builtin().IDs() {
		s, _ := tasks.Builtin().Get(id)
		if err := s.Validate(); err != nil {
			t.Errorf("built-in %s: %v", id, err)
		}
	}
}
