// Package durationbias simulates asynchronous actors whose actions take different times, feeding a
// learner that runs our PPO update (package ppo) every B completions, to test method.md's
// Problem 1: that fast actions complete more often, so without the duration weight they dominate
// the gradient and the policy drifts onto the fast, weak action.
//
// Finding (benchmarks/RESULTS.md, "Duration bias"): in a free-running pool that uses every
// completion the learner sees each action in proportion to its probability, so there is no drift
// and the weight only tilts learning toward long runs; the drift does appear when the learner
// takes the first B of a wave of runs and cancels the rest, and the weight does not undo it.
//
// The policy is a softmax over a few actions with the logits as its only parameters, so every
// number here can be checked by hand. Run is pure: same Config and seed, same Trace.
package durationbias

import (
	"container/heap"
	"math"
	"math/rand/v2"

	"mlerl/model/ppo"
)

// Action is one kind of program an agent can write: how long it runs and what it scores.
type Action struct {
	Name        string
	Duration    float64 // seconds, before jitter
	Reward      float64 // mean reward
	RewardNoise float64 // standard deviation of the Gaussian noise added to Reward
}

// Config describes the actors, the actions and the learner.
type Config struct {
	Actions []Action
	Actors  int     // actors running in parallel
	Batch   int     // completions per PPO update
	Jitter  float64 // each run lasts Duration * U(1-Jitter, 1+Jitter)
	Horizon float64 // simulated seconds; completions after it are not collected
	Wave    int     // 0: free-running pool of Actors; >0: Algorithm 1 waves (see sim.waves)

	DurationWeight bool // weight each sample by dt/mean(dt) (ppo.DurationWeights)
	WhitenAdv      bool // advantages = whitened rewards; otherwise reward - batch mean
	Epochs         int  // gradient steps per batch (full batch each)
	ClipRatio      float64
	MaxGradNorm    float64
	LearningRate   float64
	SGD            bool // plain gradient steps instead of ppo.AdamStep (a diagnostic)
}

// Default is the experiment reported in RESULTS.md. The actions mirror random-acts-of-pizza
// (ROC AUC): logistic regression is fast and weak, a random forest is in between, gradient
// boosting is slow and best, and a crashing program costs -10 (plus noise standing in for
// partial credit). Rewards are chosen so the best action beats the next by 3 noise standard
// deviations. PPO's clip and grad-norm are the paper's; the learning rate suits raw logits.
func Default() Config {
	return Config{
		Actions: []Action{
			{Name: "logreg", Duration: 1, Reward: 0.64, RewardNoise: 0.02},
			{Name: "forest", Duration: 15, Reward: 0.68, RewardNoise: 0.02},
			{Name: "boosting", Duration: 60, Reward: 0.74, RewardNoise: 0.02},
			{Name: "crash", Duration: 5, Reward: -10, RewardNoise: 0.2},
		},
		Actors: 16, Batch: 32, Jitter: 0.2, Horizon: 20000,
		DurationWeight: true, WhitenAdv: true, Epochs: 4,
		ClipRatio: 0.2, MaxGradNorm: 1.0, LearningRate: 0.02,
	}
}

// Best is the index of the action with the highest mean reward.
func (c Config) Best() int { return argmax(rewards(c.Actions)) }

// Fastest is the index of the shortest action.
func (c Config) Fastest() int {
	d := make([]float64, len(c.Actions))
	for i, a := range c.Actions {
		d[i] = -a.Duration
	}
	return argmax(d)
}

// ExpectedDuration is sum_a pi_a * Duration_a: how long the policy's next run takes on average.
func (c Config) ExpectedDuration(probs []float64) float64 {
	s := 0.0
	for i, a := range c.Actions {
		s += probs[i] * a.Duration
	}
	return s
}

// Point is the state after one PPO update.
type Point struct {
	Time          float64   // simulated seconds when the batch completed
	ExpDuration   float64   // policy's expected action duration after the update
	BatchDuration float64   // mean duration of the batch's runs (the paper's Figure 2 curve)
	BatchReward   float64   // mean reward of the batch
	ClipFrac      float64   // share of samples whose ratio was clipped in the last epoch
	Probs         []float64 // policy after the update
}

