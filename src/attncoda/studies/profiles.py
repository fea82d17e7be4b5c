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
    """
    return float(np.mean(disagreeing_transitions(entropy, content_entropy)))
