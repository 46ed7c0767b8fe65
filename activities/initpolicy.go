package activities

import "context"

// InitPolicy builds the run's initial policy and stores it as checkpoint 0: for the network,
// the reproducible warm start (or the uniform policy); for an llm, the model to start from.
func (a *Activities) InitPolicy(ctx context.Context, in InitPolicyInput) (InitPolicyResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return InitPolicyResult{}, badInput("%v", err)
	}
	spec, err := a.spec(in.Task)
	if err != nil {
		return InitPolicyResult{}, err
	}
	desc, err := describeTask(spec, a.Layout)
	if err != nil {
		return InitPolicyResult{}, err
	}
	data, err := a.initialCheckpoint(in, spec, desc)
	if err != nil {
		return InitPolicyResult{}, err
	}
	key, err := putCheckpoint(ctx, store, 0, data)
	if err != nil {
		return InitPolicyResult{}, err
	}
	return InitPolicyResult{Checkpoint: key, Task: desc}, nil
}
