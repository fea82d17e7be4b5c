"""Head-to-head distances summed over positions: Clark et al.'s (2019) head distance, streamed.

``rows`` has shape ``(positions, heads, D)``: at each position (a window and a query
token) every head's row over the same ``D`` keys. :func:`pair_distance_sums` returns
the ``(heads, heads)`` matrix of ``Σ_positions d(row_i, row_j)``, so a caller can add
batches and divide by the number of positions at the end, without keeping any rows.

* ``js``: Jensen–Shannon divergence, ``JS = ½(Σ p ln p + Σ q ln q) − Σ m ln m``,
  ``m = (p + q)/2``, one logarithm per part and pair (fdlibm's, in compiled loops the compiler vectorizes; the pair
  triangle folded so both halves of it run in parallel with equal work);
* ``cosine``: ``1 − cos`` and ``euclidean``: ``‖p − q‖``, through one Gram matrix per block of positions;
* ``content``: ``‖c_i − c_j‖`` where ``rows`` already hold each row's content clr
  coordinates (``d_A^⊥``), through Gram matrices.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .metrics import CLUSTERED

PAIR_METRICS = CLUSTERED
_CHUNK = 64


# fdlibm's logarithm (e_log.c): x = 2^e · (1 + f) with 1 + f in [√2/2, √2), s = f / (2 + f),
# log(1 + f) = f − (f²/2 − s·(f²/2 + R(s²))) with R a degree-14 polynomial; error below one ulp.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
       1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)
_TINY = 2.2250738585072014e-308  # smallest normal double; below it a value is scaled by 2^54 first
_TWO54 = 1.8014398509481984e16
_MANTISSA = 0x000FFFFFFFFFFFFF
_SQRT2_MANTISSA = 0x6A09E667F3BCD  # mantissa bits of √2
_HALF_EXPONENT, _ONE_EXPONENT = 0x3FE0000000000000, 0x3FF0000000000000


@njit(cache=True, inline="always")
def _mean_xlogx_terms(a, b, scaled, reduced, exponent, terms):  # pragma: no cover - compiled
    """``terms[k] = m_k ln m_k`` with ``m = (a + b)/2`` over a row (0 ln 0 = 0; ``a`` and ``b`` the same row give
    ``a ln a`` exactly, since halving a doubled float is exact), with ``ln`` computed as fdlibm does, in loops the
    compiler vectorizes: the scratch rows (``scaled``, ``reduced``, ``exponent``, each as long as the row) keep each
    loop free of branches and of a running sum."""
    parts = a.shape[0]
    bits, mantissa = scaled.view(np.int64), reduced.view(np.int64)
    for k in range(parts):
        v = 0.5 * (a[k] + b[k])
        scaled[k] = v * _TWO54 if v < _TINY else v
    for k in range(parts):
        word = bits[k]
        fraction = word & _MANTISSA
        big = fraction > _SQRT2_MANTISSA
        mantissa[k] = fraction | (_HALF_EXPONENT if big else _ONE_EXPONENT)
        exponent[k] = (word >> 52) - 1023 + (1 if big else 0)
    lg1, lg2, lg3, lg4, lg5, lg6, lg7 = _LG
    for k in range(parts):
        v = 0.5 * (a[k] + b[k])
        e = exponent[k] - (54.0 if v < _TINY else 0.0)
        f = reduced[k] - 1.0
        s = f / (2.0 + f)
        z = s * s
        w = z * z
        r = z * (lg1 + w * (lg3 + w * (lg5 + w * lg7))) + w * (lg2 + w * (lg4 + w * lg6))
        half_f2 = 0.5 * f * f
        log_v = e * _LN2_HI - ((half_f2 - (s * (half_f2 + r) + e * _LN2_LO)) - f)
        terms[k] = v * log_v if v > 0.0 else 0.0


@njit(cache=True, inline="always")
def _mean_xlogx(a, b, scaled, reduced, exponent, terms):  # pragma: no cover - compiled
    """``Σ m ln m`` over a row: :func:`_mean_xlogx_terms`, then one sum in order (the same order as a scalar loop)."""
    _mean_xlogx_terms(a, b, scaled, reduced, exponent, terms)
    total = 0.0
    for k in range(a.shape[0]):
        total += terms[k]
    return total


@njit(parallel=True, cache=True)
def _xlogx_sums(x, out):  # pragma: no cover - compiled
    positions, heads, parts = x.shape
    for p in prange(positions):
        scaled, reduced, exponent, terms = np.empty(parts), np.empty(parts), np.empty(parts), np.empty(parts)
        for i in range(heads):
            out[p, i] = _mean_xlogx(x[p, i], x[p, i], scaled, reduced, exponent, terms)


_GROUP = 8
"""Pairs whose ``Σ m ln m`` sums run side by side in :func:`_js_sums`."""


@njit(parallel=True, cache=True)
def _js_sums(x, plogp, out):  # pragma: no cover - compiled
    """Every pair's ``Σ_positions JS``. Row ``r`` and row ``heads − 1 − r`` share one parallel task, so every task
    holds about ``heads`` pairs (rows alone would give the first thread most of the triangle).

    Head ``i`` meets heads ``j … j + 7`` together: their terms are formed first, then their eight sums run in one loop,
    each in key order. A sum in order is a chain of dependent additions; eight independent chains keep the adder busy,
    and every pair's sum keeps its own order, so the result is the same bits as one pair at a time
    (``benchmarks/pair_kernels.py`` measures both)."""
    positions, heads, parts = x.shape
    for task in prange((heads + 1) // 2):
        scaled, reduced, exponent = np.empty(parts), np.empty(parts), np.empty(parts)
        terms = np.zeros((_GROUP, parts))
        first, last = np.int64(task), np.int64(heads - 1 - task)
        for which in range(2):
            i = first if which == 0 else last
            if which == 1 and last == first:
                break
            for j in range(i + 1, heads, _GROUP):
                n = min(_GROUP, heads - j)
                totals = np.zeros(_GROUP)
                for p in range(positions):
                    for g in range(n):
                        _mean_xlogx_terms(x[p, i], x[p, j + g], scaled, reduced, exponent, terms[g])
                    sums = np.zeros(_GROUP)
                    for k in range(parts):
                        for g in range(_GROUP):
                            sums[g] += terms[g, k]
                    for g in range(n):
                        totals[g] += 0.5 * (plogp[p, i] + plogp[p, j + g]) - sums[g]
                for g in range(n):
                    out[i, j + g] = totals[g]
                    out[j + g, i] = totals[g]


def _xlogx_sum(x: np.ndarray) -> np.ndarray:
    out = np.empty(x.shape[:2])
    _xlogx_sums(x, out)
    return out


def pair_distance_sums(rows: np.ndarray, metric: str) -> np.ndarray:
    """``(heads, heads)`` sums over positions of ``metric`` between every two heads' rows at the same position.

    Parameters
    ----------
    rows : ndarray, shape (positions, heads, D)
        Each head's row at each position.
    metric : str
        A metric of :data:`PAIR_METRICS`.

    Returns
    -------
    ndarray, shape (heads, heads)
        Sums over positions of the metric between two heads' rows.

    Examples
    --------
    >>> rows = np.array([[[0.5, 0.5], [1.0, 0.0]]])  # one position, two heads
    >>> pair_distance_sums(rows, "euclidean").round(4)
    array([[0.    , 0.7071],
           [0.7071, 0.    ]])
    """
    return pair_distance_sums_of(rows, (metric,))[metric]


def pair_distance_sums_of(rows: np.ndarray, metrics) -> dict[str, np.ndarray]:
    """:func:`pair_distance_sums` of several metrics on the same rows: ``1 − cos`` and the Euclidean distance (also
    ``content`` on clr rows) read one Gram matrix per block of positions, formed once for all of them.

    Parameters
    ----------
    rows : ndarray, shape (positions, heads, D)
        Each head's row at each position.
    metrics : sequence of str
        Metrics of :data:`PAIR_METRICS`.

    Returns
    -------
    dict of str to ndarray, shape (heads, heads)
        Each metric's sums over positions between two heads' rows.

    Examples
    --------
    >>> rows = np.array([[[0.6, 0.8], [1.0, 0.0]]])  # one position, two heads
    >>> {m: float(d[0, 1].round(4)) for m, d in pair_distance_sums_of(rows, ("cosine", "euclidean")).items()}
    {'cosine': 0.4, 'euclidean': 0.8944}
    """
    x = np.ascontiguousarray(rows, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"rows must have shape (positions, heads, D), got {x.shape}")
    unknown = [m for m in metrics if m not in PAIR_METRICS]
    if unknown:
        raise ValueError(f"unknown head metric {unknown[0]!r}; use one of {', '.join(PAIR_METRICS)}")
    heads = x.shape[1]
    out = {m: np.zeros((heads, heads)) for m in metrics}
    if "js" in out:
        _js_sums(x, _xlogx_sum(x), out["js"])
        out["js"] = np.maximum(out["js"], 0.0)
    gram_metrics = [m for m in metrics if m != "js"]
    if not gram_metrics:
        return out
    idx = np.arange(heads)
    for start in range(0, x.shape[0], _CHUNK):
        block = x[start : start + _CHUNK]
        gram = block @ block.transpose(0, 2, 1)
        sq = np.einsum("pii->pi", gram)
        for metric in gram_metrics:
            if metric == "cosine":
                norms = np.sqrt(sq)
                d = 1.0 - gram / (norms[:, :, None] * norms[:, None, :])
            else:
                d = np.sqrt(np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * gram, 0.0))
            d[:, idx, idx] = 0.0
            out[metric] += d.sum(axis=0)
    return out
