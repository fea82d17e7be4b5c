"""Clark-style head clustering under both sink conventions (methods: :ref:`methods-clustering`; the paper's Table 9).

Takes head distances (``(heads, heads)`` matrices per metric and convention) and each
head's mean attention per key; clusters with :mod:`.taxonomy` (one home for clustering).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..base.protocol import CLUSTERING_KS
from .taxonomy import clusters
from ..math.metrics import CLUSTERED, TAXONOMY, get_metric

HEAD_SET_THRESHOLD = 0.5
"""A head belongs to a set (e.g. the [SEP] heads) when its mean attention to those keys is at least this."""
CLUSTER_METRICS = CLUSTERED


def table5_group(model: str) -> str:
    """What Table 5 measures when Table 9 measures ``model``: every offline model beside the offline encoders
    (``encoders`` → ``defaults``, :mod:`attncoda.engine.selection`), else the same model."""
    return "defaults" if model == "encoders" else model


def sample_seeds(seed: int, samples: int) -> list[int]:
    """The window samples Table 9 is measured on: seeds ``seed, seed + 1, …`` (each draws its own windows)."""
    if samples < 1:
        raise ValueError(f"samples must be at least 1, got {samples}")
    return [seed + i for i in range(samples)]


def holdout_seeds(seed: int, samples: int, holdout: int) -> list[int]:
    """The window samples kept out of Table 9's ranges to check their coverage: the ``holdout`` seeds after the
    ``samples`` of :func:`sample_seeds`."""
    if holdout < 0:
        raise ValueError(f"holdout must be 0 or more, got {holdout}")
    return [seed + samples + i for i in range(holdout)]


def range_coverage(n: int) -> float:
    """The chance that a new sample lands inside the least-to-greatest range of ``n`` exchangeable samples of a
    continuous value: ``(n − 1)/(n + 1)`` (the new one is equally likely to hold any of the ``n + 1`` ranks, and lies
    outside only as the least or the greatest).

    Examples
    --------
    >>> round(range_coverage(20), 3), round(range_coverage(8), 3)
    (0.905, 0.778)
    """
    if n < 1:
        raise ValueError(f"need at least one sample, got {n}")
    return (n - 1) / (n + 1)


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


@dataclass(frozen=True)
class SampleSpread:
    """One Table 9 number over independent window samples: each sample's value, their median and range."""

    values: list

    @property
    def finite(self) -> list[float]:
        return [v for v in self.values if v == v]

    @property
    def median(self) -> float:
        return float(np.median(self.finite)) if self.finite else float("nan")

    @property
    def low(self) -> float:
        return float(min(self.finite)) if self.finite else float("nan")

    @property
    def high(self) -> float:
        return float(max(self.finite)) if self.finite else float("nan")

    def place(self, value: float) -> str:
        """Where a value falls against the samples: ``below``, ``within`` or ``above`` their range."""
        return "below" if value < self.low else "above" if value > self.high else "within"

    def to_json(self) -> dict:
        return {"values": self.values, "median": self.median, "low": self.low, "high": self.high}


def spread_numbers(per_k: dict) -> list[tuple[str, SampleSpread]]:
    """Every number of one K of :func:`sample_spread` as ``(name, spread)``: ``cross_ari/js``, ``jaccard/js/sep/keep``…"""
    out = [(f"cross_ari/{m}", s) for m, s in per_k["cross_ari"].items()]
    out += [(f"jaccard/{m}/{name}/{c}", s) for m, sets in per_k["jaccard"].items() for name, by_c in sets.items() for c, s in by_c.items()]
    return out


@dataclass(frozen=True)
class Coverage:
    """How often held-out samples land inside Table 9's ranges: ``inside`` of ``checked`` held-out numbers (each a
    number of one held-out sample that is defined there and in the ranges), against the ``nominal`` chance
    :func:`range_coverage`. The numbers of one sample are not independent of each other (the same windows decide all
    of them), so the share is a check, not a test."""

    inside: int
    checked: int
    nominal: float
    outside: list  # [K, number, held-out value, low, high]

    @property
    def share(self) -> float:
        return self.inside / self.checked if self.checked else float("nan")

    def to_json(self) -> dict:
        return {"inside": self.inside, "checked": self.checked, "share": self.share, "nominal": self.nominal, "outside": self.outside}


