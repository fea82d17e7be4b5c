"""The small tests the book's verdicts rest on: rank correlation and trend by permutation, and intervals over samples.

Each returns its statistic and a p-value or an interval, never a direction in words; :mod:`attncoda.studies.claims`
turns them into verdicts, and the page modules word those.
"""

from __future__ import annotations

import itertools
import math

import numpy as np

EXACT_UP_TO = 8
"""Up to this many points a permutation p enumerates every ordering (8! = 40,320); beyond, it samples orderings."""

EXACT_ARRANGEMENTS = 200_000
"""A trend test enumerates every assignment of runs to groups up to this many, and samples them beyond."""


def spearman_permutation(x, y, resamples: int = 20_000, seed: int = 0) -> tuple[float, float, str]:
    """Spearman's ρ of ``x`` and ``y`` with its two-sided permutation p-value: the share of orderings of ``y`` whose
    |ρ| is at least the observed one. Exact (every ordering) up to :data:`EXACT_UP_TO` points, else ``resamples``
    orderings drawn with ``seed`` (the same p on every rerun). Returns (ρ, p, "exact permutation" or "permutation").
    With few points the t approximation is far off: 5 points of ρ = 0.7 give p = 0.19 by t, 0.233 exactly.

    Examples
    --------
    >>> rho, p, how = spearman_permutation([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    >>> round(rho, 2), round(p, 3), how
    (0.8, 0.133, 'exact permutation')
    """
    from scipy.stats import permutation_test, rankdata

    rx, ry = rankdata(x), rankdata(y)

    def rho(ranks_y, axis=-1):
        cx, cy = rx - rx.mean(), ranks_y - np.mean(ranks_y, axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):  # a constant side has no ranks to correlate: ρ is NaN
            return (cx * cy).sum(axis=axis) / np.sqrt((cx ** 2).sum() * (cy ** 2).sum(axis=axis))

    exact = math.factorial(len(x)) <= math.factorial(EXACT_UP_TO)
    result = permutation_test((ry,), rho, permutation_type="pairings", vectorized=True, alternative="two-sided",
                              n_resamples=math.inf if exact else resamples, rng=np.random.default_rng(seed))
    return float(rho(ry)), float(result.pvalue), "exact permutation" if exact else "permutation"


def jonckheere(groups) -> float:
    """Jonckheere–Terpstra's statistic for groups in a stated order: over every pair of groups i < j, the number of
    pairs (a in i, b in j) with a < b, ties counting one half. Large when values rise along the order.

    >>> jonckheere([[1, 2], [3, 4]]), jonckheere([[3, 4], [1, 2]]), jonckheere([[1], [1]])
    (4.0, 0.0, 0.5)
    """
    total = 0.0
    for i, j in itertools.combinations(range(len(groups)), 2):
        a, b = np.asarray(groups[i], float)[:, None], np.asarray(groups[j], float)[None, :]
        total += float((a < b).sum() + 0.5 * (a == b).sum())
    return total


def _assignments(sizes: tuple[int, ...]):
    """Every distinct way of labelling ``sum(sizes)`` runs with group labels, ``sizes[g]`` of label g."""
    n = sum(sizes)

    def fill(position_pool, g):
        if g == len(sizes) - 1:
            yield (tuple(position_pool),)
            return
        for chosen in itertools.combinations(position_pool, sizes[g]):
            rest = [p for p in position_pool if p not in chosen]
            for tail in fill(rest, g + 1):
                yield (chosen, *tail)

    yield from fill(list(range(n)), 0)


