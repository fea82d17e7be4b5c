"""Clark-style head clustering under both sink conventions (MATH.md section 9; the paper's Table 9).

Takes head distances (``(heads, heads)`` matrices per metric and convention) and each
head's mean attention per key; clusters with :mod:`.taxonomy` (one home for clustering).
"""

from __future__ import annotations

import numpy as np

from ..base.protocol import CLUSTERING_KS
from .taxonomy import clusters

HEAD_SET_THRESHOLD = 0.5
"""A head belongs to a set (e.g. the [SEP] heads) when its mean attention to those keys is at least this."""
CLUSTER_METRICS = ("js", "cosine", "euclidean", "content")


def chosen_models(model: str) -> tuple[list[str], list[str]]:
    """What the clustering chapter measures for its ``model`` parameter: ``(models clustered for Table 9, models of
    Table 5)``; ``encoders`` means every offline encoder for Table 9 and every offline model for Table 5."""
    from ..engine.registry import REGISTRY

    if model == "encoders":
        return [name for name, m in REGISTRY.items() if not m.causal], list(REGISTRY)
    return [model], [model]


def jobs(params: dict) -> list[tuple]:
    """The cache lookups the clustering chapter makes: head distances of each clustered model, and seed-0 signatures
    (``signature_n`` windows) of each Table 5 model, as ``(kind, model, seed, options)``."""
    clustered, table5 = chosen_models(params["model"])
    hd = {"n": params["n"], "length": params["length"], "batch_size": params["batch_size"]}
    sig = {"n": params["signature_n"], "length": params["length"], "batch_size": 8}
    return [("head_distances", name, params["seed"], hd) for name in clustered] + [("signatures", name, 0, sig) for name in table5]


def head_sets(key_attention: np.ndarray, cls: int, sep, threshold: float = HEAD_SET_THRESHOLD) -> dict[str, dict]:
    """The [SEP]-, [CLS]- and sink-head sets: heads whose mean attention to those keys is at least ``threshold``.

    Returns ``{name: {"members": [head indices], "mass": per-head mean attention}}``.

    Examples
    --------
    >>> att = np.array([[0.6, 0.1, 0.3], [0.1, 0.1, 0.8], [0.3, 0.4, 0.3]])  # 3 heads over [CLS], a, [SEP]
    >>> {k: v["members"] for k, v in head_sets(att, cls=0, sep=[2]).items()}
    {'sep': [1], 'cls': [0], 'sink': [0, 1, 2]}
    """
    sep = list(np.atleast_1d(sep))
    masses = {"sep": key_attention[:, sep].sum(axis=1), "cls": key_attention[:, cls], "sink": key_attention[:, [cls, *sep]].sum(axis=1)}
    return {k: {"members": np.flatnonzero(v >= threshold).tolist(), "mass": v.tolist()} for k, v in masses.items()}


def best_jaccard(labels: np.ndarray, members) -> float:
    """Jaccard index of a head set with the cluster that matches it best (NaN for an empty set).

    Examples
    --------
    >>> best_jaccard(np.array([1, 1, 2, 2, 2]), [2, 3])
    0.6666666666666666
    """
    members = set(members)
    if not members:
        return float("nan")
    best = 0.0
    for c in np.unique(labels):
        cluster = set(np.flatnonzero(labels == c).tolist())
        best = max(best, len(members & cluster) / len(members | cluster))
    return best


def dissimilarity(matrix: np.ndarray) -> np.ndarray:
    """Symmetrized, zero-diagonal copy of a head-distance matrix."""
    d = (matrix + matrix.T) / 2
    np.fill_diagonal(d, 0.0)
    return d


def table9(distances: dict[str, dict[str, np.ndarray]], sets: dict[str, dict], ks=CLUSTERING_KS) -> list[dict]:
    """For each K: between-convention ARI of every metric's taxonomy, the share of heads in its largest cluster
    under each convention (average linkage can leave one giant cluster and a few singletons, and two such
    partitions agree by ARI whatever happens among the few), and each head set's best Jaccard under keep and drop."""
    from sklearn.metrics import adjusted_rand_score

    rows = []
    for k in ks:
        row = {"K": int(k)}
        for metric in CLUSTER_METRICS:
            labels = {c: clusters(dissimilarity(distances[metric][c]), k) for c in ("keep", "drop")}
            row[f"{metric}_cross_ari"] = float(adjusted_rand_score(labels["keep"], labels["drop"]))
            for c in ("keep", "drop"):
                row[f"{metric}_largest_{c}"] = float(np.bincount(labels[c]).max() / len(labels[c]))
            for name, s in sets.items():
                for c in ("keep", "drop"):
                    row[f"{metric}_{name}_jaccard_{c}"] = best_jaccard(labels[c], s["members"])
        rows.append(row)
    return rows


def embedding(matrix: np.ndarray, seed: int = 0) -> np.ndarray:
    """2-D metric MDS of the heads from a distance matrix (scikit-learn, fixed seed)."""
    from sklearn.manifold import MDS

    mds = MDS(n_components=2, metric="precomputed", init="classical_mds", random_state=seed, n_init=1, normalized_stress="auto")
    return mds.fit_transform(dissimilarity(matrix))
