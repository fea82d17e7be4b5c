"""Layer-wise collapse, decomposed (methods: :ref:`methods-collapse`; Figure 4): does ``H`` move with the content entropy ``H(π)``?"""

from __future__ import annotations

import numpy as np

PROFILE_STATISTICS = ("entropy", "content_entropy", "sink_mass", "concentration")


def layer_profile(sig) -> dict[str, list[float]]:
    """Per-layer mean ``H``, ``H(π)``, sink mass and ``C_A^⊥`` over heads and query rows (causal: t >= 1)."""
    return {k: sig.layer_means(k).tolist() for k in PROFILE_STATISTICS}


def disagreeing_transitions(entropy, content_entropy) -> np.ndarray:
    """For each adjacent-layer transition: do ``H`` and ``H(π)`` move in opposite directions?

    Examples
    --------
    >>> disagreeing_transitions([3.0, 2.0, 1.0], [1.0, 1.5, 1.2]).tolist()
    [True, False]
    """
    return np.sign(np.diff(entropy)) * np.sign(np.diff(content_entropy)) < 0


def collapse_disagreement(entropy, content_entropy) -> float:
    """Share of adjacent-layer transitions on which ``H`` and ``H(π)`` move in opposite directions.

    Examples
    --------
    >>> collapse_disagreement([3.0, 2.0, 1.0], [1.0, 1.5, 1.2])
    0.5

    A one-layer model has no transition, so the share is undefined (NaN), without a warning:

    >>> collapse_disagreement([3.0], [1.0])
    nan
    """
    moves = disagreeing_transitions(entropy, content_entropy)
    return float(np.mean(moves)) if len(moves) else float("nan")


def seed_consistent_moves(profiles: list[dict], statistic: str) -> np.ndarray:
    """Per adjacent-layer transition: +1 where ``statistic`` rises in every seed's profile, −1 where it falls in every
    one, 0 where the seeds disagree (a move smaller than the text-sample noise has no direction).

    Examples
    --------
    >>> seed_consistent_moves([{"h": [3.0, 2.0, 2.1]}, {"h": [3.0, 2.5, 2.4]}], "h").tolist()
    [-1, 0]
    """
    signs = np.sign(np.diff(np.asarray([p[statistic] for p in profiles], dtype=float), axis=1))
    return np.where(np.all(signs > 0, axis=0), 1, np.where(np.all(signs < 0, axis=0), -1, 0))


def layer_answer(profiles: list[dict]) -> dict:
    """Counts that answer "does ``H`` fall where the sink grows, and does ``H(π)`` follow?" from one model's per-seed
    layer profiles, counting only seed-consistent moves (:func:`seed_consistent_moves`):

    * ``transitions``: adjacent-layer transitions; ``sink_rises``: those where the sink mass rises in every seed;
    * ``h_falls_with_sink``: of those, where ``H`` falls in every seed; ``content_falls_with_sink``: where ``H(π)`` does;
    * ``opposite``: transitions where ``H`` and ``H(π)`` move in opposite directions in every seed.
    """
    sink, h, hp = (seed_consistent_moves(profiles, k) for k in ("sink_mass", "entropy", "content_entropy"))
    rises = sink > 0
    return {"transitions": int(sink.size), "sink_rises": int(rises.sum()), "h_falls_with_sink": int(np.sum(rises & (h < 0))),
            "content_falls_with_sink": int(np.sum(rises & (hp < 0))), "opposite": int(np.sum(h * hp < 0))}