def trend_test(groups, resamples: int = 20_000, seed: int = 0) -> tuple[float, float, str]:
    """Whether values rise or fall along ordered groups (sizes of a model, say), with the independent runs as the unit:
    Jonckheere–Terpstra's statistic against its permutation distribution (runs shuffled among the groups, the group
    sizes kept). Returns (statistic minus its null mean, two-sided p, "exact permutation" or "permutation"); a positive
    first value means the values rise along the order. Exact up to :data:`EXACT_ARRANGEMENTS` assignments.

    >>> shift, p, how = trend_test([[0.35, 0.30, 0.41], [0.16, 0.16, 0.08], [0.03, 0.07, 0.06]])
    >>> shift, round(p, 4), how
    (-13.5, 0.0012, 'exact permutation')
    """
    groups = [list(map(float, g)) for g in groups]
    sizes = tuple(len(g) for g in groups)
    values = np.array([v for g in groups for v in g])
    null_mean = sum(a * b for a, b in itertools.combinations(sizes, 2)) / 2
    observed = jonckheere(groups) - null_mean
    count = math.factorial(sum(sizes)) // math.prod(math.factorial(s) for s in sizes)
    if count <= EXACT_ARRANGEMENTS:
        shifts = [jonckheere([values[list(idx)] for idx in labelling]) - null_mean for labelling in _assignments(sizes)]
        how = "exact permutation"
    else:
        rng, bounds = np.random.default_rng(seed), np.cumsum((0, *sizes))
        shifts = []
        for _ in range(resamples):
            shuffled = rng.permutation(values)
            shifts.append(jonckheere([shuffled[bounds[g]:bounds[g + 1]] for g in range(len(sizes))]) - null_mean)
        how = "permutation"
    p = float(np.mean(np.abs(shifts) >= abs(observed) - 1e-9))
    return float(observed), p, how


def t_interval(values, level: float = 0.05) -> tuple[float, float, float]:
    """The mean of independent samples and its two-sided ``1 - level`` Student t interval (scipy's
    ``t.interval`` around the mean with the standard error as scale): (mean, low, high). With one sample the interval is
    unbounded.

    >>> [round(v, 3) for v in t_interval([1.0, 2.0, 3.0])]
    [2.0, -0.484, 4.484]
    """
    from scipy.stats import t

    x = np.asarray(values, float)
    mean = float(x.mean())
    if len(x) < 2:
        return mean, -math.inf, math.inf
    scale = float(x.std(ddof=1) / math.sqrt(len(x)))
    if scale == 0:  # every sample the same: scipy needs a positive scale, and the interval is the point
        return mean, mean, mean
    low, high = t.interval(1 - level, len(x) - 1, loc=mean, scale=scale)
    return mean, float(low), float(high)


def log_ratio_interval(values, reference: float, level: float = 0.05) -> tuple[float, float, float]:
    """The geometric mean of ``values / reference`` with a t interval on the log scale (ratios such as perplexities
    compare on a log scale): (ratio, low, high).

    >>> [round(v, 2) for v in log_ratio_interval([20.0, 20.0, 20.0], 10.0)]
    [2.0, 2.0, 2.0]
    """
    mean, low, high = t_interval(np.log(np.asarray(values, float) / reference), level)
    return math.exp(mean), math.exp(low), math.exp(high)


def binomial_interval(rate: float, n: int, level: float = 0.05) -> tuple[float, float]:
    """Wilson's two-sided ``1 - level`` interval for a share ``rate`` of ``n`` independent draws (statsmodels'
    ``proportion_confint``).

    >>> [round(v, 4) for v in binomial_interval(0.7792, 20_000)]
    [0.7734, 0.7849]
    """
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(rate * n, n, alpha=level, method="wilson")
    return float(low), float(high)


def wilson_z(successes: float, trials: int, z: float) -> tuple[float, float]:
    """Wilson's interval of ``successes`` out of ``trials`` at the normal quantile ``z`` (1.96: two-sided 95 %; 1.645:
    a one-sided 95 % upper bound), from :func:`binomial_interval`; NaN for no trials.

    >>> [round(x, 3) for x in wilson_z(50, 100, 1.96)]
    [0.404, 0.596]
    """
    from scipy.stats import norm

    if trials == 0:
        return float("nan"), float("nan")
    low, high = binomial_interval(successes / trials, trials, 2 * float(norm.sf(z)))
    # none or all of them: the bound on that side is exactly 0 or 1 (the library's arithmetic leaves a last bit over)
    return (0.0 if successes == 0 else max(0.0, low)), (1.0 if successes == trials else min(1.0, high))
