"""Clark-style head distances: the streaming pass against the naive all-rows computation (needs `make models`).

Both compute, for every pair of heads, the mean over (window, query) positions of JS, 1 − cos,
Euclidean (keep and drop) and d_A^⊥ between their rows. The naive way keeps every layer's maps of
all windows (output_attentions=True) and evaluates each metric with the package's own broadcasting
functions, one head against all heads at a time; ours streams batches through capture hooks into
heads × heads sums (compiled JS, Gram matrices for the rest). Ratios are taken within this run.

Usage: python benchmarks/head_distances.py [--model minilm-l6] [--n 4] [--length 128]
"""

import argparse
import time

import numpy as np
import torch

import attncoda as ac
from attncoda.engine.corpus import text_windows
from attncoda.engine.head_distances import compute
from attncoda.engine.models import load_model

METRICS = {"js": ac.jensen_shannon, "cosine": lambda a, b: 1.0 - ac.cosine(a, b), "euclidean": ac.euclidean}


def naive(loaded, ids, sink):
    with torch.inference_mode():
        att = torch.stack(loaded.backbone(input_ids=torch.as_tensor(ids), output_attentions=True).attentions, 1)
    n, layers, heads, length, _ = att.shape
    rows = att.double().numpy().transpose(0, 3, 1, 2, 4).reshape(n * length, layers * heads, length)
    rows /= rows.sum(axis=-1, keepdims=True)
    out = {}
    for name, f in METRICS.items():
        for conv in ("keep", "drop"):
            v = ac.view(rows, conv, sink)
            out[name, conv] = np.stack([f(v[:, i : i + 1, :], v).mean(axis=0) for i in range(v.shape[1])])
    out["content", "keep"] = np.stack([ac.content_distance(rows[:, i : i + 1, :], rows, sink).mean(axis=0) for i in range(rows.shape[1])])
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="minilm-l6")
    parser.add_argument("--n", type=int, default=4)
    parser.add_argument("--length", type=int, default=128)
    args = parser.parse_args()
    loaded = load_model(args.model)
    ids, layout = text_windows(loaded.processor, args.n, args.length, 0)
    sink = (0, *range(args.length - len(layout.suffix), args.length))
    compute(loaded, 1, args.length, 0, batch_size=1)  # compile the kernels before timing
    t0 = time.perf_counter()
    ours = compute(loaded, args.n, args.length, 0, batch_size=4)
    t_ours = time.perf_counter() - t0
    t0 = time.perf_counter()
    ref = naive(loaded, ids, sink)
    t_naive = time.perf_counter() - t0
    worst = max(float(np.max(np.abs(ours.distances[m][c] - ref[m, c]) / np.maximum(np.abs(ref[m, c]), 1e-12))) for m, c in ref if m != "content")
    print(f"{args.model}: {loaded.info.layers * loaded.info.heads} heads, N = {args.n}, L = {args.length}")
    print(f"  streaming pass  {t_ours:7.2f} s")
    print(f"  naive all-rows  {t_naive:7.2f} s")
    print(f"  ratio naive / streaming: {t_naive / t_ours:.1f}x   (largest relative difference of the classical distances: {worst:.1e})")


if __name__ == "__main__":
    main()