// Trace is one run: the initial policy, one Point per update, and the final policy.
type Trace struct {
	Initial     []float64
	Points      []Point
	Completions int   // runs collected by the learner
	Counts      []int // of which, per action
	Final       []float64
}

// ExpDurationAt is the policy's expected duration at time t (the last update at or before t).
func (tr Trace) ExpDurationAt(c Config, t float64) float64 {
	p := tr.Initial
	for _, pt := range tr.Points {
		if pt.Time > t {
			break
		}
		p = pt.Probs
	}
	return c.ExpectedDuration(p)
}

// TimeToProb is the time of the first update after which action a has probability >= p, or
// never if it does not happen.
func (tr Trace) TimeToProb(a int, p, never float64) float64 {
	for _, pt := range tr.Points {
		if pt.Probs[a] >= p {
			return pt.Time
		}
	}
	return never
}

// BatchDurationIn is the mean run duration over the batches completed in (from, to]: what the
// learner saw, the quantity the paper's Figure 2 plots. NaN if no batch completed then.
func (tr Trace) BatchDurationIn(from, to float64) float64 {
	s, n := 0.0, 0
	for _, pt := range tr.Points {
		if pt.Time > from && pt.Time <= to {
			s += pt.BatchDuration
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return s / float64(n)
}

// sample is one finished run as the learner sees it. OldLogp is the log-prob under the policy
// the actor sampled from, which may be several updates old by the time the run completes.
type sample struct {
	action           int
	oldLogp          float64
	reward, duration float64
}

// run is an action in flight on one actor.
type run struct {
	finish float64
	actor  int
	sample
}

// queue orders runs by finish time (ties by actor, so the order is deterministic).
type queue []run

func (q queue) Len() int { return len(q) }
func (q queue) Less(i, j int) bool {
	if q[i].finish != q[j].finish {
		return q[i].finish < q[j].finish
	}
	return q[i].actor < q[j].actor
}
func (q queue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *queue) Push(x any)   { *q = append(*q, x.(run)) }
func (q *queue) Pop() any {
	old := *q
	r := old[len(old)-1]
	*q = old[:len(old)-1]
	return r
}

// Run simulates cfg.Horizon seconds from a uniform policy and returns the trace.
func Run(cfg Config, seed uint64) Trace {
	s := &sim{cfg: cfg, rng: rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15)),
		logits: make([]float64, len(cfg.Actions))} // zero logits: uniform start
	s.probs = softmax(s.logits)
	s.tr.Initial = s.probs
	s.tr.Counts = make([]int, len(cfg.Actions))
	if cfg.Wave > 0 {
		s.waves()
	} else {
		s.pool()
	}
	s.tr.Final = softmax(s.logits)
	return s.tr
}

// sim is one run's state: the policy's logits, the optimiser and the trace so far.
type sim struct {
	cfg    Config
	rng    *rand.Rand
	logits []float64
	probs  []float64 // softmax(logits), refreshed after each update
	adam   ppo.Adam
	tr     Trace
}

// start draws an action from the policy as it is NOW and schedules its completion.
func (s *sim) start(actor int, now float64) run {
	probs := s.probs
	a := draw(s.rng, probs)
	act := s.cfg.Actions[a]
	dt := act.Duration * (1 + s.cfg.Jitter*(2*s.rng.Float64()-1))
	r := act.Reward + act.RewardNoise*s.rng.NormFloat64()
	return run{finish: now + dt, actor: actor,
		sample: sample{action: a, oldLogp: math.Log(probs[a]), reward: r, duration: dt}}
}

// learn runs one PPO update on a full batch and records it.
func (s *sim) learn(batch []sample, now float64) {
	for _, b := range batch {
		s.tr.Counts[b.action]++
	}
	s.tr.Completions += len(batch)
	pt := update(s.cfg, s.logits, &s.adam, batch)
	pt.Time = now
	s.tr.Points = append(s.tr.Points, pt)
	s.probs = pt.Probs
}

// pool is the free-running asynchronous setting: each actor starts a new run as soon as its
// last one finishes, and every completion goes into some batch, however late it arrives.
func (s *sim) pool() {
	q := &queue{}
	for i := 0; i < s.cfg.Actors; i++ {
		heap.Push(q, s.start(i, 0))
	}
	var batch []sample
	for q.Len() > 0 && (*q)[0].finish <= s.cfg.Horizon {
		done := heap.Pop(q).(run)
		batch = append(batch, done.sample)
		if len(batch) == s.cfg.Batch {
			s.learn(batch, done.finish)
			batch = batch[:0]
		}
		// The actor does not wait for the learner: it starts again at once, from the latest
		// policy. Runs still in flight keep the log-probs of the policy they were drawn from.
		heap.Push(q, s.start(done.actor, done.finish))
	}
}

