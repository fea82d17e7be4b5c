"""Head-pair kernels: protocol clark-2 (the package) against clark-1 (kept here as the baseline), and one window sample.

Table 9's cost is its head-pair sums. clark-1 summed JS with the C library's scalar ``log`` in a compiled loop (one
task per row of the pair triangle, so the first thread got most of it) and formed the other metrics' Gram matrices
with ``einsum``; clark-2 uses fdlibm's logarithm in loops the compiler vectorizes, folds the triangle so every task
holds about as many pairs, and takes the Gram matrices from BLAS. Both run here, on rows shaped like one batch of a
model (4 windows × L positions, every head, L keys), each ``--repeats`` times in alternating order; the ratio of each
repeat is old / new, and the summary gives the median and range over repeats. ``--sample MODEL`` also times one whole
window sample (32 windows, cache bypassed) with the package's kernels, which is what the clustering chapter's budget
counts per sample and model. ``--grouped`` times the package's JS kernel, which runs eight pairs' sums side by side,
against the same kernel one pair at a time (clark-2 as it first was, kept here), and checks the two give the same bits.

Usage: python benchmarks/pair_kernels.py [--heads 144] [--length 128] [--repeats 5] [--sample minilm-l6 mpnet-base] [--grouped]
"""

import argparse
import math
import statistics
import time

import numpy as np
from numba import njit, prange

from attncoda.math.pairdist import _js_sums, _mean_xlogx, _xlogx_sum, pair_distance_sums

from ratios import log_interval  # benchmarks/ratios.py, beside this script


@njit(parallel=True, cache=True)
def _js_sums_clark1(x, plogp, out):  # the clark-1 kernel, as it was
    positions, heads, parts = x.shape
    for i in prange(heads):
        for j in range(i + 1, heads):
            total = 0.0
            for p in range(positions):
                s = 0.0
                for k in range(parts):
                    m = 0.5 * (x[p, i, k] + x[p, j, k])
                    if m > 0.0:
                        s += m * math.log(m)
                total += 0.5 * (plogp[p, i] + plogp[p, j]) - s
            out[i, j] = total
            out[j, i] = total


@njit(parallel=True, cache=True)
def _js_sums_one_pair_at_a_time(x, plogp, out):  # clark-2's JS kernel before its sums were grouped, as it was
    positions, heads, parts = x.shape
    for task in prange((heads + 1) // 2):
        scaled, reduced, exponent, terms = np.empty(parts), np.empty(parts), np.empty(parts), np.empty(parts)
        first, last = np.int64(task), np.int64(heads - 1 - task)
        for which in range(2):
            i = first if which == 0 else last
            if which == 1 and last == first:
                break
            for j in range(i + 1, heads):
                total = 0.0
                for p in range(positions):
                    total += 0.5 * (plogp[p, i] + plogp[p, j]) - _mean_xlogx(x[p, i], x[p, j], scaled, reduced, exponent, terms)
                out[i, j] = total
                out[j, i] = total


def grouped(heads: int, length: int, repeats: int) -> None:
    """The package's JS kernel (eight pairs' sums side by side) against one pair at a time, alternating."""
    x = rows_like_attention(heads, length)
    plogp = _xlogx_sum(x)
    outs = {"one": np.zeros((heads, heads)), "grouped": np.zeros((heads, heads))}
    kernel = {"one": _js_sums_one_pair_at_a_time, "grouped": _js_sums}
    for name in outs:
        kernel[name](x[:2, :9], plogp[:2, :9], np.zeros((9, 9)))  # compile before timing
    ratios, times = [], []
    for r in range(repeats):
        order = ("one", "grouped") if r % 2 == 0 else ("grouped", "one")
        seconds = {name: timed(lambda name=name: kernel[name](x, plogp, outs[name])) for name in order}
        ratios.append(seconds["grouped"] / seconds["one"])
        times.append(seconds)
    ratio, low, high = log_interval(ratios)
    print(f"  js, one pair at a time {statistics.median(t['one'] for t in times):6.2f} s   eight side by side "
          f"{statistics.median(t['grouped'] for t in times):6.2f} s   grouped/one {ratio:.2f}x "
          f"[{low:.2f}, {high:.2f}] (geometric mean, 95 % t interval of the log, "
          f"{repeats} repeats)   same bits: {np.array_equal(outs['one'], outs['grouped'])}")


def clark1(rows: np.ndarray, metric: str) -> np.ndarray:
    x = np.ascontiguousarray(rows, dtype=np.float64)
    heads = x.shape[1]
    out = np.zeros((heads, heads))
    if metric == "js":
        safe = np.where(x > 0, x, 1.0)
        _js_sums_clark1(x, np.sum(np.where(x > 0, x * np.log(safe), 0.0), axis=-1), out)
        return np.maximum(out, 0.0)
    for start in range(0, x.shape[0], 64):
        block = x[start : start + 64]
        gram = np.einsum("pik,pjk->pij", block, block)
        sq = np.einsum("pii->pi", gram)
        if metric == "cosine":
            norms = np.sqrt(sq)
            d = 1.0 - gram / (norms[:, :, None] * norms[:, None, :])
        else:
            d = np.sqrt(np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * gram, 0.0))
        idx = np.arange(heads)
        d[:, idx, idx] = 0.0
        out += d.sum(axis=0)
    return out


