#!/usr/bin/env bash
# The GPU checks, in at most 8 minutes on one CUDA GPU; each writes under benchmarks/results/gpu/.
#
#   1. every test marked `gpu` (the device's readings against the CPU's: signatures, perplexity, head distances, a
#      suite run trained and watched there) and the score capture's tests, which add CUDA where it exists;
#   2. the capture benchmark on the GPU at L = 512 to 8,192: ours and the scores alone against sdpa, and sdpa with
#      torch's flash-attention kernel forced (smollm2-135m: needs `make models`);
#   3. one pruning evaluation (perplexity of smollm2-135m's held-out windows, whole and with 20 % of heads cut);
#   4. the monitor's cost on the collapse suite's models, trained there.
#
# Usage: benchmarks/gpu_check.sh            (PYTHON=... picks the interpreter; .venv/bin/python by default)
# Run it only where a GPU is lent, with a time limit that leaves room to run it again.
set -uo pipefail
cd "$(dirname "$0")/.."
python=${PYTHON:-.venv/bin/python}
out=benchmarks/results/gpu
mkdir -p "$out"
started=$(date +%s)
step() {  # step NAME SECONDS COMMAND...: run one check under its own limit, keep its output, go on if it fails
  local name=$1 limit=$2; shift 2
  echo "== $name (limit ${limit} s)"
  timeout "$limit" "$@" 2>&1 | tee "$out/$name.txt"
  echo "$name: exit ${PIPESTATUS[0]}" | tee -a "$out/exits.txt"
}
: > "$out/exits.txt"
{ nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; "$python" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"; } > "$out/device.txt" 2>&1
"$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 'this torch sees no CUDA device; nothing to check')" || exit 1
step tests 150 "$python" -m pytest -q -p no:cacheprovider tests/engine/test_gpu.py "tests/engine/test_score_capture.py::test_device_statistics_agree_with_the_compiled_kernel[cuda]"
step capture 200 "$python" benchmarks/capture_overhead.py --device cuda --lengths 512 1024 2048 4096 8192 --tokens 16384 \
  --methods sdpa sdpa-flash scores ours --out "$out/capture_overhead.json"
step perplexity 60 "$python" benchmarks/perplexity.py --models smollm2-135m --windows 16 --repeats 1 --device-map cuda
step monitor 60 "$python" benchmarks/monitor_cost.py --device cuda --steps 200 --every 100 --repeats 3 --out "$out/monitor_cost.json"
echo "gpu_check: $(( $(date +%s) - started )) s" | tee -a "$out/exits.txt"
