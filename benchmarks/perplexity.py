"""Perplexity evaluations per minute for each causal default model (needs `make models`), and what ablation hooks cost.

For each model: one uncached evaluation of the held-out windows without ablation and one with a random 20 %
of heads ablated; prints seconds per evaluation, evaluations per minute, and the ablated / plain time ratio
(measured in this run, on the same windows).

Usage: python benchmarks/perplexity.py [--windows 32] [--length 128] [--models smollm2-135m ...]
"""

import argparse
import time

import numpy as np

from attncoda.engine.models import load_model
from attncoda.engine.perplexity import heldout_windows, perplexity
from attncoda.engine.registry import REGISTRY
from attncoda.studies.pruning import random_selection, target_count


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=32)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--models", nargs="*", default=[n for n, m in REGISTRY.items() if m.causal])
    args = parser.parse_args()
    for name in args.models:
        loaded = load_model(name)
        ids = heldout_windows(loaded.processor, args.windows, args.length)
        layers, heads = loaded.info.layers, loaded.info.heads
        chosen = random_selection(np.random.default_rng(0), layers, heads, target_count(0.2, layers * heads))
        pairs = [(i // heads, i % heads) for i in chosen]
        perplexity(loaded, ids[:1], use_cache=False)  # warm up
        t0 = time.perf_counter()
        perplexity(loaded, ids, use_cache=False)
        plain = time.perf_counter() - t0
        t0 = time.perf_counter()
        perplexity(loaded, ids, pairs, use_cache=False)
        ablated = time.perf_counter() - t0
        print(f"{name:<20} {plain:6.1f} s per evaluation ({60 / plain:4.1f} per minute); with 20 % of heads ablated {ablated:6.1f} s "
              f"(ratio {ablated / plain:.2f}) — {args.windows} windows x {args.length} tokens")


if __name__ == "__main__":
    main()
