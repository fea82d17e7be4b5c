"""Time the full calibration grid (chapter 2's default) and compare its method with a per-triple baseline.

Prints the wall time of the whole grid, and, on one grid cell, the ratio of the
per-triple way (two distances computed for every triple, in both conventions)
to the pairwise-matrix way the package uses, measured in the same run.
"""

import time

import numpy as np

import attncoda as ac
from attncoda.studies.calibration import CalibrationGrid, compute_curves
from attncoda.math.synthetic import calibration_heads
from attncoda.math.verdicts import closer_verdicts, reversal_from_verdicts, verdict


def per_triple(heads, triples, metric):
    m = ac.get_metric(metric)
    p, q, r = (heads[triples[:, i]] for i in range(3))
    verdicts = [verdict(m(p, q, conv), m(p, r, conv), m.larger_is_closer) for conv in ("keep", "drop")]
    return reversal_from_verdicts(metric, *verdicts)


def pairwise_way(heads, triples, metric):
    m = ac.get_metric(metric)
    v = [closer_verdicts(ac.pairwise(m, heads, conv), triples, m.larger_is_closer) for conv in ("keep", "drop")]
    return reversal_from_verdicts(metric, *v)


def best_of(fn, repeats=3):
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main():
    grid = CalibrationGrid()
    t = time.perf_counter()
    compute_curves(grid)
    total = time.perf_counter() - t
    cells = len(grid.sink_masses) * len(grid.alphas) * grid.replicates
    print(f"full calibration grid: {total:.1f} s for {cells} synthetic models ({grid.n_heads} heads, {grid.n_triples} triples, L = {grid.n_content + 1}); target < 60 s")

    rng = np.random.default_rng(0)
    heads = calibration_heads(rng, grid.n_heads, grid.n_content, 0.1, 0.8)
    triples = ac.sample_triples(grid.n_heads, grid.n_triples, rng)
    for metric in ("cosine", "js", "content"):
        t_pair, a = best_of(lambda: pairwise_way(heads, triples, metric))
        t_trip, b = best_of(lambda: per_triple(heads, triples, metric))
        same = "same verdict counts" if (a.reversed, a.compared) == (b.reversed, b.compared) else "DIFFERENT counts"
        print(f"one cell, {metric:8s}: pairwise {1000 * t_pair:7.1f} ms, per-triple {1000 * t_trip:7.1f} ms, ratio {t_trip / t_pair:4.1f}x ({same})")


if __name__ == "__main__":
    main()
