"""What the pruning sweep may claim, with the test behind each claim (methods: :ref:`methods-pruning`).

* Perplexities are compared on a log scale: over seeds, the geometric mean ``exp(mean_s log PPL_s)``.
* **Against random** (:func:`metric_cells`): the metric's per-seed perplexities and the random draws of the same
  size, in an exact one-sided Mann–Whitney rank test each way. A metric is "better" or "worse than random" only where
  that test gives ``p < LEVEL / 2`` (a two-sided level of ``LEVEL``), also when the first seed's set is replaced by its
  other tie-break; otherwise it is "indistinguishable from random".
* **Metric against metric** (:func:`contrasts`): every set is scored on the same windows, so the ratio of two
  metrics' geometric-mean perplexities gets a paired bootstrap interval over windows (windows resampled together for
  every seed of both). One metric beats another only where that interval excludes 1, every seed agrees, and the two
  metrics' tie-break ranges (first seed) do not overlap.
* **No contrast to read** (:func:`set_overlaps`): how much two metrics' prune sets share, and one metric's sets across seeds.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..base.records import JsonRecord
from .pruning import SELECTION_NAMES, overlap

LEVEL = 0.05
"""Two-sided level of every test in the chapter: each one-sided rank test is read at ``LEVEL / 2``."""
BOOTSTRAP_DRAWS = 4000
BOOTSTRAP_SEED = 0


def geometric_mean(values) -> float:
    """``exp(mean(log x))``.

    Examples
    --------
    >>> round(geometric_mean([10.0, 1000.0]), 6)
    100.0
    """
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))


def rank_test(values, draws) -> tuple[float, float]:
    """One-sided Mann–Whitney p-values that ``values`` sit below, and above, the ``draws`` (exact when nothing ties).

    Examples
    --------
    >>> low, high = rank_test([1.0, 2.0, 3.0], [10.0 + i for i in range(20)])
    >>> round(low, 5), high  # the smallest possible p for 3 against 20: 1 / C(23, 3)
    (0.00056, 1.0)
    """
    from scipy.stats import mannwhitneyu

    values, draws = np.asarray(values, float), np.asarray(draws, float)
    method = "exact" if len(np.unique(np.concatenate([values, draws]))) == len(values) + len(draws) else "asymptotic"
    low = mannwhitneyu(values, draws, alternative="less", method=method).pvalue
    high = mannwhitneyu(values, draws, alternative="greater", method=method).pvalue
    return float(low), float(high)


def versus_random(p_lower: float, p_higher: float, level: float = LEVEL) -> str:
    """The reading a pair of one-sided p-values allows at two-sided ``level``."""
    if p_lower < level / 2:
        return "better than random"
    if p_higher < level / 2:
        return "worse than random"
    return "indistinguishable from random"


def window_resamples(n_windows: int, draws: int = BOOTSTRAP_DRAWS, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """``(draws, n_windows)`` indices of windows drawn with replacement (the same for every set compared)."""
    return np.random.default_rng(seed).integers(0, n_windows, size=(draws, n_windows))


def resampled_log_perplexity(scored, resamples: np.ndarray) -> np.ndarray:
    """``log PPL`` of one scored set under each resample of its windows: ``Σ nll[idx] / Σ tokens[idx]``."""
    nll, tokens = np.asarray(scored.window_nll), np.asarray(scored.window_tokens, dtype=float)
    return nll[resamples].sum(axis=1) / tokens[resamples].sum(axis=1)


def interval(values: np.ndarray, level: float = LEVEL) -> tuple[float, float]:
    """The central ``1 − level`` percentile interval of bootstrap values."""
    lo, hi = np.quantile(values, [level / 2, 1 - level / 2])
    return float(lo), float(hi)


def base_interval(base, level: float = LEVEL) -> tuple[float, float]:
    """Bootstrap interval over windows of the unpruned perplexity."""
    resamples = window_resamples(len(base.window_nll))
    lo, hi = interval(resampled_log_perplexity(base, resamples), level)
    return math.exp(lo), math.exp(hi)


@dataclass(frozen=True)
class MetricCell(JsonRecord):
    """One metric at one sparsity: per-seed perplexities, their geometric mean, the first seed's perplexity under
    each tie-break, the random draws, and the rank test against them."""

    model: str
    metric: str
    sparsity: float
    per_seed: list
    geometric_mean: float
    tie_breaks: dict  # tie-break -> first seed's perplexity
    random_n: int
    random_median: float
    random_min: float
    random_max: float
    p_lower: float
    p_higher: float
    reading: str

    @property
    def tie_range(self) -> tuple[float, float]:
        values = list(self.tie_breaks.values())
        return min(values), max(values)


def metric_cell(result, metric: str, sparsity: float, level: float = LEVEL) -> MetricCell:
    """:class:`MetricCell` for one metric and sparsity of a :class:`~.pruning_sweep.PruningResult`."""
    per_seed = [s.perplexity for s in result.metric_sets(metric, sparsity)]
    ties = {tb: s.perplexity for tb in ("first", "last") for s in result.metric_sets(metric, sparsity, tb) if s.seed == result.seeds[0]}
    draws = [s.perplexity for s in result.randoms(sparsity)]
    p_lower, p_higher = rank_test(per_seed, draws)
    reading = versus_random(p_lower, p_higher, level)
    if reading != "indistinguishable from random" and "last" in ties:  # the reading must survive the other tie-break
        swapped = [ties["last"], *per_seed[1:]]
        if versus_random(*rank_test(swapped, draws), level) != reading:
            reading = "indistinguishable from random"
    return MetricCell(result.model, metric, float(sparsity), per_seed, geometric_mean(per_seed), ties, len(draws), float(np.median(draws)),
                      float(min(draws)), float(max(draws)), p_lower, p_higher, reading)


def metric_cells(result, level: float = LEVEL) -> list[MetricCell]:
    """Every metric at every sparsity (:func:`metric_cell`)."""
    return [metric_cell(result, m, s, level) for s in result.sparsities for m in result.metrics]


@dataclass(frozen=True)
class Contrast(JsonRecord):
    """Metric ``a`` against metric ``b`` at one sparsity: the ratio of their geometric-mean perplexities
    (``a / b``) with its paired window-bootstrap interval, and the reading it allows."""

    model: str
    sparsity: float
    a: str
    b: str
    ratio: float
    low: float
    high: float
    seeds_agree: bool
    tie_ranges_apart: bool
    reading: str


def contrast(result, a: str, b: str, sparsity: float, level: float = LEVEL) -> Contrast:
    """:class:`Contrast` of metrics ``a`` and ``b`` (see the module docstring for the rule)."""
    sets_a, sets_b = result.metric_sets(a, sparsity), result.metric_sets(b, sparsity)
    resamples = window_resamples(len(result.base.window_nll))
    log_ratio = np.mean([resampled_log_perplexity(x, resamples) - resampled_log_perplexity(y, resamples) for x, y in zip(sets_a, sets_b)], axis=0)
    ratio = math.exp(np.mean([x.log_perplexity - y.log_perplexity for x, y in zip(sets_a, sets_b)]))
    lo, hi = (math.exp(v) for v in interval(log_ratio, level))
    signs = {np.sign(x.perplexity - y.perplexity) for x, y in zip(sets_a, sets_b)}
    cell_a, cell_b = metric_cell(result, a, sparsity, level), metric_cell(result, b, sparsity, level)
    (a_lo, a_hi), (b_lo, b_hi) = cell_a.tie_range, cell_b.tie_range
    apart = a_hi < b_lo or b_hi < a_lo
    agree = len(signs) == 1 and 0 not in signs
    if hi < 1 and agree and apart:
        reading = f"{SELECTION_NAMES[a]} prunes better"
    elif lo > 1 and agree and apart:
        reading = f"{SELECTION_NAMES[b]} prunes better"
    else:
        reading = "indistinguishable"
    return Contrast(result.model, float(sparsity), a, b, ratio, lo, hi, agree, apart, reading)


def contrasts(result, sparsity: float, level: float = LEVEL) -> list[Contrast]:
    """Every pair of the sweep's metrics at one sparsity."""
    return [contrast(result, a, b, sparsity, level) for a, b in combinations(result.metrics, 2)]


