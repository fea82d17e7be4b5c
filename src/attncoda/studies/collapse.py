"""Entropy collapse across training (MATH.md section 7; the paper's Figure 5): how much of the fall in
mean row entropy ``H`` is the sink growing rather than the content sharpening?

By the entropy identity ``H = h(s) + (1 − s)·H(π)``, ``H`` falls when the sink mass ``s`` grows even if the
content distribution ``π`` does not change. For two states of a model, a start and an end, with mean
``H`` and mean content entropy ``H(π)`` (over layers, heads and query rows ``t ≥ first_row``):

    share = 1 − ΔH(π) / ΔH,    Δ = end − start.

A share near 1 means the content channel barely moved while ``H`` fell: the sink grew. When the sink mass
stays at ``s`` and only the content sharpens, ``ΔH = (1 − s)·ΔH(π)`` and the share is ``−s/(1 − s)``, at or below 0.
The share is defined only when ``H`` fell (``ΔH < 0``); otherwise there is no collapse to share out.

* A checkpoint series gives two shares: from the checkpoint where ``H`` peaks (step 0 excluded) to the
  final one, and from step 0 to the final one.
* A model without published checkpoints gives the endpoint share: its own architecture at its
  family's initialization (fixed seed) against its trained weights.
"""

from __future__ import annotations

import numpy as np

from ..base.protocol import COLLAPSE_FIRST_ROW, DEFAULT_EPS, N_TRIPLES
from ..math.verdicts import sample_triples
from .reversal import CLASSICAL, reversal_summary, signature_sink_mass, verdict_table

MEANS = ("entropy", "content_entropy", "sink_mass")
PREDICTOR_METRICS = ("cosine", "js", "euclidean", "hellinger")


def entropy_means(sig, first_row: int = COLLAPSE_FIRST_ROW) -> dict:
    """Mean ``H``, ``H(π)`` and row sink mass of one model state: pooled over layers, heads and rows ``t ≥ first_row``,
    and per layer (``layers`` holds one list per statistic)."""
    pooled, layers = {}, {}
    for k in MEANS:
        values = sig.stats[k][:, :, first_row:]
        pooled[k] = float(np.nanmean(values))
        layers[k] = np.nanmean(values, axis=(1, 2)).tolist()
    return {**pooled, "layers": layers}


def drop_share(start: dict, end: dict) -> float:
    """``1 − ΔH(π)/ΔH`` between two :func:`entropy_means` (or their per-layer slices); NaN unless ``H`` fell.

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


def layer_shares(start: dict, end: dict) -> list[float]:
    """:func:`drop_share` of each layer."""
    a, b = start["layers"], end["layers"]
    return [drop_share({k: a[k][i] for k in MEANS}, {k: b[k][i] for k in MEANS}) for i in range(len(a["entropy"]))]


def _span(points: list[dict], start: int) -> dict:
    first, last = points[start], points[-1]
    return {"start_step": first["step"], "end_step": last["step"], "delta_entropy": last["entropy"] - first["entropy"],
            "delta_content_entropy": last["content_entropy"] - first["content_entropy"],
            "share": drop_share(first, last), "layer_shares": layer_shares(first, last)}


def trajectory_shares(points: list[dict]) -> dict:
    """Shares of a series of :func:`entropy_means` (each with its ``step``), in training order.

    ``from_peak`` starts at the checkpoint where mean ``H`` is highest, step 0 excluded; ``from_step0``
    at the first checkpoint when it is step 0 (absent otherwise).
    """
    if len(points) < 2:
        raise ValueError("a checkpoint series needs at least two checkpoints")
    later = [i for i, p in enumerate(points[:-1]) if p["step"] != 0]
    out = {}
    if later:
        out["from_peak"] = _span(points, max(later, key=lambda i: points[i]["entropy"]))
    if points[0]["step"] == 0:
        out["from_step0"] = _span(points, 0)
    return out


def reversal_point(sig, seed: int = 0, n_triples: int = N_TRIPLES) -> dict:
    """Signature sink mass and keep-vs-drop reversal rates of one model state (the points of Figure 5a)."""
    rows, sink = sig.heads(), sig.sink()
    triples = sample_triples(len(rows), n_triples, seed)
    summary = reversal_summary(verdict_table(rows, tuple(dict.fromkeys(CLASSICAL + PREDICTOR_METRICS)), triples, sink, DEFAULT_EPS))
    return {"signature_sink_mass": signature_sink_mass(rows, sink), "reversal": {m: v["rate"] for m, v in summary.items()},
            "heads": len(rows)}


def model_facts(sig) -> dict:
    """What the v2 predictor's domain checks, read from signatures."""
    return {"causal": bool(sig.meta["causal"]), "sink_size": len(sig.sink()), "length": int(sig.meta["length"])}


