package activities

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"mlerl/artifacts"
	"mlerl/artifacts/runstore"
	"mlerl/grading"
	"mlerl/report"
	"mlerl/settings"
)

// Report writes the run's report.md (the comparison with the paper, the chosen program and the training
// curve) and returns the terminal table.
func (a *Activities) Report(ctx context.Context, in ReportInput) (ReportResult, error) {
	defer keepAlive(ctx)()
	store, err := a.Runs.Run(in.Run)
	if err != nil {
		return ReportResult{}, badInput("%v", err)
	}
	ours := report.Ours{Label: "mlerl policy (best of " + fmt.Sprint(in.EvalCount) + ")", Protocol: string(in.Protocol)}
	var b strings.Builder
	fmt.Fprintf(&b, "# Run %s: %s\n\nProtocol: %s. Settings: %s.\n\n", in.Run, in.Task, in.Protocol, in.Settings)
	var results []report.Ours
	if ans := in.Answer; ans != nil {
		answer := report.Ours{Label: fmt.Sprintf("mlerl final answer (%d-fold CV ensemble)", ans.Folds), Protocol: string(in.Protocol)}
		if ans.Test != nil {
			graded(&answer, ans.Test.Report)
		}
		results = append(results, answer)
		writeAnswer(&b, ans)
	}
	if in.Final != nil {
		r := in.Final.Report
		graded(&ours, r)
		fmt.Fprintf(&b, "Chosen program: `%s`", runstore.Sample(in.Final.SampleID).Program())
		if in.Selection != nil && in.Selection.Score != nil {
			on := "validation split"
			if in.Protocol == settings.Paper {
				on = "test split"
			}
			fmt.Fprintf(&b, " (chosen by its %s score %.5f)", on, *in.Selection.Score)
		}
		b.WriteString(".\n\n")
		if in.Final.Reason != "" && r.Score == nil {
			fmt.Fprintf(&b, "Its test submission was not valid: %s.\n\n", in.Final.Reason)
		}
		fmt.Fprintf(&b, "MLE-bench thresholds: %s.\n\n", r.ThresholdsText())
	} else {
		b.WriteString("No evaluated program produced a valid submission, so nothing was graded on the test answers.\n\n")
	}
	rows, err := report.Rows(in.Task, append(results, ours)...)
	if err != nil {
		return ReportResult{}, err
	}
	md, err := report.Render(rows, true)
	if err != nil {
		return ReportResult{}, err
	}
	b.WriteString("## Test score beside the paper\n\n" + md + "\n## Training\n\n")
	b.WriteString("| iteration | samples | valid rate | mean reward | best score | mean exec time (s) | pg_loss | v_loss | entropy | approx_kl |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	for _, m := range readMetrics(ctx, store) {
		best := "-"
		if m.BestScore != nil {
			best = fmt.Sprintf("%.5f", *m.BestScore)
		}
		fmt.Fprintf(&b, "| %d | %d | %.2f | %.3f | %s | %.1f | %.4f | %.4f | %.3f | %.4f |\n", m.Iteration, m.Samples, m.ValidRate,
			m.MeanReward, best, m.MeanDuration, m.PPO.PGLoss, m.PPO.VLoss, m.PPO.Entropy, m.PPO.ApproxKL)
	}
	if in.Final != nil {
		if err := putJSON(ctx, store, runstore.ChoiceKey, in.Final); err != nil {
			return ReportResult{}, err
		}
	}
	if err := store.Put(ctx, runstore.ReportKey, []byte(b.String())); err != nil {
		return ReportResult{}, err
	}
	table, err := report.Render(rows, false)
	if err != nil {
		return ReportResult{}, err
	}
	return ReportResult{Table: table, Location: store.Location(runstore.ReportKey)}, nil
}