def set_overlaps(result, sparsity: float) -> dict:
    """Shares of pruned heads in common at one sparsity: ``between``, a list of ``{a, b, share}``, mean over seeds of ``|A ∩ B| / |A|``
    for two metrics; ``across_seeds[m]``, mean over seed pairs of one metric's sets; ``tie_break[m]``, the first
    seed's set under the two tie-breaks."""
    sets = {m: [set(s.heads) for s in result.metric_sets(m, sparsity)] for m in result.metrics}
    between = [{"a": a, "b": b, "share": float(np.mean([overlap(x, y) for x, y in zip(sets[a], sets[b])]))} for a, b in combinations(result.metrics, 2)]
    across = {m: float(np.mean([overlap(x, y) for x, y in combinations(v, 2)])) if len(v) > 1 else float("nan") for m, v in sets.items()}
    tie = {}
    for m in result.metrics:
        pair = [set(s.heads) for tb in ("first", "last") for s in result.metric_sets(m, sparsity, tb) if s.seed == result.seeds[0]]
        tie[m] = overlap(*pair) if len(pair) == 2 else float("nan")
    return {"between": between, "across_seeds": across, "tie_break": tie}


@dataclass(frozen=True)
class PrecisionCheck(JsonRecord):
    """bf16 against float32 on the checked sets (the unpruned model, ``"base"``, and each metric's first-seed set at the
    focus sparsity under the first tie-break, named by its metric): the largest relative perplexity difference, and the
    pairs of checked metric sets whose order differs between the two (with their gap in bf16: ``|log(a / b)|``)."""

    model: str
    pairs: list  # [label, bf16, float32]
    max_relative: float
    swaps: list  # [label a, label b, bf16 gap]

    @property
    def same_order(self) -> bool:
        return not self.swaps


def precision_check(result) -> PrecisionCheck:
    """Match each float32 check with its bf16 score (same heads) and compare."""
    pairs = []
    for check in result.checks:
        match = next(s for s in result.scored if s.heads == check.heads and s.kind == check.kind and s.metric == check.metric
                     and s.seed == check.seed and s.tie_break == check.tie_break)
        name = "base" if match.kind == "base" else SELECTION_NAMES[match.metric]
        pairs.append([name, match.perplexity, check.perplexity])
    rel = max(abs(b / f - 1) for _, b, f in pairs)
    sets = [p for p in pairs if p[0] != "base"]
    swaps = [[a[0], b[0], abs(math.log(a[1] / b[1]))] for a, b in combinations(sets, 2) if (a[1] < b[1]) != (a[2] < b[2])]
    return PrecisionCheck(result.model, pairs, float(rel), swaps)
