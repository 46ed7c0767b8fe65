package activities

import (
	"context"

	"mlerl/artifacts/runstore"
	"mlerl/instrument"
)

// InstrumentPrograms inserts the progress prints into each sample's program and stores
// instrumented.py beside it.
func (a *Activities) InstrumentPrograms(ctx context.Context, in InstrumentInput) (InstrumentResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return InstrumentResult{}, badInput("%v", err)
	}
	var out InstrumentResult
	for _, id := range in.SampleIDs {
		dir := runstore.Sample(id)
		prog, err := store.Get(ctx, dir.Program())
		if err != nil {
			return InstrumentResult{}, err
		}
		res := instrument.Result{Program: string(prog), Note: "not instrumented (instrumentation is off for this run)"}
		if !in.Off {
			if res, err = a.Instrumenter.Instrument(ctx, string(prog)); err != nil {
				return InstrumentResult{}, err
			}
		}
		if err := store.Put(ctx, dir.Instrumented(), []byte(res.Program)); err != nil {
			return InstrumentResult{}, err
		}
		out.Samples = append(out.Samples, InstrumentedSample{ID: id, Inserted: res.Inserted, Note: res.Note})
	}
	return out, nil
}
