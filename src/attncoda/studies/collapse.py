"""Entropy collapse across training (methods: :ref:`methods-collapse`; the paper's Figure 5): how much of the fall in
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

from ..base.protocol import BATCH_SIZE, COLLAPSE_FIRST_ROW, DEFAULT_EPS, N_TRIPLES, N_WINDOWS, WINDOW_LENGTH
from ..math.coda import drop_share  # noqa: F401  (the share's home is the math layer; the chapters import it from here)
from ..math.verdicts import sample_triples
from .reversal import CLASSICAL, reversal_summary, signature_sink_mass, verdict_table
from ..math.metrics import CALIBRATED

MEANS = ("entropy", "content_entropy", "sink_mass")
PREDICTOR_METRICS = CALIBRATED


def entropy_means(sig, first_row: int = COLLAPSE_FIRST_ROW) -> dict:
    """Mean ``H``, ``H(π)`` and row sink mass of one model state: pooled over layers, heads and rows ``t ≥ first_row``,
    and per layer (``layers`` holds one list per statistic)."""
    pooled, layers = {}, {}
    for k in MEANS:
        values = sig.stats[k][:, :, first_row:]
        pooled[k] = float(np.nanmean(values))
        layers[k] = np.nanmean(values, axis=(1, 2)).tolist()
    return {**pooled, "layers": layers}


def layer_shares(start: dict, end: dict) -> list[float]:
    """:func:`drop_share` of each layer."""
    a, b = start["layers"], end["layers"]
    return [drop_share({k: a[k][i] for k in MEANS}, {k: b[k][i] for k in MEANS}) for i in range(len(a["entropy"]))]


def _span(points: list[dict], start: int) -> dict:
    first, last = points[start], points[-1]
    return {"start_step": first["step"], "end_step": last["step"], "delta_entropy": last["entropy"] - first["entropy"],
            "delta_content_entropy": last["content_entropy"] - first["content_entropy"],
            "share": drop_share(first, last), "layer_shares": layer_shares(first, last)}


def peak_index(points: list[dict]) -> int | None:
    """Where mean ``H`` peaks after step 0 (the last checkpoint excluded), or None when no checkpoint lies between."""
    later = [i for i, p in enumerate(points[:-1]) if p["step"] != 0]
    return max(later, key=lambda i: points[i]["entropy"]) if later else None


def peak_is_real(points: list[dict], peak: int, spread: float) -> bool:
    """Whether ``H`` rose from the first checkpoint to the peak by more than ``spread``: the range of mean ``H`` over
    independent window samples at those two checkpoints. A rise within it is a sampling accident, not a peak."""
    return points[peak]["entropy"] - points[0]["entropy"] > spread


def trajectory_shares(points: list[dict], spread: float | None = None) -> dict:
    """Shares of a series of :func:`entropy_means` (each with its ``step``), in training order.

    ``from_step0`` starts at the first checkpoint when it is step 0 (absent otherwise). ``from_peak`` starts at the
    checkpoint where mean ``H`` is highest after step 0, and only when that peak is real (:func:`peak_is_real` with
    ``spread``; without a step 0 or a spread, any highest checkpoint counts). ``peak`` says which was found and why
    it was or was not used.

    Examples
    --------
    >>> pts = [{"step": s, "entropy": h, "content_entropy": c, "layers": {k: [0.0] for k in MEANS}}
    ...        for s, h, c in [(0, 4.0, 4.0), (16, 4.001, 4.0), (100, 3.0, 3.9)]]
    >>> sorted(trajectory_shares(pts, spread=0.01))   # a rise of 0.001 within a spread of 0.01: no peak
    ['from_step0', 'peak']
    >>> sorted(trajectory_shares(pts, spread=0.0001))
    ['from_peak', 'from_step0', 'peak']
    """
    if len(points) < 2:
        raise ValueError("a checkpoint series needs at least two checkpoints")
    out = {}
    peak = peak_index(points)
    if peak is not None:
        real = spread is None or points[0]["step"] != 0 or peak_is_real(points, peak, spread)
        rise = points[peak]["entropy"] - points[0]["entropy"]
        out["peak"] = {"step": points[peak]["step"], "rise": rise, "spread": spread, "used": bool(real)}
        if real:
            out["from_peak"] = _span(points, peak)
    if points[0]["step"] == 0:
        out["from_step0"] = _span(points, 0)
    return out


def shown_share(shares: dict) -> tuple[str, float]:
    """The share a table shows for a series: from a real peak when there is one, else from step 0."""
    for start in ("from_peak", "from_step0"):
        if start in shares:
            return start, shares[start]["share"]
    return "none", float("nan")


def term_fractions(start: dict, end: dict) -> dict:
    """How the change in mean ``H`` splits into the three terms of :mod:`attncoda.engine.entropy_terms` between two
    states: ``Δh(s)/ΔH``, ``Δ(s·H(p_S/s))/ΔH`` and ``Δ(c·H(π))/ΔH`` (they add up to 1; NaN unless ``H`` fell).

    Examples
    --------
    >>> a = {"binary": 0.1, "within_sink": 0.0, "content": 4.0, "entropy": 4.1}
    >>> b = {"binary": 0.4, "within_sink": 0.1, "content": 2.6, "entropy": 3.1}
    >>> {k: round(v, 3) for k, v in term_fractions(a, b).items()}
    {'binary': -0.3, 'within_sink': -0.1, 'content': 1.4}
    """
    dh = end["entropy"] - start["entropy"]
    if not dh < 0:
        return {k: float("nan") for k in ("binary", "within_sink", "content")}
    return {k: (end[k] - start[k]) / dh for k in ("binary", "within_sink", "content")}


def reversal_point(sig, seed: int = 0, n_triples: int = N_TRIPLES) -> dict:
    """Signature sink mass and keep-vs-drop reversal rates of one model state (the points of Figure 5a); a model with
    fewer than 3 heads has no head triple, so its rates are NaN."""
    rows, sink = sig.heads(), sig.sink()
    metrics = tuple(dict.fromkeys(CLASSICAL + PREDICTOR_METRICS))
    if len(rows) < 3:
        return {"signature_sink_mass": signature_sink_mass(rows, sink), "reversal": dict.fromkeys(metrics, float("nan")), "heads": len(rows)}
    triples = sample_triples(len(rows), n_triples, seed)
    summary = reversal_summary(verdict_table(rows, metrics, triples, sink, DEFAULT_EPS))
    return {"signature_sink_mass": signature_sink_mass(rows, sink), "reversal": {m: v["rate"] for m, v in summary.items()},
            "heads": len(rows)}


def model_facts(sig) -> dict:
    """What the v2 predictor's domain checks, read from signatures."""
    return {"causal": bool(sig.meta.causal), "sink_size": len(sig.sink()), "length": int(sig.meta.length)}


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


