package worker

import (
	"strings"
	"testing"
)

// A misconfigured worker is refused before it polls anything (no server is needed to see it).
func TestStartRefusesBadOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want string
	}{
		{"no slots", Options{Roles: []string{RoleExec}}, "slots must be at least 1"},
		{"unknown role", Options{Roles: []string{"cpu"}, Slots: 1}, `unknown worker role "cpu"`},
		{"workflows role without workflows", Options{Roles: []string{RoleWorkflows}, Slots: 1}, "needs the workflow functions"},
	} {
		if _, err := Start(c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.name, err, c.want)
		}
	}
}
