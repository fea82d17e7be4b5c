"""The frozen out-of-sample predictors (methods: :ref:`methods-predictor`).

A predictor's rule, tolerance and abstention criterion live in a hashed JSON file
under ``data/predictor/``, bound to the hash of the calibration curves it reads.
Each was committed before the models it judges were measured, and is never
edited afterwards (:func:`load_spec` refuses a file that no longer matches its hash).

* **v1** (``frozen.json``): predicted rate of metric ``m`` = the raw ``α = 0.1``
  curve at the model's signature sink mass ``s``. Abstains when ``s`` is outside
  ``[s_min, s_max]`` or the ``α = 0.1`` and ``α = 1`` curves differ by more than the
  tolerance on average (the content regime is then undecided). Otherwise a
  confirmation when the mean absolute deviation over the metrics is within the
  tolerance, else a failure.
* **v2** (``v2.json``): the same rule on curves smoothed over the grid (a centred
  moving average of ``smoothing_window`` points), with a stated domain outside
  which it abstains: a causal model, a single-token sink set, and a support of
  ``L`` keys within ``support_range`` (the calibration drew rows of 128 parts).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..base.files import read_hashed_json, write_hashed_json
from ..base.paths import frozen_dir, project_path
from .calibration import CalibrationGrid, curve_at, load_curves
from .reversal import CLASSICAL

CALIBRATED_CONTENT_PARTS = CalibrationGrid.n_content
"""The content parts of the synthetic rows the calibration curves were computed on (rows of L = 128 keys, one a sink)."""

V1 = {
    "version": 1,
    "metrics": ["cosine", "js", "euclidean", "hellinger"],
    "curve_alpha": 0.1,
    "other_alpha": 1.0,
    "sink_mass": "mean over all heads (layers pooled) and over seeds of the sink mass of the Aitchison-mean signatures (eps = 1e-6), with the model's default sink set",
    "observed": "mean over seeds of the keep-vs-drop closer-head reversal rate on 50,000 uniformly drawn head triples per seed",
    "tolerance_points": 7.5,
    "s_min": 0.05,
    "s_max": 0.95,
    "confirmation": "mean absolute deviation (percentage points) over the metrics <= tolerance_points",
    "failure": "mean absolute deviation over the metrics > tolerance_points",
    "abstention": "s outside [s_min, s_max], or mean |curve(alpha=0.1) - curve(alpha=1)| at s over the metrics > tolerance_points",
}
SPEC = V1  # the name the v1 freeze used

V2 = {
    "version": 2,
    "metrics": ["cosine", "js", "euclidean", "hellinger"],
    "curve_alpha": 0.1,
    "other_alpha": 1.0,
    "smoothing_window": 5,
    "smoothing": "centred moving average over smoothing_window neighbouring grid points of each frozen curve (fewer at the ends), then linear interpolation",
    "sink_mass": "mean over all heads (layers pooled) and over seeds of the sink mass of the log-softmax (logit-path) Aitchison-mean signatures, with the model's default sink set",
    "observed": "mean over seeds of the keep-vs-drop closer-head reversal rate on 50,000 uniformly drawn head triples per seed, on the same signatures",
    "tolerance_points": 7.5,
    "s_min": 0.05,
    "s_max": 0.95,
    "domain": {"causal": True, "sink_size": 1, "support_range": [96, 160]},
    "confirmation": "inside the domain and mean absolute deviation (percentage points) over the metrics <= tolerance_points",
    "failure": "inside the domain and mean absolute deviation over the metrics > tolerance_points",
    "abstention": "outside the domain (not causal, a sink set of more than one key, L outside support_range), s outside [s_min, s_max], "
                  "or mean |smoothed curve(alpha=0.1) - smoothed curve(alpha=1)| at s over the metrics > tolerance_points",
}
SPECS = {1: V1, 2: V2}
FILES = {1: "frozen.json", 2: "v2.json"}


def frozen_path(version: int = 1) -> Path:
    """``data/predictor/<file>`` (:func:`~attncoda.base.paths.frozen_dir`)."""
    return frozen_dir() / "predictor" / FILES[version]


def load_spec(path: Path | None = None, version: int = 1) -> dict:
    """Read a frozen predictor and check its own hash (ValueError if edited)."""
    return read_hashed_json(Path(path) if path else frozen_path(version), "predictor")


def freeze(curves_sha256: str, path: Path | None = None, version: int = 1) -> dict:
    """Write predictor ``version`` (bound to the calibration curves' hash) if it is not frozen yet; return it."""
    path = Path(path) if path else frozen_path(version)
    if path.exists():
        return load_spec(path)
    target = project_path(path)  # the project's data/predictor, never the package's copy
    write_hashed_json(target, {**SPECS[version], "curves_sha256": curves_sha256})
    return load_spec(target)


def smoothed(values, window: int) -> np.ndarray:
    """Centred moving average of ``window`` points (fewer at the ends).

    Examples
    --------
    >>> smoothed([0.0, 3.0, 0.0, 3.0, 0.0], 3).tolist()
    [1.5, 1.0, 2.0, 1.0, 1.5]
    """
    y = np.asarray(values, dtype=float)
    half = window // 2
    return np.array([y[max(0, i - half) : i + half + 1].mean() for i in range(len(y))])


def _curve(curves: dict, spec: dict, metric: str, s: float, alpha: float) -> float:
    if "smoothing_window" not in spec:
        return curve_at(curves, metric, s, alpha)
    xs = np.asarray(curves["grid"]["sink_masses"])
    if not xs[0] <= s <= xs[-1]:
        return float("nan")
    ys = smoothed(curves["curves"][str(float(alpha))][metric], spec["smoothing_window"])
    return float(np.interp(s, xs, ys))


def model_facts(measured) -> dict:
    """What a v2 domain checks, read from a :class:`~attncoda.studies.measurement_results.Measurement`."""
    return {"causal": measured.protocol["causal"], "sink_size": len(measured.sink), "length": measured.protocol["length"]}


def domain_reasons(spec: dict, model: dict | None) -> list[str]:
    """Why a model lies outside the predictor's stated domain (v2); empty inside it, or for v1."""
    domain = spec.get("domain")
    if not domain or model is None:
        return []
    reasons = []
    if domain["causal"] and not model["causal"]:
        reasons.append("not a causal model (its signatures average every row of every window, not the last row)")
    if model["sink_size"] != domain["sink_size"]:
        reasons.append(f"its sink set has {model['sink_size']} keys; the calibration used one")
    lo, hi = domain["support_range"]
    if not lo <= model["length"] <= hi:
        reasons.append(f"its rows have {model['length']} keys, outside the calibrated {lo}-{hi} "
                       f"(the curves were computed for rows of {CALIBRATED_CONTENT_PARTS} content parts)")
    return reasons


def length_note(spec: dict, length: int) -> str | None:
    """What an audit at a window length other than the calibration's says about the predictor's reach (v2 domains only):
    whether ``length`` keys lie inside the domain's support range, beside the content parts the curves were computed for.

    Examples
    --------
    >>> print(length_note({"domain": {"support_range": [96, 160]}}, 100))
    L = 100 lies inside the frozen predictor's domain (rows of 96-160 keys; its curves were computed for rows of 127 content parts)
    """
    domain = spec.get("domain")
    if not domain or length == CALIBRATED_CONTENT_PARTS + 1:
        return None
    lo, hi = domain["support_range"]
    inside = "lies inside" if lo <= length <= hi else "lies outside"
    return (f"L = {length} {inside} the frozen predictor's domain (rows of {lo}-{hi} keys; its curves were computed for rows of "
            f"{CALIBRATED_CONTENT_PARTS} content parts)")


def predict(curves: dict, spec: dict, sink_mass: float, model: dict | None = None) -> dict:
    """Predicted rate per metric (fractions) and whether the predictor abstains, with its reasons.

    ``model`` (``causal``, ``sink_size``, ``length``) is checked against a v2 domain.
    """
    if curves.get("sha256") != spec["curves_sha256"]:
        raise ValueError("the calibration curves are not the ones the predictor was frozen with")
    predicted = {m: _curve(curves, spec, m, sink_mass, spec["curve_alpha"]) for m in spec["metrics"]}
    other = {m: _curve(curves, spec, m, sink_mass, spec["other_alpha"]) for m in spec["metrics"]}
    covered = spec["s_min"] <= sink_mass <= spec["s_max"]
    regime_gap = float(np.mean([abs(predicted[m] - other[m]) for m in spec["metrics"]]) * 100) if covered else float("nan")
    reasons = domain_reasons(spec, model)
    if not covered:
        reasons.append(f"signature sink mass {sink_mass:.3f} outside [{spec['s_min']}, {spec['s_max']}]")
    elif regime_gap > spec["tolerance_points"]:
        reasons.append(f"the two content regimes differ by {regime_gap:.1f} points here (tolerance {spec['tolerance_points']})")
    return {"predicted": predicted, "regime_gap_points": regime_gap, "abstain": bool(reasons), "reasons": reasons}


def evaluate(curves: dict, spec: dict, sink_mass: float, observed: dict[str, float], model: dict | None = None) -> dict:
    """Outcome for one model: ``confirmation``, ``abstention`` or ``failure``, with per-metric deviations in points."""
    pred = predict(curves, spec, sink_mass, model)
    deviations = {m: 100 * (observed[m] - pred["predicted"][m]) for m in spec["metrics"]}
    mad = float(np.mean([abs(d) for d in deviations.values()]))
    if pred["abstain"]:
        outcome = "abstention"
    else:
        outcome = "confirmation" if mad <= spec["tolerance_points"] else "failure"
    return {**pred, "version": spec["version"], "observed": observed, "deviation_points": deviations, "mean_abs_deviation_points": mad,
            "max_abs_deviation_points": float(max(abs(d) for d in deviations.values())), "outcome": outcome}


def explain(result: dict, spec: dict) -> str:
    """One sentence, computed from an :func:`evaluate` result, on why the outcome happened."""
    dev = result["deviation_points"]
    worst = max(dev, key=lambda m: abs(dev[m]))
    spread = f"deviations {', '.join(f'{m} {d:+.1f}' for m, d in dev.items())} points"
    if result["outcome"] == "abstention":
        measurable = any(d == d for d in dev.values())  # no deviation exists where the curves are not defined
        return "abstained: " + "; ".join(result["reasons"]) + (f" ({spread})" if measurable else "")
    if result["outcome"] == "failure":
        same_sign = all(d > 0 for d in dev.values()) or all(d < 0 for d in dev.values())
        side = ("every metric " + ("above" if dev[worst] > 0 else "below") + " the curve") if same_sign else "metrics on both sides of the curve"
        return f"failed: mean |deviation| {result['mean_abs_deviation_points']:.1f} > {spec['tolerance_points']} points, {side}, worst {worst} ({spread})"
    return f"confirmed: mean |deviation| {result['mean_abs_deviation_points']:.1f} <= {spec['tolerance_points']} points, worst {worst} ({spread})"


def load_all(version: int = 1) -> tuple[dict, dict]:
    """The frozen curves and frozen predictor ``version``, each checked against its hash."""
    from .calibration import frozen_path as curves_path

    return load_curves(curves_path()), load_spec(version=version)


def evaluate_measured(curves: dict, spec: dict, measured) -> dict:
    """:func:`evaluate` on a :class:`~attncoda.studies.measurement_results.Measurement` (its mean reversal rates and
    signature sink mass over seeds), with :func:`explain`'s sentence as ``why``."""
    observed = {m: measured.summary.reversal[m].mean for m in spec["metrics"]}
    result = evaluate(curves, spec, measured.summary.signature_sink_mass.mean, observed, model_facts(measured))
    return {**result, "why": explain(result, spec)}


def per_seed_outcomes(curves: dict, spec: dict, measured) -> list[str]:
    """:func:`evaluate`'s outcome on each seed alone (its own reversal rates and signature sink mass), in seed order.

    The frozen rule decides on the seed means (:func:`evaluate_measured`) and stays so; this shows how much that
    outcome rests on the draw of text: seeds that disagree make the model borderline (:func:`borderline`)."""
    facts = model_facts(measured)
    return [evaluate(curves, spec, seed.signature_sink_mass, {m: seed.reversal[m].rate for m in spec["metrics"]}, facts)["outcome"]
            for seed in measured.per_seed]


def borderline(outcomes: list[str]) -> bool:
    """Whether the seeds' outcomes disagree (one seed confirms what another fails)."""
    return len(set(outcomes)) > 1


def curve_deviations(curves: dict, results: dict, metrics=CLASSICAL, alpha: float = 0.1) -> list[dict]:
    """Each model's mean reversal rate against the calibration curve at its signature sink mass (``alpha``), one row
    per model and metric: ``{model, metric, sink, rate, curve, deviation}``, rates and deviation in percentage points."""
    rows = []
    for name, r in results.items():
        s = r.summary.signature_sink_mass.mean
        for m in metrics:
            rate, curve = r.summary.reversal[m].mean, curve_at(curves, m, s, alpha)
            rows.append({"model": name, "metric": m, "sink": s, "rate": 100 * rate, "curve": 100 * curve, "deviation": 100 * (rate - curve)})
    return rows