def rows_like_attention(heads: int, length: int, windows: int = 4, seed: int = 0) -> np.ndarray:
    """Softmax rows with a heavy first key, as a trained encoder's: ``(windows · length, heads, length)``."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(scale=3.0, size=(windows * length, heads, length))
    logits[..., 0] += 6.0
    rows = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return rows / rows.sum(axis=-1, keepdims=True)


def timed(f) -> float:
    t0 = time.perf_counter()
    f()
    return time.perf_counter() - t0


def kernels(heads: int, length: int, repeats: int) -> None:
    rows = rows_like_attention(heads, length)
    for metric in ("js", "cosine", "euclidean"):
        clark1(rows[:2, :3], metric), pair_distance_sums(rows[:2, :3], metric)  # compile before timing
        old, new = clark1(rows, metric), pair_distance_sums(rows, metric)
        worst = float(np.max(np.abs(old - new) / np.maximum(np.abs(old), 1e-300)))
        ratios, times = [], []
        for r in range(repeats):
            pair = [("old", lambda: clark1(rows, metric)), ("new", lambda: pair_distance_sums(rows, metric))]
            seconds = dict((name, timed(f)) for name, f in (pair if r % 2 == 0 else pair[::-1]))
            ratios.append(seconds["old"] / seconds["new"])
            times.append(seconds)
        print(f"  {metric:9s} clark-1 {statistics.median(t['old'] for t in times):6.2f} s   clark-2 {statistics.median(t['new'] for t in times):6.2f} s   "
              f"old/new {statistics.median(ratios):.2f}x [{min(ratios):.2f}, {max(ratios):.2f}] over {repeats} repeats   largest relative difference {worst:.1e}")


def sample(model: str, length: int) -> None:
    from attncoda.engine.head_distances import compute
    from attncoda.engine.models import load_model

    loaded = load_model(model)
    compute(loaded, 1, length, 0, batch_size=1)  # compile before timing
    seconds = timed(lambda: compute(loaded, 32, length, 0, batch_size=4))
    print(f"  one window sample of {model} ({loaded.info.layers * loaded.info.heads} heads, 32 windows of {length}): {seconds:.1f} s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--heads", type=int, default=144, help="heads of the model whose batch shape is timed (mpnet-base: 144)")
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--sample", nargs="*", default=[], help="models whose whole window sample is timed")
    parser.add_argument("--grouped", action="store_true", help="only the grouped JS kernel against one pair at a time")
    args = parser.parse_args()
    print(f"pair sums of one batch: {args.heads} heads, 4 windows of {args.length} positions, {args.length} keys")
    if args.grouped:
        grouped(args.heads, args.length, args.repeats)
        return
    kernels(args.heads, args.length, args.repeats)
    for model in args.sample:
        sample(model, args.length)


if __name__ == "__main__":
    main()
