// Package settings declares a training run's settings once: the Train workflow's input, their
// defaults and their one validation, and the layers that set them (presets, a task spec's
// run: section, an experiment's and its arms' run: sections, the `starter run` flags), all
// Overlays of the same keys that Resolve lays over the defaults in one order.
package settings

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"mlerl/model/ppo"
	"mlerl/reward"
)

// Protocol says where rewards come from and how the final program is chosen.
type Protocol string

const (
	LeakFree Protocol = "leak-free" // rewards from a validation split; test answers only for the report
	Paper    Protocol = "paper"     // rewards and selection on the test split, as the paper did
)

// Protocols lists the protocols.
var Protocols = []Protocol{LeakFree, Paper}

// ImproveFrom is which previous solution an improve prompt builds on.
type ImproveFrom string

const (
	ImproveMixed       ImproveFrom = "mixed"        // uniform over the buffer: its best half and its most recent half
	ImproveBest        ImproveFrom = "best"         // one of the highest-reward entries
	ImproveRecent      ImproveFrom = "recent"       // one of the newest entries
	ImproveFailedClose ImproveFrom = "failed-close" // a failed program that got furthest (most markers)
)

// ImproveStrategies lists the ImproveFrom values.
var ImproveStrategies = []ImproveFrom{ImproveMixed, ImproveBest, ImproveRecent, ImproveFailedClose}

// Init is the policy a run starts from.
type Init string

const (
	InitWarmStart Init = "warm-start" // behaviour cloning on a seeded corpus (the default)
	InitUniform   Init = "uniform"    // every option equally likely: the random-search baseline
)

// Inits lists the initial policies.
var Inits = []Init{InitWarmStart, InitUniform}

// Backend is what the policy is.
type Backend string

const (
	BackendNetwork Backend = "network" // the gorgonia network over code actions (package model)
	BackendLLM     Backend = "llm"     // a language model behind an OpenAI-compatible server
)

// Backends lists the policy backends.
var Backends = []Backend{BackendNetwork, BackendLLM}

// InstrumenterNone turns instrumentation off for a run (Settings.Instrumenter).
const InstrumenterNone = "none"

// Policy configures the code-action network and how it samples.
type Policy struct {
	Hidden      int     `json:"hidden" yaml:"hidden"`
	Temperature float64 `json:"temperature" yaml:"temperature"`
	TopP        float64 `json:"top_p" yaml:"top_p"`
}

