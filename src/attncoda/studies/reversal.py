"""Keep-vs-drop reversal rates of head signatures, the ε sweep, and a real witness triple (methods: :ref:`methods-verdicts`; Table 2, Figure 7).

Every function takes signatures as an ``(heads, L)`` array of rows and a sink set.
"""

from __future__ import annotations

import numpy as np

from ..math import coda
from ..math.metrics import CALIBRATED, CLASSICAL, CURVES, REVERSAL, get_metric
from ..math.verdicts import convention_verdicts, pairwise, reversal_from_verdicts

REVERSAL_METRICS = REVERSAL
TABLE2_METRICS = CALIBRATED
"""The classical metrics of Table 2; Fisher–Rao reverses exactly where Hellinger does, so it shares its column."""
"""The paper's three classical metrics (its Table 2 columns): Lemma 1 and the witness triple are checked on these."""
SWEEP_METRICS = CURVES  # Fisher–Rao verdicts are Hellinger's


def distances(metric, rows: np.ndarray, convention: str, sink, eps: float) -> np.ndarray:
    """Pairwise matrix of ``metric`` between signatures (matrix-product form where the metric has one)."""
    return pairwise(metric, rows, convention, sink, eps, method="gram")


def verdict_table(rows: np.ndarray, metrics, triples: np.ndarray, sink, eps: float) -> dict[str, dict[str, np.ndarray]]:
    """``{metric: {"keep": verdicts, "drop": verdicts}}`` on one set of triples."""
    return {name: convention_verdicts(name, rows, triples, sink, eps, method="gram") for name in metrics}


def reversal_summary(verdicts: dict) -> dict[str, dict]:
    """Reversal rate, counts and ties of each metric in a :func:`verdict_table`."""
    return {name: reversal_from_verdicts(name, v["keep"], v["drop"]).as_dict() for name, v in verdicts.items()}


def signature_sink_mass(rows: np.ndarray, sink) -> float:
    """Mean over heads of the signatures' sink mass."""
    return float(coda.sink_mass(rows, sink).mean())


def eps_sweep(tables: dict[float, dict], zeros: int, base_eps: float) -> dict:
    """Are verdicts bit-identical across the ε sweep? ``tables[ε]`` is a :func:`verdict_table` on probability-path signatures at ε.

    ``zeros`` is the number of exact zeros the signatures' rows held (the only parts ε touches).
    """
    base = tables[base_eps]
    others = [e for e in tables if e != base_eps]
    metrics = list(base)
    differing = {name: int(max((np.sum(tables[e][name][c] != base[name][c]) for e in others for c in ("keep", "drop")), default=0)) for name in metrics}
    return {"eps_values": [base_eps, *others], "exact_zeros": int(zeros), "identical": {m: differing[m] == 0 for m in metrics},
            "all_identical": all(v == 0 for v in differing.values()), "max_differing_verdicts": differing}


def lemma1_residual(rows: np.ndarray, sink, eps: float, pairs: int = 2000, seed: int = 0) -> float:
    """Largest relative residual of Lemma 1, ``|d_A² − (within² + sink² + content²)| / d_A²``, over sampled pairs of rows."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(rows), pairs)
    b = (a + rng.integers(1, len(rows), pairs)) % len(rows)
    d = coda.decompose(rows[a], rows[b], sink, eps)
    total = d.total**2
    parts = d.within_sink**2 + d.sink**2 + d.content**2
    return float(np.max(np.abs(total - parts) / np.maximum(total, np.finfo(float).tiny)))


def find_witness_triple(rows: np.ndarray, triples: np.ndarray, verdicts: dict, sink, eps: float) -> dict | None:
    """A real triple on which cosine, JS and Euclidean all reverse between conventions (Theorem 1), or None.

    Among qualifying triples it picks the one whose smallest relative verdict gap,
    over the three metrics and both conventions, is largest (the least fragile).
    """
    all_reverse = np.ones(len(triples), dtype=bool)
    for name in CLASSICAL:
        k, d = verdicts[name]["keep"], verdicts[name]["drop"]
        all_reverse &= (k != 0) & (d != 0) & (k != d)
    candidates = np.flatnonzero(all_reverse)
    if len(candidates) == 0:
        return None
    picked = triples[candidates]
    margins = np.full(len(picked), np.inf)
    for name in CLASSICAL:
        m = get_metric(name)
        for conv in ("keep", "drop"):
            p, q, r = (rows[picked[:, i]] for i in range(3))
            dq, dr = m(p, q, conv, sink, eps), m(p, r, conv, sink, eps)
            margins = np.minimum(margins, np.abs(dq - dr) / np.maximum(np.abs(dq) + np.abs(dr), 1e-300))
    best = picked[int(np.argmax(margins))]
    return {"triple": best.tolist(), "share_of_triples": float(len(candidates) / len(triples)), "min_relative_gap": float(margins.max())}
