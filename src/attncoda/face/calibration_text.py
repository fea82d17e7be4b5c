"""The calibration chapter's tables and sentences, from the curves (no computation decides here)."""

from __future__ import annotations

import numpy as np

from ..math.metrics import get_metric
from ..studies.calibration import CURVE_METRICS, curve_at
from ..studies.reversal import TABLE2_METRICS

FREEZE_STATUS = {
    "frozen": "these curves were just frozen: no frozen copy existed, so this run wrote data/calibration/curves.json",
    "identical": "this run reproduced the frozen curves bit for bit (same SHA-256)",
    "different": "this run's curves DIFFER from the frozen copy (different SHA-256); later chapters keep using the frozen copy",
    "other-grid": "this run used a different grid from the frozen one, so it was not compared and the frozen copy was left untouched",
}
"""What :func:`attncoda.studies.calibration.freeze_or_verify`'s status means, in words."""


def grid_values(grid) -> dict:
    """The page's numbers for the grid."""
    return {**{f"grid_{k}": getattr(grid, k) for k in ("n_heads", "n_triples", "replicates", "kappa")},
            "grid_L": grid.n_content + 1, "grid_n": grid.n_content, "grid_points": len(grid.sink_masses),
            "grid_s_min": grid.sink_masses[0], "grid_s_max": grid.sink_masses[-1], "grid_alpha_low": min(grid.alphas), "grid_alpha_high": max(grid.alphas)}


def curve_rows(curves: dict, s_mid: float) -> list[dict]:
    """Each α and metric: the rate at the lowest s, at ``s_mid``, at the highest s, and its largest value (fractions)."""
    rows = []
    for alpha in ("0.1", "1.0"):
        for metric in CURVE_METRICS:
            ys = np.asarray(curves["curves"][alpha][metric])
            rows.append({"alpha": alpha, "metric": get_metric(metric).label, "at lowest s": ys[0],
                         f"at s = {s_mid}": curve_at(curves, metric, s_mid, float(alpha)), "at highest s": ys[-1], "largest": ys.max()})
    return rows


def curve_values(curves: dict, s_mid: float) -> dict:
    """The page's numbers from the α = 0.1 curves: each classical metric's rate at the highest s and at ``s_mid`` (%),
    the Spearman ρ of each against s, and JS at the lowest s."""
    from scipy.stats import spearmanr

    low = curves["curves"]["0.1"]
    out = {}
    for metric in TABLE2_METRICS:
        out[f"cal_{metric}_high"] = 100 * low[metric][-1]
        out[f"cal_{metric}_mid"] = 100 * curve_at(curves, metric, s_mid)
    rhos = [spearmanr(curves["grid"]["sink_masses"], low[m]).statistic for m in TABLE2_METRICS]
    out["cal_rho_text"] = " / ".join(f"{r:.2f}" for r in rhos)
    out["cal_js_low"] = 100 * low["js"][0]
    return out
