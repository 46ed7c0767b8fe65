// Package llm is the language-model side of the platform: a small client for OpenAI-compatible
// chat-completions servers (vLLM, llama.cpp server, Ollama), the agent's two prompt kinds
// (PromptFor: from scratch, or improve a previous solution given its plan, code and terminal
// output) and the parser of its replies (ParseSolution: a plan, then one fenced Python block).
// The same client serves the optional LLM instrumenter (package instrument), which must be a
// separate, static model, never the policy being trained.
//
// # Trainer contract for an LLM policy
//
// Sampling (SamplePrograms on the "gpu" queue, LLM backend) builds each prompt with PromptFor,
// calls Complete with the paper's settings (Temperature 0.7, TopP 1, MaxTokens 1024,
// LogProbs true) against the model reference of the current checkpoint, and stores under
// samples/<id>/ in the run's artifact store: prompt.json (the messages as sent),
// completion.txt (the raw reply), plan.md and program.py (ParseSolution's split; a reply
// without code is stored as an empty program, which fails and earns the failure reward), and
// sample.json (the model reference that sampled it, the prompt kind and previous sample id,
// Choice.Tokens: each sampled token with its sampling-time log-prob, and the finish reason).
// Execution adds result.json with the reward and duration_s.
//
// Running it: `starter run --policy llm --policy-url URL --policy-model NAME --trainer-url URL`
// (or `starter worker --queues gpu` with the same server flags); with --learning-rate 0 no
// trainer is needed and the run samples from a fixed model, the static-LLM baseline.
//
// UpdatePolicy for the LLM backend POSTs an UpdateRequest (trainer.go) as JSON to
// {trainer-url}/update: the run, the model reference that sampled the iteration (Model), the
// iteration, the completed SampleIDs, the Stale ones (cancelled by the staleness cap; used when
// their result.json exists), the PPO settings (the platform's ppo.Config) and the seed. Only
// ids travel; the trainer reads prompts, completions, log-probs, rewards and durations from the
// artifact store. It answers {"model": NEW_REFERENCE, "stats": {"pg_loss": ..., ...}} (stats as
// model.Stats encodes them); a 4xx answer stops the run with its message, anything else is
// retried by Temporal, so the service must make a retried update idempotent. The service must:
//
//  1. Rebuild each sample's prompt with the served model's chat template and score the stored
//     completion tokens; the stored log-probs are the old policy's (stragglers sampled by older
//     checkpoints included: the importance ratio corrects for them). Inference and training
//     kernels differ numerically, so a trainer may instead recompute old log-probs under the
//     sampling checkpoint; either way temperature must be applied the same way on both sides.
//  2. Run PPO as the paper: the reward on the completion's last token, GAE with gamma = lambda
//     = 1, clip 0.2, KL to the initial model 0.001, entropy 0.001, learning rate 1e-5, gradient
//     clip 1, value clip 0.5; and, unless PPO.DurationWeight is off, multiply each sample's
//     policy-gradient term by duration_s / (mean duration_s of the batch). When
//     PPO.RewardShaping is "rank", replace the batch's rewards by their centred ranks first
//     (ppo.Ranks: -0.5 for the worst to 0.5 for the best, ties sharing their mean rank). When
//     PPO.Advantage is "risk-seeking", use no critic: every token of a sample takes the
//     advantage ppo.RiskSeeking gives it (its reward minus the batch's 1 - PPO.RiskEpsilon
//     quantile if above it, else 0), not whitened.
//  3. Save the new weights (full or a LoRA adapter) where the sampling server can load them,
//     under a key derived from run and iteration so that a retried update is idempotent, and
//     answer with the new model reference (the Client.Model name the next sampling uses, e.g.
//     a vLLM LoRA adapter name). The platform stores it as the iteration's checkpoint and
//     writes metrics/iter-NNNN.json with the returned statistics.
package llm
