package settings

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strconv"
	"time"
)

// Register binds every setting that has a flag to fs, with s's current values as the
// defaults `starter run -h` shows.
func (s *Settings) Register(fs *flag.FlagSet) {
	fs.IntVar(&s.Iterations, "iterations", s.Iterations, "RL iterations (PPO updates)")
	fs.IntVar(&s.Batch, "batch", s.Batch, "B: completed executions per update")
	fs.IntVar(&s.Oversample, "oversample", s.Oversample, "m: m*B executions are kept in flight")
	fs.Float64Var(&s.SandboxSeconds, "sandbox-seconds", s.SandboxSeconds, "also end training as soon as the finished training programs have used this many seconds of execution in all, mid-iteration if need be (--iterations is then a cap; 0: no such budget); matches a baseline to another run's sandbox time")
	fs.Var(secondsValue{&s.TimeBudget}, "time-budget", "the whole run's wall-clock time (training, evaluation, final answer), e.g. 40m or 2h: training stops at 60% of it, mid-iteration if need be (the update learns from the programs that finished, those still running are cancelled), best-of-K 20% after training ends and at 80% at most (chosen among its programs that finished), and the final answer's tuning (while a round's out-of-fold gain beats its fold-to-fold noise) starts nothing that would end after it; --iterations and the answer's flags stay caps (0: no such budget)")
	fs.IntVar(&s.EvalSamples, "eval-samples", s.EvalSamples, "K: final evaluation samples (scratch, then one improve each)")
	fs.IntVar(&s.StalenessIterations, "staleness", s.StalenessIterations, "end executions sampled more than this many iterations ago, as timeouts with partial credit (0: never; the task's wall limit still applies). Cancelling slow programs biases the policy toward fast ones: see benchmarks/RESULTS.md")
	fs.IntVar(&s.BufferCapacity, "buffer", s.BufferCapacity, "capacity of the self-improve buffer (half best, half recent)")
	fs.BoolVar(&s.SampleAtIterationStart, "sample-at-iteration-start", s.SampleAtIterationStart, "sample only when an iteration starts instead of replacing each finished program at once (with --oversample 1: the synchronous wait-for-all baseline)")
	fs.IntVar(&s.ContinueEvery, "continue-every", s.ContinueEvery, "iterations per workflow history segment (continue-as-new)")
	fs.Float64Var(&s.ImproveFraction, "improve-fraction", s.ImproveFraction, "share of training prompts that improve a previous solution")
	enumVar(fs, &s.ImproveFrom, "improve-from", "which previous solution improve prompts build on: mixed (the buffer's best and most recent halves), best, recent, failed-close (failed programs that got furthest)")
	enumVar(fs, &s.Init, "init", "initial policy: warm-start (behaviour cloning on a seeded corpus) or uniform (every action equally likely: the random-search baseline)")
	enumVar(fs, &s.Backend, "policy", "network (the code-action network) or llm (a model at --policy-url, updated by the trainer at --trainer-url)")
	fs.Float64Var(&s.PPO.LearningRate, "learning-rate", s.PPO.LearningRate, "PPO's Adam learning rate (0: never update, the static-policy baseline)")
	enumVar(fs, &s.Protocol, "protocol", "leak-free (rewards on a validation split) or paper (rewards on the test split)")
	enumVar(fs, &s.Reward, "reward", "reward scheme: paper (a failed program -10 + 0.1 per marker, a valid one its signed score) or bounded (the same, but a valid submission never below the best failure)")
	fs.IntVar(&s.RewardFolds, "reward-folds", s.RewardFolds, "leak-free: run each program on this many of the task's validation folds and reward the mean score (a program must be right on more held-out rows to win; valid programs cost that many runs); 0: 3 where the task carves 3 folds and the protocol is leak-free, else 1")
	fs.IntVar(&s.ImproveEdit, "improve-edit", s.ImproveEdit, "improve prompts edit the previous program: redraw this many of its code-action slots (chosen at random) and keep the rest, PPO learning only from the redrawn ones; 0 writes the whole program anew")
	fs.IntVar(&s.RedrawRepeats, "redraw-repeats", s.RedrawRepeats, "draw a training program again, up to this many times, when the run has already sampled a program writing the same submission (the identical program, or one differing only in the validation it prints; its result is known, so running it again wastes budget); 0 keeps every draw")
	fs.IntVar(&s.FinalCandidates, "final-candidates", s.FinalCandidates, "the final answer: cross-validate this many of the run's best distinct programs (training and evaluation) on the full public train and submit their greedy ensemble (0: only best-of-K)")
	fs.IntVar(&s.FinalFolds, "final-folds", s.FinalFolds, "folds of the final answer's cross-validation (each candidate costs this many runs, plus one refit per ensemble member)")
	fs.IntVar(&s.FinalTune, "final-tune", s.FinalTune, "the final answer: tune this many of its best candidates (different programs apart from preprocessing and strength) along those slots, one slot at a time, by the same cross-validation, before choosing the ensemble (0: none; each variant costs --final-folds runs)")
	fs.Float64Var(&s.FinalTuneBudget, "final-tune-budget", s.FinalTuneBudget, "a cap on the tuning's sandbox time, as a multiple of the time the candidates' own cross-validation took: a pass stops before variants whose estimated cost is more than is left (0: no cap of its own; the time budget and the noise rule stop the tuning; needed without --time-budget)")
	fs.IntVar(&s.EnsembleRounds, "ensemble-rounds", s.EnsembleRounds, "rounds of greedy ensemble selection (Caruana et al.): at most this many copies of candidates in the ensemble")
	fs.Uint64Var(&s.Seed, "seed", s.Seed, "seed of the warm start, the samples and the updates")
	fs.Var(negatedBool{&s.PPO.DurationWeight}, "no-duration-weight", "turn off the duration-aware gradient weight (ablation)")
	enumVar(fs, &s.PPO.RewardShaping, "reward-shaping", "what PPO does to each batch's rewards before its advantages: none, or rank (centred ranks: only the order counts, so crashes do not drown the differences between valid programs)")
	enumVar(fs, &s.PPO.Advantage, "advantage", "PPO's advantage estimator: gae (against the value head: maximises the mean reward), or risk-seeking (learn only from each batch's top --risk-epsilon, against its quantile: maximises the best program; best with --reward-shaping rank)")
	fs.Float64Var(&s.PPO.RiskEpsilon, "risk-epsilon", s.PPO.RiskEpsilon, "with --advantage risk-seeking: the top share of each batch that is learnt from")
}

