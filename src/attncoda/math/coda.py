"""Compositional data analysis of attention rows (Aitchison geometry).

A *row* is the last axis of an array: ``p[..., i]`` is the attention one query
pays to key ``i``. Every function broadcasts over the leading axes.

The sink set ``S`` is a sequence of key indices (default ``(0,)``, the first
key); the content set ``C`` is every other key. ``k = |S|``, ``n = |C|``.

Logarithms never see a zero: the Aitchison functions first apply
:func:`replace_zeros` with ``eps`` (default ``1e-6``) to the *whole* row, so
the keep and drop views share one zero-replaced row. Only exact zeros are
replaced; a row without one enters the logarithm untouched, and ``eps`` then
changes nothing.
"""

from __future__ import annotations

from typing import NamedTuple, Sequence

import numpy as np

from ..base.protocol import DEFAULT_EPS


SUM_TOLERANCE = 1e-6
"""How far a row's sum may sit from 1 before it is rejected."""

Sink = int | Sequence[int] | None


# --------------------------------------------------------------------------- input checks


def _finite_nonneg(x, name: str) -> np.ndarray:
    """Return ``x`` as a float64 array with at least one axis, or raise ValueError."""
    a = np.asarray(x, dtype=np.float64)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one part along its last axis (a row is the last axis)")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} contains NaN or infinite entries; attention rows must be finite")
    if np.any(a < 0):
        raise ValueError(f"{name} has negative entries; attention rows are non-negative")
    return a


def as_composition(p, name: str = "p", tol: float = SUM_TOLERANCE) -> np.ndarray:
    """Validate that every row of ``p`` is a probability vector and return it as float64.

    Raises ValueError for non-finite or negative entries, or rows whose sum is more
    than ``tol`` away from 1 (the message says to apply :func:`closure`).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Candidate compositions.
    name : str
        What the error message calls ``p``.
    tol : float
        Largest allowed distance of a row's sum from 1.

    Returns
    -------
    ndarray, shape (..., D)
        ``p`` as float64.

    Examples
    --------
    >>> as_composition([0.25, 0.75])
    array([0.25, 0.75])
    """
    a = _finite_nonneg(p, name)
    sums = a.sum(axis=-1)
    off = np.abs(sums - 1.0) > tol
    if np.any(off):
        worst = float(sums.flat[np.argmax(np.abs(sums - 1.0).ravel())])
        raise ValueError(
            f"{name}: {int(off.sum())} row(s) do not sum to 1 within {tol:g} "
            f"(worst sum {worst:.6g}); apply closure() first"
        )
    return a


def split_indices(sink: Sink, n_parts: int) -> tuple[np.ndarray, np.ndarray]:
    """Return ``(S, C)``: sorted sink and content key indices for rows of ``n_parts`` parts.

    ``sink`` is an int or a sequence of ints (negative indices count from the
    end); ``None`` means ``(0,)``. Raises ValueError for an empty sink set, an
    index out of range, a repeated index, or an empty content set.

    Parameters
    ----------
    sink : int, sequence of int or None
        Key indices of the sink set S (None: (0,)).
    n_parts : int
        Parts per row (D).

    Returns
    -------
    tuple of ndarray
        ``(S, C)``: sorted sink indices and the content indices.

    Examples
    --------
    >>> split_indices((0, -1), 4)
    (array([0, 3]), array([1, 2]))
    """
    if sink is None:
        sink = (0,)
    if isinstance(sink, (bool, np.bool_, str, bytes)) or not isinstance(sink, (int, np.integer, list, tuple, np.ndarray, range)):
        raise ValueError(f"sink must be a key index or a sequence of key indices (e.g. sink=(0,)); got {sink!r}")
    if isinstance(sink, (int, np.integer)):
        sink = (int(sink),)
    if not all(isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)) for i in sink):
        raise ValueError(f"sink indices must be whole numbers (e.g. sink=(0,)); got {tuple(sink)!r}")
    idx = [int(i) for i in sink]
    if not idx:
        raise ValueError("the sink set is empty; pass at least one key index, e.g. sink=(0,)")
    for i in idx:
        if not -n_parts <= i < n_parts:
            raise ValueError(f"sink index {i} is out of range for rows of {n_parts} parts")
    norm = sorted(i % n_parts for i in idx)
    if len(set(norm)) != len(norm):
        raise ValueError(f"sink set {tuple(idx)} repeats an index")
    if len(norm) == n_parts:
        raise ValueError(f"sink set {tuple(idx)} covers all {n_parts} parts; the content set is empty")
    sink_idx = np.array(norm, dtype=np.intp)
    content_idx = np.setdiff1d(np.arange(n_parts), sink_idx)
    return sink_idx, content_idx


