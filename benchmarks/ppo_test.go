package benchmarks

import (
	"math/rand/v2"
	"runtime"
	"syscall"
	"testing"

	"mlerl/codeactions"
	"mlerl/model"
	"mlerl/model/ppo"
)

// BenchmarkPPOUpdate128 is one duration-weighted PPO update (the paper's settings: 4 epochs of 2
// minibatches, clip 0.2, value clip 0.5, entropy and KL terms, gradient clipping, Adam) of the
// default policy on a batch of B = 128 samples, half of them improve prompts.
func BenchmarkPPOUpdate128(b *testing.B) {
	lib := codeactions.TabularClassification
	task := model.Task{Modality: lib.Modality, LowerIsBetter: true, Classes: 99, Features: 192, Rows: 891}
	p, err := model.WarmStart(lib, model.DefaultConfig(), task, 1)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	batch := make([]model.Experience, 128)
	for i := range batch {
		prompt := model.Prompt{Kind: model.KindScratch}
		if i%2 == 1 {
			prev := p.Sample(task, prompt, rng)
			prompt = model.Prompt{Kind: model.KindImprove, Prev: &model.Previous{Tokens: prev.Tokens, Reward: -9.5, LastMarker: 4, Duration: 3}}
		}
		s := p.Sample(task, prompt, rng)
		batch[i] = model.Experience{Task: task, Prompt: prompt, Tokens: s.Tokens, LogProbs: s.LogProbs, Values: s.Values,
			Reward: -10 + 10*rng.Float64(), Duration: 1 + 60*rng.Float64()}
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b.ResetTimer()
	for n := 0; n < b.N; n++ {
		if _, err := p.Update(batch, ppo.Paper(), rng); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/float64(b.N)/(1<<20), "MiB-alloc/op")
	b.ReportMetric(float64(ru.Maxrss)/1024, "MiB-peak-RSS")
}
