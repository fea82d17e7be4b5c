"""The frozen out-of-sample predictor (MATH.md section 8).

Its rule, tolerance and abstention criterion live in ``data/predictor/frozen.json``
with a SHA-256 of their content and of the calibration curves they use. They
were committed before any pretrained model's reversal rate was computed, so every
model, the defaults included, is an out-of-sample test of them.

Rule: the predicted keep-vs-drop reversal rate of metric ``m`` for a model is
the frozen ``α = 0.1`` calibration curve of ``m`` at the model's signature sink
mass ``s`` (linear interpolation). The model's outcome is

* **abstention** when the calibration does not cover the model: ``s`` lies
  outside ``[s_min, s_max]``, or the ``α = 0.1`` and ``α = 1`` curves at ``s``
  differ by more than the tolerance on average over the metrics (the curves then
  cannot say which content regime applies);
* otherwise **confirmation** when the mean absolute deviation between observed
  and predicted rates over the metrics is at most the tolerance, else **failure**.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np

from .calibration import curve_at, load_curves

SPEC = {
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


def spec_hash(spec: dict) -> str:
    body = {k: v for k, v in spec.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def frozen_path() -> Path:
    from ..base.paths import data_dir

    return data_dir() / "predictor" / "frozen.json"


def load_spec(path: Path | None = None) -> dict:
    """Read the frozen predictor and check its own hash (ValueError if edited)."""
    path = Path(path) if path else frozen_path()
    spec = json.loads(path.read_text())
    if spec_hash(spec) != spec.get("sha256"):
        raise ValueError(f"{path} does not match its recorded sha256; the frozen predictor was modified")
    return spec


def freeze(curves_sha256: str, path: Path | None = None) -> dict:
    """Write the predictor (bound to the calibration curves' hash) if it is not frozen yet."""
    from ..base.files import atomic_write_json

    path = Path(path) if path else frozen_path()
    if path.exists():
        return load_spec(path)
    spec = {**SPEC, "curves_sha256": curves_sha256}
    spec["sha256"] = spec_hash(spec)
    atomic_write_json(path, spec)
    return spec


def predict(curves: dict, spec: dict, sink_mass: float) -> dict:
    """Predicted rate per metric (as fractions) and whether the predictor abstains at ``sink_mass``."""
    if curves.get("sha256") != spec["curves_sha256"]:
        raise ValueError("the calibration curves are not the ones the predictor was frozen with")
    predicted = {m: curve_at(curves, m, sink_mass, spec["curve_alpha"]) for m in spec["metrics"]}
    other = {m: curve_at(curves, m, sink_mass, spec["other_alpha"]) for m in spec["metrics"]}
    covered = spec["s_min"] <= sink_mass <= spec["s_max"]
    regime_gap = float(np.mean([abs(predicted[m] - other[m]) for m in spec["metrics"]]) * 100) if covered else float("nan")
    reasons = []
    if not covered:
        reasons.append(f"signature sink mass {sink_mass:.3f} outside [{spec['s_min']}, {spec['s_max']}]")
    elif regime_gap > spec["tolerance_points"]:
        reasons.append(f"the two content regimes differ by {regime_gap:.1f} points here")
    return {"predicted": predicted, "regime_gap_points": regime_gap, "abstain": bool(reasons), "reasons": reasons}


def evaluate(curves: dict, spec: dict, sink_mass: float, observed: dict[str, float]) -> dict:
    """Outcome for one model: ``confirmation``, ``abstention`` or ``failure``, with the deviations in points."""
    pred = predict(curves, spec, sink_mass)
    deviations = {m: 100 * (observed[m] - pred["predicted"][m]) for m in spec["metrics"]}
    mad = float(np.mean([abs(d) for d in deviations.values()]))
    if pred["abstain"]:
        outcome = "abstention"
    else:
        outcome = "confirmation" if mad <= spec["tolerance_points"] else "failure"
    return {**pred, "observed": observed, "deviation_points": deviations, "mean_abs_deviation_points": mad,
            "max_abs_deviation_points": float(max(abs(d) for d in deviations.values())), "outcome": outcome}


def load_all() -> tuple[dict, dict]:
    """The frozen curves and the frozen predictor, each checked against its hash."""
    from .calibration import frozen_path as curves_path

    return load_curves(curves_path()), load_spec()
