"""Row statistics of attention maps in one pass: the hot path's compiled mirror of
``coda.entropy_split`` and ``coda.content_concentration`` (tested against them).

For each row ``p`` (its support: keys ``0..t`` for causal query ``t``, all keys otherwise):

* sink mass ``s = Σ_S p``;
* entropy ``H = −Σ p ln p``;
* content entropy ``H(π) = ln c − (1/c) Σ_C p ln p``, ``c = Σ_C p`` summed over the
  content parts themselves (NaN when ``c = 0``, never ``1 − s``);
* content concentration ``C_A^⊥ = Σ_C z² − (Σ_C z)²/n`` with ``z`` the logs of the
  content parts.

Three inputs. Scores (the softmax's input, as captured): each row is read twice in
float64, once for its maximum and once with one ``exp`` per element to accumulate
running sums, so no ``L × L`` float64 tensor is ever built; the per-row log-sum-exp is
returned too. Log-probabilities (float64): ``ln p`` as given. No ε enters either
path. Probabilities: exact zeros are replaced multiplicatively with ``ε`` (methods: :ref:`methods-zeros`): the ``m`` zero parts of a row's support get ``ln ε`` and the others
``ln p + ln(1 − mε)``; small positive parts are used as they are.

Every element is read once in float64 (scores twice) with one ``exp`` or ``log``; rows
run in parallel.
Only supports are visited, so a causal map costs half a dense pass.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

STATISTICS = ("sink_mass", "entropy", "content_entropy", "concentration")


@njit(parallel=True, cache=True)
def _kernel(a, is_sink, causal, logs, eps, out):  # pragma: no cover - compiled
    rows, queries, keys = a.shape
    log_eps = math.log(eps)
    for r in prange(rows):
        for t in range(queries):
            width = t + 1 + (keys - queries) if causal else keys
            s = 0.0
            h = 0.0
            content_mass = 0.0
            content_plogp = 0.0
            n_zero = 0
            a1 = 0.0
            a2 = 0.0
            n_positive = 0
            n_content = 0
            for j in range(width):
                if logs:
                    lx = np.float64(a[r, t, j])
                    x = math.exp(lx)
                else:
                    x = np.float64(a[r, t, j])
                    lx = math.log(x) if x > 0.0 else 0.0
                plogp = x * lx if x > 0.0 else 0.0
                h -= plogp
                if x == 0.0 and not logs:
                    n_zero += 1
                if is_sink[j]:
                    s += x
                else:
                    n_content += 1
                    content_mass += x
                    content_plogp += plogp
                    if logs or x > 0.0:
                        a1 += lx
                        a2 += lx * lx
                        n_positive += 1
            out[0, r, t] = s
            out[1, r, t] = h
            out[2, r, t] = math.log(content_mass) - content_plogp / content_mass if content_mass > 0.0 else np.nan
            if n_content > 0 and (logs or n_positive > 0):
                shift = math.log1p(-n_zero * eps)
                n_replaced = n_content - n_positive
                s1 = a1 + n_positive * shift + n_replaced * log_eps
                s2 = a2 + 2.0 * shift * a1 + n_positive * shift * shift + n_replaced * log_eps * log_eps
                out[3, r, t] = max(s2 - s1 * s1 / n_content, 0.0)
            else:
                out[3, r, t] = np.nan


@njit(parallel=True, cache=True)
def _scores_kernel(z, is_sink, causal, out, lse):  # pragma: no cover - compiled
    """The four statistics of ``softmax(z)`` per row, with one ``exp`` per element.

    With ``m = max z`` over the support, ``y = z − m``, ``e = exp(y)`` and ``ℓ = ln Σ e``, the row's
    log-probabilities are ``y − ℓ``, so every statistic is a ratio of running sums:
    ``s = Σ_S e / Σ e``; ``H = ℓ − Σ e·y / Σ e``; ``H_C = ln c − (Σ_C e·y − ℓ·Σ_C e) / (c·Σ e)`` with
    ``c = Σ_C e / Σ e``; ``C_A^⊥ = Σ_C y² − (Σ_C y)²/n`` (a shift of the logs leaves it unchanged). A key whose score
    is ``−inf`` (hidden by a mask) is outside the row's support.
    """
    rows, queries, keys = z.shape
    for r in prange(rows):
        for t in range(queries):
            width = t + 1 + (keys - queries) if causal else keys
            top = -np.inf
            for j in range(width):
                top = max(top, np.float64(z[r, t, j]))
            total = 0.0
            total_ey = 0.0
            sink = 0.0
            content = 0.0
            content_ey = 0.0
            content_y = 0.0
            content_yy = 0.0
            n_content = 0
            for j in range(width):
                if z[r, t, j] == -np.inf:  # a key hidden by a mask is outside the support
                    continue
                y = np.float64(z[r, t, j]) - top
                e = math.exp(y)
                ey = e * y if e > 0.0 else 0.0
                total += e
                total_ey += ey
                if is_sink[j]:
                    sink += e
                else:
                    content += e
                    content_ey += ey
                    content_y += y
                    content_yy += y * y
                    n_content += 1
            log_total = math.log(total)
            lse[r, t] = top + log_total
            out[0, r, t] = sink / total
            out[1, r, t] = log_total - total_ey / total
            c = content / total
            out[2, r, t] = math.log(c) - (content_ey - log_total * content) / (total * c) if content > 0.0 else np.nan
            out[3, r, t] = max(content_yy - content_y * content_y / n_content, 0.0) if n_content > 0 else np.nan


def row_statistics(weights: np.ndarray, sink, causal: bool, eps: float = 1e-6, logs: bool = False) -> dict[str, np.ndarray]:
    """Statistics of every row of ``weights`` (shape ``(..., Q, K)``); each result has shape ``(..., Q)``.

    ``weights`` holds probabilities, or log-probabilities when ``logs`` is True.
    ``sink`` is a sequence of key indices; ``causal`` restricts query ``t`` to keys
    ``0..t + K − Q``. Probability rows are taken as they come (float32 softmax output
    sums to 1 within about 1e-6); nothing is re-closed.

    Parameters
    ----------
    weights : ndarray, shape (..., Q, K)
        Attention maps: probabilities, or log-probabilities when ``logs``.
    sink : int or sequence of int
        Key indices of the sink set S (negative indices count from the end).
    causal : bool
        Whether query t sees only keys ``0..t + K − Q``.
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).
    logs : bool
        Whether ``weights`` holds log-probabilities.

    Returns
    -------
    dict of str to ndarray
        ``sink_mass``, ``entropy``, ``content_entropy`` and ``concentration``, each of shape (..., Q).

    Examples
    --------
    >>> stats = row_statistics(np.array([[0.5, 0.25, 0.25]]), sink=(0,), causal=False)
    >>> round(float(stats["content_entropy"][0]), 6) == round(float(np.log(2)), 6)
    True
    """
    a, flat = _stacked_rows(weights, "weights", np.float64)
    queries, keys = a.shape[-2:]
    out = np.empty((4, flat.shape[0], queries))
    _kernel(flat, _sink_mask(sink, keys), bool(causal), bool(logs), float(eps), out)
    return {name: out[i].reshape(a.shape[:-1]) for i, name in enumerate(STATISTICS)}


def _stacked_rows(x, what: str, dtype) -> tuple[np.ndarray, np.ndarray]:
    """``x`` as an array (cast to ``dtype`` unless float32 or float64) and as contiguous ``(rows, queries, keys)``."""
    a = np.asarray(x)
    if a.ndim < 2:
        raise ValueError(f"{what} must have at least two axes (queries, keys)")
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(dtype)
    return a, np.ascontiguousarray(a).reshape(-1, *a.shape[-2:])


def _sink_mask(sink, keys: int) -> np.ndarray:
    is_sink = np.zeros(keys, dtype=np.bool_)
    is_sink[list(sink)] = True
    return is_sink


def row_statistics_from_scores(scores: np.ndarray, sink, causal: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """:func:`row_statistics` of ``softmax(scores)`` along the last axis, with each row's log-sum-exp over its support.

    Each row is read twice in float64 (its maximum, then one ``exp`` per element into running sums), so the cost is
    two passes over the ``float32`` scores, never an ``L × L`` float64 tensor per head. A causal row's lse spans keys
    ``0..t + K − Q`` only (the masked keys carry no mass).

    Parameters
    ----------
    scores : ndarray, shape (..., Q, K)
        The softmax's input (attention logits after masking, scaling and any soft-capping), float32 or float64; a key
        scored ``−inf`` (hidden by a mask) is outside its row's support.
    sink : sequence of int
        Key indices of the sink set S.
    causal : bool
        Whether query t sees only keys ``0..t + K − Q``.

    Returns
    -------
    stats : dict of str to ndarray
        As :func:`row_statistics`, each of shape (..., Q).
    lse : ndarray, shape (..., Q)
        ``log Σ_j exp(z_j)`` over each row's support, in float64.

    Examples
    --------
    >>> z = np.log(np.array([[0.5, 0.25, 0.25]], dtype=np.float32)) + 3.0
    >>> stats, lse = row_statistics_from_scores(z, sink=(0,), causal=False)
    >>> round(float(lse[0]), 6), round(float(stats["content_entropy"][0]), 6) == round(float(np.log(2)), 6)
    (3.0, True)
    """
    a, flat = _stacked_rows(scores, "scores", np.float32)
    queries, keys = a.shape[-2:]
    out = np.empty((4, flat.shape[0], queries))
    lse = np.empty((flat.shape[0], queries))
    _scores_kernel(flat, _sink_mask(sink, keys), bool(causal), out, lse)
    return {name: out[i].reshape(a.shape[:-1]) for i, name in enumerate(STATISTICS)}, lse.reshape(a.shape[:-1])