# --------------------------------------------------------------------------- basic operations


def closure(x) -> np.ndarray:
    """Closure ``𝒞(x) = x / Σ_i x_i`` along the last axis.

    ``x`` must be finite, non-negative, and have a positive total in every row.

    Parameters
    ----------
    x : array_like, shape (..., D)
        Non-negative parts with a positive total in every row.

    Returns
    -------
    ndarray, shape (..., D)
        The rows scaled to sum to 1.

    Examples
    --------
    >>> closure([2.0, 1.0, 1.0])
    array([0.5 , 0.25, 0.25])
    """
    a = _finite_nonneg(x, "x")
    total = a.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("x has a row with zero total; closure needs at least one positive part per row")
    return a / total


def replace_zeros(x, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Multiplicative replacement of exact zeros (Martín-Fernández et al. 2003; methods: :ref:`methods-zeros`).

    Parts that are exactly ``0`` (softmax underflow) become ``ε``; every other part
    is scaled by ``1 − m·ε`` (``m`` = number of zeros in its row), so the row still
    sums to 1 and the ratios among the non-zero parts are unchanged. Small positive
    parts are data and are never floored; a row without a zero is returned as it is,
    bit for bit. This is ``skbio.stats.composition.multi_replace(x, delta=ε)``.

    Parameters
    ----------
    x : array_like, shape (..., D)
        Compositions (rows on the last axis, each summing to 1).
    eps : float
        The value given to each zero; ``D·ε < 1`` is required.

    Returns
    -------
    ndarray, shape (..., D)
        Compositions without exact zeros (``x`` itself when it has none).

    Examples
    --------
    >>> replace_zeros([0.5, 0.5, 0.0], eps=0.01)
    array([0.495, 0.495, 0.01 ])
    >>> replace_zeros([0.5, 0.5 - 1e-9, 1e-9], eps=0.01)[2]  # a small part is data: untouched
    np.float64(1e-09)
    """
    a = as_composition(x, "x")
    if not (np.isfinite(eps) and eps > 0):
        raise ValueError(f"eps must be a positive number, got {eps!r}")
    if a.shape[-1] * eps >= 1:
        raise ValueError(f"eps={eps:g} is too large for rows of {a.shape[-1]} parts (need D·eps < 1)")
    zero = a == 0
    if not np.any(zero):
        return a
    n_zero = zero.sum(axis=-1, keepdims=True)
    return np.where(zero, eps, a * (1.0 - n_zero * eps))


def count_zeros(x) -> int:
    """Number of parts that are exactly zero (the parts :func:`replace_zeros` replaces).

    Parameters
    ----------
    x : array_like
        Compositions.

    Returns
    -------
    int
        How many parts are exactly 0.

    Examples
    --------
    >>> count_zeros([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]])
    3
    """
    return int(np.count_nonzero(np.asarray(x) == 0))


def clr(x) -> np.ndarray:
    """Centred log-ratio ``clr(x)_i = ln x_i − (1/D) Σ_j ln x_j``.

    ``x`` must be strictly positive (apply :func:`replace_zeros` first); it need
    not be closed, since clr ignores the total.

    Parameters
    ----------
    x : array_like, shape (..., D)
        Strictly positive parts (closed or not).

    Returns
    -------
    ndarray, shape (..., D)
        Centred log-ratios; each row sums to 0.

    Examples
    --------
    >>> clr([1.0, 1.0, 1.0])
    array([0., 0., 0.])
    """
    a = _finite_nonneg(x, "x")
    if np.any(a == 0):
        raise ValueError("clr needs strictly positive parts; apply replace_zeros() first")
    return centre(np.log(a))


def log_rows(p, eps: float) -> np.ndarray:
    """``ln`` of the zero-replaced composition ``p`` (the shared start of every Aitchison quantity).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    eps : float
        Value given to exact zeros before a logarithm (:func:`replace_zeros`); the callers pass ``DEFAULT_EPS``.

    Returns
    -------
    ndarray, shape (..., D)
        ``ln`` of the zero-replaced rows.
    """
    return np.log(replace_zeros(p, eps))


def check_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Return ``a, b`` if their rows have the same number of parts and their leading axes broadcast; else one clear ValueError.

    Parameters
    ----------
    a, b : ndarray, shape (..., D)
        Two stacks of rows (or their logs).

    Returns
    -------
    tuple of ndarray
        ``a, b`` unchanged, once their shapes are known to match.
    """
    if a.shape[-1] != b.shape[-1]:
        raise ValueError(f"p and q have different numbers of parts ({a.shape[-1]} and {b.shape[-1]}); compare rows over the same keys")
    try:
        np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"p has shape {a.shape} and q has shape {b.shape}: their leading axes do not broadcast") from None
    return a, b