def text_signatures(n: int = N_WINDOWS, length: int = WINDOW_LENGTH, split: str = "heldout", batch_size: int = BATCH_SIZE):
    """``signatures(model, seed)`` on text windows: the walk's default source of a checkpoint's signatures."""
    from ..engine.signatures import get_signatures

    return lambda model, seed: get_signatures(model, seed, n=n, length=length, split=split, batch_size=batch_size)


def walk(checkpoints, seed: int = 0, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, split: str = "heldout", n_triples: int = N_TRIPLES,
         batch_size: int = BATCH_SIZE, label: str = "checkpoints", signatures=None) -> list[dict]:
    """One point per checkpoint (:class:`attncoda.engine.checkpoints.Checkpoint`, in training order): its step, entropy
    means, Figure 5a's reversal point and the predictor's domain facts. Each checkpoint's signatures are cached, so an
    interrupted walk resumes where it stopped; a checkpoint without a known step is numbered by its place in the list.
    ``signatures(model, seed)`` gives a checkpoint's signatures (default: :func:`text_signatures` of the options)."""
    from ..base.progress import Steps

    signatures = signatures or text_signatures(n, length, split, batch_size)
    steps = Steps(f"{label}: statistics of {len(checkpoints)} checkpoints", len(checkpoints))
    points = []
    for k, c in enumerate(checkpoints):
        sig = signatures(c.model, seed)
        points.append({"step": c.step if c.step is not None else k, "checkpoint": checkpoint_label(c.model), **entropy_means(sig),
                       **reversal_point(sig, seed, n_triples), "facts": model_facts(sig), "weights_sha256": sig.meta.weights_sha256})
        steps.step(k + 1)
    return points


def window_spread(checkpoints, points: list[dict], signatures, seeds=(1, 2)) -> float:
    """Range of mean ``H`` over window samples (the walk's seed and ``seeds``) at the first checkpoint and at the peak
    (:func:`peak_index`), the larger of the two: the noise a peak must rise above."""
    peak = peak_index(points)
    if peak is None:
        return float("nan")
    spreads = []
    for i in (0, peak):
        values = [points[i]["entropy"]] + [entropy_means(signatures(checkpoints[i].model, s))["entropy"] for s in seeds]
        spreads.append(max(values) - min(values))
    return max(spreads)