// enumVar binds a flag to a string-typed setting; Validate checks the value.
func enumVar[T ~string](fs *flag.FlagSet, p *T, name, usage string) {
	fs.Var(&enumValue[T]{p}, name, usage)
}

type enumValue[T ~string] struct{ p *T }

func (v *enumValue[T]) String() string {
	if v.p == nil {
		return ""
	}
	return string(*v.p)
}
func (v *enumValue[T]) Set(s string) error { *v.p = T(s); return nil }

// negatedBool is a flag that turns a setting off: --no-duration-weight clears DurationWeight.
type negatedBool struct{ p *bool }

func (b negatedBool) IsBoolFlag() bool { return true }
func (b negatedBool) String() string {
	if b.p == nil {
		return "false"
	}
	return strconv.FormatBool(!*b.p)
}
func (b negatedBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("not a boolean: %q", s)
	}
	*b.p = !v
	return nil
}

// secondsValue is a duration flag ("40m", "1h30m", or plain seconds) held as seconds.
type secondsValue struct{ p *float64 }

func (v secondsValue) String() string {
	if v.p == nil || *v.p == 0 {
		return "0"
	}
	return (time.Duration(*v.p * float64(time.Second))).String()
}

func (v secondsValue) Set(s string) error {
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		*v.p = f
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("not a duration: %q (write it as 40m, 1h30m or a number of seconds)", s)
	}
	*v.p = d.Seconds()
	return nil
}

// flagKeys names the setting each flag of Register sets (TestEveryFlagSetsItsKey checks it).
var flagKeys = map[string]string{
	"iterations": "iterations", "batch": "batch", "oversample": "oversample", "sandbox-seconds": "sandbox_seconds",
	"time-budget": "time_budget", "eval-samples": "eval_samples", "staleness": "staleness_iterations",
	"buffer": "buffer_capacity", "sample-at-iteration-start": "sample_at_iteration_start", "continue-every": "continue_every",
	"improve-fraction": "improve_fraction", "improve-from": "improve_from", "init": "init", "policy": "backend",
	"learning-rate": "ppo.learning_rate", "protocol": "protocol", "reward": "reward", "reward-folds": "reward_folds",
	"improve-edit": "improve_edit", "redraw-repeats": "redraw_repeats", "final-candidates": "final_candidates",
	"final-folds": "final_folds", "final-tune": "final_tune", "final-tune-budget": "final_tune_budget",
	"ensemble-rounds": "ensemble_rounds", "seed": "seed", "no-duration-weight": "ppo.duration_weight",
	"reward-shaping": "ppo.reward_shaping", "advantage": "ppo.advantage", "risk-epsilon": "ppo.risk_epsilon",
}

// FlagSource is the source of the command line's layer.
const FlagSource = "the command line"

// FlagOverlay is the layer of the settings flags given in fs (only those: flag.Visit), whose
// values Register bound to given. A flag that is not a setting is left to its command.
func FlagOverlay(fs *flag.FlagSet, given *Settings) Overlay {
	o := Overlay{Source: FlagSource}
	v := reflect.ValueOf(given).Elem()
	fs.Visit(func(f *flag.Flag) {
		if key, ok := flagKeys[f.Name]; ok {
			o.entries = append(o.entries, entry{key: key, flag: f.Name, val: reflect.ValueOf(v.FieldByIndex(fields[key].index).Interface())})
		}
	})
	return o
}

// WithFlag returns o with key set to value by flag name: a command's own flag that decides a
// setting (`starter run --instrumenter none` sets instrumenter).
func (o Overlay) WithFlag(name, key string, value any) Overlay {
	f, ok := fields[key]
	if !ok {
		panic("settings: WithFlag: no setting " + key)
	}
	o.entries = append(slices.Clone(o.entries), entry{key: key, flag: name, val: reflect.ValueOf(value).Convert(f.typ)})
	return o
}

// FromArgs reads `starter run` settings flags as a layer: only for experiment ledgers recorded
// before arms said settings as run: sections (their arms' flags: lists). --instrumenter none,
// the one starter flag recorded arms used, is the instrumenter setting.
func FromArgs(source string, args []string) (Overlay, error) {
	var s Settings
	fs := flag.NewFlagSet(source, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s.Register(fs)
	instrumenter := fs.String("instrumenter", "", "")
	if err := fs.Parse(args); err != nil {
		return Overlay{}, fmt.Errorf("%s: flags %v: %w", source, args, err)
	}
	if fs.NArg() > 0 {
		return Overlay{}, fmt.Errorf("%s: flags %v: %q is not a flag", source, args, fs.Arg(0))
	}
	o := FlagOverlay(fs, &s)
	o.Source = source
	if *instrumenter == InstrumenterNone {
		o = o.WithFlag("instrumenter", "instrumenter", InstrumenterNone)
	}
	return o, nil
}
