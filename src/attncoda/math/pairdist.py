"""Head-to-head distances summed over positions: Clark et al.'s (2019) head distance, streamed.

``rows`` has shape ``(positions, heads, D)``: at each position (a window and a query
token) every head's row over the same ``D`` keys. :func:`pair_distance_sums` returns
the ``(heads, heads)`` matrix of ``Σ_positions d(row_i, row_j)``, so a caller can add
batches and divide by the number of positions at the end, without keeping any rows.

* ``js``: Jensen–Shannon divergence, ``JS = ½(Σ p ln p + Σ q ln q) − Σ m ln m``,
  ``m = (p + q)/2``, one logarithm per part and pair (compiled, parallel over heads);
* ``cosine``: ``1 − cos`` and ``euclidean``: ``‖p − q‖``, through Gram matrices;
* ``content``: ``‖c_i − c_j‖`` where ``rows`` already hold each row's content clr
  coordinates (``d_A^⊥``), through Gram matrices.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .metrics import CLUSTERED

PAIR_METRICS = CLUSTERED
_CHUNK = 64


@njit(parallel=True, cache=True)
def _js_sums(x, plogp, out):  # pragma: no cover - compiled
    positions, heads, parts = x.shape
    for i in prange(heads):
        for j in range(i + 1, heads):
            total = 0.0
            for p in range(positions):
                s = 0.0
                for k in range(parts):
                    m = 0.5 * (x[p, i, k] + x[p, j, k])
                    if m > 0.0:
                        s += m * math.log(m)
                total += 0.5 * (plogp[p, i] + plogp[p, j]) - s
            out[i, j] = total
            out[j, i] = total


def _xlogx_sum(x: np.ndarray) -> np.ndarray:
    safe = np.where(x > 0, x, 1.0)
    return np.sum(np.where(x > 0, x * np.log(safe), 0.0), axis=-1)


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
    x = np.ascontiguousarray(rows, dtype=np.float64)
    if x.ndim != 3:
        raise ValueError(f"rows must have shape (positions, heads, D), got {x.shape}")
    if metric not in PAIR_METRICS:
        raise ValueError(f"unknown head metric {metric!r}; use one of {', '.join(PAIR_METRICS)}")
    heads = x.shape[1]
    out = np.zeros((heads, heads))
    if metric == "js":
        _js_sums(x, _xlogx_sum(x), out)
        return np.maximum(out, 0.0)
    for start in range(0, x.shape[0], _CHUNK):
        block = x[start : start + _CHUNK]
        gram = np.einsum("pik,pjk->pij", block, block)
        sq = np.einsum("pii->pi", gram)
        if metric == "cosine":
            norms = np.sqrt(sq)
            d = 1.0 - gram / (norms[:, :, None] * norms[:, None, :])
        else:
            d = np.sqrt(np.maximum(sq[:, :, None] + sq[:, None, :] - 2.0 * gram, 0.0))
        idx = np.arange(heads)
        d[:, idx, idx] = 0.0
        out += d.sum(axis=0)
    return out
