"""What the pruning sweep may claim, with the test behind each claim (methods: :ref:`methods-pruning`).

A metric's prune set depends on two arbitrary choices: the text sample its signatures come from (the seed) and how
each tie in the keep-one walk is broken (the draw). Draws of one seed share that seed's signatures, so they are not
independent samples of the metric; seeds are. Every test below takes the seed as its unit.

* Perplexities are compared on a log scale: a mean over sets is geometric, ``exp(mean log PPL)``.
* **Against random** (:func:`metric_cells`): each seed contributes one value, the geometric median of its tie-break
  draws; those per-seed values and the random sets of the same size go into an exact two-sided Mann–Whitney rank test.
  The p-values of all cells of a run (every model, metric and sparsity) are adjusted together by Holm's step-down
  method. A cell reads "better" or "worse than random" only where its adjusted p is below :data:`LEVEL`; a cell whose
  design cannot reach that level at all (its smallest attainable p is not below ``LEVEL / cells``) reads "undecided:
  too few samples", whatever its p.
* **Metric against metric** (:func:`contrasts`): the ratio of two metrics' geometric-mean perplexities, with a
  hierarchical bootstrap over seeds (resampled, shared by both metrics), tie-break draws (resampled within each seed,
  for each metric on its own) and windows (resampled, shared by every set: they are the same windows). Its two-sided
  bootstrap p-values are Holm-adjusted over every pair of the run.
* **Window count** (:func:`window_study`): whether the sweep's windows rank the study's sets as the longer sample does.
* **No contrast to read** (:func:`set_overlaps`): how much prune sets share, between metrics, seeds and draws.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from itertools import combinations

import numpy as np

from ..base.records import JsonRecord
from .claim_rule import LEVEL  # the one significance level: family-wise in every family of the chapter's tests (Holm)
from .pruning import SELECTION_NAMES, overlap

BOOTSTRAP_DRAWS = 10000
BOOTSTRAP_SEED = 0
UNDECIDED = "undecided: too few samples"
"""The reading of a test whose smallest attainable p cannot reach its threshold."""


def geometric_mean(values) -> float:
    """``exp(mean(log x))``.

    Examples
    --------
    >>> round(geometric_mean([10.0, 1000.0]), 6)
    100.0
    """
    return float(np.exp(np.mean(np.log(np.asarray(values, dtype=float)))))


def geometric_median(values) -> float:
    """``exp(median(log x))``: the median on the log scale (the mean of the two middle logs for an even count)."""
    return float(np.exp(np.median(np.log(np.asarray(values, dtype=float)))))


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


def smallest_rank_p(n: int, m: int) -> float:
    """The smallest two-sided p an exact rank test of ``n`` values against ``m`` draws can give: ``2 / C(n + m, n)``
    (every value below every draw), at most 1.

    Examples
    --------
    >>> smallest_rank_p(3, 40) == 2 / math.comb(43, 3), round(smallest_rank_p(1, 10), 3)
    (True, 0.182)
    """
    return min(1.0, 2 / math.comb(n + m, n))


def holm(pvalues) -> list[float]:
    """Holm's step-down adjusted p-values (statsmodels' ``multipletests``): sorted ascending, the ``i``-th (from 0) is
    multiplied by ``m − i``, made non-decreasing, and capped at 1, each rounded to 15 decimals (so the last bit of a
    product cannot move a reading across machines). A test rejects at family-wise level α where its adjusted p is below α.

    Examples
    --------
    >>> holm([0.01, 0.04, 0.03])
    [0.03, 0.06, 0.06]
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, float)
    if len(p) == 0:
        return []
    return [round(float(x), 15) for x in multipletests(p, method="holm")[1]]


def reachable(smallest_p: float, family: int, level: float = LEVEL) -> bool:
    """Whether a test can reject at all inside a Holm family of ``family`` tests: its smallest attainable p must lie
    below Holm's strictest threshold, ``level / family``."""
    return smallest_p < level / max(1, family)


def holm_readings(pvalues, smallest, directions, level: float = LEVEL) -> tuple[list[float], list[str]]:
    """Adjusted p-values and readings for one family: ``directions[i]`` where the adjusted p is below ``level``,
    :data:`UNDECIDED` where the test cannot reach the level, else ``"indistinguishable"``."""
    adjusted = holm(pvalues)
    family = len(adjusted)
    readings = [UNDECIDED if not reachable(s, family, level) else d if a < level else "indistinguishable"
                for a, s, d in zip(adjusted, smallest, directions)]
    return adjusted, readings


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


