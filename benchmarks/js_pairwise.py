"""Jensen–Shannon's pairwise matrix, each pair once (math/verdicts.pairwise), against every pair in both orders as it
was computed before, in one run: 270 rows (smollm2-135m's heads) of 2,048 keys, a sink part and Dirichlet content.

Prints each convention's seconds, their ratio, and whether the two matrices are bit for bit the same (keep) or how far
apart (drop, where the old loop re-closed each block's rows in another array shape).

Usage: python benchmarks/js_pairwise.py [--rows 270] [--keys 2048]
"""

import argparse
import time

import numpy as np

from attncoda.math.metrics import get_metric
from attncoda.math.verdicts import _CHUNK_ELEMENTS, pairwise, symmetric


def both_orders(rows: np.ndarray, convention: str) -> np.ndarray:
    """The loop before: every block of rows against every row, then the matrix averaged with its transpose."""
    js = get_metric("js")
    h, d = rows.shape
    block = max(1, _CHUNK_ELEMENTS // max(1, h * d))
    out = np.empty((h, h))
    for start in range(0, h, block):
        out[start : start + block] = js(rows[start : start + block, None, :], rows[None, :, :], convention, (0,), 1e-6)
    return symmetric(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=270)
    parser.add_argument("--keys", type=int, default=2048)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    rows = rng.dirichlet(np.full(args.keys, 0.3), size=args.rows)
    rows[:, 0] += 2.0
    rows /= rows.sum(axis=1, keepdims=True)
    for convention in ("keep", "drop"):
        started = time.perf_counter()
        before = both_orders(rows, convention)
        old = time.perf_counter() - started
        started = time.perf_counter()
        now = pairwise("js", rows, convention, (0,), 1e-6, method="gram")
        new = time.perf_counter() - started
        gap = float(np.max(np.abs(before - now) / np.maximum(np.abs(before), 1e-300)))
        print(f"{convention}: both orders {old:.2f} s, each pair once {new:.2f} s, {old / new:.2f}x; "
              + ("the same bits" if np.array_equal(before, now) else f"largest relative difference {gap:.1e}"))


if __name__ == "__main__":
    main()