def coverage(spread: dict[int, dict], n: int, held_out: list[list[Table9Row]]) -> Coverage:
    """Check the ranges of :func:`sample_spread` (over ``n`` samples) against samples held out of them."""
    inside, checked, outside = 0, 0, []
    for rows in held_out:
        extra = sample_spread([rows])
        for k, per in spread.items():
            new = dict(spread_numbers(extra[k]))
            for name, s in spread_numbers(per):
                value = new[name].values[0]
                if value != value or not s.finite:
                    continue
                checked += 1
                if s.place(value) == "within":
                    inside += 1
                else:
                    outside.append([int(k), name, float(value), s.low, s.high])
    return Coverage(inside, checked, range_coverage(n), outside)


def sample_spread(samples: list[list[Table9Row]]) -> dict[int, dict]:
    """Table 9 over window samples: for each K, ``cross_ari[metric]`` and ``jaccard[metric][set][convention]`` as
    :class:`SampleSpread` over the samples (each sample a :func:`table9` on its own windows, with its own head sets)."""
    out = {}
    for i, first in enumerate(samples[0]):
        rows = [sample[i] for sample in samples]
        out[first.K] = {
            "cross_ari": {m: SampleSpread([r.cross_ari[m] for r in rows]) for m in first.cross_ari},
            "jaccard": {m: {s: {c: SampleSpread([r.jaccard[m][s][c] for r in rows]) for c in ("keep", "drop")} for s in first.jaccard[m]}
                        for m in first.jaccard},
        }
    return out


def spread_json(spread: dict[int, dict]) -> list[dict]:
    """:func:`sample_spread` as the results file's rows: one per K, every spread as ``{values, median, low, high}``."""
    rows = []
    for k, per in spread.items():
        row = {"K": k, "cross_ari": {m: s.to_json() for m, s in per["cross_ari"].items()},
               "jaccard": {m: {name: {c: s.to_json() for c, s in by_c.items()} for name, by_c in sets.items()} for m, sets in per["jaccard"].items()}}
        rows.append(row)
    return rows


@dataclass(frozen=True)
class EncoderClustering:
    """One encoder's Table 9 over independent window samples (:func:`measure_encoder`).

    ``first`` is the first sample's :class:`~attncoda.engine.head_distances.HeadDistances` (the head maps and
    dendrograms are drawn from it) and ``sets`` its :func:`head_sets`; ``samples`` holds each sample's
    :func:`table9` rows, measured on that sample's windows with its own head sets; ``held_out`` the same for the
    samples kept out of the ranges (``holdout_seeds``), which check their coverage."""

    name: str
    sample_seeds: list
    first: object
    sets: dict
    samples: list
    seconds: float
    holdout_seeds: list = ()
    held_out: list = ()

    @property
    def table9(self) -> list[Table9Row]:
        """The first sample's Table 9."""
        return self.samples[0]

    @cached_property
    def spread(self) -> dict[int, dict]:
        """:func:`sample_spread` of the samples."""
        return sample_spread(self.samples)

    @cached_property
    def coverage(self) -> Coverage | None:
        """:func:`coverage` of the ranges on the held-out samples (None without any)."""
        return coverage(self.spread, len(self.samples), list(self.held_out)) if self.held_out else None

    @property
    def has_sep_heads(self) -> bool:
        return bool(self.sets["sep"]["members"])

    def set_sizes(self) -> dict:
        """How many heads each set holds in the first sample, and the per-head attention to [SEP] and [CLS]."""
        sep, cls = self.sets["sep"]["mass"], self.sets["cls"]["mass"]
        return {"heads": len(sep), "sep": len(self.sets["sep"]["members"]), "cls": len(self.sets["cls"]["members"]),
                "sink": len(self.sets["sink"]["members"]), "largest_sep_mass": max(sep), "mean_sep_mass": float(np.mean(sep)),
                "mean_cls_mass": float(np.mean(cls))}

    def set_masses(self) -> dict[str, list]:
        """Each head's mean attention to each set's keys, first sample: ``{set: per-head mass}``."""
        return {k: v["mass"] for k, v in self.sets.items()}

    def ring_set(self) -> tuple[str, list]:
        """The head set to mark on a head map: the [SEP] heads, or the sink heads when there are none."""
        name = "sep" if self.has_sep_heads else "sink"
        return name, self.sets[name]["members"]

    def head_map(self, k: int, seed: int, metric: str = "js") -> tuple[dict, dict]:
        """The first sample's heads under each convention: a 2-D MDS :func:`embedding` of their ``metric`` distances
        and their ``k``-cluster labels, as ``({convention: (heads, 2)}, {convention: labels})``."""
        d = self.first.distances[metric]
        return ({c: embedding(d[c], seed) for c in ("keep", "drop")}, {c: clusters(dissimilarity(d[c]), k) for c in ("keep", "drop")})

    def js_cross_ari(self) -> SampleSpread:
        """JS's between-convention ARI pooled over every sample and every K."""
        return SampleSpread([v for per in self.spread.values() for v in per["cross_ari"]["js"].values])

    def numbers(self, table5: dict | None) -> dict:
        """The results file's content for this encoder (``table5``: its :meth:`Table5Entry.to_json`, or None)."""
        meta = self.first.meta
        return {"model_info": meta.model_info, "weights_sha256": meta.weights_sha256, "positions": meta.positions, "sink": meta.sink,
                "head_sets": dict(self.sets), "table9": [r.to_json() for r in self.table9],
                "table9_samples": {"seeds": list(self.sample_seeds), "per_sample": [[r.to_json() for r in rows] for rows in self.samples],
                                   "spread": spread_json(self.spread),
                                   "held_out": {"seeds": list(self.holdout_seeds), "per_sample": [[r.to_json() for r in rows] for rows in self.held_out],
                                                "coverage": self.coverage.to_json() if self.coverage else None}},
                "table5": table5, "wall_time_s": self.seconds}


