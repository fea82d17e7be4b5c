"""Head taxonomies: average-linkage clusters of heads and how they agree (Tables 5, 6 and 9).

One home for clustering: the measurement chapter's Table 5 and the clustering chapter use these functions.
"""

from __future__ import annotations

import numpy as np

from ..base.protocol import TAXONOMY_KS
from ..math.metrics import TAXONOMY, get_metric
from .reversal import distances

TAXONOMY_METRICS = TAXONOMY


def as_dissimilarity(metric, matrix: np.ndarray) -> np.ndarray:
    """A symmetric dissimilarity with a zero diagonal: ``1 − cos`` for cosine, the distance itself otherwise."""
    d = 1.0 - matrix if get_metric(metric).larger_is_closer else matrix.copy()
    d = (d + d.T) / 2
    np.fill_diagonal(d, 0.0)
    return d


def clusters(dissimilarity: np.ndarray, k: int) -> np.ndarray:
    """Average-linkage hierarchical clustering cut into at most ``k`` clusters (labels 1..k)."""
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    condensed = squareform(dissimilarity, checks=False)
    return fcluster(linkage(condensed, method="average"), k, criterion="maxclust")


def partition_agreement(a: np.ndarray, b: np.ndarray, ks=TAXONOMY_KS) -> float:
    """Mean adjusted Rand index over ``ks`` between the taxonomies two dissimilarities induce."""
    from sklearn.metrics import adjusted_rand_score

    return float(np.mean([adjusted_rand_score(clusters(a, k), clusters(b, k)) for k in ks]))


def taxonomy_stability(rows: np.ndarray, sink, eps: float, ks=TAXONOMY_KS, metrics=TAXONOMY_METRICS) -> dict[str, float]:
    """Table 5: between-convention ARI (keep vs drop) of each metric's taxonomy, mean over ``ks``.

    The content distance's is exactly 1 (one partition in both pipelines).
    """
    out = {}
    for name in metrics:
        views = [as_dissimilarity(name, distances(name, rows, conv, sink, eps)) for conv in ("keep", "drop")]
        out[name] = partition_agreement(*views, ks=ks)
    return out
