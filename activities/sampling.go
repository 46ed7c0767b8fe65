package activities

import "context"

// SamplePrograms has the policy of in.Checkpoint write one program per id and stores, per
// sample, its plan, its code and what the update needs (sample.json); the backend that
// wrote the checkpoint does the writing.
func (a *Activities) SamplePrograms(ctx context.Context, in SampleInput) ([]SampleRef, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return nil, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return nil, err
	}
	var buffer []bufferEntry
	if in.Buffer != "" {
		if buffer, err = readBuffer(ctx, store, in.Buffer); err != nil {
			return nil, err
		}
	}
	if in.Purpose == PurposeEvalImprove && len(in.ImproveOf) != len(in.IDs) {
		return nil, badInput("eval-improve needs one previous sample per id (%d ids, %d previous)", len(in.IDs), len(in.ImproveOf))
	}
	b, used, fallback, err := a.samplingBackend(ctx, store, in.Run, in.Checkpoint)
	if err != nil {
		return nil, err
	}
	in.Checkpoint = used // the samples record the checkpoint that wrote them
	refs, err := b.sample(ctx, store, spec, in, buffer)
	if fallback != nil {
		for i := range refs {
			refs[i].Fallback = fallback.String()
		}
	}
	return refs, err
}