// Settings is everything that decides what a training run does (not where it runs). The JSON
// names are the Train workflow input's (histories of running workflows hold them); the YAML
// names are the keys of every run: section (Overlay).
type Settings struct {
	Iterations  int               `json:"iterations" yaml:"iterations"`
	Batch       int               `json:"batch" yaml:"batch"`           // B: samples per update
	Oversample  int               `json:"oversample" yaml:"oversample"` // m: m*B executions in flight
	Protocol    Protocol          `json:"protocol" yaml:"protocol"`
	RewardFolds int               `json:"reward_folds,omitempty" yaml:"reward_folds"` // leak-free: validation folds whose mean score is the reward; 0 is RewardFoldsAuto
	Reward      reward.SchemeName `json:"reward,omitempty" yaml:"reward"`             // "" is the paper's
	Seed        uint64            `json:"seed" yaml:"seed"`
	EvalSamples int               `json:"eval_samples" yaml:"eval_samples"` // K for best-of-K
	// StalenessIterations ends executions sampled more than this many iterations ago (0: never).
	StalenessIterations int         `json:"staleness_iterations" yaml:"staleness_iterations"`
	BufferCapacity      int         `json:"buffer_capacity" yaml:"buffer_capacity"`
	ImproveFraction     float64     `json:"improve_fraction" yaml:"improve_fraction"`
	ImproveFrom         ImproveFrom `json:"improve_from" yaml:"improve_from"`
	RedrawRepeats       int         `json:"redraw_repeats,omitempty" yaml:"redraw_repeats"` // redraws of a training program the run already sampled
	// ImproveEdit makes an improve prompt's program an edit of the previous one: this many of
	// its slots are redrawn, the rest kept (0: the whole program is written anew).
	ImproveEdit   int `json:"improve_edit,omitempty" yaml:"improve_edit"`
	ContinueEvery int `json:"continue_every" yaml:"continue_every"` // iterations per history segment
	// SampleAtIterationStart samples only when an iteration starts instead of replacing each
	// finished program at once; with Oversample 1 it is the synchronous wait-for-all baseline.
	SampleAtIterationStart bool   `json:"sample_at_iteration_start,omitempty" yaml:"sample_at_iteration_start"`
	Policy                 Policy `json:"policy" yaml:"policy"`
	Init                   Init   `json:"init,omitempty" yaml:"init"`
	// Backend is the policy: network (default, the code-action network) or llm (a model
	// server sampled with LLM, updated by a trainer service).
	Backend Backend    `json:"backend,omitempty" yaml:"backend"`
	PPO     ppo.Config `json:"ppo" yaml:"ppo"`
	// SandboxSeconds, when positive, ends training as soon as the finished training programs
	// have used this much execution time, mid-iteration (the last update learns from those that
	// finished; Iterations is then a cap): a baseline matched to another arm's sandbox time
	// rather than its number of programs.
	SandboxSeconds float64 `json:"sandbox_seconds,omitempty" yaml:"sandbox_seconds"`
	// Instrumenter "none" runs programs without progress prints (the instrumentation ablation);
	// "" uses the worker's instrumenter.
	Instrumenter string `json:"instrumenter,omitempty" yaml:"instrumenter"`
	// FinalCandidates is how many of the run's best distinct programs (training and evaluation)
	// the final answer cross-validates and ensembles (0: no final answer, only best-of-K).
	FinalCandidates int `json:"final_candidates,omitempty" yaml:"final_candidates"`
	// FinalFolds is the final answer's k-fold cross-validation of the full public train.
	FinalFolds int `json:"final_folds,omitempty" yaml:"final_folds"`
	// EnsembleRounds bounds greedy ensemble selection's rounds (the ensemble's size).
	EnsembleRounds int `json:"ensemble_rounds,omitempty" yaml:"ensemble_rounds"`
	// FinalTune is how many of the answer's best candidates, each a different program apart
	// from its tunable slots (model family, preprocessing, strength), are tuned along those
	// slots by cross-validation before the ensemble is chosen (0: none).
	FinalTune int `json:"final_tune,omitempty" yaml:"final_tune"`
	// FinalTuneBudget, when positive, bounds the tuning's sandbox time as a multiple of the time
	// the candidates' own cross-validation took; 0 (the default) leaves the tuning to the time
	// budget and to its noise rule (answerplan.ShouldContinue), so a run without a time budget
	// needs it.
	FinalTuneBudget float64 `json:"final_tune_budget,omitempty" yaml:"final_tune_budget"`
	// TimeBudget, when positive, is the whole run's wall-clock time in seconds (training,
	// evaluation and the final answer, on the worker's slots): training stops at TrainShare of
	// it, mid-iteration if need be (the update learns from the programs that finished; those in
	// flight are cancelled), best-of-K at EvalDeadline (chosen among the programs that
	// finished), and the final answer's tuning starts no wave of variants that would end
	// after it. Iterations and the answer's settings stay caps, so a run may end sooner.
	TimeBudget float64 `json:"time_budget,omitempty" yaml:"time_budget"`
}

// TrainShare is the part of a TimeBudget training may use; evaluation and the final answer
// (cross-validating the candidates, tuning, the ensemble's refits) get the rest.
const TrainShare = 0.6

// EvalShare is the part of a TimeBudget best-of-K may use after training's: its programs still
// running at EvalDeadline are cancelled. Best-of-K runs K programs once; the final answer
// cross-validates its candidates on several folds and refits the ensemble's members, so it
// keeps at least as much: half of what training leaves each.
const EvalShare = (1 - TrainShare) / 2

// EvalDeadline is the budget time (seconds since the run began, pauses not counted) at which
// best-of-K stops, for a run whose training ended at trainingEnded: EvalShare of the budget
// from then, and never past TrainShare+EvalShare of it. Best-of-K evaluates the policy; the
// final answer is the run's product, so the time training leaves unused (it ended at its
// iterations, not its share) goes to the answer, not to best-of-K's slowest program.
func EvalDeadline(budget, trainingEnded float64) float64 {
	return min(trainingEnded+EvalShare*budget, (TrainShare+EvalShare)*budget)
}

// DefaultTimeBudget keeps the main job under an hour on this project's 2-core machines, setup
// aside, whatever the task.
const DefaultTimeBudget = 40 * 60.0

