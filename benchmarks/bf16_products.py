"""bfloat16 on a CPU without bfloat16 instructions: what the pruning chapter's evaluations cost, and a faster path.

The pruning chapter scores every prune set with the forward pass under bfloat16 autocast, and the collapse suite
trains its bf16 runs the same way. A CPU with ``avx512_bf16`` or AMX runs those matrix products natively. Without
them (an AVX2-only CPU, as on most laptops) torch 2.13 falls back to a generic kernel.

The package's path on such a CPU (``attncoda.engine.bf16_products``): a product of two bf16 numbers is exact in float32,
and native kernels sum those products in float32. So every bf16 ``mm``, ``addmm``, ``bmm`` and ``baddbmm`` runs as the
float32 op on the widened operands, rounded once to bf16 (``Float32Products``). Only the order of the float32 sums
differs from a native kernel, as two native kernels (AMX, avx512_bf16) differ from each other. This script times both
paths, forcing each with ``bf16_products(path=...)``.

Three parts, each optional:

* ``--time``: seconds per evaluation of the chapter's size (7 held-out windows of 128 tokens, one prune set), in
  float32, in native bf16 and in bf16 with float32 products. ``--repeats`` rounds, each running the three paths in
  a rotated order; ratios as geometric means with 95 % t intervals of their logs (``ratios.log_interval``).
* ``--training``: seconds per training step of the collapse suite's first run (GPT-2 block, 128 wide, batch 32 of
  128 tokens), the same three paths, forward and backward.
* ``--agreement``: every prune set of one model in the committed record, scored again here with float32 products
  (the very sets: no signature is recomputed). Its log-perplexity differences from the record's (native bf16 on
  another CPU) are set beside the spread between two native CPUs (the records of ``--spread``, AMX against
  avx512_bf16). The pruning readings (every metric cell and contrast, one Holm family with the record's other models)
  are then recomputed and compared with the record's.

Writes ``benchmarks/results/bf16_products.json`` (the parts run; earlier parts are kept).

Usage: python benchmarks/bf16_products.py [--time] [--training] [--agreement] [--model smollm2-135m] [--repeats 5]
"""

import argparse
import contextlib
import json
import math
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import torch

from attncoda.engine.bf16_products import bf16_products

HERE = Path(__file__).parent
ROOT = HERE.parent
OUT = HERE / "results" / "bf16_products.json"
sys.path.insert(0, str(HERE))
from ratios import log_interval  # noqa: E402

PATHS = ("float32", "bf16 native", "bf16 float32 products")
SPREAD = ("039bf8d", "c15ac08")
"""The last record built on an Intel Xeon with AMX and the first built on an AMD EPYC with avx512_bf16 (as on the
reproducibility page): the spread between two native bf16 CPUs."""


def cpu() -> dict:
    flags = set(open("/proc/cpuinfo").read().split()) if Path("/proc/cpuinfo").exists() else set()
    return {"capability": torch.backends.cpu.get_cpu_capability(), "avx512_bf16": torch.cpu._is_avx512_bf16_supported(),
            "amx_tile": torch.cpu._is_amx_tile_supported(), "avx512f": "avx512f" in flags, "threads": torch.get_num_threads()}


@contextlib.contextmanager
def path_block(path: str):
    """The forward passes inside run on ``path`` (one of :data:`PATHS`), as ``perplexity.precision`` runs them."""
    from attncoda.engine.perplexity import precision

    with bf16_products(path="float32" if path.endswith("products") else "native"), precision("float32" if path == "float32" else "bfloat16"):
        yield


def ratio_rows(seconds: dict) -> dict:
    rows = {}
    for a, b in (("bf16 native", "float32"), ("bf16 float32 products", "float32"), ("bf16 native", "bf16 float32 products")):
        mean, lo, hi = log_interval([x / y for x, y in zip(seconds[a], seconds[b])])
        rows[f"{a} / {b}"] = {"ratio": mean, "interval": [lo, hi]}
    return rows