def _log_pair(p, q, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """Logs of two zero-replaced compositions, checked by :func:`check_pair`."""
    return check_pair(log_rows(p, eps), log_rows(q, eps))


def centre(lx: np.ndarray) -> np.ndarray:
    """Centre log-parts on their row mean: ``clr(x) = ln x − mean(ln x)`` given ``lx = ln x``.

    Parameters
    ----------
    lx : ndarray, shape (..., D)
        Logs of the parts of each row.

    Returns
    -------
    ndarray, shape (..., D)
        The centred logs; each row sums to zero.

    Examples
    --------
    >>> centre(np.log(np.array([1.0, 2.0, 4.0]))).round(6).tolist()
    [-0.693147, 0.0, 0.693147]
    """
    return lx - lx.mean(axis=-1, keepdims=True)


def drop_sink(p, sink: Sink = (0,)) -> np.ndarray:
    """The *drop* convention: ``p' = 𝒞(p_C)``, the content subcomposition.

    Raises ValueError if a row puts all of its mass on the sink (the dropped view
    is then undefined; :func:`replace_zeros` first makes it defined).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    ndarray, shape (..., D - k)
        The content subcomposition ``𝒞(p_C)``.

    Examples
    --------
    >>> drop_sink([0.9, 0.08, 0.02])
    array([0.8, 0.2])
    """
    a = as_composition(p)
    _, content = split_indices(sink, a.shape[-1])
    part = a[..., content]
    total = part.sum(axis=-1, keepdims=True)
    if np.any(total <= 0):
        raise ValueError("a row puts all its mass on the sink, so dropping the sink leaves nothing; apply replace_zeros() first")
    return part / total


def perturb(p, w) -> np.ndarray:
    """Perturbation ``p ⊕ w = 𝒞(p ⊙ w)`` (a shared logit bias ``ln w``).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    w : array_like, shape (..., D)
        Strictly positive weights (``exp`` of a logit bias).

    Returns
    -------
    ndarray, shape (..., D)
        ``𝒞(p ⊙ w)``.

    Examples
    --------
    >>> perturb([0.5, 0.5], [3.0, 1.0])
    array([0.75, 0.25])
    """
    a = as_composition(p)
    b = _finite_nonneg(w, "w")
    if np.any(b == 0):
        raise ValueError("w must be strictly positive (it is exp of a logit bias)")
    return closure(a * b)


def temper(p, tau: float) -> np.ndarray:
    """Logit temperature: ``𝒞(p^{1/τ})``. In clr coordinates this is ``clr(p)/τ``.

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    tau : float
        Temperature, > 0.

    Returns
    -------
    ndarray, shape (..., D)
        ``𝒞(p^{1/τ})``.

    Examples
    --------
    >>> temper([0.8, 0.2], 0.5).round(4)
    array([0.9412, 0.0588])
    """
    a = as_composition(p)
    if not (np.isfinite(tau) and tau > 0):
        raise ValueError(f"temperature tau must be a positive number, got {tau!r}")
    with np.errstate(divide="ignore"):
        lx = np.where(a > 0, np.log(np.where(a > 0, a, 1.0)), -np.inf) / tau
    lx = lx - lx.max(axis=-1, keepdims=True)
    return closure(np.exp(lx))


# --------------------------------------------------------------------------- Aitchison geometry


def aitchison(p, q, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Aitchison distance ``d_A(p, q) = ‖clr(p) − clr(q)‖₂`` (after zero replacement).

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    ndarray, shape (...,)
        Aitchison distance, one per row.

    Examples
    --------
    >>> p, q = [0.90, 0.08, 0.02], [0.70, 0.24, 0.06]
    >>> float(aitchison(p, q).round(4))  # the paper's Table 1
    1.1022
    """
    lp, lq = _log_pair(p, q, eps)
    diff = centre(lp) - centre(lq)
    return np.sqrt(np.sum(diff * diff, axis=-1))


def ilr_cosine(p, q, eps: float = DEFAULT_EPS) -> np.ndarray:
    """ILR-cosine ``ρ_A(p, q)``: the cosine between ``clr(p)`` and ``clr(q)``.

    NaN where a row is uniform (its clr is the zero vector).

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    ndarray, shape (...,)
        Cosine between clr vectors, in [-1, 1] (NaN for a uniform row), one per row.

    Examples
    --------
    >>> float(ilr_cosine([0.7, 0.2, 0.1], [0.7, 0.2, 0.1]).round(12))
    1.0
    """
    lp, lq = _log_pair(p, q, eps)
    cp, cq = centre(lp), centre(lq)
    num = np.sum(cp * cq, axis=-1)
    den = np.sqrt(np.sum(cp * cp, axis=-1) * np.sum(cq * cq, axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def balance(p, sink: Sink = (0,), eps: float = DEFAULT_EPS) -> np.ndarray:
    """Sink balance (an ILR coordinate) ``b(p) = sqrt(k·n/(k+n)) · ln(g(p_S)/g(p_C))`` (methods: :ref:`methods-aitchison`).

    ``g`` is the geometric mean, ``k = |S|``, ``n = |C|``.

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    ndarray, shape (...,)
        The sink-vs-content balance b(p), one per row.

    Examples
    --------
    >>> float(balance([0.5, 0.25, 0.25]).round(4))  # sqrt(2/3) ln(0.5/0.25)
    0.566
    """
    lx = log_rows(p, eps)
    return balance_from_logs(lx, *split_indices(sink, lx.shape[-1]))


def balance_from_logs(lx: np.ndarray, s_idx: np.ndarray, c_idx: np.ndarray) -> np.ndarray:
    """:func:`balance` from the row's logs ``lx = ln p`` and the sink and content indices (one code path for
    :func:`balance` and :func:`decompose`).

    Parameters
    ----------
    lx : ndarray, shape (..., D)
        Logs of the (zero-replaced) rows.
    s_idx, c_idx : ndarray of int
        Indices of the sink parts S and the content parts C.

    Returns
    -------
    ndarray, shape (...,)
        The sink-vs-content balance b(p), one per row.

    Examples
    --------
    >>> float(balance_from_logs(np.log(np.array([0.5, 0.25, 0.25])), np.array([0]), np.array([1, 2])).round(4))
    0.566
    """
    k, n = len(s_idx), len(c_idx)
    return np.sqrt(k * n / (k + n)) * (lx[..., s_idx].mean(axis=-1) - lx[..., c_idx].mean(axis=-1))


def content_clr(lx: np.ndarray, content: np.ndarray) -> np.ndarray:
    """clr of the content subcomposition from the row's logs: ``ln p_C − mean ln p_C``.

    Closure does not change clr, so this equals ``clr(𝒞 p_C)``; computing it from
    the logs of the kept row gives one code path for both conventions.

    Parameters
    ----------
    lx : ndarray, shape (..., D)
        Logs of the rows.
    content : ndarray of int
        Indices of the content parts C.

    Returns
    -------
    ndarray, shape (..., len(C))
        ``clr(𝒞 p_C)``.
    """
    return centre(lx[..., content])


class Decomposition(NamedTuple):
    """Lemma 1: ``total² = within_sink² + sink² + content²`` (all are distances)."""

    total: np.ndarray
    sink: np.ndarray
    within_sink: np.ndarray
    content: np.ndarray


def decompose(p, q, sink: Sink = (0,), eps: float = DEFAULT_EPS) -> Decomposition:
    r"""Exact orthogonal split of the Aitchison distance (Lemma 1; methods: :ref:`methods-aitchison`).

    :math:`d_A^2(p,q) = d_A^2(\mathcal{C}p_S, \mathcal{C}q_S) + (b(p) - b(q))^2 + d_A^2(\mathcal{C}p_C, \mathcal{C}q_C)`

    Returns the four distances in this order: ``total`` :math:`= d_A(p,q)`, ``sink`` :math:`= |b(p) - b(q)|`,
    ``within_sink`` :math:`= d_A(\mathcal{C}p_S, \mathcal{C}q_S)` (zero when :math:`k = 1`) and
    ``content`` :math:`= d_A^\perp(p,q) = d_A(\mathcal{C}p_C, \mathcal{C}q_C)`.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    Decomposition
        ``total``, ``sink``, ``within_sink`` and ``content`` distances, each of shape (...,).

    Examples
    --------
    >>> d = decompose([0.90, 0.08, 0.02], [0.70, 0.24, 0.06])
    >>> [round(float(x), 4) for x in d]  # total, sink, within-sink, content
    [1.1022, 1.1022, 0.0, 0.0]
    """
    lp, lq = _log_pair(p, q, eps)
    s_idx, c_idx = split_indices(sink, lp.shape[-1])

    def norm(v):
        return np.sqrt(np.sum(v * v, axis=-1))

    total = norm(centre(lp) - centre(lq))
    within = norm(centre(lp[..., s_idx]) - centre(lq[..., s_idx]))
    sink_part = np.abs(balance_from_logs(lp, s_idx, c_idx) - balance_from_logs(lq, s_idx, c_idx))
    content = norm(content_clr(lp, c_idx) - content_clr(lq, c_idx))
    return Decomposition(total=total, sink=sink_part, within_sink=within, content=content)


def content_distance(p, q, sink: Sink = (0,), eps: float = DEFAULT_EPS) -> np.ndarray:
    """Content distance ``d_A^⊥(p, q) = d_A(𝒞p_C, 𝒞q_C)`` (methods: :ref:`methods-aitchison`).

    It ignores the sink entirely, so it takes the same value whether the sink is
    kept or dropped; the verdict pipeline calls this one function for both
    conventions, so its keep-vs-drop flip rate is exactly zero.

    Parameters
    ----------
    p, q : array_like, shape (..., D)
        Compositions on the same D keys; leading axes broadcast.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    ndarray, shape (...,)
        Content distance (between the content parts alone), one per row.

    Examples
    --------
    >>> p, r = [0.90, 0.08, 0.02], [0.90, 0.02, 0.08]
    >>> float(content_distance(p, r).round(4))
    1.9605
    """
    lp, lq = _log_pair(p, q, eps)
    _, c_idx = split_indices(sink, lp.shape[-1])
    diff = content_clr(lp, c_idx) - content_clr(lq, c_idx)
    return np.sqrt(np.sum(diff * diff, axis=-1))


def content_concentration(p, sink: Sink = (0,), eps: float = DEFAULT_EPS) -> np.ndarray:
    r"""Content concentration :math:`C_A^\perp(p) = \lVert \mathrm{clr}(\mathcal{C}p_C) \rVert^2 = \frac{1}{2n} \sum_{i,j \in C} (\ln \pi_i - \ln \pi_j)^2`.

    Zero for uniform content, large for concentrated content, blind to the sink.

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    ndarray, shape (...,)
        Content concentration (the squared norm of the content parts' clr), one per row.

    Examples
    --------
    >>> float(content_concentration([0.5, 0.25, 0.25]))  # uniform content
    0.0
    """
    lx = log_rows(p, eps)
    _, c_idx = split_indices(sink, lx.shape[-1])
    c = content_clr(lx, c_idx)
    return np.sum(c * c, axis=-1)


def aitchison_mean(rows, eps: float = DEFAULT_EPS) -> np.ndarray:
    """Aitchison (geometric) mean of rows on a common support (methods: :ref:`methods-signatures`).

    ``𝒞(exp((1/N) Σ_t ln x⁽ᵗ⁾))`` after zero replacement; ``rows`` has shape
    ``(..., N, D)`` and the result ``(..., D)``.

    Parameters
    ----------
    rows : array_like, shape (..., N, D)
        N compositions on a common support.
    eps : float, default 1e-6
        Value given to exact zeros before a logarithm (:func:`replace_zeros`).

    Returns
    -------
    ndarray, shape (..., D)
        Their closed geometric mean.

    Examples
    --------
    >>> aitchison_mean([[0.5, 0.5], [0.8, 0.2]]).round(4)
    array([0.6667, 0.3333])
    """
    a = np.asarray(rows)
    if a.ndim < 2:
        raise ValueError("aitchison_mean needs rows of shape (..., N, D): a stack of N rows")
    if a.shape[-2] == 0:
        raise ValueError("aitchison_mean needs at least one row")
    m = log_rows(a, eps).mean(axis=-2)
    return closure(np.exp(m - m.max(axis=-1, keepdims=True)))


# --------------------------------------------------------------------------- entropy


def _xlogx(a: np.ndarray) -> np.ndarray:
    """``x ln x`` with ``0 ln 0 = 0``."""
    safe = np.where(a > 0, a, 1.0)
    return np.where(a > 0, a * np.log(safe), 0.0)


def entropy(p) -> np.ndarray:
    """Shannon entropy ``H(p) = −Σ_i p_i ln p_i`` in nats (``0 ln 0 = 0``).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).

    Returns
    -------
    ndarray, shape (...,)
        Shannon entropy in nats, one per row.

    Examples
    --------
    >>> float(entropy([0.5, 0.5]).round(6))
    0.693147
    """
    return -np.sum(_xlogx(as_composition(p)), axis=-1)


def _part_entropy(part: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Entropy of ``𝒞(part)`` from the unclosed parts: ``ln T − (1/T) Σ x ln x``; NaN where ``T = 0``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        h = np.log(total) - np.sum(_xlogx(part), axis=-1) / total
    return np.where(total > 0, h, np.nan)


class EntropySplit(NamedTuple):
    """``entropy = binary + sink_term + content_term`` (the entropy identity)."""

    entropy: np.ndarray
    binary: np.ndarray
    sink_term: np.ndarray
    content_term: np.ndarray
    content_entropy: np.ndarray
    sink_mass: np.ndarray


def entropy_split(p, sink: Sink = (0,)) -> EntropySplit:
    """Exact entropy identity ``H(p) = h(s) + s·H(𝒞p_S) + (1 − s)·H(𝒞p_C)`` (methods: :ref:`methods-entropy`).

    ``s`` is the sink mass and ``h(s) = −s ln s − (1−s) ln(1−s)``. The content
    entropy ``H(π) = H(𝒞p_C)`` is computed from the content parts themselves
    (their own total, never ``1 − s``), so it stays accurate when the content
    mass is tiny. It is NaN for a row with exactly zero content mass, where it
    is undefined (its weighted term is then 0).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    EntropySplit
        ``entropy``, ``binary`` (h(s)), ``sink_term``, ``content_term``, ``content_entropy`` and ``sink_mass``, each of shape (...,).

    Examples
    --------
    >>> s = entropy_split([0.5, 0.25, 0.25])
    >>> bool(abs(s.entropy - (s.binary + s.sink_term + s.content_term)) < 1e-15), float(s.content_entropy.round(6))
    (True, 0.693147)
    """
    a = as_composition(p)
    s_idx, c_idx = split_indices(sink, a.shape[-1])
    ps, pc = a[..., s_idx], a[..., c_idx]
    s, c = ps.sum(axis=-1), pc.sum(axis=-1)
    binary = -(_xlogx(s) + _xlogx(c))
    h_sink = _part_entropy(ps, s)
    h_content = _part_entropy(pc, c)
    sink_term = np.where(s > 0, s * np.nan_to_num(h_sink), 0.0)
    content_term = np.where(c > 0, c * np.nan_to_num(h_content), 0.0)
    return EntropySplit(
        entropy=-np.sum(_xlogx(a), axis=-1),
        binary=binary,
        sink_term=sink_term,
        content_term=content_term,
        content_entropy=h_content,
        sink_mass=s,
    )


def drop_share(start: dict, end: dict) -> float:
    """The share of a fall of mean row entropy that the sink carries, ``1 − ΔH(π)/ΔH`` between two states (dicts
    with ``entropy`` and ``content_entropy``, e.g. :func:`attncoda.studies.collapse.entropy_means` or one layer of
    them); NaN unless ``H`` fell. By :func:`entropy_split`, a sink that grows while the content stays lowers ``H``
    alone (share 1); content that sharpens under a fixed sink mass ``s`` gives ``−s/(1 − s)``.

    Parameters
    ----------
    start, end : dict
        Mean ``entropy`` (``H``) and ``content_entropy`` (``H(π)``) of the earlier and the later state.

    Returns
    -------
    float
        ``1 − (H(π)_end − H(π)_start) / (H_end − H_start)``, or NaN when ``H`` did not fall.

    Examples
    --------
    >>> round(drop_share({"entropy": 3.0, "content_entropy": 2.5}, {"entropy": 2.0, "content_entropy": 2.4}), 12)
    0.9
    >>> drop_share({"entropy": 2.0, "content_entropy": 2.0}, {"entropy": 2.5, "content_entropy": 2.0})
    nan
    """
    dh = end["entropy"] - start["entropy"]
    if not dh < 0:
        return float("nan")
    return float(1.0 - (end["content_entropy"] - start["content_entropy"]) / dh)


def content_entropy(p, sink: Sink = (0,)) -> np.ndarray:
    """Content entropy ``H(π) = H(𝒞p_C)`` (see :func:`entropy_split`).

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    ndarray, shape (...,)
        Content entropy H(π) (NaN where the content mass is 0), one per row.

    Examples
    --------
    >>> float(content_entropy([0.98, 0.01, 0.01]).round(6))  # ln 2: the sink does not count
    0.693147
    """
    return entropy_split(p, sink).content_entropy


def sink_mass(p, sink: Sink = (0,)) -> np.ndarray:
    r"""Sink mass :math:`s = \sum_{i \in S} p_i`.

    Parameters
    ----------
    p : array_like, shape (..., D)
        Compositions, one per row of the last axis (each sums to 1).
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    ndarray, shape (...,)
        Sink mass s, one per row.

    Examples
    --------
    >>> float(sink_mass([0.6, 0.3, 0.1], sink=(0, 2)))
    0.7
    """
    a = as_composition(p)
    s_idx, _ = split_indices(sink, a.shape[-1])
    return a[..., s_idx].sum(axis=-1)
