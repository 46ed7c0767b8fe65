package activities

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/codeactions"
	"mlerl/model"
)

// PurposeAnswerTune marks a program the final answer wrote by changing one tunable slot of a
// candidate (TuneVariants); the policy never sampled it.
const PurposeAnswerTune = "answer-tune"

// TuneVariants writes, as samples of their own, the programs that differ from in.Of only in
// its library's tunable slot number in.Slot (codeactions.Library.Tunable), one per option that
// does not surely clash on the task (or the slot's most common few: Library.TuneMost). It also
// says what in.Of is apart from its tunable slots (Base), so the workflow tunes each kind of
// program once. A program the policy did not write as code actions (an LLM's) has no
// variants. Writing the same variants again writes the same files, so a retried attempt is
// harmless.
func (a *Activities) TuneVariants(ctx context.Context, in TuneInput) (TuneResult, error) {
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return TuneResult{}, badInput("%v", err)
	}
	// The spec alone: writing programs needs the task's shape, not its data, so this runs on
	// the workflows' queue and never waits behind the sandboxes' cross-validations.
	spec, err := a.Tasks.Get(in.Task)
	if err != nil {
		return TuneResult{}, badInput("%v", err)
	}
	lib, err := codeactions.For(spec.Modality)
	if err != nil {
		return TuneResult{}, badInput("%v", err)
	}
	var of sampleRecord
	out := TuneResult{Slots: len(lib.Tunable)}
	if err := getJSON(ctx, store, runstore.Sample(in.Of).Record(), &of); errors.Is(err, artifacts.ErrNotFound) {
		out.Note = "no sample record: nothing to tune"
		return out, nil
	} else if err != nil {
		return TuneResult{}, fmt.Errorf("tuning %s: %w", in.Of, err)
	}
	if of.LLM != nil || len(of.Sample.Tokens) == 0 {
		out.Note = "not written as code actions: nothing to tune"
		return out, nil
	}
	// Its variants fit on all the training rows, so a program that never refits on its hold-out
	// is the same kind as the one that does.
	schema := codeactions.SchemaOf(spec)
	full, err := lib.Refitted(of.Sample.Tokens, schema)
	if err != nil {
		return TuneResult{}, badInput("tuning %s: %v", in.Of, err)
	}
	refitted := !slices.Equal(full, of.Sample.Tokens)
	var base []string
	for _, part := range strings.Fields(lib.Describe(full)) {
		if !slices.Contains(lib.Tunable, strings.SplitN(part, "=", 2)[0]) {
			base = append(base, part)
		}
	}
	out.Base = strings.Join(base, " ")
	if in.Slot < 0 {
		return out, nil
	}
	if in.Slot >= len(lib.Tunable) {
		return TuneResult{}, badInput("tunable slot %d: the %s library tunes %d slots", in.Slot, lib.Modality, len(lib.Tunable))
	}
	out.Slot = lib.Tunable[in.Slot]
	variants, err := lib.Variants(of.Sample.Tokens, out.Slot, schema)
	if err != nil {
		return TuneResult{}, badInput("tuning %s: %v", in.Of, err)
	}
	for _, v := range variants {
		option, refit := v.Option, ""
		if v.Own {
			// The first pass tries the program refitted as it is; later passes start from
			// whichever of the two scored better, so trying it again would repeat a result.
			if in.Slot > 0 {
				continue
			}
			option += "-refit"
		}
		if refitted {
			refit = "; refitted on all the training rows"
		}
		id := fmt.Sprintf("tune-%s-%s-%s", in.Of, out.Slot, option)
		prog, err := lib.Render(v.Tokens, schema)
		if err != nil {
			return TuneResult{}, badInput("tuning %s: %v", in.Of, err)
		}
		rec := sampleRecord{ID: id, Iteration: of.Iteration, Purpose: PurposeAnswerTune, Checkpoint: of.Checkpoint,
			Task: of.Task, PrevID: in.Of, Actions: lib.Describe(v.Tokens), Sample: model.Sample{Tokens: v.Tokens}} // no log-probs: the policy did not write it
		plan := fmt.Sprintf("# Plan (%s of %s: %s=%s%s)\n\n%s\n", PurposeAnswerTune, in.Of, out.Slot, v.Option, refit, prog.Plan)
		if err := putProgramSample(ctx, store, rec, plan, prog.Code); err != nil {
			return TuneResult{}, err
		}
		out.IDs = append(out.IDs, id)
		out.Options = append(out.Options, option)
	}
	return out, nil
}
