"""Within-layer redundancy of heads and what temperature and the sink definition do to it (methods: :ref:`methods-pruning`; Table 8).

The pruning chapter's same-layer keep-one selection starts from :func:`within_layer_redundancy`.
"""

from __future__ import annotations

import numpy as np

from ..base.protocol import PRUNE_SHARE, TEMPERATURES
from ..math import coda
from ..math.metrics import STAKES, get_metric
from ..math.verdicts import closer_verdicts, reversal_from_verdicts
from .reversal import distances

TEMPER_EPS = float(np.finfo(np.float64).tiny)
"""Zero replacement for tempered signatures: only true underflow, so the exact ``clr(p)/τ`` scaling holds."""


def nearest_in_layer(dist: np.ndarray, layers: int, heads: int) -> tuple[np.ndarray, np.ndarray]:
    """For each head (layer-major order): the distance to, and index of, the nearest other head of its own layer.

    Examples
    --------
    >>> d = np.array([[0, 1, 5, 5], [1, 0, 5, 5], [5, 5, 0, 2], [5, 5, 2, 0]], float)
    >>> values, nearest = nearest_in_layer(d, 2, 2)
    >>> values.tolist(), nearest.tolist()
    ([1.0, 1.0, 2.0, 2.0], [1, 0, 3, 2])
    """
    values, nearest = np.empty(layers * heads), np.empty(layers * heads, dtype=np.int64)
    for layer in range(layers):
        lo = layer * heads
        block = dist[lo : lo + heads, lo : lo + heads].copy()
        np.fill_diagonal(block, np.inf)
        nearest[lo : lo + heads] = lo + block.argmin(axis=1)
        values[lo : lo + heads] = block.min(axis=1)
    return values, nearest


def within_layer_redundancy(dist: np.ndarray, layers: int, heads: int) -> np.ndarray:
    """Distance from each head to the nearest other head of its own layer (see :func:`nearest_in_layer`)."""
    return nearest_in_layer(dist, layers, heads)[0]


def most_redundant(values: np.ndarray, share: float = PRUNE_SHARE) -> set[int]:
    """Indices of the ``share`` of heads with the smallest redundancy distance (stable order on ties)."""
    k = max(1, int(round(share * len(values))))
    return set(np.argsort(values, kind="stable")[:k].tolist())


def temperature_stakes(rows: np.ndarray, layers: int, heads: int, triples: np.ndarray, sink, temperatures=TEMPERATURES) -> dict:
    """Table 8, temperature: JS′ (dropped-row JS) verdict flips and prune-set retention under each τ, and the same for ``d_A^⊥``."""
    out = {}
    eps = TEMPER_EPS
    for name in STAKES:
        m = get_metric(name)
        base_dist = distances(m, rows, "drop", sink, eps)
        base_verdicts = closer_verdicts(base_dist, triples, m.larger_is_closer)
        base_set = most_redundant(within_layer_redundancy(base_dist, layers, heads))
        flips, retention = [], []
        for tau in temperatures:
            dist = distances(m, coda.temper(rows, tau), "drop", sink, eps)
            v = closer_verdicts(dist, triples, m.larger_is_closer)
            flips.append(reversal_from_verdicts(name, base_verdicts, v).rate)
            retention.append(len(most_redundant(within_layer_redundancy(dist, layers, heads)) & base_set) / len(base_set))
        out[name] = {"temperatures": list(temperatures), "flip_rates": flips, "flip_max": max(flips), "retention": retention, "retention_min": min(retention)}
    return out


def sink_set_stakes(rows: np.ndarray, triples: np.ndarray, sink, alternative, eps: float) -> dict:
    """Table 8, sink set: closer-head verdict flip rate (JS′ and ``d_A^⊥``) between the default and an alternative sink set."""
    out = {}
    for name in STAKES:
        m = get_metric(name)
        v = [closer_verdicts(distances(m, rows, "drop", s, eps), triples, m.larger_is_closer) for s in (sink, alternative)]
        out[name] = reversal_from_verdicts(name, *v).rate
    return out
