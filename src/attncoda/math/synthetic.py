"""Synthetic attention rows for the theory and calibration chapters.

Every generator takes a ``numpy.random.Generator`` (or a seed) and is
deterministic given it. Rows put the sink at index 0 and ``n`` content parts after it.
"""

from __future__ import annotations

import numpy as np

from .coda import closure, content_concentration, entropy_split
from .metrics import get_metric

WITNESS = {
    "p": (0.90, 0.08, 0.02),
    "q": (0.70, 0.24, 0.06),
    "r": (0.90, 0.02, 0.08),
}
"""Table 1's three rows over (sink, a, b): q shares p's content ratio 4:1, r shares p's sink mass."""


def witness() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The witness rows ``p, q, r`` as float64 arrays.

    Returns
    -------
    tuple of ndarray
        The rows ``p, q, r`` of Theorem 1's witness, shape (3,) each.
    """
    return tuple(np.array(WITNESS[k]) for k in "pqr")


def sink_and_content(sink_masses, content: np.ndarray) -> np.ndarray:
    """Rows ``(s, (1−s)·π)``: sink mass ``s`` at index 0, content composition ``π`` after it.

    Parameters
    ----------
    sink_masses : array_like, shape (...,)
        Sink mass of each row.
    content : ndarray, shape (..., n)
        Content compositions π.

    Returns
    -------
    ndarray, shape (..., 1 + n)
        Rows with the sink at index 0.
    """
    s = np.asarray(sink_masses, dtype=np.float64)[..., None]
    return np.concatenate([s, (1.0 - s) * content], axis=-1)


def sink_masses_around(rng: np.random.Generator, target: float, size, kappa: float = 50.0) -> np.ndarray:
    """Sink masses ``~ Beta(κ·s, κ·(1 − s))``: mean ``s``, spread shrinking with ``κ``.

    Parameters
    ----------
    rng : numpy.random.Generator or int
        Random source, or a seed for one.
    target : float
        Mean sink mass, in (0, 1).
    size : int or tuple
        How many.
    kappa : float
        Concentration of the Beta law.

    Returns
    -------
    ndarray
        Sink masses ``~ Beta(κs, κ(1 − s))``.
    """
    if not 0 < target < 1:
        raise ValueError(f"target sink mass must lie strictly between 0 and 1, got {target}")
    return rng.beta(kappa * target, kappa * (1.0 - target), size)


# --------------------------------------------------------------------------- Figure 6


def simplex_positions(rng, n: int = 20_000, min_part: float = 0.004) -> np.ndarray:
    """``n`` Dirichlet(1,1,1) draws with every part above ``min_part`` (rejection sampling).

    Parameters
    ----------
    rng : numpy.random.Generator or int
        Random source, or a seed for one.
    n : int
        Number of points.
    min_part : float
        Smallest part allowed.

    Returns
    -------
    ndarray, shape (n, 3)
        Points of the 3-part simplex.
    """
    rng = np.random.default_rng(rng)
    kept = []
    count = 0
    while count < n:
        draw = rng.dirichlet(np.ones(3), size=2 * n)
        draw = draw[np.all(draw > min_part, axis=1)]
        kept.append(draw)
        count += len(draw)
    return np.concatenate(kept)[:n]


def reversal_region(q_positions: np.ndarray, metric: str = "cosine", sink=(0,)) -> dict[str, np.ndarray]:
    """Keep and drop verdicts of ``metric`` on ``(p; q, r)`` with the witness ``p, r`` and each ``q``.

    Returns ``keep`` and ``drop`` verdict arrays (``+1``: q closer, ``−1``: r
    closer, ``0``: tie) and ``reversed`` (both non-zero and different).

    Parameters
    ----------
    q_positions : ndarray, shape (n, 3)
        Candidate rows q.
    metric : str
        The metric judged.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    dict of str to ndarray
        ``keep``, ``drop`` (verdicts) and ``reversed`` (bool), one per q.
    """
    from .verdicts import verdict

    m = get_metric(metric)
    p, _, r = witness()
    keep, drop = (verdict(m(p, q_positions, conv, sink), m(p, r, conv, sink), m.larger_is_closer) for conv in ("keep", "drop"))
    return {"keep": keep, "drop": drop, "reversed": (keep != 0) & (drop != 0) & (keep != drop)}


# --------------------------------------------------------------------------- Figure 2


def layered_rows(
    rng,
    sink_masses,
    concentrations,
    n_rows: int = 4000,
    n_content: int = 31,
    focus: int = 0,
    noise_sd: float = 0.1,
    kappa: float = 50.0,
) -> np.ndarray:
    """Synthetic layers of attention rows with a controlled sink and content channel.

    Layer ``ℓ`` has ``n_rows`` rows. Each row's sink mass is
    ``Beta(κ s_ℓ, κ(1−s_ℓ))`` and its content is ``softmax(z)`` over
    ``n = n_content`` parts, with the logits ``z`` set so that ``E[C_A^⊥] = C_ℓ``:

    * ``focus = 0``: ``z_i ~ N(0, σ²)`` i.i.d., ``σ² = C_ℓ/(n − 1)``;
    * ``focus = m > 0``: ``z_i ~ N(0, noise_sd²)`` plus a bump ``μ_ℓ`` on ``m``
      randomly placed focus tokens, ``μ_ℓ² = (C_ℓ − (n−1)·noise_sd²)·n / (m(n−m))``.

    Returns an array ``(layers, n_rows, 1 + n_content)`` with the sink at index 0.

    Parameters
    ----------
    rng : numpy.random.Generator or int
        Random source, or a seed for one.
    sink_masses, concentrations : array_like, shape (layers,)
        Each layer's target sink mass s and content concentration C.
    n_rows : int
        Rows per layer.
    n_content : int
        Content parts n.
    focus : int
        Focus tokens per row (0: i.i.d. logits).
    noise_sd : float
        Logit noise around the focus bump.
    kappa : float
        Concentration of the sink-mass Beta law.

    Returns
    -------
    ndarray, shape (layers, n_rows, 1 + n_content)
        The rows, sink at index 0.
    """
    rng = np.random.default_rng(rng)
    s_targets = np.asarray(sink_masses, dtype=np.float64)
    c_targets = np.asarray(concentrations, dtype=np.float64)
    if s_targets.shape != c_targets.shape or s_targets.ndim != 1:
        raise ValueError("sink_masses and concentrations must be 1-D and of equal length (one value per layer)")
    if not 0 <= focus < n_content:
        raise ValueError(f"focus must be between 0 and n_content - 1, got {focus}")
    layers = []
    for s, c in zip(s_targets, c_targets):
        if focus == 0:
            z = rng.normal(0.0, np.sqrt(c / (n_content - 1)), (n_rows, n_content))
        else:
            spread = c - (n_content - 1) * noise_sd**2
            if spread < 0:
                raise ValueError(f"target C_A^⊥ = {c} is below what the noise alone gives; lower noise_sd")
            bump = np.sqrt(spread * n_content / (focus * (n_content - focus)))
            z = rng.normal(0.0, noise_sd, (n_rows, n_content))
            picks = np.argsort(rng.random((n_rows, n_content)), axis=1)[:, :focus]
            np.put_along_axis(z, picks, np.take_along_axis(z, picks, axis=1) + bump, axis=1)
        content = closure(np.exp(z - z.max(axis=1, keepdims=True)))
        layers.append(sink_and_content(sink_masses_around(rng, s, n_rows, kappa), content))
    return np.stack(layers)


def layer_summary(rows: np.ndarray, sink=(0,)) -> dict[str, np.ndarray]:
    """Per-layer means of sink mass, entropy ``H``, content entropy ``H(π)`` and ``C_A^⊥``.

    Parameters
    ----------
    rows : ndarray, shape (layers, n_rows, D)
        Rows of each layer.
    sink : int or sequence of int, default (0,)
        Key indices of the sink set S (negative indices count from the end).

    Returns
    -------
    dict of str to ndarray
        Per-layer means of ``sink_mass``, ``entropy``, ``content_entropy`` and ``concentration``.
    """
    split = entropy_split(rows, sink)
    return {
        "sink_mass": split.sink_mass.mean(axis=-1),
        "entropy": split.entropy.mean(axis=-1),
        "content_entropy": split.content_entropy.mean(axis=-1),
        "concentration": content_concentration(rows, sink).mean(axis=-1),
    }


# --------------------------------------------------------------------------- Figure 3 calibration


def calibration_heads(rng, n_heads: int, n_content: int, alpha: float, sink_mass: float, kappa: float = 50.0) -> np.ndarray:
    """A synthetic model's head signatures (methods: :ref:`methods-calibration`).

    Each head: sink mass ``~ Beta(κs, κ(1−s))``, content ``π ~ Dirichlet(α·1_n)``;
    returns ``(n_heads, 1 + n_content)`` rows.

    Parameters
    ----------
    rng : numpy.random.Generator or int
        Random source, or a seed for one.
    n_heads : int
        Heads of the synthetic model.
    n_content : int
        Content parts n.
    alpha : float
        Dirichlet concentration of the content.
    sink_mass : float
        Mean sink mass s.
    kappa : float
        Concentration of the sink-mass Beta law.

    Returns
    -------
    ndarray, shape (n_heads, 1 + n_content)
        Head signatures, sink at index 0.
    """
    rng = np.random.default_rng(rng)
    content = rng.dirichlet(np.full(n_content, alpha), size=n_heads)
    return sink_and_content(sink_masses_around(rng, sink_mass, n_heads, kappa), content)
