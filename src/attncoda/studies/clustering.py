"""Clark-style head clustering under both sink conventions (MATH.md section 9; the paper's Table 9).

Takes head distances (``(heads, heads)`` matrices per metric and convention) and each
head's mean attention per key; clusters with :mod:`.taxonomy` (one home for clustering).
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True)
class Table9Row:
    """Table 9 at one K: each metric's between-convention ARI (``cross_ari[metric]``), the share of heads in its
    largest cluster (``largest[metric][convention]``), and each head set's best Jaccard
    (``jaccard[metric][set][convention]``). :meth:`to_json` is the results file's flat row."""

    K: int
    cross_ari: dict
    largest: dict
    jaccard: dict

    def to_json(self) -> dict:
        row = {"K": self.K}
        for metric in self.cross_ari:
            row[f"{metric}_cross_ari"] = self.cross_ari[metric]
            for c in ("keep", "drop"):
                row[f"{metric}_largest_{c}"] = self.largest[metric][c]
            for name, by_convention in self.jaccard[metric].items():
                for c in ("keep", "drop"):
                    row[f"{metric}_{name}_jaccard_{c}"] = by_convention[c]
        return row

    @classmethod
    def from_json(cls, row: dict) -> Table9Row:
        metrics = [k.removesuffix("_cross_ari") for k in row if k.endswith("_cross_ari")]
        jaccard = {m: {} for m in metrics}
        for key, value in row.items():
            for m in metrics:
                if key.startswith(f"{m}_") and "_jaccard_" in key:
                    name, c = key[len(m) + 1 :].split("_jaccard_")
                    jaccard[m].setdefault(name, {})[c] = value
        return cls(int(row["K"]), {m: row[f"{m}_cross_ari"] for m in metrics},
                   {m: {c: row[f"{m}_largest_{c}"] for c in ("keep", "drop")} for m in metrics}, jaccard)


def table9(distances: dict[str, dict[str, np.ndarray]], sets: dict[str, dict], ks=CLUSTERING_KS) -> list[Table9Row]:
    """For each K: between-convention ARI of every metric's taxonomy, the share of heads in its largest cluster
    under each convention, and each head set's best Jaccard under keep and drop (:class:`Table9Row`)."""
    from sklearn.metrics import adjusted_rand_score

    rows = []
    for k in ks:
        cross, largest, jaccard = {}, {}, {}
        for metric in CLUSTER_METRICS:
            labels = {c: clusters(dissimilarity(distances[metric][c]), k) for c in ("keep", "drop")}
            cross[metric] = float(adjusted_rand_score(labels["keep"], labels["drop"]))
            largest[metric] = {c: float(np.bincount(labels[c]).max() / len(labels[c])) for c in ("keep", "drop")}
            jaccard[metric] = {name: {c: best_jaccard(labels[c], s["members"]) for c in ("keep", "drop")} for name, s in sets.items()}
        rows.append(Table9Row(int(k), cross, largest, jaccard))
    return rows


def embedding(matrix: np.ndarray, seed: int = 0) -> np.ndarray:
    """2-D metric MDS of the heads from a distance matrix (scikit-learn, fixed seed)."""
    from sklearn.manifold import MDS

    mds = MDS(n_components=2, metric="precomputed", init="classical_mds", random_state=seed, n_init=1, normalized_stress="auto")
    return mds.fit_transform(dissimilarity(matrix))
