"""Classical row metrics, the keep/drop conventions, and the metric registry.

Every metric takes two compositions ``p, q`` (rows on the last axis) and
broadcasts over leading axes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .coda import DEFAULT_EPS, Sink, aitchison, as_composition, check_pair, content_distance, drop_sink

CONVENTIONS = ("keep", "drop")


def _pair(p, q):
    return check_pair(as_composition(p, "p"), as_composition(q, "q"))


def cosine(p, q) -> np.ndarray:
    """Cosine similarity ``p·q / (‖p‖ ‖q‖)`` (larger = closer).

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...,)
        Cosine similarity, one per row.

    Examples
    --------
    >>> float(cosine([0.90, 0.08, 0.02], [0.70, 0.24, 0.06]).round(4))  # Table 1
    0.9693
    """
    a, b = _pair(p, q)
    return np.sum(a * b, axis=-1) / np.sqrt(np.sum(a * a, axis=-1) * np.sum(b * b, axis=-1))


def euclidean(p, q) -> np.ndarray:
    """Euclidean distance ``‖p − q‖₂``.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...,)
        Euclidean distance, one per row.

    Examples
    --------
    >>> float(euclidean([0.90, 0.08, 0.02], [0.90, 0.02, 0.08]).round(4))  # Table 1
    0.0849
    """
    a, b = _pair(p, q)
    d = a - b
    return np.sqrt(np.sum(d * d, axis=-1))


def jensen_shannon(p, q) -> np.ndarray:
    """Jensen–Shannon divergence ``½KL(p‖m) + ½KL(q‖m)``, ``m = (p+q)/2``, in nats.

    The divergence, not its square root; ``0 ln 0 = 0``. It is non-negative;
    a value that rounding pushes below zero (rows equal to the last bits) is returned as 0.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...,)
        Jensen–Shannon divergence in nats, in [0, ln 2], one per row.

    Examples
    --------
    >>> float(jensen_shannon([0.90, 0.08, 0.02], [0.70, 0.24, 0.06]).round(4))  # Table 1
    0.0324
    """
    a, b = np.broadcast_arrays(*_pair(p, q))
    m = 0.5 * (a + b)

    def kl_to_m(x):
        ratio = np.divide(x, m, out=np.ones_like(m), where=x > 0)
        return np.sum(np.where(x > 0, x * np.log(ratio), 0.0), axis=-1)

    return np.maximum(0.5 * kl_to_m(a) + 0.5 * kl_to_m(b), 0.0)


def bhattacharyya(p, q) -> np.ndarray:
    """Bhattacharyya coefficient ``BC = Σ_i sqrt(p_i q_i)``.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...,)
        Bhattacharyya coefficient, in [0, 1], one per row.

    Examples
    --------
    >>> float(bhattacharyya([0.5, 0.5], [0.5, 0.5]))
    1.0
    """
    a, b = _pair(p, q)
    return np.sum(np.sqrt(a * b), axis=-1)


def hellinger(p, q) -> np.ndarray:
    """Hellinger distance ``sqrt(1 − BC)``; rounding that pushes BC past 1 gives 0.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...,)
        Hellinger distance, in [0, 1], one per row.

    Examples
    --------
    >>> float(hellinger([1.0, 0.0], [0.0, 1.0]))
    1.0
    """
    return np.sqrt(np.maximum(1.0 - bhattacharyya(p, q), 0.0))


def fisher_rao(p, q) -> np.ndarray:
    """Fisher–Rao distance ``2 arccos(BC)``; rounding that pushes BC past 1 gives 0.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.

    Returns
    -------
    ndarray, shape (...,)
        Fisher–Rao distance, in [0, π], one per row.

    Examples
    --------
    >>> float(fisher_rao([1.0, 0.0], [0.0, 1.0]).round(6))  # 2 arccos(0) = pi
    3.141593
    """
    return 2.0 * np.arccos(np.minimum(bhattacharyya(p, q), 1.0))


def view(rows, convention: str, sink: Sink = (0,)) -> np.ndarray:
    """The rows a classical metric sees: ``keep`` → ``p``; ``drop`` → ``𝒞(p_C)``.

    Parameters
    ----------
    rows : array_like, shape (..., D)
        Compositions.
    convention : {'keep', 'drop'}
        Keep the sink, or drop it and re-close.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    ndarray, shape (..., D) or (..., D - k)
        The rows the metric compares.

    Examples
    --------
    >>> view([0.9, 0.08, 0.02], 'drop')
    array([0.8, 0.2])
    """
    if convention == "keep":
        return as_composition(rows)
    if convention == "drop":
        return drop_sink(rows, sink)
    raise ValueError(f"unknown convention {convention!r}; use 'keep' or 'drop'")


@dataclass(frozen=True)
class RowMetric:
    """A way of comparing two rows, with what "closer" means for it.

    ``sink_blind`` metrics (the content distance) are computed from the kept
    rows and the sink set under *both* conventions: one code path, so their
    verdicts cannot flip between conventions.
    """

    name: str
    label: str
    function: Callable
    larger_is_closer: bool = False
    sink_blind: bool = False
    uses_eps: bool = False
    short: str = ""
    """The metric's name in a table's column header, where the full label would not fit ("1 − cos", "Euclid.")."""

    def __call__(self, p, q, convention: str = "keep", sink: Sink = (0,), eps: float = DEFAULT_EPS):
        """Distance (or similarity) between ``p`` and ``q`` under ``convention``."""
        if self.sink_blind:
            if convention not in CONVENTIONS:
                raise ValueError(f"unknown convention {convention!r}; use 'keep' or 'drop'")
            return self.function(p, q, sink=sink, eps=eps)
        a, b = view(p, convention, sink), view(q, convention, sink)
        return self.function(a, b, eps=eps) if self.uses_eps else self.function(a, b)


METRICS: dict[str, RowMetric] = {
    m.name: m
    for m in (
        RowMetric("cosine", "cosine", cosine, larger_is_closer=True, short="1 − cos"),
        RowMetric("js", "Jensen–Shannon", jensen_shannon, short="JS"),
        RowMetric("euclidean", "Euclidean", euclidean, short="Euclid."),
        RowMetric("hellinger", "Hellinger", hellinger, short="Hell."),
        RowMetric("fisher_rao", "Fisher–Rao", fisher_rao, short="FR"),
        RowMetric("aitchison", "d_A", aitchison, uses_eps=True, short="d_A"),
        RowMetric("content", "d_A^⊥", content_distance, sink_blind=True, uses_eps=True, short="d_A^⊥"),
    )
}

# The metric groups every chapter reads, each in the order its tables and results files give it. One home: no other
# module writes a tuple of metric names.
CLASSICAL = ("cosine", "js", "euclidean")
"""The three classical metrics whose reversal rates the paper's Table 2 reports."""
CALIBRATED = (*CLASSICAL, "hellinger")
"""The metrics with a calibration curve and a frozen prediction (Fisher–Rao's verdicts are Hellinger's)."""
CURVES = (*CALIBRATED, "content")
"""The calibration curves' metrics: the calibrated ones, with the content distance as the check that stays at zero."""
REVERSAL = (*CALIBRATED, "fisher_rao", "content")
"""Every metric whose keep-vs-drop reversal rate a measurement records."""
TAXONOMY = (*CLASSICAL, "content")
"""The metrics whose head taxonomies the audits compare across conventions (Table 5)."""
CLUSTERED = ("js", "cosine", "euclidean", "content")
"""The head-distance metrics of the clustering chapter (Clark et al.'s JS first), in its results files' order."""
BHATTACHARYYA = ("hellinger", "fisher_rao")
"""The two distances that are functions of the Bhattacharyya coefficient alone, so their verdicts coincide."""
DOMINANCE = ("js", "euclidean", "aitchison")
"""The metrics the theory chapter tests subcompositional dominance on (it holds for the Aitchison distance only)."""
STAKES = ("js", "content")
"""The dropped-row JS and the content distance: the pair whose prune-set stakes (temperature, sink definition) the
audits' Table 8 compares."""


def get_metric(metric: str | RowMetric) -> RowMetric:
    """Look a metric up by name (``cosine``, ``js``, ``euclidean``, ``hellinger``, ``fisher_rao``, ``aitchison``, ``content``).

    Parameters
    ----------
    metric : str or RowMetric
        A name of :data:`METRICS` (or a metric, returned as it is).

    Returns
    -------
    RowMetric
        The metric with its label and direction.

    Examples
    --------
    >>> get_metric('js').larger_is_closer, get_metric('cosine').larger_is_closer
    (False, True)
    """
    if isinstance(metric, RowMetric):
        return metric
    try:
        return METRICS[metric]
    except KeyError:
        raise ValueError(f"unknown metric {metric!r}; known: {', '.join(METRICS)}") from None