def measure_encoder(name: str, n: int, length: int, seeds, batch_size: int, held_out_seeds=()) -> EncoderClustering:
    """Head distances of ``name`` on each window sample ``seeds`` and ``held_out_seeds`` (cached), each sample's head
    sets and Table 9.

    Raises RuntimeError if ``d_A^⊥`` ever gives different taxonomies under keep and drop: the theory makes its ARI
    exactly 1, so anything else is a bug."""
    import time

    from ..engine.head_distances import head_distances

    started = time.time()
    first, samples = None, []
    for s in [*seeds, *held_out_seeds]:
        sample = head_distances(name, n=n, length=length, seed=s, batch_size=batch_size)
        rows = table9(sample.distances, head_sets(sample.key_attention, sample.meta.cls, sample.meta.sep))
        if any(r.cross_ari["content"] != 1.0 for r in rows):
            raise RuntimeError(f"{name}, window sample {s}: d_A^⊥ gave different taxonomies under keep and drop, which the theory rules out")
        first = sample if first is None else first
        samples.append(rows)
    sets = head_sets(first.key_attention, first.meta.cls, first.meta.sep)
    return EncoderClustering(name, list(seeds), first, sets, samples[: len(seeds)], time.time() - started, list(held_out_seeds), samples[len(seeds) :])


TABLE5_LABELS = {name: get_metric(name).short for name in TAXONOMY}
"""Table 5's column names, as the page and the results files give them."""


@dataclass(frozen=True)
class Table5Entry:
    """Table 5 for one model: each metric's between-convention ARI, mean over K (``ari[metric]``), from the seed-0
    signatures, with the model's identity."""

    name: str
    ari: dict
    model_info: dict
    weights_sha256: str

    def to_json(self) -> dict:
        return {TABLE5_LABELS[m]: v for m, v in self.ari.items()}

    def numbers(self) -> dict:
        """The results file's content for a model that is in Table 5 only."""
        return {"table5": self.to_json(), "model_info": self.model_info, "weights_sha256": self.weights_sha256}


def table5(models, signature_n: int, length: int) -> dict[str, Table5Entry]:
    """Table 5 on each model's seed-0 signatures (``signature_n`` windows of ``length`` tokens, the measurement
    chapter's cache). Raises RuntimeError if ``d_A^⊥``'s ARI is not exactly 1."""
    from ..base.protocol import DEFAULT_EPS
    from ..engine.signatures import signature_sets
    from .taxonomy import taxonomy_stability

    out = {}
    for name in models:
        sig = signature_sets(name, (0,), n=signature_n, length=length)[0]
        ari = taxonomy_stability(sig.heads(), sig.sink(), DEFAULT_EPS)
        if ari.get("content", 1.0) != 1.0:
            raise RuntimeError(f"{name}: d_A^⊥ taxonomies differ between keep and drop, which the theory rules out")
        out[name] = Table5Entry(name, ari, sig.meta.model_info, sig.meta.weights_sha256)
    return out
