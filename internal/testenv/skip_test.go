package testenv

import (
	"fmt"
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test would have ended.
type recorder struct {
	testing.TB
	failed, skipped string
}

func (r *recorder) Helper()                        {}
func (r *recorder) Fatalf(format string, a ...any) { r.failed = fmt.Sprintf(format, a...) }
func (r *recorder) Skipf(format string, a ...any)  { r.skipped = fmt.Sprintf(format, a...) }

func TestSkipOrFailFailsUnderCI(t *testing.T) {
	for _, c := range []struct {
		ci         string
		wantFailed bool
	}{{"", false}, {"false", false}, {"0", false}, {"true", true}, {"1", true}} {
		t.Setenv("CI", c.ci)
		r := &recorder{TB: t}
		Require(r, false, "no %s here", "engine")
		got := r.failed
		if !c.wantFailed {
			got = r.skipped
		}
		if (r.failed != "") != c.wantFailed || !strings.Contains(got, "no engine here") {
			t.Errorf("CI=%q: failed %q, skipped %q", c.ci, r.failed, r.skipped)
		}
		r = &recorder{TB: t}
		Require(r, true, "unused")
		if r.failed+r.skipped != "" {
			t.Errorf("CI=%q: Require(true) ended the test: %q %q", c.ci, r.failed, r.skipped)
		}
	}
}
