"""Closer-head verdicts on triples, and keep-vs-drop reversal rates (methods: :ref:`methods-verdicts`).

A triple ``(p; q, r)`` of distinct heads asks: is ``q`` or ``r`` closer to ``p``?
Its verdict under a metric and a convention is ``+1`` (``q`` closer), ``−1``
(``r`` closer) or ``0`` (an exact tie). A *reversal* is a triple whose verdict is
``+1`` under one convention and ``−1`` under the other; triples tied under
either convention are excluded from the rate and counted.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Iterable

import numpy as np

from ..base.protocol import N_TRIPLES
from .coda import DEFAULT_EPS, Sink, as_composition
from .metrics import BHATTACHARYYA, CONVENTIONS, CURVES, RowMetric, get_metric, view

_CHUNK_ELEMENTS = 2_000_000


def check_triples(triples, n_heads: int) -> np.ndarray:
    """Triples given by a caller, checked (ValueError in one line): an ``(n, 3)`` array of whole head indices in
    ``0..n_heads − 1``, three distinct heads in each (a repeated head ties by construction and would be dropped).

    Parameters
    ----------
    triples : array_like, shape (n, 3)
        Head indices ``(p, q, r)``.
    n_heads : int
        Number of heads the indices refer to.

    Returns
    -------
    ndarray, shape (n, 3)
        The triples as an integer array.

    Examples
    --------
    >>> check_triples([[0, 1, 2]], 3).tolist()
    [[0, 1, 2]]
    >>> check_triples([[0, 1, 5]], 3)
    Traceback (most recent call last):
    ...
    ValueError: triples must index heads 0..2; got indices from 0 to 5
    """
    t = np.asarray(triples)
    if t.ndim != 2 or t.shape[1] != 3 or len(t) == 0:
        raise ValueError(f"triples must be a non-empty (n, 3) array of head indices; got shape {t.shape}")
    if not np.issubdtype(t.dtype, np.integer):
        raise ValueError(f"triples must hold whole head indices; got {t.dtype} values")
    if t.min() < 0 or t.max() >= n_heads:
        raise ValueError(f"triples must index heads 0..{n_heads - 1}; got indices from {t.min()} to {t.max()}")
    if np.any((t[:, 0] == t[:, 1]) | (t[:, 1] == t[:, 2]) | (t[:, 0] == t[:, 2])):
        raise ValueError("every triple must name three distinct heads; some repeat a head")
    return t


def sample_triples(n_heads: int, n_triples: int, rng: np.random.Generator | int) -> np.ndarray:
    """Draw ``n_triples`` triples of three distinct head indices, uniformly, as an ``(n, 3)`` array.

    Parameters
    ----------
    n_heads : int
        Number of heads to draw from (>= 3).
    n_triples : int
        Number of triples.
    rng : numpy.random.Generator or int
        Random source, or a seed for one.

    Returns
    -------
    ndarray, shape (n_triples, 3)
        Head indices ``(p, q, r)``, distinct within each triple.

    Examples
    --------
    >>> t = sample_triples(5, 1000, 0)
    >>> t.shape, bool((t[:, 0] != t[:, 1]).all() and (t[:, 1] != t[:, 2]).all() and (t[:, 0] != t[:, 2]).all())
    ((1000, 3), True)
    """
    if n_heads < 3:
        raise ValueError(f"need at least 3 heads to form a triple, got {n_heads}")
    if isinstance(n_triples, (bool, np.bool_)) or not isinstance(n_triples, (int, np.integer)) or n_triples < 1:
        raise ValueError(f"n_triples must be a positive whole number, got {n_triples!r}")
    if not isinstance(rng, (np.random.Generator, int, np.integer)) or isinstance(rng, (bool, np.bool_)):
        raise ValueError(f"seed must be a whole number or a numpy Generator, got {rng!r}")
    rng = np.random.default_rng(rng)
    a = rng.integers(0, n_heads, n_triples)
    b = rng.integers(0, n_heads - 1, n_triples)
    b = b + (b >= a)
    c = rng.integers(0, n_heads - 2, n_triples)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    c = c + (c >= lo)
    c = c + (c >= hi)
    return np.stack([a, b, c], axis=1)


def _gram_distances(features: np.ndarray) -> np.ndarray:
    """Euclidean distances between feature rows through the Gram matrix: ``sqrt(|a|² + |b|² − 2a·b)``."""
    sq = np.einsum("ij,ij->i", features, features)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * features @ features.T, 0.0)
    np.fill_diagonal(d2, 0.0)
    return np.sqrt(d2)


def _pairwise_gram(name: str, x: np.ndarray, convention: str, sink: Sink, eps: float) -> np.ndarray | None:
    """Matrix-product forms of the metrics that have one (all but Jensen–Shannon); None otherwise."""
    from .coda import centre, content_clr, log_rows, split_indices
    from .metrics import view

    if name == "content":
        lx = log_rows(x, eps)
        return _gram_distances(content_clr(lx, split_indices(sink, x.shape[1])[1]))
    v = view(x, convention, sink)
    if name == "aitchison":
        return _gram_distances(centre(log_rows(v, eps)))
    if name == "euclidean":
        return _gram_distances(v)
    if name == "cosine":
        norms = np.sqrt(np.einsum("ij,ij->i", v, v))
        return (v @ v.T) / np.outer(norms, norms)
    if name in BHATTACHARYYA:
        root = np.sqrt(v)
        bc = root @ root.T
        np.fill_diagonal(bc, 1.0)  # a row against itself: BC = 1 exactly
        return np.sqrt(np.maximum(1.0 - bc, 0.0)) if name == "hellinger" else 2.0 * np.arccos(np.minimum(bc, 1.0))
    return None


def pairwise(metric: str | RowMetric, rows, convention: str = "keep", sink: Sink = (0,), eps: float = DEFAULT_EPS, method: str = "broadcast") -> np.ndarray:
    """``(H, H)`` matrix of ``metric(rows[i], rows[j])`` under ``convention``.

    ``method="broadcast"`` calls the metric itself on row blocks (memory stays bounded);
    ``method="gram"`` uses matrix products where the metric has such a form (every metric
    but Jensen–Shannon), many times faster for hundreds of heads and equal to the
    broadcast values up to rounding (tested to 1e-12). The frozen calibration curves
    were computed with ``broadcast``.

    Parameters
    ----------
    metric : str or RowMetric
        The metric.
    rows : array_like, shape (H, D)
        Head signatures.
    convention : {'keep', 'drop'}
        Keep the sink, or drop it and re-close (sink-blind metrics ignore it).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).
    method : {'broadcast', 'gram'}
        How the matrix is computed.

    Returns
    -------
    ndarray, shape (H, H)
        ``metric(rows[i], rows[j])``.

    Examples
    --------
    >>> pairwise('euclidean', [[1.0, 0.0], [0.0, 1.0]]).round(4)
    array([[0.    , 1.4142],
           [1.4142, 0.    ]])
    """
    m = get_metric(metric)
    x = as_composition(rows, "rows")
    if x.ndim != 2:
        raise ValueError(f"rows must have shape (heads, keys), got {x.shape}")
    if method not in ("broadcast", "gram"):
        raise ValueError(f"unknown method {method!r}; use 'broadcast' or 'gram'")
    if method == "gram":
        fast = _pairwise_gram(m.name, x, convention, sink, eps)
        if fast is not None:
            if np.any(np.isnan(fast)):
                raise ValueError(f"{m.name} gave NaN for some pair of rows; check the rows")
            return symmetric(fast)
    h, d = x.shape
    block = max(1, _CHUNK_ELEMENTS // max(1, h * d))
    out = np.empty((h, h))
    if m.name in BITWISE_SYMMETRIC:  # each row seen once under the convention, then each pair once
        y = np.ascontiguousarray(view(x, convention, sink))
        for start in range(0, h, block):
            out[start : start + block, start:] = m.function(y[start : start + block, None, :], y[None, start:, :])
        out = np.triu(out) + np.triu(out, 1).T  # the lower triangle is the upper's mirror: the same bits as computing it
    else:
        for start in range(0, h, block):
            out[start : start + block] = m(x[start : start + block, None, :], x[None, :, :], convention, sink, eps)
    if np.any(np.isnan(out)):
        raise ValueError(f"{m.name} gave NaN for some pair of rows; check the rows (a uniform row has no ILR direction)")
    return symmetric(out)


BITWISE_SYMMETRIC = ("js",)
"""Metrics whose value for ``(p, q)`` has exactly the bits of ``(q, p)`` once both rows are seen the same way, so
:func:`pairwise` closes each row once (:func:`~attncoda.math.metrics.view`) and computes each pair once.
Jensen–Shannon is ``½KL(p‖m) + ½KL(q‖m)`` with ``m = (p + q)/2``: swapping the rows swaps two addends, and
floating-point addition commutes (``tests/math/test_verdicts.py`` checks it bit for bit). It is the one metric with no
matrix-product form, so the broadcast loop is its path at every length (the audit's ε sweep at long windows).
Before, each block re-closed its rows under the drop convention, and a row re-closed in another array shape can differ
in its last bit; the matrix then averaged ``JS(p, q)`` and ``JS(q, p)``."""


def symmetric(d: np.ndarray) -> np.ndarray:
    """``(d + dᵀ) / 2``: exactly symmetric, since floating-point addition commutes.

    Every metric here is symmetric, but ``m(p, q)`` and ``m(q, p)`` can differ in the last bit; a pruning walk
    that breaks ties by value would then decide them by rounding, which differs between machines.

    Parameters
    ----------
    d : ndarray, shape (H, H)
        A pairwise matrix of a symmetric metric.

    Returns
    -------
    ndarray, shape (H, H)
        The same matrix with ``d[i, j]`` and ``d[j, i]`` the same bits.

    Examples
    --------
    >>> d = np.array([[0.0, 0.1 + 0.2], [0.3, 0.0]])
    >>> bool(np.array_equal(symmetric(d), symmetric(d).T))
    True
    """
    return (d + d.T) / 2


def verdict(d_pq, d_pr, larger_is_closer: bool) -> np.ndarray:
    """Is ``q`` or ``r`` closer to ``p``? ``+1`` q, ``−1`` r, ``0`` an exact tie (from the two distances or similarities).

    Parameters
    ----------
    d_pq, d_pr : array_like
        The metric between p and q, and between p and r.
    larger_is_closer : bool
        True for similarities (cosine), False for distances.

    Returns
    -------
    ndarray of int8
        ``+1`` where q is closer, ``−1`` where r is, ``0`` on an exact tie.

    Examples
    --------
    >>> verdict(0.2, 0.1, larger_is_closer=False).tolist()  # r is closer
    -1
    """
    gap = np.asarray(d_pr) - np.asarray(d_pq)
    return np.sign(-gap if larger_is_closer else gap).astype(np.int8)


def closer_verdicts(dist: np.ndarray, triples: np.ndarray, larger_is_closer: bool) -> np.ndarray:
    """:func:`verdict` for every triple ``(p, q, r)`` of a pairwise matrix.

    Parameters
    ----------
    dist : ndarray, shape (H, H)
        A pairwise matrix (:func:`pairwise`).
    triples : ndarray, shape (n, 3)
        Head indices ``(p, q, r)``.
    larger_is_closer : bool
        True for similarities, False for distances.

    Returns
    -------
    ndarray of int8, shape (n,)
        One :func:`verdict` per triple.
    """
    p, q, r = triples[:, 0], triples[:, 1], triples[:, 2]
    return verdict(dist[p, q], dist[p, r], larger_is_closer)


def convention_verdicts(metric: str | RowMetric, rows, triples: np.ndarray, sink: Sink = (0,), eps: float = DEFAULT_EPS,
                        method: str = "broadcast") -> dict[str, np.ndarray]:
    """Each convention's :func:`closer_verdicts` of ``metric`` on the same triples (methods: :ref:`methods-verdicts`):
    the one place a keep verdict and its drop twin are made.

    Parameters
    ----------
    metric : str or RowMetric
        The row metric.
    rows : array_like, shape (H, D)
        One composition per head.
    triples : ndarray, shape (n, 3)
        Head indices ``(p, q, r)``.
    sink, eps, method
        As in :func:`pairwise`.

    Returns
    -------
    dict
        ``{"keep": verdicts, "drop": verdicts}``, each an int8 array of shape (n,).
    """
    m = get_metric(metric)
    return {conv: closer_verdicts(pairwise(m, rows, conv, sink, eps, method=method), triples, m.larger_is_closer) for conv in CONVENTIONS}


@dataclass(frozen=True)
class Reversal:
    """Outcome of comparing keep and drop verdicts on a set of triples."""

    metric: str
    rate: float
    reversed: int
    compared: int
    ties: int

    def as_dict(self) -> dict:
        return asdict(self)


def reversal_from_verdicts(metric: str, keep: np.ndarray, drop: np.ndarray) -> Reversal:
    """Reversal rate between two verdict arrays (ties in either are excluded and counted).

    Parameters
    ----------
    metric : str
        The metric's name (carried into the result).
    keep, drop : ndarray of int8
        The verdicts of the same triples under the two conventions.

    Returns
    -------
    Reversal
        The share of triples compared (no tie in either) whose verdict flips, with the counts.

    Examples
    --------
    >>> reversal_from_verdicts('cosine', np.array([1, 1, -1, 0]), np.array([1, -1, -1, 1])).rate
    0.3333333333333333
    """
    compared = (keep != 0) & (drop != 0)
    n_compared = int(compared.sum())
    n_reversed = int((compared & (keep != drop)).sum())
    rate = n_reversed / n_compared if n_compared else float("nan")
    return Reversal(metric, rate, n_reversed, n_compared, int((~compared).sum()))


def reversal_rates(
    rows,
    metrics: Iterable[str | RowMetric] = CURVES,
    sink: Sink = (0,),
    n_triples: int = N_TRIPLES,
    seed: int | np.random.Generator = 0,
    eps: float = DEFAULT_EPS,
    triples: np.ndarray | None = None,
) -> dict[str, Reversal]:
    """Keep-vs-drop reversal rates of several metrics on one shared sample of triples.

    ``rows`` is an ``(H, D)`` array of head signatures. Triples are drawn with
    :func:`sample_triples` from ``seed`` unless given.

    Parameters
    ----------
    rows : array_like, shape (H, D)
        Head signatures.
    metrics : iterable of str or RowMetric
        The metrics compared.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    n_triples : int
        Triples drawn when ``triples`` is not given.
    seed : int or numpy.random.Generator
        Random source of the triples.
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).
    triples : ndarray, shape (n, 3), optional
        The triples to judge.

    Returns
    -------
    dict of str to Reversal
        Per metric: its rate, reversed and compared counts, and ties.

    Examples
    --------
    >>> rates = reversal_rates(np.random.default_rng(0).dirichlet(np.ones(6), 20), ('js', 'content'), n_triples=500)
    >>> rates['content'].reversed
    0
    """
    x = as_composition(rows, "rows")
    triples = sample_triples(x.shape[0], n_triples, seed) if triples is None else check_triples(triples, x.shape[0])
    out = {}
    for metric in metrics:
        m = get_metric(metric)
        verdicts = convention_verdicts(m, x, triples, sink, eps)
        out[m.name] = reversal_from_verdicts(m.name, verdicts["keep"], verdicts["drop"])
    return out


def reversal_rate(
    rows,
    metric: str | RowMetric = "cosine",
    sink: Sink = (0,),
    n_triples: int = N_TRIPLES,
    seed: int | np.random.Generator = 0,
    eps: float = DEFAULT_EPS,
    triples: np.ndarray | None = None,
) -> Reversal:
    """Fraction of head triples whose closer-head verdict under ``metric`` flips between keep and drop.

    Parameters
    ----------
    rows : array_like, shape (H, D)
        Head signatures.
    metric : str or RowMetric
        The metric.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    n_triples : int
        Triples drawn when ``triples`` is not given.
    seed : int or numpy.random.Generator
        Random source of the triples.
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).
    triples : ndarray, shape (n, 3), optional
        The triples to judge.

    Returns
    -------
    Reversal
        The rate, reversed and compared counts, and ties.

    Examples
    --------
    >>> from attncoda.math.synthetic import witness
    >>> rows = np.array(witness())
    >>> reversal_rate(rows, 'cosine', triples=np.array([[0, 1, 2]])).reversed  # Theorem 1's witness
    1
    >>> reversal_rate(rows, 'content', triples=np.array([[0, 1, 2]])).reversed
    0
    """
    return next(iter(reversal_rates(rows, (metric,), sink, n_triples, seed, eps, triples).values()))