// Defaults are the platform's best measured settings for the code-action network (the paper's
// where they apply to a small network; benchmarks/RESULTS.md says where and why they differ):
// improve prompts build on the best programs, a program the run already sampled is drawn again
// (its result is known), PPO learns from the batch's ranks (one crash no longer drowns the
// differences between valid programs), the reward is the mean over three validation folds where
// the task carves them, and the run's answer is the cross-validated ensemble of its best
// programs. `--preset paper` restores the paper's.
func Defaults() Settings {
	p := ppo.Paper()
	p.RewardShaping = ppo.ShapingRank
	return Settings{Iterations: 10, Batch: 8, Oversample: 2, Protocol: LeakFree, RewardFolds: RewardFoldsAuto, Reward: reward.SchemePaper, Seed: 1,
		EvalSamples: 8, BufferCapacity: 16, ImproveFraction: 0.5, ImproveFrom: ImproveBest, RedrawRepeats: 8, ContinueEvery: 10,
		Policy: Policy{Hidden: 64, Temperature: 0.7, TopP: 1.0}, Init: InitWarmStart, Backend: BackendNetwork, PPO: p,
		FinalCandidates: 8, FinalFolds: 5, EnsembleRounds: 25, FinalTune: 3,
		TimeBudget: DefaultTimeBudget}
}

// RewardFoldsAuto lets the task decide the reward folds (ForTask): three where the protocol is
// leak-free and the task carves at least three validation folds, one otherwise. Experiment
// leaffolds (benchmarks/RESULTS.md) measured three folds better than one split on leaf in 3 of 3
// seeds at the same sandbox-seconds; a task's spec opts in by carving the folds (leaf, pizza).
const RewardFoldsAuto = 0

// autoRewardFolds is what RewardFoldsAuto becomes on a task that carves enough folds.
const autoRewardFolds = 3

// ForTask returns the settings for a task that carves `carved` validation folds: an automatic
// RewardFolds decided, everything else as it is.
func (s Settings) ForTask(carved int) Settings {
	if s.RewardFolds != RewardFoldsAuto {
		return s
	}
	s.RewardFolds = 1
	if s.Protocol == LeakFree && carved >= autoRewardFolds {
		s.RewardFolds = autoRewardFolds
	}
	return s
}

// ppoFlags names the flag of each PPO setting that has one (the rest come from presets).
var ppoFlags = map[string]string{"learning_rate": "learning-rate", "duration_weight": "no-duration-weight",
	"reward_shaping": "reward-shaping", "advantage": "advantage", "risk_epsilon": "risk-epsilon"}

