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
from llvmlite import ir
from numba import njit, prange
from numba.core import types
from numba.extending import intrinsic

from .pairdist import _LN2_HI, _LN2_LO  # ln 2 split for Cody and Waite's reduction (fdlibm's constants)

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


_TWO_TO_MINUS_54 = 2.0**-54


@intrinsic
def _float_from_bits(typingctx, bits):  # pragma: no cover - compiled
    """The float64 whose IEEE-754 bits are the int64 ``bits`` (a bit cast, which vectorizes)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@njit(inline="always", fastmath={"contract"})
def _exp_nonpositive(y):  # pragma: no cover - compiled
    """``exp(y)`` for ``y ≤ 0`` in arithmetic alone, so a loop over it vectorizes (``math.exp`` is a libm call).

    ``y = k·ln 2 + r`` with ``k = round(y / ln 2)`` and ``|r| ≤ ln 2 / 2``; ``exp(r)`` is its Taylor polynomial to
    ``r¹²/12!`` (truncation below ``0.35¹³/13! < 4e-16``); ``2^k`` is built from its exponent bits, in two factors
    (``2^(k+54)`` then ``2^−54``) so that a subnormal result is rounded once. ``y`` below ``−745.5`` gives 0, as
    ``exp`` does. Relative error about 3e-16 against ``math.exp`` (``tests/math/test_rowstats.py``).
    """
    y = y if y > -745.5 else -745.5
    k = math.floor(y * (1.0 / _LN2_HI) + 0.5)
    r = (y - k * _LN2_HI) - k * _LN2_LO
    p = 1.0 / 479001600.0
    p = p * r + 1.0 / 39916800.0
    p = p * r + 1.0 / 3628800.0
    p = p * r + 1.0 / 362880.0
    p = p * r + 1.0 / 40320.0
    p = p * r + 1.0 / 5040.0
    p = p * r + 1.0 / 720.0
    p = p * r + 1.0 / 120.0
    p = p * r + 1.0 / 24.0
    p = p * r + 1.0 / 6.0
    p = p * r + 0.5
    p = p * r + 1.0
    p = p * r + 1.0
    return (p * _float_from_bits((np.int64(k) + 54 + 1023) << 52)) * _TWO_TO_MINUS_54


@njit(inline="always")
def _larger(a, b):  # pragma: no cover - compiled
    return a if a > b else b


@njit(inline="always")
def _row_max(row, width):  # pragma: no cover - compiled
    """``max(row[:width])`` over eight interleaved lanes (a compare-and-select per element, which vectorizes where
    ``max`` with its NaN rules does not). NaN is never the answer; the caller counts NaNs itself."""
    a0 = a1 = a2 = a3 = a4 = a5 = a6 = a7 = row.dtype.type(-np.inf)
    whole = width - width % 8
    for j in range(0, whole, 8):
        a0, a1, a2, a3 = _larger(row[j], a0), _larger(row[j + 1], a1), _larger(row[j + 2], a2), _larger(row[j + 3], a3)
        a4, a5, a6, a7 = _larger(row[j + 4], a4), _larger(row[j + 5], a5), _larger(row[j + 6], a6), _larger(row[j + 7], a7)
    top = _larger(_larger(_larger(a0, a1), _larger(a2, a3)), _larger(_larger(a4, a5), _larger(a6, a7)))
    for j in range(whole, width):
        top = _larger(row[j], top)
    return np.float64(top)


@njit(inline="always", fastmath={"reassoc", "contract"})
def _score_row(row, width, in_sink, in_content, out, lse, r, t):  # pragma: no cover - compiled
    """The four statistics of ``softmax(row[:width])``, written to ``out[:, r, t]`` and its log-sum-exp to ``lse[r, t]``.

    With ``m = max z`` over the support, ``y = z − m``, ``e = exp(y)`` and ``ℓ = ln Σ e``, the row's
    log-probabilities are ``y − ℓ``, so every statistic is a ratio of running sums:
    ``s = Σ_S e / Σ e``; ``H = ℓ − Σ e·y / Σ e``; ``H_C = ln c − (Σ_C e·y − ℓ·Σ_C e) / (c·Σ e)`` with
    ``c = Σ_C e / Σ e``; ``C_A^⊥ = Σ_C y² − (Σ_C y)²/n`` (a shift of the logs leaves it unchanged). A key whose score
    is ``−inf`` (hidden by a mask) is outside the row's support; a row holding a NaN score, or no visible key, gives
    NaN throughout.

    The sums run branch-free (``in_sink`` and ``in_content`` are 0/1 weights, a hidden key contributes ``e = y = 0``)
    and may be reassociated, so the loop runs on vector lanes: the order of a sum's terms, not its terms, differs from
    a sequential loop (agreement with one to about 1e-13 relative, ``tests/engine/test_capture.py``).
    """
    top = _row_max(row, width)
    total = 0.0
    total_ey = 0.0
    sink = 0.0
    content = 0.0
    content_ey = 0.0
    content_y = 0.0
    content_yy = 0.0
    n_content = 0.0
    n_nan = 0.0
    for j in range(width):
        x = np.float64(row[j])
        seen = x > -np.inf
        n_nan += 1.0 if x != x else 0.0
        y = x - top if seen else 0.0
        e = _exp_nonpositive(y) if seen else 0.0
        w = in_content[j] if seen else 0.0
        ey = e * y
        total += e
        total_ey += ey
        sink += e * in_sink[j]
        content += e * w
        content_ey += ey * w
        content_y += y * w
        content_yy += y * y * w
        n_content += w
    if n_nan > 0.0 or top == -np.inf:
        lse[r, t] = np.nan
        for i in range(4):
            out[i, r, t] = np.nan
        return
    log_total = math.log(total)
    lse[r, t] = top + log_total
    out[0, r, t] = sink / total
    out[1, r, t] = log_total - total_ey / total
    c = content / total
    out[2, r, t] = math.log(c) - (content_ey - log_total * content) / (total * c) if content > 0.0 else np.nan
    out[3, r, t] = max(content_yy - content_y * content_y / n_content, 0.0) if n_content > 0.0 else np.nan


@njit(parallel=True, cache=True, fastmath={"reassoc", "contract"})
def _scores_kernel(z, in_sink, in_content, causal, out, lse):  # pragma: no cover - compiled
    """:func:`_score_row` for every row of ``z`` ``(rows, Q, K)``. The parallel loop runs over pairs of queries
    ``(t, Q − 1 − t)`` of every row, so a causal map's short and long rows share each thread's work evenly even when
    ``rows`` is 1."""
    rows, queries, keys = z.shape
    half = (queries + 1) // 2
    for i in prange(rows * half):
        r = i // half
        t = i - r * half
        _score_row(z[r, t], t + 1 + (keys - queries) if causal else keys, in_sink, in_content, out, lse, r, t)
        mirror = queries - 1 - t
        if mirror != t:
            _score_row(z[r, mirror], mirror + 1 + (keys - queries) if causal else keys, in_sink, in_content, out, lse, r, mirror)


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
    in_sink = _sink_mask(sink, keys).astype(np.float64)
    _scores_kernel(flat, in_sink, 1.0 - in_sink, bool(causal), out, lse)
    return {name: out[i].reshape(a.shape[:-1]) for i, name in enumerate(STATISTICS)}, lse.reshape(a.shape[:-1])