def _as_results(results) -> list:
    return [results] if hasattr(results, "scored") else list(results)


@dataclass(frozen=True)
class MetricCell(JsonRecord):
    """One metric at one sparsity against random sets of the same size: each seed's geometric median over its tie-break
    draws (and the range of its draws), the geometric mean over every set, the random sets, and the rank test of the
    per-seed values against the random sets (two-sided, with its smallest attainable p and its Holm-adjusted p)."""

    model: str
    metric: str
    sparsity: float
    seed_medians: list
    seed_ranges: list  # [min, max] over each seed's draws
    geometric_mean: float
    random_n: int
    random_median: float
    random_min: float
    random_max: float
    p: float
    smallest_p: float
    direction: str
    p_holm: float | None = None
    reading: str | None = None

    @property
    def sets(self) -> int:
        return len(self.seed_medians)


def metric_cell(result, metric: str, sparsity: float) -> MetricCell:
    """One metric and sparsity of a :class:`~.pruning_sweep.PruningResult`, before the family's adjustment."""
    groups = [[s.perplexity for s in g] for g in result.by_seed(metric, sparsity)]
    medians = [geometric_median(g) for g in groups]
    draws = [s.perplexity for s in result.randoms(sparsity)]
    low, high = rank_test(medians, draws)
    return MetricCell(result.model, metric, float(sparsity), medians, [[min(g), max(g)] for g in groups], geometric_mean(sum(groups, [])),
                      len(draws), float(np.median(draws)), float(min(draws)), float(max(draws)), min(1.0, 2 * min(low, high)),
                      smallest_rank_p(len(medians), len(draws)), "better than random" if low < high else "worse than random")


def metric_cells(results, level: float = LEVEL) -> list[MetricCell]:
    """Every metric at every sparsity of one result or several (one Holm family for all of them), with readings."""
    cells = [metric_cell(r, m, s) for r in _as_results(results) for s in r.sparsities for m in r.metrics_at(s)]
    adjusted, readings = holm_readings([c.p for c in cells], [c.smallest_p for c in cells], [c.direction for c in cells], level)
    return [replace(c, p_holm=a, reading=("indistinguishable from random" if t == "indistinguishable" else t)) for c, a, t in zip(cells, adjusted, readings)]


def _log_perplexities(groups, resamples: np.ndarray) -> np.ndarray:
    """``(seeds, draws, resamples)`` log perplexities of sets grouped by seed under each window resample."""
    return np.array([[resampled_log_perplexity(s, resamples) for s in g] for g in groups])


def hierarchical_bootstrap(groups_a, groups_b, draws: int = BOOTSTRAP_DRAWS, seed: int = BOOTSTRAP_SEED) -> np.ndarray:
    """Resampled ``mean log PPL_a − mean log PPL_b``: seeds drawn with replacement (the same seeds for both metrics, which
    share each seed's signatures), then each metric's tie-break draws within each drawn seed, then windows (the same
    windows for every set). ``groups_*`` hold each seed's scored sets, in the same seed order."""
    if len(groups_a) != len(groups_b):
        raise ValueError(f"the two metrics have sets for {len(groups_a)} and {len(groups_b)} seeds; compare them on the same seeds")
    rng = np.random.default_rng(seed)
    windows = rng.integers(0, len(groups_a[0][0].window_nll), size=(draws, len(groups_a[0][0].window_nll)))
    out = np.zeros(draws)
    seeds = rng.integers(0, len(groups_a), size=(draws, len(groups_a)))
    columns = np.arange(draws)
    for groups, sign in ((groups_a, 1.0), (groups_b, -1.0)):
        logs = _log_perplexities(groups, windows)  # seeds × draws × resamples
        picks = rng.integers(0, logs.shape[1], size=(draws, len(groups), logs.shape[1]))
        values = logs[seeds[:, :, None], picks, columns[:, None, None]]
        out += sign * values.mean(axis=(1, 2))
    return out


