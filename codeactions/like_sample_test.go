package codeactions

import (
	"os/exec"
	"strings"
	"testing"

	"mlerl/internal/testenv"
)

// The shared like_sample snippet, run by Python on labels of every odd type: a label the sample
// shows takes its spelling, one it does not takes its column's type.
func TestLikeSampleSpellsLabelsAsTheSample(t *testing.T) {
	testenv.RequirePython(t)
	prog := "import numpy as np\nimport pandas as pd\n\n" + snippet("like_sample", nil) + `
cases = [
    (like_sample(np.array([True, False]), pd.Series([0, 1])), [1, 0]),
    (like_sample(np.array([1.0, 2.0]), pd.Index(["id", "1", "2"])), ["1", "2"]),
    (like_sample(np.array([True, False]), pd.Series([False, False])), [True, False]),
    (like_sample(np.array(["yes", "no"]), pd.Series(["Yes", "No"])), ["Yes", "No"]),
    (like_sample(np.array([1, 0]), pd.Series(["True", "False"])), ["True", "False"]),
    (like_sample(np.array([3.0]), pd.Series([1, 2])), [3]),
    (like_sample(["cat"], pd.Series([np.nan])), ["cat"]),
]
for got, want in cases:
    assert [type(g) for g in got] == [type(w) for w in want] and list(got) == want, (got, want)
print("ok", len(cases))
`
	out, err := exec.Command(testenv.Python, "-c", prog).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "ok 7") {
		t.Fatalf("%v\n%s\nprogram:\n%s", err, out, prog)
	}
}