def time_evaluations(loaded, repeats: int) -> dict:
    from attncoda.base.protocol import WINDOW_LENGTH
    from attncoda.engine.perplexity import heldout_windows, perplexity
    from attncoda.studies.pruning_sweep import PRUNE_WINDOWS

    ids = heldout_windows(loaded.processor, PRUNE_WINDOWS, WINDOW_LENGTH)
    heads = [(layer, 0) for layer in range(loaded.info.layers)]
    seconds = {p: [] for p in PATHS}
    perplexities = {}
    for path in PATHS:  # a warm-up each: weight casts, first-call allocations
        with path_block(path):
            perplexity(loaded, ids, heads, use_cache=False, dtype="float32" if path == "float32" else "bfloat16")
    for r in range(repeats):
        for path in PATHS[r % 3:] + PATHS[: r % 3]:
            with path_block(path):
                started = time.perf_counter()
                result = perplexity(loaded, ids, heads, use_cache=False, dtype="float32" if path == "float32" else "bfloat16")
                seconds[path].append(time.perf_counter() - started)
                perplexities[path] = result["perplexity"]
        print(f"  round {r + 1}/{repeats}: " + ", ".join(f"{p} {seconds[p][-1]:.2f} s" for p in PATHS), flush=True)
    return {"model": loaded.info.name, "windows": int(ids.shape[0]), "length": int(ids.shape[1]), "repeats": repeats, "seconds": seconds,
            "perplexity": perplexities, "ratios": ratio_rows(seconds)}