def walk_with_shares(checkpoints, seed: int = 0, n_triples: int = N_TRIPLES, label: str = "checkpoints", signatures=None,
                     spread_seeds=(1, 2), **options) -> tuple[list[dict], dict]:
    """:func:`walk` and its :func:`trajectory_shares`, the peak tested against :func:`window_spread` on ``spread_seeds``."""
    signatures = signatures or text_signatures(**options)
    points = walk(checkpoints, seed, n_triples=n_triples, label=label, signatures=signatures)
    spread = window_spread(checkpoints, points, signatures, spread_seeds) if spread_seeds else None
    return points, trajectory_shares(points, spread)


def endpoint(model: str, init_seed: int = 0, seed: int = 0, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, n_triples: int = N_TRIPLES,
             batch_size: int = BATCH_SIZE) -> dict:
    """The endpoint share of a trained model: its architecture at initialization (``init_seed``) against its weights,
    pooled and per layer, with both states' reversal points. Windows: the measurement chapter's sample (split ``sample``)."""
    from ..engine.initialization import init_signatures
    from ..engine.signatures import get_signatures

    trained = get_signatures(model, seed, n=n, length=length, batch_size=batch_size)
    start = init_signatures(model, init_seed, seed, n=n, length=length, batch_size=batch_size)
    a, b = entropy_means(start), entropy_means(trained)
    return {"model": model, "model_info": trained.meta.model_info, "weights_sha256": trained.meta.weights_sha256, "init_seed": init_seed,
            "init": {**a, **reversal_point(start, seed, n_triples)}, "trained": {**b, **reversal_point(trained, seed, n_triples)},
            "share": drop_share(a, b), "layer_shares": layer_shares(a, b), "facts": model_facts(trained)}


ENDPOINT_WINDOW_SEEDS = (0, 1, 2)
ENDPOINT_INIT_SEEDS = (0, 1, 2)


def endpoint_samples(window_seeds=ENDPOINT_WINDOW_SEEDS, init_seeds=ENDPOINT_INIT_SEEDS) -> list[tuple[int, int]]:
    """``(window seed, initialization seed)`` pairs of the resampled endpoint share: every window seed with the first
    initialization seed, and every initialization seed with the first window seed.

    Examples
    --------
    >>> endpoint_samples((0, 1, 2), (0, 1, 2))
    [(0, 0), (1, 0), (2, 0), (0, 1), (0, 2)]
    """
    return list(dict.fromkeys([(w, init_seeds[0]) for w in window_seeds] + [(window_seeds[0], i) for i in init_seeds]))


def endpoint_spread(model: str, window_seeds=ENDPOINT_WINDOW_SEEDS, init_seeds=ENDPOINT_INIT_SEEDS, n: int = N_WINDOWS,
                    length: int = WINDOW_LENGTH, batch_size: int = BATCH_SIZE) -> dict:
    """The endpoint share resampled: every window seed with initialization seed 0, and every initialization seed with
    window seed 0 (``samples``: one ``{window_seed, init_seed, share}`` each), with their median and range."""
    from ..engine.initialization import init_signatures
    from ..engine.signatures import get_signatures

    samples = []
    for w, i in endpoint_samples(window_seeds, init_seeds):
        a = entropy_means(init_signatures(model, i, w, n=n, length=length, batch_size=batch_size))
        b = entropy_means(get_signatures(model, w, n=n, length=length, batch_size=batch_size))
        samples.append({"window_seed": w, "init_seed": i, "share": drop_share(a, b)})
    shares = [x["share"] for x in samples]
    return {"samples": samples, "median": float(np.nanmedian(shares)), "low": float(np.nanmin(shares)), "high": float(np.nanmax(shares))}


def endpoint_terms(model: str, init_seed: int = 0, seed: int = 0, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, batch_size: int = BATCH_SIZE) -> dict:
    """The three entropy terms (:mod:`attncoda.engine.entropy_terms`) at initialization and trained, and the share of
    the fall in ``H`` each carries (:func:`term_fractions`)."""
    from ..engine.entropy_terms import entropy_terms
    from ..engine.signatures import SignatureSpec

    spec = SignatureSpec(n=n, length=length, batch_size=batch_size)
    a, b = entropy_terms(model, seed, init_seed, spec), entropy_terms(model, seed, None, spec)
    return {"init": a, "trained": b, "fractions": term_fractions(a, b)}