// waves is Algorithm 1 read literally: launch cfg.Wave runs from the current policy, update on
// the first cfg.Batch to finish, and cancel the rest. Slow runs are cut off, not just delayed.
func (s *sim) waves() {
	now := 0.0
	for {
		q := &queue{}
		for i := 0; i < s.cfg.Wave; i++ {
			heap.Push(q, s.start(i, now))
		}
		batch := make([]sample, 0, s.cfg.Batch)
		for len(batch) < s.cfg.Batch {
			done := heap.Pop(q).(run)
			now = done.finish
			batch = append(batch, done.sample)
		}
		if now > s.cfg.Horizon {
			return
		}
		s.learn(batch, now)
	}
}

// update runs cfg.Epochs clipped-surrogate steps on one batch, changing logits in place.
func update(cfg Config, logits []float64, adam *ppo.Adam, batch []sample) Point {
	rw := make([]float64, len(batch))
	dt := make([]float64, len(batch))
	for i, s := range batch {
		rw[i], dt[i] = s.reward, s.duration
	}
	var adv []float64
	if cfg.WhitenAdv {
		adv = ppo.Whiten(rw)
	} else {
		m, _ := ppo.MeanStd(rw)
		adv = make([]float64, len(rw))
		for i, r := range rw {
			adv[i] = r - m
		}
	}
	w := ppo.DurationWeights(dt, cfg.DurationWeight)

	clipped := 0
	for e := 0; e < cfg.Epochs; e++ {
		var grad []float64
		_, grad, clipped = surrogate(logits, batch, adv, w, cfg.ClipRatio)
		ppo.ClipGradNorm([][]float64{grad}, cfg.MaxGradNorm)
		if cfg.SGD {
			for j, g := range grad {
				logits[j] -= cfg.LearningRate * g
			}
		} else {
			ppo.AdamStep(logits, grad, adam, cfg.LearningRate)
		}
	}
	pt := Point{Probs: softmax(logits), ClipFrac: float64(clipped) / float64(len(batch))}
	pt.ExpDuration = cfg.ExpectedDuration(pt.Probs)
	pt.BatchDuration, _ = ppo.MeanStd(dt)
	pt.BatchReward, _ = ppo.MeanStd(rw)
	return pt
}

// surrogate is the batch-mean PPO loss and its gradient with respect to the logits: ppo.PGLoss
// gives d loss / d logp_a, and the softmax gives d logp_a / d logit_j = 1[a=j] - pi_j.
func surrogate(logits []float64, batch []sample, adv, w []float64, clip float64) (loss float64, grad []float64, clipped int) {
	probs := softmax(logits)
	grad = make([]float64, len(logits))
	n := float64(len(batch))
	for k, s := range batch {
		l, d, c := ppo.PGLoss(math.Log(probs[s.action]), s.oldLogp, adv[k], w[k], clip)
		loss += l / n
		if c {
			clipped++
		}
		for j := range grad {
			ind := 0.0
			if j == s.action {
				ind = 1
			}
			grad[j] += d * (ind - probs[j]) / n
		}
	}
	return loss, grad, clipped
}

func softmax(x []float64) []float64 {
	m := x[argmax(x)]
	out := make([]float64, len(x))
	s := 0.0
	for i, v := range x {
		out[i] = math.Exp(v - m)
		s += out[i]
	}
	for i := range out {
		out[i] /= s
	}
	return out
}

// draw samples an index with the given probabilities.
func draw(rng *rand.Rand, probs []float64) int {
	u := rng.Float64()
	for i, p := range probs {
		if u < p {
			return i
		}
		u -= p
	}
	return len(probs) - 1 // rounding
}

func argmax(x []float64) int {
	best := 0
	for i, v := range x {
		if v > x[best] {
			best = i
		}
	}
	return best
}

func rewards(as []Action) []float64 {
	r := make([]float64, len(as))
	for i, a := range as {
		r[i] = a.Reward
	}
	return r
}
