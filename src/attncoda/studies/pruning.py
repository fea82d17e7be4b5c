"""Which heads to prune: same-layer keep-one selection by a signature distance (methods: :ref:`methods-pruning`; Tables 8, 10, 11).

Heads are indexed layer-major (``index = layer · heads + head``). Every function takes
signatures (``(layers·heads, L)`` rows) or distance matrices, never a model.
"""

from __future__ import annotations

import numpy as np

from ..base.protocol import DEFAULT_EPS, PRUNE_SHARE, TEMPERATURES
from ..math import coda
from ..math.metrics import STAKES
from .redundancy import TEMPER_EPS, nearest_in_layer
from .reversal import distances

SELECTION_METRICS = {"js_keep": ("js", "keep"), "content": ("content", "keep"), "aitchison": ("aitchison", "keep"), "js": ("js", "drop")}
"""Selection metric → (row metric, convention). The paper's Table 10 prunes by JS with the sink kept (the row as the
model produced it, so sink and content mix), ``d_A^⊥`` (content only, the same under both conventions) and total
``d_A`` (sink balance plus content); its Table 11 adds JS′, the dropped-row JS, which sees only the re-closed content."""
SELECTION_NAMES = {"js_keep": "JS (sink kept)", "content": "d_A^⊥ (content)", "aitchison": "total d_A", "js": "JS′ (sink dropped)"}
"""What each selection metric is called in the pruning chapter's tables and sentences."""
TABLE10_METRICS = ("js_keep", "content", "aitchison")
"""The paper's Table 10 columns."""
TIE_BREAKS = ("first", "last")
"""Fixed tie-breaks: ``first`` takes the lower layer-major index of a tie first, ``last`` the higher. The sweep draws its
tie-breaks at random instead (:func:`tie_ranks`); the fixed ones serve Table 8's stakes, which compare two sets made alike."""
TIE_SEED = 20250601
"""Random tie-breaks come from ``default_rng([TIE_SEED, seed, metric's place in SELECTION_METRICS, draw])``."""


def target_count(sparsity: float, total: int) -> int:
    """Number of heads a sparsity prunes: ``round(sparsity · total)``."""
    if not 0 < sparsity < 1:
        raise ValueError(f"sparsity must lie strictly between 0 and 1, got {sparsity}")
    return int(round(sparsity * total))


def walk_order(values: np.ndarray, tie_break="first") -> np.ndarray:
    """The order the keep-one walk visits heads: ascending redundancy, ties broken by ``tie_break``.

    Two heads that are each other's nearest neighbour have exactly the same redundancy (the distance matrices are
    exactly symmetric), so every such pair is a tie, and the walk prunes whichever of the two it meets first.
    ``tie_break`` is ``"first"`` (the protocol: lower layer-major index first), ``"last"`` (higher index first), or
    an array giving each head a rank to break ties by.

    Examples
    --------
    >>> walk_order(np.array([2.0, 1.0, 1.0, 3.0])).tolist(), walk_order(np.array([2.0, 1.0, 1.0, 3.0]), "last").tolist()
    ([1, 2, 0, 3], [2, 1, 0, 3])
    """
    index = np.arange(len(values))
    if isinstance(tie_break, str):
        if tie_break not in TIE_BREAKS:
            raise ValueError(f"unknown tie_break {tie_break!r}; use one of {', '.join(TIE_BREAKS)} or an array of ranks")
        secondary = index if tie_break == "first" else -index
    else:
        secondary = np.asarray(tie_break)
        if secondary.shape != values.shape:
            raise ValueError(f"tie_break ranks must have one entry per head ({len(values)}), got shape {secondary.shape}")
    return np.lexsort((secondary, values))


def tied_heads(dist: np.ndarray, layers: int, heads: int) -> int:
    """How many heads share their redundancy value with another head of their layer (ties the walk must break)."""
    values, _ = nearest_in_layer(dist, layers, heads)
    count = 0
    for layer in range(layers):
        _, counts = np.unique(values[layer * heads : (layer + 1) * heads], return_counts=True)
        count += int(counts[counts > 1].sum())
    return count