@dataclass(frozen=True)
class Contrast(JsonRecord):
    """Metric ``a`` against metric ``b`` at one sparsity: the ratio of their geometric-mean perplexities (``a / b``), its
    hierarchical-bootstrap interval and two-sided p, whether every seed's own ratio lies on one side of 1, and the
    reading after Holm's adjustment over the run's pairs."""

    model: str
    sparsity: float
    a: str
    b: str
    ratio: float
    low: float
    high: float
    seed_ratios: list
    p: float
    smallest_p: float
    direction: str
    p_holm: float | None = None
    reading: str | None = None

    @property
    def seeds_agree(self) -> bool:
        return all(r < 1 for r in self.seed_ratios) or all(r > 1 for r in self.seed_ratios)


def contrast(result, a: str, b: str, sparsity: float, level: float = LEVEL, draws: int = BOOTSTRAP_DRAWS) -> Contrast:
    """:class:`Contrast` of metrics ``a`` and ``b``, before the family's adjustment."""
    groups_a, groups_b = result.by_seed(a, sparsity), result.by_seed(b, sparsity)
    seed_logs = [np.mean([s.log_perplexity for s in x]) - np.mean([s.log_perplexity for s in y]) for x, y in zip(groups_a, groups_b)]
    boot = hierarchical_bootstrap(groups_a, groups_b, draws)
    lo, hi = (math.exp(v) for v in interval(boot, level))
    p = min(1.0, 2 * min((1 + np.sum(boot <= 0)) / (draws + 1), (1 + np.sum(boot >= 0)) / (draws + 1)))
    ratio = math.exp(float(np.mean(seed_logs)))
    direction = f"{SELECTION_NAMES[a] if ratio < 1 else SELECTION_NAMES[b]} prunes better"
    return Contrast(result.model, float(sparsity), a, b, ratio, lo, hi, [math.exp(v) for v in seed_logs], float(p), 2 / (draws + 1), direction)


def contrasts(results, level: float = LEVEL) -> list[Contrast]:
    """Every pair of metrics at every sparsity of one result or several (one Holm family), with readings."""
    found = [contrast(r, a, b, s, level) for r in _as_results(results) for s in r.sparsities for a, b in combinations(r.metrics_at(s), 2)]
    adjusted, readings = holm_readings([c.p for c in found], [c.smallest_p for c in found], [c.direction for c in found], level)
    return [replace(c, p_holm=a, reading=t) for c, a, t in zip(found, adjusted, readings)]


def set_overlaps(result, sparsity: float) -> dict:
    """Shares of pruned heads in common at one sparsity (``|A ∩ B| / |A|``): ``between``, a list of ``{a, b, share}``,
    two metrics' sets of the same seed and draw number, averaged; ``across_seeds[m]``, one metric's sets of two seeds
    (same draw number), averaged over seed pairs and draws; ``across_draws[m]``, one seed's sets under two tie-break draws,
    averaged over draw pairs and seeds."""
    metrics = result.metrics_at(sparsity)
    groups = {m: [[set(s.heads) for s in g] for g in result.by_seed(m, sparsity)] for m in metrics}

    def mean(values):
        values = list(values)
        return float(np.mean(values)) if values else float("nan")

    between = [{"a": a, "b": b, "share": mean(overlap(x, y) for ga, gb in zip(groups[a], groups[b]) for x, y in zip(ga, gb))}
               for a, b in combinations(metrics, 2)]
    across = {m: mean(overlap(x, y) for g, h in combinations(v, 2) for x, y in zip(g, h)) for m, v in groups.items()}
    draws = {m: mean(overlap(x, y) for g in v for x, y in combinations(g, 2)) for m, v in groups.items()}
    return {"between": between, "across_seeds": across, "across_draws": draws}


@dataclass(frozen=True)
class BlowUp(JsonRecord):
    """A cell whose worst prune set multiplies the unpruned perplexity most, and what decides it: ``draws``, the largest
    ratio (max / min) between two tie-break draws of one seed; ``seeds``, the ratio between the highest and lowest seed
    median."""

    model: str
    metric: str
    sparsity: float
    worst: float
    worst_seed: int
    worst_draw: int
    base: float
    draws_spread: float
    seeds_spread: float
    low: float  # the cell's lowest set

    @property
    def decided_by(self) -> str:
        if self.draws_spread > 2 and self.draws_spread >= self.seeds_spread:
            return "tie-break"
        if self.seeds_spread > 2:
            return "seed"
        return "metric"


