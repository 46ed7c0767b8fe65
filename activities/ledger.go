package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"mlerl/artifacts/runstore"
	"mlerl/experiment"
)

// SaveLedgerInput is an experiment's ledger and where it lives.
type SaveLedgerInput struct {
	Dir    string            `json:"dir"`
	Ledger experiment.Ledger `json:"ledger"`
}

// SaveLedger writes the ledger to Dir/experiment.json atomically (a reader never sees half of
// it), so status and reports work without the server.
func (a *Activities) SaveLedger(ctx context.Context, in SaveLedgerInput) error {
	if in.Dir == "" || !filepath.IsAbs(in.Dir) {
		return badInput("experiment directory %q must be an absolute path", in.Dir)
	}
	b, err := json.MarshalIndent(in.Ledger, "", "  ")
	if err != nil {
		return badInput("ledger: %v", err)
	}
	tmp, err := os.CreateTemp(in.Dir, ".experiment-*.json")
	if err != nil {
		return fmt.Errorf("saving the ledger: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("saving the ledger: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("saving the ledger: %w", err)
	}
	return os.Rename(tmp.Name(), filepath.Join(in.Dir, runstore.LedgerFile))
}

// ReadLedger reads an experiment's ledger.
func ReadLedger(dir string) (experiment.Ledger, error) {
	var l experiment.Ledger
	b, err := os.ReadFile(filepath.Join(dir, runstore.LedgerFile))
	if err != nil {
		return l, fmt.Errorf("%s is not an experiment directory (no %s): give the folder `starter experiment run` printed", dir, runstore.LedgerFile)
	}
	if err := json.Unmarshal(b, &l); err != nil {
		return l, fmt.Errorf("%s is damaged: %w", filepath.Join(dir, runstore.LedgerFile), err)
	}
	return l, nil
}
