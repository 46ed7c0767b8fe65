package instrument

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"mlerl/internal/testenv"
)

const program = `import pandas as pd
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import log_loss

train = pd.read_csv("input/train.csv")  # a comment that must survive
test = pd.read_csv("input/test.csv")
model = LogisticRegression(C=1.0,
                           max_iter=100)
for fold in range(2):
    model.fit(train[["x"]], train.y)
    val_loss = log_loss(train.y, model.predict_proba(train[["x"]]))
model.fit(train[["x"]], train.y)
train_loss = log_loss(train.y, model.predict_proba(train[["x"]]))
if True: y = model.fit(train[["x"]], train.y)
proba = model.predict_proba(test[["x"]])
pd.DataFrame(proba).to_csv("submission.csv")
`

func TestInstrumentInsertsMarkersAfterTheirOperations(t *testing.T) {
	testenv.RequirePython(t)
	res, err := AST{Python: testenv.Python}.Instrument(context.Background(), program)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"imported packages", "loaded data", "defined model", "testing loss:", "trained model", "training loss:", "predicted test labels"}
	if strings.Join(res.Inserted, "|") != strings.Join(want, "|") {
		t.Fatalf("inserted %v, want %v", res.Inserted, want)
	}
	lines := strings.Split(res.Program, "\n")
	after := func(marker, prev string) {
		for i, l := range lines {
			if strings.Contains(l, "print('"+marker) {
				if !strings.Contains(lines[i-1], prev) {
					t.Errorf("%q is printed after %q, want after a line containing %q", marker, lines[i-1], prev)
				}
				return
			}
		}
		t.Errorf("%q not inserted", marker)
	}
	after("imported packages", "from sklearn.metrics import log_loss")
	after("loaded data", `test = pd.read_csv("input/test.csv")`)
	after("defined model", "max_iter=100)")
	after("testing loss:", "val_loss = ")
	after("training loss:", "train_loss = ")
	after("predicted test labels", "proba = model.predict_proba(test")
	if !strings.Contains(res.Program, "# a comment that must survive") {
		t.Error("the instrumenter must not touch existing lines")
	}
	if strings.Contains(res.Program, "if True: y = model.fit(train[[\"x\"]], train.y)\nprint") {
		t.Error("nothing may be inserted after a one-line compound statement")
	}
}

func TestVerifierCatchesAnythingButPrints(t *testing.T) {
	testenv.RequirePython(t)
	a := AST{Python: testenv.Python}
	ctx := context.Background()
	res, err := a.Instrument(ctx, program)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, instrumented string
		ok                 bool
	}{
		{"the instrumenter's own output", res.Program, true},
		{"a changed constant", strings.Replace(res.Program, "C=1.0", "C=2.0", 1), false},
		{"an extra statement", res.Program + "x = 1\n", false},
		{"a print that is not a marker", res.Program + "print('hello')\n", false},
		{"a marker print that also computes", res.Program + "print('trained model', model.fit(train[['x']], train.y))\n", false},
		{"a marker print with a keyword other than flush", res.Program + "print('loaded data', file=open('x', 'w'))\n", false},
		{"a dropped statement", strings.Replace(res.Program, "model.fit(train[[\"x\"]], train.y)\nprint", "print", 1), false},
	}
	for _, c := range cases {
		ok, why, err := a.Verify(ctx, program, c.instrumented)
		if err != nil {
			t.Fatal(err)
		}
		if ok != c.ok {
			t.Errorf("%s: verifier said %v (%s), want %v", c.name, ok, why, c.ok)
		}
	}
}

func TestProgramsThatDoNotParseRunAsWritten(t *testing.T) {
	testenv.RequirePython(t)
	bad := "import pandas as pd\ndef broken(:\n"
	res, err := AST{Python: testenv.Python}.Instrument(context.Background(), bad)
	if err != nil {
		t.Fatal(err)
	}
	if res.Program != bad || len(res.Inserted) != 0 || !strings.Contains(res.Note, "syntax error") {
		t.Fatalf("got %+v", res)
	}
}

// The long-lived instrumenter survives its process dying and serves concurrent callers.
func TestInstrumenterServerRecoversAndSerialises(t *testing.T) {
	testenv.RequirePython(t)
	a := AST{Python: testenv.Python}
	ctx := context.Background()
	if _, err := a.Instrument(ctx, program); err != nil {
		t.Fatal(err)
	}
	v, _ := servers.Load(testenv.Python)
	s := v.(*server)
	s.mu.Lock()
	s.cmd.Process.Kill() // as if the OOM killer took it
	s.mu.Unlock()
	if res, err := a.Instrument(ctx, program); err != nil || len(res.Inserted) != 7 {
		t.Fatalf("after the process died: %+v %v", res, err)
	}
	errs := make(chan error, 8)
	for i := 0; i < 8; i++ {
		go func() {
			res, err := a.Instrument(ctx, program)
			if err == nil && len(res.Inserted) != 7 {
				err = fmt.Errorf("inserted %v", res.Inserted)
			}
			errs <- err
		}()
	}
	for i := 0; i < 8; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	deep := "x = " + strings.Repeat("(", 5000) + "1" + strings.Repeat(")", 5000) + "\n"
	if _, err := a.Instrument(ctx, deep); err == nil {
		t.Log("a 5000-deep expression was handled") // Python may parse it; what matters is no hang
	}
	if _, err := a.Instrument(ctx, program); err != nil {
		t.Fatalf("the server must still answer after a pathological program: %v", err)
	}
}
