"""Perplexity evaluations per minute in bfloat16 and float32, in one run, for each causal default model (needs `make models`).

For each model: the held-out windows scored uncached with nothing ablated and with a random 20 % of heads ablated,
alternating the two precisions `--repeats` times (so both see the same machine load); prints seconds per
evaluation (median), evaluations per minute, the float32 / bf16 time ratio, and the largest relative perplexity
difference between the two precisions. The bf16 evaluations share one precision block, as the sweep's do, on the
model's own device (``--device-map cuda`` loads it on a GPU).

Usage: python benchmarks/perplexity.py [--windows 32] [--length 128] [--repeats 2] [--models smollm2-135m ...] [--device-map cuda]
"""

import argparse
import time

import numpy as np

from attncoda.engine.models import load_model
from attncoda.engine.perplexity import heldout_windows, perplexity, precision
from attncoda.engine.registry import REGISTRY
from attncoda.studies.pruning import random_selection, target_count


def timed(loaded, ids, pairs, dtype):
    t0 = time.perf_counter()
    result = perplexity(loaded, ids, pairs, use_cache=False, dtype=dtype)
    return time.perf_counter() - t0, result["perplexity"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--models", nargs="*", default=[n for n, m in REGISTRY.items() if m.causal])
    parser.add_argument("--device-map", help="load the models with this device map (e.g. cuda); default the CPU")
    args = parser.parse_args()
    from attncoda.base import run_setting

    run_setting.use(run_setting.RunSetting(device_map=args.device_map))
    print(f"{args.windows} windows x {args.length} tokens; median of {args.repeats} uncached evaluations per cell")
    print(f"{'model':<20} {'set':<9} {'bf16 s':>7} {'fp32 s':>7} {'bf16/min':>8} {'fp32/min':>8} {'fp32/bf16':>9} {'rel. diff':>9}")
    for name in args.models:
        loaded = load_model(name)
        ids = heldout_windows(loaded.processor, args.windows, args.length)
        layers, heads = loaded.info.layers, loaded.info.heads
        chosen = random_selection(np.random.default_rng(0), layers, heads, target_count(0.2, layers * heads))
        for label, pairs in (("plain", []), ("20 % cut", [(i // heads, i % heads) for i in chosen])):
            times = {"bfloat16": [], "float32": []}
            values = {}
            with precision("bfloat16", loaded.input_device):
                perplexity(loaded, ids[:1], use_cache=False)  # warm up (and cast the weights once)
                for _ in range(args.repeats):
                    for dtype in ("bfloat16", "float32"):
                        seconds, values[dtype] = timed(loaded, ids, pairs, dtype)
                        times[dtype].append(seconds)
            bf, fp = np.median(times["bfloat16"]), np.median(times["float32"])
            rel = abs(values["bfloat16"] / values["float32"] - 1)
            print(f"{name:<20} {label:<9} {bf:7.1f} {fp:7.1f} {60 / bf:8.1f} {60 / fp:8.1f} {fp / bf:9.2f} {rel:9.2e}", flush=True)


if __name__ == "__main__":
    main()
