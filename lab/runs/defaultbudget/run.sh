#!/usr/bin/env bash
# Runs the main job (`starter run --task T --seed S`, no other flags: the platform's defaults
# and its default time budget) for every row of a page's plan.csv that its results.csv does
# not hold yet, in plan order, one run at a time, and appends each run's row to results.csv as
# it ends, rewriting the tables that quote it (lab/tools/runtable). The page is PAGE (default:
# this folder, lab/runs/defaultbudget).
# Usage (from the repository root, after `go tool task setup`):
#   bash lab/runs/defaultbudget/run.sh [OUT_DIR]      # OUT_DIR default: runs/<page's name>
#   PAGE=lab/runs/freshseeds bash lab/runs/defaultbudget/run.sh
# TASKS (a grep -E pattern) limits it to the tasks it matches, in plan order, e.g. to run the
# other tasks' seeds first while one task waits for a fix: TASKS='cactus|movie'.
# The binary is built once into OUT_DIR so that merges during the runs do not change it; each
# row names the commit it ran. Stop it at any time: a finished row is kept, the run in progress
# is started again from scratch next time (its seed fixed by plan.csv).
set -euo pipefail
cd "$(dirname "$0")/../../.."
here=${PAGE:-lab/runs/defaultbudget}
[ -f "$here/plan.csv" ] || { echo "no plan.csv in $here: PAGE names a lab/runs folder with one" >&2; exit 2; }
out=${1:-runs/$(basename "$here")}
data=${DATA_DIR:-$HOME/.cache/mle-bench/data}
mkdir -p "$out"
commit=$(git rev-parse --short HEAD)
[ -z "$(git status --porcelain -- '*.go' '*.py' '*.tmpl' '*.yaml')" ] || commit="$commit+dirty"
go build -o "$out/starter" ./starter
results=$here/results.csv
[ -f "$results" ] || echo "task,seed,commit,wall_s,load_mean,iterations,valid_first,valid_last,reward_first,reward_last,answer_cv,answer_test,medal,closing_line" > "$results"

tail -n +2 $here/plan.csv | while IFS=, read -r task seed; do
  if grep -q "^$task,$seed," "$results"; then continue; fi
  if [ -n "${TASKS:-}" ] && ! grep -qE "$TASKS" <<< "$task"; then continue; fi
  run="$out/$task-$seed"
  rm -rf "$run"
  "$out/starter" tasks prepare --if-needed --task "$task" --raw "../shared/data/kaggle/$task" --data-dir "$data"
  echo "$(date -u +%FT%TZ) start $task seed $seed (commit $commit)"
  # The machine's load beside the run, once a minute: the budget is wall-clock.
  ( while sleep 60; do cut -d' ' -f1 /proc/loadavg; done ) > "$out/$task-$seed.load" &
  sampler=$!
  # A stopped run.sh must not leave its sampler writing into the next run's file.
  trap 'kill $sampler 2>/dev/null' EXIT
  start=$(date +%s)
  status=0
  "$out/starter" run --task "$task" --seed "$seed" --data-dir "$data" --out "$run" < /dev/null > "$out/$task-$seed.log" 2>&1 || status=$?
  wall=$(( $(date +%s) - start ))
  kill $sampler 2>/dev/null || true
  python3 - "$task" "$seed" "$commit" "$wall" "$status" "$run" "$out/$task-$seed.log" "$out/$task-$seed.load" >> "$results" <<'PY'
import csv, json, re, sys
task, seed, commit, wall, status, run, log, load = sys.argv[1:]
rows = []
try:
    with open(f"{run}/metrics.jsonl") as f:
        rows = [json.loads(l) for l in f if l.strip()]
except OSError:
    pass
loads = [float(x) for x in open(load).read().replace("\0", " ").split()] or [0.0]
text = open(log, errors="replace").read()
line = next((l for l in reversed(text.splitlines()) if l.startswith("final answer")), "")
if not line:
    line = f"no final answer (exit {status}): " + " | ".join(text.strip().splitlines()[-2:])
m = re.search(r"out-of-fold ([-0-9.e]+)", line)
t = re.search(r"test answers: ([-0-9.e]+), (.*)$", line)
f = lambda x: f"{x:.3f}"
w = csv.writer(sys.stdout, lineterminator="\n")
w.writerow([task, seed, commit, wall, f"{sum(loads)/len(loads):.2f}", len(rows),
            f(rows[0]["valid_rate"]) if rows else "", f(rows[-1]["valid_rate"]) if rows else "",
            f(rows[0]["mean_reward"]) if rows else "", f(rows[-1]["mean_reward"]) if rows else "",
            m.group(1) if m else "", t.group(1) if t else "", t.group(2) if t else "invalid or none", line])
PY
  # The Markdown that quotes the page's table (lab/tools/runtable) follows its ledger.
  quoting=$(grep -rl --include='*.md' -e "<!-- runtable ${here%/} -->" README.md benchmarks docs lab || true)
  [ -z "$quoting" ] || go run ./lab/tools/runtable -write $quoting
  echo "$(date -u +%FT%TZ) done $task seed $seed: $(tail -1 "$results")"
done