// readMetrics reads every iteration's metrics line (the workflow carries only the last few).
func readMetrics(ctx context.Context, store artifacts.Store) []IterationMetrics {
	b, err := store.Get(ctx, runstore.MetricsKey)
	if err != nil {
		return nil
	}
	var out []IterationMetrics
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m IterationMetrics
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// graded fills a result row from its MLE-bench report.
func graded(o *report.Ours, r grading.Report) {
	o.Score, o.Valid, o.AboveMedian = r.Score, r.ValidSubmission, r.AboveMedian
	switch {
	case r.GoldMedal:
		o.Medal = "gold"
	case r.SilverMedal:
		o.Medal = "silver"
	case r.BronzeMedal:
		o.Medal = "bronze"
	case r.MedalsUnknown:
		o.Medal = "unknown"
	default:
		o.Medal = "none"
	}
}

// writeAnswer is the report's section on the final answer: every candidate's cross-validation,
// the members chosen with their weights, and each one's and the blend's test score.
func writeAnswer(b *strings.Builder, ans *FinalAnswer) {
	same := 0
	for _, c := range ans.Candidates {
		if c.SameAs != "" {
			same++
		}
	}
	fmt.Fprintf(b, "## Final answer\n\nThe run's best distinct programs (training and evaluation, by their selection score; copies of a better one skipped: %d; left out after cross-validation for repeating a better one's out-of-fold predictions: %d) were cross-validated on a %d-fold partition of the full public train; greedy ensemble selection (Caruana et al., 2004) weighed them on their out-of-fold predictions; the members were refit on the full public train and their test submissions blended (`%s`). Cross-validation and refits used %.0f sandbox-seconds.\n\n",
		ans.Duplicates, same, ans.Folds, runstore.AnswerSubmissionKey, ans.SandboxSeconds)
	guarded := map[string]Guard{}
	for _, g := range ans.Guarded {
		guarded[g.To] = g
	}
	// Counted over the candidates: 6aa9450 recorded every guarded program of the leader board.
	nGuarded := 0
	for _, c := range ans.Candidates {
		if _, ok := guarded[c.SampleID]; ok {
			nGuarded++
		}
	}
	if nGuarded > 0 {
		fmt.Fprintf(b, "Candidates cross-validated guarded (the program with an option that fails on some data replaced by one that makes the same predictions wherever it does not; on RMSLE tasks, predictions clipped at 0): %d, each noted below.\n\n", nGuarded)
	}
	if len(ans.PassedOver) > 0 {
		fmt.Fprintf(b, "Passed over, their folds too slow to end within the candidates' share of the time budget: %d (`%s`).\n\n", len(ans.PassedOver), strings.Join(ans.PassedOver, "`, `"))
	}
	if ans.Note != "" && ans.Test == nil {
		fmt.Fprintf(b, "No final answer: %s.\n\n", ans.Note)
		return
	}
	if ans.Note != "" { // an answer with a reservation: the time budget chose it, say
		fmt.Fprintf(b, "Note: %s.\n\n", ans.Note)
	}
	num := func(v *float64) string {
		if v == nil {
			return "-"
		}
		return fmt.Sprintf("%.5f", *v)
	}
	if len(ans.Tuning) > 0 {
		b.WriteString("Before the ensemble was chosen, the best candidates that are different programs apart from their tunable slots were tuned along them, one slot at a time in rounds over the slots while a round's out-of-fold gain beat its fold-to-fold noise, by the same cross-validation, within the run's time budget and, where set, `--final-tune-budget` times the candidates' sandbox time (each variant is a candidate below):\n\n| round | tuned | slot | variants tried | kept | its CV score |\n|---|---|---|---|---|---|\n")
		for _, t := range ans.Tuning {
			tried := fmt.Sprint(t.Tried)
			if t.Skipped != "" && t.Tried == 0 {
				tried = "none: " + t.Skipped
			} else if t.Skipped != "" {
				tried = fmt.Sprintf("%d, then stopped: %s", t.Tried, t.Skipped)
			}
			round := "-" // runs recorded before the rounds
			if t.Round > 0 {
				round = fmt.Sprint(t.Round)
			}
			fmt.Fprintf(b, "| %s | `%s` | %s | %s | `%s` | %s |\n", round, t.From, t.Slot, tried, t.Kept, num(t.Score))
		}
		b.WriteString("\n")
		for _, st := range ans.TuneStops {
			fmt.Fprintf(b, "- tuning of `%s` stopped at `%s`: %s\n", st.From, st.Kept, st.Why)
		}
		if len(ans.TuneStops) > 0 {
			b.WriteString("\n")
		}
	}
	weight := map[string]AnswerMember{}
	for _, m := range ans.Members {
		weight[m.SampleID] = m
	}
	b.WriteString("| program | CV score (out-of-fold) | fold scores | weight | test score alone | note |\n|---|---|---|---|---|---|\n")
	for _, c := range ans.Candidates {
		w, test := "-", "-"
		if m, ok := weight[c.SampleID]; ok {
			w = fmt.Sprintf("%.2f", m.Weight)
			if m.Test != nil {
				test = num(m.Test.Report.Score)
			}
		}
		folds := make([]string, len(c.FoldScores))
		for i, f := range c.FoldScores {
			folds[i] = fmt.Sprintf("%.4f", f)
		}
		note := c.Reason
		if c.Tuned != "" {
			note = strings.TrimSuffix(fmt.Sprintf("`%s` with %s; %s", c.TunedFrom, c.Tuned, c.Reason), "; ")
		} else if g, ok := guarded[c.SampleID]; ok {
			note = strings.TrimSuffix(fmt.Sprintf("`%s` guarded: %s; %s", g.From, g.Change, c.Reason), "; ")
		}
		fmt.Fprintf(b, "| `%s` | %s | %s | %s | %s | %s |\n", c.SampleID, num(c.Score), strings.Join(folds, " "), w, test, note)
	}
	test := "-"
	if ans.Test != nil {
		test = num(ans.Test.Report.Score)
		if ans.Test.Reason != "" && ans.Test.Report.Score == nil {
			test = "invalid: " + ans.Test.Reason
		}
	}
	note := fmt.Sprintf("%d members", len(ans.Members))
	if ans.BlendLog1p {
		note += "; blended as the weighted mean of log(1+x), the space RMSLE grades"
	}
	if ans.Calibration != nil {
		note += fmt.Sprintf("; probabilities calibrated on the out-of-fold predictions (power %.3g, smoothing %.3g; CV %s before)",
			ans.Calibration.Power, ans.Calibration.Smoothing, num(ans.BlendCVScore))
	}
	fmt.Fprintf(b, "| **ensemble** | %s | | 1 | %s | %s |\n\n", num(ans.CVScore), test, note)
	for _, f := range ans.RefitFailed {
		fmt.Fprintf(b, "`%s` was chosen first but its refit on the full public train wrote no submission (%s); the ensemble was chosen again without it.\n\n", f.SampleID, f.Reason)
	}
	writeUntuned(b, ans.Untuned, num)
}

// writeUntuned says what the same choice made without the tuned variants: the tuning's effect
// within the run.
func writeUntuned(b *strings.Builder, u *UntunedAnswer, num func(*float64) string) {
	if u == nil {
		return
	}
	b.WriteString("Without the tuning (the same selection, refits and blend over the candidates before it, to measure what the tuning added): ")
	if u.Note != "" {
		fmt.Fprintf(b, "no test score, %s.\n\n", u.Note)
		return
	}
	members := make([]string, len(u.Members))
	for i, m := range u.Members {
		members[i] = fmt.Sprintf("`%s` %.2f", m.SampleID, m.Weight)
	}
	test := "-"
	if u.Test != nil {
		test = num(u.Test.Report.Score)
		if u.Test.Reason != "" && u.Test.Report.Score == nil {
			test = "invalid: " + u.Test.Reason
		}
	}
	same := ""
	if u.SameAsAnswer {
		same = " (the answer's own choice)"
	}
	fmt.Fprintf(b, "CV %s, test %s; members %s%s; its own refits used %.0f sandbox-seconds.\n\n", num(u.CVScore), test, strings.Join(members, ", "), same, u.SandboxSeconds)
}
