#!/bin/bash
# Two of the collapse suite's runs (gpt2-1x1, seeds 0 and 1) trained one after the other against both at once, each
# in its own process with the suite's fixed thread count, each arm in a fresh cache of its own; prints each round's
# wall times and whether the two arms wrote the same weights. The ratio's interval: benchmarks/ratios.py's log_interval.
# Results: results/parallel_training.txt. Usage: benchmarks/parallel_training.sh [ROUNDS] (default 3)
PY=${PY:-.venv/bin/python}
ROOT=$(mktemp -d)
for round in $(seq 1 "${1:-3}"); do
  rm -rf "$ROOT"/*; mkdir -p "$ROOT/apart" "$ROOT/together"
  s=$(date +%s.%N)
  $PY benchmarks/train_one.py gpt2-1x1-seed0 "$ROOT/apart" 2>/dev/null | tail -1
  $PY benchmarks/train_one.py gpt2-1x1-seed1 "$ROOT/apart" 2>/dev/null | tail -1
  apart=$(echo "$(date +%s.%N) - $s" | bc)
  s=$(date +%s.%N)
  $PY benchmarks/train_one.py gpt2-1x1-seed0 "$ROOT/together" 2>/dev/null | tail -1 &
  $PY benchmarks/train_one.py gpt2-1x1-seed1 "$ROOT/together" 2>/dev/null | tail -1
  wait
  together=$(echo "$(date +%s.%N) - $s" | bc)
  digest() { (cd "$1" && find . -name '*.safetensors' | sort | xargs sha256sum); }
  same=$(diff <(digest "$ROOT/apart") <(digest "$ROOT/together") > /dev/null && echo same || echo DIFFER)
  echo "round $round: one after the other $apart s, together $together s, weights $same"
done
rm -rf "$ROOT"