def keep_one_selection(dist: np.ndarray, layers: int, heads: int, sparsity: float, tie_break="first") -> list[int]:
    """Same-layer keep-one pruning: walk heads from most to least redundant (smallest distance to their
    layer's nearest other head first, ties broken by :func:`walk_order`); prune a head only while that nearest
    head is still kept and its layer keeps at least one head, until ``sparsity`` of all heads are pruned (or no
    head qualifies).

    Examples
    --------
    >>> d = np.array([[0, 1, 5, 5], [1, 0, 5, 5], [5, 5, 0, 2], [5, 5, 2, 0]], float)
    >>> keep_one_selection(d, 2, 2, 0.5)  # one head of each pair; never both heads of a layer
    [0, 2]
    """
    values, nearest = nearest_in_layer(dist, layers, heads)
    want = target_count(sparsity, layers * heads)
    pruned: set[int] = set()
    left = np.full(layers, heads)
    for h in walk_order(values, tie_break):
        if len(pruned) == want:
            break
        layer = h // heads
        if nearest[h] not in pruned and left[layer] > 1:
            pruned.add(int(h))
            left[layer] -= 1
    return sorted(pruned)


def random_selection(rng: np.random.Generator, layers: int, heads: int, count: int) -> list[int]:
    """``count`` heads drawn uniformly at random, redrawn until every layer keeps at least one head."""
    if count > layers * (heads - 1):
        raise ValueError(f"cannot prune {count} heads and keep one in each of {layers} layers of {heads}")
    while True:
        chosen = rng.choice(layers * heads, size=count, replace=False)
        if np.all(np.bincount(chosen // heads, minlength=layers) < heads):
            return sorted(int(i) for i in chosen)


def selection_distances(rows: np.ndarray, metric: str, sink, eps: float = DEFAULT_EPS) -> np.ndarray:
    """The signature distance matrix a selection metric prunes by (see :data:`SELECTION_METRICS`); exactly symmetric."""
    name, convention = SELECTION_METRICS[metric]
    return distances(name, rows, convention, sink, eps)


def prune_set(rows: np.ndarray, layers: int, heads: int, metric: str, sparsity: float, sink, eps: float = DEFAULT_EPS, tie_break="first") -> list[int]:
    """The keep-one prune set of a selection metric at one sparsity."""
    return keep_one_selection(selection_distances(rows, metric, sink, eps), layers, heads, sparsity, tie_break)


def tie_ranks(n_heads: int, seed: int, metric: str, draw: int) -> np.ndarray:
    """One random tie-break: a rank per head (a random permutation of ``0 … n_heads − 1``) that orders the heads
    :func:`walk_order` finds tied. Every mutual-nearest pair is a tie, so each draw decides, pair by pair, which head of
    the pair the walk meets first: the draws are samples of the protocol's arbitrary choice.

    Examples
    --------
    >>> sorted(tie_ranks(4, 0, "content", 0).tolist()), bool((tie_ranks(4, 0, "content", 0) == tie_ranks(4, 0, "content", 0)).all())
    ([0, 1, 2, 3], True)
    """
    place = list(SELECTION_METRICS).index(metric)
    return np.random.default_rng([TIE_SEED, int(seed), place, int(draw)]).permutation(n_heads)


def overlap(a, b) -> float:
    """Share of the first set that the second keeps: ``|a ∩ b| / |a|`` (1 for two empty sets)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a) if a else 1.0


def prune_set_stakes(rows: np.ndarray, layers: int, heads: int, sink, alternative, share: float = PRUNE_SHARE,
                     temperatures=TEMPERATURES) -> dict:
    """Table 8's stakes for pruning: the ``share`` keep-one prune set's retention under each logit temperature,
    and its overlap between the default and an alternative sink set, for JS′ and ``d_A^⊥``."""
    out = {}
    for metric in STAKES:
        base = prune_set(rows, layers, heads, metric, share, sink, TEMPER_EPS)
        tempered = [overlap(base, prune_set(coda.temper(rows, tau), layers, heads, metric, share, sink, TEMPER_EPS)) for tau in temperatures]
        other = prune_set(rows, layers, heads, metric, share, alternative, TEMPER_EPS)
        out[metric] = {"temperatures": list(temperatures), "retention": tempered, "retention_min": min(tempered), "sink_set_overlap": overlap(base, other)}
    return out