def time_training(repeats: int, steps: int = 5) -> dict:
    """Seconds per training step on each path, timed by ``training_precision.step_seconds`` (forward under autocast,
    backward, optimizer step); the float32-products path runs those steps inside :class:`Float32Products`."""
    from transformers import GPT2Config, GPT2LMHeadModel

    from attncoda.engine.training import TRAINING_THREADS
    from training_precision import step_seconds as precision_step_seconds

    torch.set_num_threads(TRAINING_THREADS)
    torch.manual_seed(0)
    model = GPT2LMHeadModel(GPT2Config(vocab_size=89, n_embd=128, n_layer=1, n_head=1, n_positions=128, bos_token_id=0, eos_token_id=0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    ids = torch.randint(0, 89, (32, 128), generator=torch.Generator().manual_seed(0))

    def step_seconds(path: str) -> float:
        with bf16_products(path="float32" if path.endswith("products") else "native"):
            return precision_step_seconds(model, optimizer, ids, "float32" if path == "float32" else "bf16", steps)

    for path in PATHS:
        step_seconds(path)
    seconds = {p: [] for p in PATHS}
    for r in range(repeats):
        for path in PATHS[r % 3:] + PATHS[: r % 3]:
            seconds[path].append(step_seconds(path))
        print(f"  round {r + 1}/{repeats}: " + ", ".join(f"{p} {seconds[p][-1] * 1000:.0f} ms/step" for p in PATHS), flush=True)
    return {"shape": {"arch": "gpt2", "hidden": 128, "layers": 1, "heads": 1, "batch": 32, "length": 128}, "steps_per_repeat": steps,
            "repeats": repeats, "seconds_per_step": seconds, "ratios": ratio_rows(seconds)}


def record_result(model: str, commit: str | None = None):
    from attncoda.studies.pruning_sweep import PruningResult

    if commit:
        text = subprocess.run(["git", "-C", str(ROOT), "show", f"{commit}:data/results/pruning/{model}.json"], capture_output=True, text=True, check=True).stdout
    else:
        text = (ROOT / "data" / "results" / "pruning" / f"{model}.json").read_text()
    return PruningResult.from_json(json.loads(text)["results"])


def log_differences(a, b) -> dict:
    """|Δ log perplexity| between the sets two results share (same kind, heads, dtype), and |Δ| of each window's NLL
    relative to its value."""
    theirs = {(s.kind, tuple(s.heads), s.dtype): s for s in b.scored}
    logs, windows = [], []
    for s in a.scored:
        t = theirs.get((s.kind, tuple(s.heads), s.dtype))
        if t is not None and len(t.window_nll) == len(s.window_nll):
            logs.append(abs(math.log(s.perplexity / t.perplexity)))
            windows += list(np.abs(np.array(s.window_nll) / np.array(t.window_nll) - 1))
    logs, windows = np.array(logs), np.array(windows)
    return {"sets": len(logs), "log_perplexity": {"median": float(np.median(logs)), "p95": float(np.quantile(logs, 0.95)), "max": float(logs.max())},
            "window_nll_relative": {"median": float(np.median(windows)), "p95": float(np.quantile(windows, 0.95)), "max": float(windows.max())}}


def readings(results) -> dict:
    from attncoda.studies import pruning_readings

    return {"cells": [c.to_json() for c in pruning_readings.metric_cells(results)],
            "contrasts": [c.to_json() for c in pruning_readings.contrasts(results)]}


def agreement(loaded) -> dict:
    """The record's prune sets of the ``loaded`` model scored again here with float32 products (see the module docstring)."""
    from attncoda.base.progress import Steps
    from attncoda.engine.perplexity import heldout_windows
    from attncoda.face.cross_machine import reading_changes
    from attncoda.studies.pruning_sweep import extend, score

    def unscored(sets):
        return [replace(s, perplexity=None, window_nll=None, window_tokens=None, seconds=None) for s in sets]

    model = loaded.info.name
    record = record_result(model)
    long_ids = heldout_windows(loaded.processor, record.heldout["calibration_windows"], record.heldout["length"])
    ids = long_ids[: record.heldout["windows"]]
    steps = Steps(f"{model}: the record's prune sets, bf16 with float32 products", len(record.scored) + len(record.checks) + len(record.calibration))
    started = time.perf_counter()
    with bf16_products(path="float32"):  # every bf16 block the sweep opens inside keeps it; float32 checks have no bf16 operands
        scored = score(loaded, ids, unscored(record.scored), steps)
        checks = score(loaded, ids, unscored(record.checks), steps, len(scored))
        first = {(s.kind, tuple(s.heads)): s for s in scored}
        further = score(loaded, long_ids[len(ids):], unscored(record.calibration), steps, len(scored) + len(checks))
    seconds = time.perf_counter() - started
    study = [extend(first[s.kind, tuple(s.heads)], rest) for s, rest in zip(record.calibration, further)]
    here = replace(record, scored=scored, checks=checks, calibration=study)
    others = [record_result(m) for m in ("gemma3-270m", "qwen2.5-coder-0.5b", "smollm2-135m") if m != model]
    before, after = readings([record, *others]), readings([here, *others])
    spread = log_differences(record_result(model, SPREAD[1]), record_result(model, SPREAD[0]))
    return {"model": model, "evaluations": len(scored) + len(checks) + len(further), "seconds": seconds,
            "seconds_per_evaluation": float(np.median([s.seconds for s in scored])),
            "against_record": log_differences(here, record), "spread_between_native_cpus": {"commits": list(SPREAD), model: spread},
            "float32_checks_equal_record": [c.perplexity == r.perplexity for c, r in zip(checks, record.checks)],
            "readings": {"cells": reading_changes({"c": before["cells"]}, {"c": after["cells"]}),
                         "contrasts": reading_changes({"c": before["contrasts"]}, {"c": after["contrasts"]})}}


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", action="store_true")
    parser.add_argument("--training", action="store_true")
    parser.add_argument("--agreement", action="store_true")
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    out = json.loads(OUT.read_text()) if OUT.exists() else {}
    out["cpu"] = cpu()
    print(f"CPU: {out['cpu']}", flush=True)
    loaded = None
    if args.time or args.agreement:
        from attncoda.engine.models import load_model, resolve

        loaded = load_model(args.model, resolve(args.model))  # one load for both parts
    if args.time:
        out["evaluation"] = time_evaluations(loaded, args.repeats)
        for name, r in out["evaluation"]["ratios"].items():
            print(f"evaluation {name}: {r['ratio']:.2f}x [{r['interval'][0]:.2f}, {r['interval'][1]:.2f}]", flush=True)
    if args.training:
        out["training"] = time_training(args.repeats)
        for name, r in out["training"]["ratios"].items():
            print(f"training step {name}: {r['ratio']:.2f}x [{r['interval'][0]:.2f}, {r['interval'][1]:.2f}]", flush=True)
    if args.agreement:
        out["agreement"] = agreement(loaded)
        a = out["agreement"]
        print(json.dumps({k: a[k] for k in ("against_record", "spread_between_native_cpus", "readings", "seconds")}, indent=1), flush=True)
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
