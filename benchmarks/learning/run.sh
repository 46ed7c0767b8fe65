#!/usr/bin/env bash
# Learning on real data (issue 4): RL against the static initial policy and against uniformly
# random programs from the same action space, with the same number of executed programs, on
# leaf-classification's validation split, over seeds. Results: benchmarks/RESULTS.md.
#   bash benchmarks/learning/run.sh [OUT_DIR] [ITERATIONS] [SEEDS...]
# RUN_ARGS adds flags to every arm, e.g. RUN_ARGS="--reward-folds 3"; ARMS picks the arms
# (default "rl static random"; rl_bounded is rl with --reward bounded, rl_rank is rl with
# --reward-shaping rank, rl_risk is rl_rank with --advantage risk-seeking).
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${1:-runs/learning}
iterations=${2:-12}
shift 2 2>/dev/null || true
seeds=${*:-1 2 3}
go tool task build data >/dev/null
mkdir -p "$out"
read -r -a run_args <<<"${RUN_ARGS:-}"
common=(--task leaf-classification --iterations "$iterations" --batch 8 --oversample 2 --slots 2 --eval-samples 16 "${run_args[@]}")
for seed in $seeds; do
  for arm in ${ARMS:-rl static random}; do
    dir="$out/$arm-seed$seed"
    [ -f "$dir/report.md" ] && continue
    rm -rf "$dir"
    case $arm in
      rl) extra=() ;;
      rl_bounded) extra=(--reward bounded) ;;
      rl_rank) extra=(--reward-shaping rank) ;;
      rl_risk) extra=(--reward-shaping rank --advantage risk-seeking) ;;
      static) extra=(--learning-rate 0) ;;
      random) extra=(--init uniform --learning-rate 0) ;;
      *) echo "unknown arm $arm: use rl, rl_bounded, rl_rank, rl_risk, static or random" >&2; exit 2 ;;
    esac
    echo "== $arm seed $seed"
    bin/starter run "${common[@]}" --seed "$seed" --out "$dir" "${extra[@]}" | grep -E "iteration [0-9]+/|^graded|^no evaluated"
  done
done
go run ./benchmarks/learning/summarize "$out"
