package durationbias

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"text/tabwriter"
)

// Seeds is how many seeds (1..Seeds) every variant runs, in the tests and in the report.
const Seeds = 20

// curveTimes are the simulated seconds at which the report samples the expected-duration curve.
var curveTimes = []float64{100, 500, 1000, 2000, 5000, 10000, 20000}

// variant is one setting of the experiment; Default() changed by f.
type variant struct {
	name, why string
	f         func(*Config)
}

var variants = []variant{
	{"pool", "the asynchronous setting of the brief: 16 actors, a PPO update every 32 completions", func(*Config) {}},
	{"pool, plain SGD", "same, plain gradient steps (lr 0.3) instead of Adam: is the result an Adam artefact?", func(c *Config) {
		c.SGD, c.LearningRate = true, 0.3
	}},
	{"pool, fast best", "control: logreg scores 0.74 and boosting 0.64, so the FAST action is the best", func(c *Config) {
		c.Actions[0].Reward, c.Actions[2].Reward = 0.74, 0.64
	}},
	{"waves 64, first 32", "Algorithm 1 read literally: launch 64 runs, learn from the first 32 to finish, cancel the rest", func(c *Config) {
		c.Wave = 64
	}},
	{"waves 32, all 32", "synchronous control: launch 32, wait for all 32 (no asynchrony, no bias)", func(c *Config) {
		c.Wave = 32
	}},
}

func config(name string, weight bool) Config {
	for _, v := range variants {
		if v.name == name {
			c := Default()
			v.f(&c)
			c.DurationWeight = weight
			return c
		}
	}
	panic("no variant " + name)
}

// summary runs a variant once per test binary; the claim tests and the report share the runs.
var summaries sync.Map // key "name/weight" -> func() Summary

func summary(name string, weight bool) Summary {
	f, _ := summaries.LoadOrStore(fmt.Sprint(name, "/", weight), sync.OnceValue(func() Summary {
		s, _ := Summarize(config(name, weight), Seeds, curveTimes)
		return s
	}))
	return f.(func() Summary)()
}

// TestReport prints the tables of benchmarks/RESULTS.md's "Duration bias (issue 4)" section.
func TestReport(t *testing.T) {
	if !testing.Verbose() {
		t.Skip("prints the report; run with -run TestReport -v")
	}
	c := Default()
	var acts []string
	for i, a := range c.Actions {
		best := ""
		if i == c.Best() {
			best = ", best"
		}
		acts = append(acts, fmt.Sprintf("%s %g s, %g+-%g%s", a.Name, a.Duration, a.Reward, a.RewardNoise, best))
	}
	fmt.Printf("actions: %s; durations x U(%.1f, %.1f)\n", strings.Join(acts, " | "), 1-c.Jitter, 1+c.Jitter)
	fmt.Printf("learner: batch %d, %d epochs, clip %.1f, grad norm %.1f, Adam lr %g, whitened advantages, uniform start; %g s simulated; %d seeds; mean +- s.e. over seeds\n",
		c.Batch, c.Epochs, c.ClipRatio, c.MaxGradNorm, c.LearningRate, c.Horizon, Seeds)

	for _, v := range variants {
		fmt.Printf("\n### %s: %s\n", v.name, v.why)
		tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "weight\tP(best) final\tE[dt] final s\tE[reward] final\tupdates\tt: P(best)>=.5 s\t")
		for _, a := range c.Actions {
			fmt.Fprintf(tw, "ends %s\t", a.Name)
		}
		fmt.Fprintln(tw)
		for _, on := range []bool{true, false} {
			s := summary(v.name, on)
			fmt.Fprintf(tw, "%s\t%.3f+-%.3f\t%.1f+-%.1f\t%.3f+-%.3f\t%.0f\t%.0f+-%.0f\t", onOff(on), s.BestProb, s.BestProbSE,
				s.ExpDuration, s.ExpDurationSE, s.ExpReward, s.ExpRewardSE, s.Updates, s.TimeToHalf, s.TimeToHalfSE)
			for _, e := range s.EndsOn {
				fmt.Fprintf(tw, "%.2f\t", e)
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()

		tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintf(tw, "t (s)\t0\t")
		for _, x := range curveTimes {
			fmt.Fprintf(tw, "%g\t", x)
		}
		fmt.Fprintln(tw)
		for _, on := range []bool{true, false} {
			s := summary(v.name, on)
			fmt.Fprintf(tw, "E[dt] policy, weight %s\t%.1f\t", onOff(on), c.ExpectedDuration(softmax(make([]float64, len(c.Actions)))))
			for i := range curveTimes {
				fmt.Fprintf(tw, "%.1f+-%.1f\t", s.Curve[i], s.CurveSE[i])
			}
			fmt.Fprintln(tw)
			fmt.Fprintf(tw, "mean dt seen, weight %s\t\t", onOff(on))
			for i := range curveTimes {
				fmt.Fprintf(tw, "%.1f\t", s.BatchCurve[i])
			}
			fmt.Fprintln(tw)
		}
		tw.Flush()
	}
}

func onOff(on bool) string {
	if on {
		return "on"
	}
	return "off"
}