def predictor_outcome(point: dict, facts: dict, curves: dict, spec: dict) -> dict:
    """The frozen predictor's verdict on one model state (:func:`attncoda.studies.predictor.evaluate`)."""
    from .predictor import evaluate

    observed = {m: point["reversal"][m] for m in spec["metrics"]}
    return evaluate(curves, spec, point["signature_sink_mass"], observed, facts)


def checkpoint_label(model: str) -> str:
    """A checkpoint's name without any path of this machine: the Hub id with its revision, or a folder's own name."""
    from pathlib import Path

    from ..engine.models import resolve

    return model if resolve(model).kind == "hub" else Path(model).name


def walk(checkpoints, seed: int = 0, n: int = 64, length: int = 128, split: str = "heldout", n_triples: int = N_TRIPLES,
         batch_size: int = 8, label: str = "checkpoints") -> list[dict]:
    """One point per checkpoint (:class:`attncoda.engine.checkpoints.Checkpoint`, in training order): its step, entropy
    means, Figure 5a's reversal point and the predictor's domain facts. Each checkpoint's signatures are cached, so an
    interrupted walk resumes where it stopped; a checkpoint without a known step is numbered by its place in the list."""
    from ..base.progress import Steps
    from ..engine.signatures import get_signatures

    steps = Steps(f"{label}: statistics of {len(checkpoints)} checkpoints", len(checkpoints))
    points = []
    for k, c in enumerate(checkpoints):
        sig = get_signatures(c.model, seed, n=n, length=length, split=split, batch_size=batch_size)
        points.append({"step": c.step if c.step is not None else k, "checkpoint": checkpoint_label(c.model), **entropy_means(sig),
                       **reversal_point(sig, seed, n_triples), "facts": model_facts(sig), "weights_sha256": sig.meta["weights_sha256"]})
        steps.step(k + 1)
    return points


def endpoint(model: str, init_seed: int = 0, seed: int = 0, n: int = 64, length: int = 128, n_triples: int = N_TRIPLES,
             batch_size: int = 8) -> dict:
    """The endpoint share of a trained model: its architecture at initialization (``init_seed``) against its weights,
    pooled and per layer, with both states' reversal points. Windows: the measurement chapter's sample (split ``sample``)."""
    from ..engine.initialization import init_signatures
    from ..engine.signatures import get_signatures

    trained = get_signatures(model, seed, n=n, length=length, batch_size=batch_size)
    start = init_signatures(model, init_seed, seed, n=n, length=length, batch_size=batch_size)
    a, b = entropy_means(start), entropy_means(trained)
    return {"model": model, "model_info": trained.meta["model_info"], "weights_sha256": trained.meta["weights_sha256"], "init_seed": init_seed,
            "init": {**a, **reversal_point(start, seed, n_triples)}, "trained": {**b, **reversal_point(trained, seed, n_triples)},
            "share": drop_share(a, b), "layer_shares": layer_shares(a, b), "facts": model_facts(trained)}
