#!/usr/bin/env bash
# Runs the warm-start probe of this page for every row of plan.csv that results.csv does not
# hold yet, in plan order, one at a time: the run's first 16 programs (m*B at the defaults),
# sampled at once by the initial policy and each run to its end, then counted by
# lab/tools/warmstart. The probe is stopped (SIGTERM) once the iteration has ended (its line in
# metrics.jsonl: all 16 outcomes are in, a retried one's included): what the run would do next
# (best-of-K, its grade) measures nothing here and takes up to half an hour on the slow tasks.
# TASKS (a grep -E pattern) limits it to the tasks it matches.
# Usage (from the repository root, after `go tool task setup`):
#   bash lab/runs/warmstart/run.sh [OUT_DIR]      # OUT_DIR default: runs/warmstart
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=lab/runs/warmstart
out=${1:-runs/warmstart}
data=${DATA_DIR:-$HOME/.cache/mle-bench/data}
mkdir -p "$out"
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain -- '*.go' '*.py' '*.tmpl' '*.yaml')" ] || commit="$commit+dirty"
go build -o "$out/starter" ./starter
go build -o "$out/warmstart" ./lab/tools/warmstart
results=$here/results.csv
[ -f "$results" ] || echo "task,seed,commit,wall_s,drawn,valid,failed,unfinished,clashes,first8_valid,failures" > "$results"

tail -n +2 $here/plan.csv | while IFS=, read -r task seed; do
  if grep -q "^$task,$seed," "$results"; then continue; fi
  if [ -n "${TASKS:-}" ] && ! grep -qE "$TASKS" <<< "$task"; then continue; fi
  run="$out/$task-$seed"
  rm -rf "$run"
  "$out/starter" tasks prepare --if-needed --task "$task" --raw "../shared/data/kaggle/$task" --data-dir "$data"
  echo "$(date -u +%FT%TZ) start $task seed $seed (commit $commit)"
  start=$(date +%s)
  "$out/starter" run --task "$task" --seed "$seed" --data-dir "$data" --out "$run" \
    --batch 16 --oversample 1 --sample-at-iteration-start --iterations 1 --time-budget 0 \
    --final-candidates 0 --final-tune 0 --eval-samples 1 < /dev/null > "$out/$task-$seed.log" 2>&1 &
  probe=$!
  trap 'kill $probe 2>/dev/null' EXIT
  # A result file is not enough: an attempt the heartbeat timeout ended writes one, and its
  # retry replaces it.
  ended() { [ -s "$run/metrics.jsonl" ]; }
  while kill -0 $probe 2>/dev/null && ! ended; do sleep 5; done
  wall=$(( $(date +%s) - start ))
  if ended; then
    kill -TERM $probe 2>/dev/null || true
    wait $probe || true
  elif ! wait $probe; then
    echo "the probe of $task seed $seed failed: see $out/$task-$seed.log" >&2; exit 1
  fi
  echo "$task,$seed,$commit,$wall,$("$out/warmstart" -csv "$run")" >> "$results"
  echo "$(date -u +%FT%TZ) done $task seed $seed: $(tail -1 "$results")"
done
