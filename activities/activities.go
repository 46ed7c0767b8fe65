package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"go.temporal.io/sdk/temporal"

	"mlerl/artifacts"
	"mlerl/instrument"
	"mlerl/llm"
	"mlerl/sandbox"
	"mlerl/tasks"
)

// Activities are a run's side effects, with their dependencies. Each activity is a method, in
// the file of its concern: policy.go (InitPolicy, and how a policy backend is chosen),
// sampling.go, instrument.go, execute.go, update.go, buffer.go, grade.go, answer.go, report.go,
// state.go, recovery.go, ledger.go. The policy backends are network.go and llmpolicy.go;
// where things live in a run's store is package runstore.
type Activities struct {
	Runs         artifacts.Runs
	Sandbox      sandbox.Sandbox
	Instrumenter instrument.Instrumenter
	Tasks        *tasks.Registry
	Layout       tasks.Layout
	// Python is the host's interpreter with pandas (as tasks.Preparer's): it carves the final
	// answer's cross-validation folds. "" is python3.
	Python     string
	ScratchDir string // sandbox work folders are created here and removed after each run
	// PolicyLLM is the model server an llm policy samples from, and Trainer the service that
	// updates it (llm/doc.go); both nil on workers that only serve the network policy.
	PolicyLLM *llm.Client
	Trainer   *llm.Trainer

	mu       sync.Mutex
	policies map[string]*networkBackend // read-only network policies by run and checkpoint, for sampling
}

func badInput(format string, a ...any) error {
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf(format, a...), ErrBadInput, nil)
}

// spec is a task's spec, checked to be prepared.
func (a *Activities) spec(id string) (*tasks.Spec, error) {
	s, err := a.Tasks.Get(id)
	if err != nil {
		return nil, badInput("%v", err)
	}
	if err := a.Layout.CheckPrepared(s); err != nil {
		return nil, badInput("%v", err)
	}
	return s, nil
}

func putJSON(ctx context.Context, store artifacts.Store, key string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return store.Put(ctx, key, b)
}

func getJSON(ctx context.Context, store artifacts.Store, key string, v any) error {
	b, err := store.Get(ctx, key)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("artifact %s is not valid JSON: %w", key, err)
	}
	return nil
}
