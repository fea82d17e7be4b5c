"""Reversal calibration curves (methods: :ref:`methods-calibration`) and their frozen, hashed copy.

A curve gives, for a synthetic model whose head signatures carry sink mass
around ``s`` and Dirichlet(α) content, the keep-vs-drop reversal rate of each
metric. The curves are computed once, written with their generator parameters
and a content hash, and later chapters read them back and check the hash.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from ..base.files import json_hash, read_hashed_json, write_hashed_json
from ..math.synthetic import calibration_heads
from ..math.verdicts import reversal_rates, sample_triples
from ..math.metrics import BHATTACHARYYA, CURVES

CURVE_METRICS = CURVES


@dataclass(frozen=True)
class CalibrationGrid:
    """Generator parameters of the calibration curves.

    For each ``α`` and each target sink mass ``s``, ``replicates`` synthetic
    models of ``n_heads`` heads are drawn (rows of ``1 + n_content`` parts,
    ``n_content = L − 1``) and ``n_triples`` triples per model.
    """

    sink_masses: tuple[float, ...] = tuple(np.round(np.linspace(0.02, 0.98, 33), 4).tolist())
    alphas: tuple[float, ...] = (0.1, 1.0)
    n_content: int = 127
    n_heads: int = 144
    n_triples: int = 20_000
    replicates: int = 3
    kappa: float = 50.0
    seed: int = 0
    metrics: tuple[str, ...] = CURVE_METRICS

    def as_dict(self) -> dict:
        return {k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self).items()}


def compute_curves(grid: CalibrationGrid = CalibrationGrid(), progress=None) -> dict:
    """Monte Carlo reversal rates on the grid.

    Returns ``{"grid": params, "curves": {alpha: {metric: [rate per s]}}}``; a rate
    is the pooled fraction over the replicates (reversed / compared).
    """
    root = np.random.SeedSequence(grid.seed)
    cells = [(a, s) for a in grid.alphas for s in grid.sink_masses]
    streams = root.spawn(len(cells))
    counts = {a: {m: np.zeros((len(grid.sink_masses), 2), dtype=np.int64) for m in grid.metrics} for a in grid.alphas}
    for (alpha, s), stream in zip(cells, streams):
        i = grid.sink_masses.index(s)
        for rep_stream in stream.spawn(grid.replicates):
            rng = np.random.default_rng(rep_stream)
            heads = calibration_heads(rng, grid.n_heads, grid.n_content, alpha, s, grid.kappa)
            triples = sample_triples(grid.n_heads, grid.n_triples, rng)
            for name, rev in reversal_rates(heads, grid.metrics, triples=triples).items():
                counts[alpha][name][i] += (rev.reversed, rev.compared)
        if progress is not None:
            progress(alpha, s)
    curves = {
        str(a): {m: (c[:, 0] / c[:, 1]).tolist() for m, c in per_metric.items()} for a, per_metric in counts.items()
    }
    return {"grid": grid.as_dict(), "curves": curves}


def content_hash(curves: dict) -> str:
    """SHA-256 of the canonical JSON of the grid and the curves (the hash later chapters check)."""
    return json_hash({"grid": curves["grid"], "curves": curves["curves"]})


def save_curves(curves: dict, path: Path) -> str:
    """Write the curves with their hash atomically; returns the hash."""
    return write_hashed_json(path, {"grid": curves["grid"], "curves": curves["curves"]})


def load_curves(path: Path) -> dict:
    """Read frozen curves and verify their hash (ValueError if the file was edited)."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no calibration curves at {path}; run the calibration chapter: attncoda run calibration")
    return read_hashed_json(path, "calibration curves")


def curve_at(curves: dict, metric: str, sink_mass: float, alpha: float = 0.1) -> float:
    """Linear interpolation of the ``α`` curve of ``metric`` at ``sink_mass`` (NaN outside the grid)."""
    xs = np.asarray(curves["grid"]["sink_masses"])
    ys = np.asarray(curves["curves"][str(float(alpha))][metric])
    if not xs[0] <= sink_mass <= xs[-1]:
        return float("nan")
    return float(np.interp(sink_mass, xs, ys))


def frozen_path() -> Path:
    """Where the frozen curves live: ``data/calibration/curves.json`` (:func:`~attncoda.base.paths.frozen_dir`)."""
    from ..base.paths import frozen_dir

    return frozen_dir() / "calibration" / "curves.json"


def freeze_or_verify(curves: dict, path: Path | None = None) -> dict:
    """Freeze ``curves`` if nothing is frozen yet; otherwise compare with the frozen copy.

    Returns ``{"status": "frozen" | "identical" | "different" | "other-grid", "sha256": …, "frozen_sha256": …}``.
    Only curves computed on the frozen grid are compared; a different grid never overwrites the frozen file.
    """
    path = Path(path) if path else frozen_path()
    digest = content_hash(curves)
    if not path.exists():
        if curves["grid"] != CalibrationGrid().as_dict():
            return {"status": "other-grid", "sha256": digest, "frozen_sha256": None}
        from ..base.paths import project_path

        save_curves(curves, project_path(path))
        return {"status": "frozen", "sha256": digest, "frozen_sha256": digest}
    frozen = load_curves(path)
    if frozen["grid"] != curves["grid"]:
        return {"status": "other-grid", "sha256": digest, "frozen_sha256": frozen["sha256"]}
    status = "identical" if frozen["sha256"] == digest else "different"
    return {"status": status, "sha256": digest, "frozen_sha256": frozen["sha256"]}


def grid_for(n_grid: int, n_heads: int, n_triples: int, replicates: int, seed: int) -> CalibrationGrid:
    """The chapter's grid: ``n_grid`` sink masses evenly spaced on [0.02, 0.98] (rounded to 4 decimals)."""
    return CalibrationGrid(sink_masses=tuple(np.round(np.linspace(0.02, 0.98, n_grid), 4).tolist()), n_heads=n_heads, n_triples=n_triples,
                           replicates=replicates, seed=seed)


def content_max_rate(curves: dict) -> float:
    """The content distance's largest reversal rate over every curve, which Lemma 1 makes exactly 0.

    Raises RuntimeError otherwise: the content distance flipping a verdict is a bug."""
    worst = max(max(curves["curves"][a]["content"]) for a in curves["curves"])
    if worst != 0.0:
        raise RuntimeError(f"the content distance reversed {100 * worst:.2f} % of verdicts somewhere on the grid: Lemma 1 violated in code")
    return worst


def hellinger_fisher_rao_check(grid: CalibrationGrid, rng, sink_mass: float) -> list[dict]:
    """On synthetic heads at ``sink_mass`` for each α and convention, how many of ``grid.n_triples`` verdicts Hellinger
    and Fisher–Rao disagree on (both are increasing in the Bhattacharyya coefficient, so none)."""
    from ..math.verdicts import closer_verdicts, pairwise

    rows = []
    for alpha in grid.alphas:
        heads = calibration_heads(rng, grid.n_heads, grid.n_content, alpha, sink_mass)
        triples = sample_triples(grid.n_heads, grid.n_triples, rng)
        for conv in ("keep", "drop"):
            v = {m: closer_verdicts(pairwise(m, heads, conv), triples, False) for m in BHATTACHARYYA}
            rows.append({"alpha": alpha, "convention": conv, "triples": grid.n_triples, "verdicts that differ": int((v["hellinger"] != v["fisher_rao"]).sum())})
    return rows
