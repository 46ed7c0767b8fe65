package testenv

import (
	"fmt"
	"os"
	"testing"
)

// InCI is true where CI runs the tests (CI=true): there, ../shared, the Docker engine and its
// image, bubblewrap and Debian's python3 are all installed, so their absence is a broken CI
// machine that must fail the run, not a quiet skip.
func InCI() bool {
	v := os.Getenv("CI")
	return v != "" && v != "0" && v != "false"
}

// SkipOrFail skips the test, loudly, because something it needs is missing from this machine;
// under CI=true it fails instead, with the same reason.
func SkipOrFail(t testing.TB, format string, args ...any) {
	t.Helper()
	reason := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true and this test cannot run: %s", reason)
	}
	t.Skipf("SKIP: %s", reason)
}

// Require continues when ok; otherwise it calls SkipOrFail with the reason.
func Require(t testing.TB, ok bool, format string, args ...any) {
	t.Helper()
	if !ok {
		SkipOrFail(t, format, args...)
	}
}