// InvalidError is a setting a run cannot start with: Key is its key (ppo.learning_rate), so
// Resolve can name the layer that set it; Msg names its flag where it has one.
type InvalidError struct{ Key, Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(key, format string, a ...any) error {
	return &InvalidError{Key: key, Msg: fmt.Sprintf(format, a...)}
}

// policyKey names the policy setting the policy rule refuses.
func policyKey(p Policy) string {
	switch {
	case p.Temperature <= 0:
		return "policy.temperature"
	case p.TopP <= 0 || p.TopP > 1:
		return "policy.top_p"
	}
	return "policy.hidden"
}

// Validate names the first setting a run cannot start with, by its flag (or its key where it
// has no flag), and what to do instead.
func (s Settings) Validate() error {
	switch {
	case s.Iterations < 1:
		return invalid("iterations", "--iterations must be at least 1, got %d", s.Iterations)
	case s.Batch < 1:
		return invalid("batch", "--batch must be at least 1, got %d", s.Batch)
	case s.Oversample < 1:
		return invalid("oversample", "--oversample must be at least 1 (m*B executions stay in flight), got %d", s.Oversample)
	case s.EvalSamples < 1:
		return invalid("eval_samples", "--eval-samples must be at least 1, got %d", s.EvalSamples)
	case s.ContinueEvery < 1:
		return invalid("continue_every", "--continue-every must be at least 1, got %d", s.ContinueEvery)
	case !slices.Contains(Protocols, s.Protocol):
		return invalid("protocol", "--protocol must be %s, got %q", join(Protocols), s.Protocol)
	case s.RewardFolds < 0:
		return invalid("reward_folds", "--reward-folds must be 0 (automatic: %d where the task carves that many validation folds, else 1) or more, got %d", autoRewardFolds, s.RewardFolds)
	case s.RewardFolds > 1 && s.Protocol != LeakFree:
		return invalid("reward_folds", "--reward-folds %d averages validation folds, which only the %s protocol uses: drop it or use --protocol %s", s.RewardFolds, LeakFree, LeakFree)
	case s.RedrawRepeats < 0:
		return invalid("redraw_repeats", "--redraw-repeats must be 0 (keep every draw) or more, got %d", s.RedrawRepeats)
	case s.StalenessIterations < 0:
		return invalid("staleness_iterations", "--staleness must be 0 (never) or more, got %d", s.StalenessIterations)
	case s.BufferCapacity < 0:
		return invalid("buffer_capacity", "--buffer must not be negative, got %d", s.BufferCapacity)
	case !slices.Contains(Backends, s.Backend):
		return invalid("backend", "--policy must be %s, got %q", join(Backends), s.Backend)
	case s.ImproveEdit < 0:
		return invalid("improve_edit", "--improve-edit must be 0 (improve prompts write the whole program) or the number of slots an edit redraws, got %d", s.ImproveEdit)
	case s.ImproveEdit > 0 && s.Backend == BackendLLM:
		return invalid("improve_edit", "--improve-edit applies to the %s policy, whose programs are code actions; an llm's improve prompt already edits its previous program in text: drop it with --policy %s", BackendNetwork, BackendLLM)
	case s.RedrawRepeats > 0 && s.Backend == BackendLLM:
		return invalid("redraw_repeats", "--redraw-repeats applies to the %s policy, whose programs come from code actions; drop it with --policy %s", BackendNetwork, BackendLLM)
	case !slices.Contains(Inits, s.Init):
		return invalid("init", "--init must be %s, got %q", join(Inits), s.Init)
	case !slices.Contains(ImproveStrategies, s.ImproveFrom):
		return invalid("improve_from", "--improve-from must be %s, got %q", join(ImproveStrategies), s.ImproveFrom)
	case s.ImproveFraction < 0 || s.ImproveFraction > 1:
		return invalid("improve_fraction", "--improve-fraction must be in [0, 1], got %v", s.ImproveFraction)
	case s.SandboxSeconds < 0:
		return invalid("sandbox_seconds", "--sandbox-seconds must be 0 (no such budget) or positive, got %v", s.SandboxSeconds)
	case s.TimeBudget < 0:
		return invalid("time_budget", "--time-budget must be 0 (no wall-clock budget) or a positive duration such as 40m, got %v seconds", s.TimeBudget)
	case s.Instrumenter != "" && s.Instrumenter != InstrumenterNone:
		return invalid("instrumenter", "a run's instrumenter must be empty (the worker's) or %s, got %q", InstrumenterNone, s.Instrumenter)
	case s.FinalCandidates < 0:
		return invalid("final_candidates", "--final-candidates must be 0 (no final answer) or more, got %d", s.FinalCandidates)
	case s.FinalCandidates > 0 && s.FinalFolds < 2:
		return invalid("final_folds", "--final-folds must be at least 2 (k-fold cross-validation), got %d; or turn the final answer off with --final-candidates 0", s.FinalFolds)
	case s.FinalTune < 0:
		return invalid("final_tune", "--final-tune must be 0 (no tuning) or more, got %d", s.FinalTune)
	case s.FinalTuneBudget < 0 || math.IsNaN(s.FinalTuneBudget):
		return invalid("final_tune_budget", "--final-tune-budget must be 0 (the time budget bounds the tuning) or positive (a multiple of the candidates' cross-validation time), got %v", s.FinalTuneBudget)
	case s.FinalTune > 0 && s.FinalTuneBudget == 0 && s.TimeBudget == 0:
		return invalid("final_tune_budget", "the final answer's tuning needs a bound: without --time-budget, set --final-tune-budget (a multiple of the candidates' cross-validation time, e.g. 2), or turn tuning off with --final-tune 0")
	case s.FinalCandidates > 0 && s.EnsembleRounds < 1:
		return invalid("ensemble_rounds", "--ensemble-rounds must be at least 1, got %d", s.EnsembleRounds)
	case s.Policy.Temperature <= 0 || s.Policy.TopP <= 0 || s.Policy.TopP > 1 || s.Policy.Hidden < 1:
		return invalid(policyKey(s.Policy), "policy: temperature must be positive, top_p in (0, 1] and hidden at least 1, got %+v", s.Policy)
	}
	if _, err := reward.Scheme(s.Reward); err != nil {
		return &InvalidError{Key: "reward", Msg: "--" + err.Error()}
	}
	if err := s.PPO.Validate(); err != nil {
		var fe *ppo.FieldError
		if errors.As(err, &fe) {
			if name, ok := ppoFlags[fe.Field]; ok {
				return invalid("ppo."+fe.Field, "--%s (ppo.%s) %s", name, fe.Field, fe.Problem)
			}
			return invalid("ppo."+fe.Field, "ppo.%s %s", fe.Field, fe.Problem)
		}
		return fmt.Errorf("ppo: %w", err)
	}
	return nil
}

func join[T ~string](vs []T) string {
	s := make([]string, len(vs))
	for i, v := range vs {
		s[i] = string(v)
	}
	if len(s) < 3 {
		return strings.Join(s, " or ")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}