TOP_BLOW_UPS = 3
"""How many of the largest single-set blow-ups the results file records per model and the page lists over the models."""


def blow_ups(results, top: int = TOP_BLOW_UPS) -> list[BlowUp]:
    """The ``top`` cells (model, metric, sparsity) with the largest single-set perplexity over the unpruned model."""
    found = []
    for r in _as_results(results):
        for sp in r.sparsities:
            for m in r.metrics_at(sp):
                groups = r.by_seed(m, sp)
                worst = max((s for g in groups for s in g), key=lambda s: s.perplexity)
                spread = max(max(s.perplexity for s in g) / min(s.perplexity for s in g) for g in groups)
                medians = [geometric_median([s.perplexity for s in g]) for g in groups]
                found.append(BlowUp(r.model, m, float(sp), worst.perplexity, worst.seed, worst.draw, r.base.perplexity, spread,
                                    max(medians) / min(medians), min(s.perplexity for g in groups for s in g)))
    return sorted(found, key=lambda b: -b.worst / b.base)[:top]


@dataclass(frozen=True)
class WindowRow(JsonRecord):
    """The window study at one window count: Spearman ρ between the sets' log perplexities on the first ``windows``
    windows and on all of them; the share of set pairs more than :data:`~.pruning_sweep.STABLE_SHARE` apart on all
    windows whose order flips; the largest change of a pair's log ratio."""

    windows: int
    rho: float
    flips: float
    pairs: int
    largest_change: float


def window_study(result, counts=None) -> list[WindowRow]:
    """How the study's sets (:attr:`~.pruning_sweep.PruningResult.calibration`) rank on their first ``k`` windows
    against all their windows, for each ``k`` in ``counts`` (default: the study counts below the total)."""
    from scipy.stats import spearmanr

    from .pruning_sweep import STABLE_SHARE, STUDY_COUNTS

    sets = result.calibration
    nll = np.array([s.window_nll for s in sets])
    tokens = np.array([s.window_tokens for s in sets], dtype=float)
    total = nll.shape[1]
    full = nll.sum(1) / tokens.sum(1)
    upper = np.triu_indices(len(sets), 1)
    apart = np.abs(full[:, None] - full[None])[upper] > math.log1p(STABLE_SHARE)
    rows = []
    for k in sorted({*(c for c in (counts or STUDY_COUNTS) if c < total), result.heldout["windows"]}):
        part = nll[:, :k].sum(1) / tokens[:, :k].sum(1)
        d_full, d_part = (full[:, None] - full[None])[upper], (part[:, None] - part[None])[upper]
        flips = np.sign(d_full) != np.sign(d_part)
        rows.append(WindowRow(int(k), float(spearmanr(part, full)[0]), float(flips[apart].mean()) if apart.any() else 0.0, int(apart.sum()),
                              float(np.max(np.abs(d_full - d_part)))))
    return rows


@dataclass(frozen=True)
class PrecisionCheck(JsonRecord):
    """bf16 against float32 on the checked sets (the unpruned model, ``"base"``, and each metric's first set at the focus
    sparsity, named by its metric): the largest relative perplexity difference, and the pairs of checked metric sets
    whose order differs between the two (with their gap in bf16: ``|log(a / b)|``)."""

    model: str
    pairs: list  # [label, bf16, float32]
    max_relative: float
    swaps: list  # [label a, label b, bf16 gap]

    @property
    def same_order(self) -> bool:
        return not self.swaps


def precision_check(result) -> PrecisionCheck:
    """Match each float32 check with its bf16 score (same heads, metric, seed and draw) and compare."""
    pairs = []
    for check in result.checks:
        match = next(s for s in result.scored if s.heads == check.heads and s.kind == check.kind and s.metric == check.metric
                     and s.seed == check.seed and s.draw == check.draw)
        name = "base" if match.kind == "base" else SELECTION_NAMES[match.metric]
        pairs.append([name, match.perplexity, check.perplexity])
    rel = max(abs(b / f - 1) for _, b, f in pairs)
    sets = [p for p in pairs if p[0] != "base"]
    swaps = [[a[0], b[0], abs(math.log(a[1] / b[1]))] for a, b in combinations(sets, 2) if (a[1] < b[1]) != (a[2] < b[2])]
    return PrecisionCheck(result.model, pairs, float(rel), swaps)
