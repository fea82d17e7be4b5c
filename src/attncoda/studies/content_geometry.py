"""Table 6's estimator and rival-geometry audit: how much small parts carry, and dropped-row JS against ``d_A^⊥``."""

from __future__ import annotations

import numpy as np

from ..base.protocol import SMALL_PART, TAXONOMY_KS
from ..math import coda
from .reversal import distances
from .taxonomy import as_dissimilarity, partition_agreement


def small_part_share(rows: np.ndarray, sink, eps: float, threshold: float = SMALL_PART, pairs: int = 2000, seed: int = 0) -> float:
    r"""Fraction of squared ``d_A^⊥`` carried by content log-ratio pairs in which some entry is below ``threshold``.

    :math:`d_A^\perp(p, q)^2 = \frac{1}{2n} \sum_{i,j \in C} (u_i - u_j)^2` with :math:`u = \ln \pi(p) - \ln \pi(q)`; the share sums
    the terms whose pair ``(i, j)`` has an entry of ``π(p)`` or ``π(q)`` below the threshold, over a
    sample of head pairs.
    """
    _, content = coda.split_indices(sink, rows.shape[1])
    pi = coda.closure(coda.replace_zeros(rows, eps)[:, content])
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(rows), pairs)
    b = (a + rng.integers(1, len(rows), pairs)) % len(rows)
    flagged = total = 0.0
    for i, j in zip(a, b):
        u = np.log(pi[i]) - np.log(pi[j])
        sq = (u[:, None] - u[None, :]) ** 2
        low = np.minimum(pi[i], pi[j]) < threshold
        flagged += sq[low[:, None] | low[None, :]].sum()
        total += sq.sum()
    return float(flagged / total) if total else 0.0


def rival_geometry(rows: np.ndarray, sink, eps: float, ks=TAXONOMY_KS) -> dict[str, float]:
    """Dropped-row JS against ``d_A^⊥`` on the content channel: Spearman ρ of pairwise distances,
    nearest-neighbour agreement, and mean cross-ARI of the induced taxonomies over ``ks``."""
    from scipy.stats import spearmanr

    js = distances("js", rows, "drop", sink, eps)
    content = distances("content", rows, "keep", sink, eps)
    upper = np.triu_indices(len(rows), 1)
    masked = np.diag(np.full(len(rows), np.inf))
    return {
        "spearman": float(spearmanr(js[upper], content[upper]).statistic),
        "nn_agreement": float(np.mean((js + masked).argmin(axis=1) == (content + masked).argmin(axis=1))),
        "cross_ari": partition_agreement(as_dissimilarity("js", js), as_dissimilarity("content", content), ks),
    }
