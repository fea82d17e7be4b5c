"""``attncoda verify``: rerun a chapter and report the largest difference from its committed results.

Every numeric value under ``results`` is compared, leaf by leaf, except run times. Pure-numpy chapters
(no model) must agree exactly; model chapters within a stated relative tolerance, because float32 kernels
on another machine can move near-tied verdicts by a triple and floats by about 1e-8.
"""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

from ..base.errors import ChapterError
from ..base.paths import results_dir
from .chapter_run import run_chapter
from .chapters import find_chapter
from .results import TIMES

MODEL_TOLERANCE = 1e-3
"""Relative tolerance for chapters that run a model (a reversal rate moves by 2e-5 per flipped triple of 50,000)."""
BASELINE_KERNELS = {"ATEN_CPU_CAPABILITY": "default", "MKL_ENABLE_INSTRUCTIONS": "SSE4_2", "ONEDNN_MAX_CPU_ISA": "SSE41"}
"""``--kernels baseline``: torch's, MKL's and oneDNN's kernels restricted to the instructions of an older x86 CPU (no AVX),
so a rerun on this machine takes the float32 code paths another machine would: a cross-machine difference, measured here."""


def committed_results(path: Path) -> dict:
    """The numbers of a committed results file, or a ChapterError in one line when it is damaged (not JSON, nested too
    deep, or without its ``results``): restore it with git."""
    from ..base.files import read_regular

    advice = f"restore it with git checkout -- {path}, or rebuild the record"
    data = read_regular(path, "the committed results file", advice, cap=64 << 20, error=ChapterError)  # a FIFO would block
    try:
        stored = json.loads(data.decode("utf-8"))
        if isinstance(stored, dict) and isinstance(stored.get("results"), dict):
            list(leaves(stored["results"]))  # every number a float can hold
    except (ValueError, RecursionError, UnicodeDecodeError, OverflowError):
        stored = None
    if not isinstance(stored, dict) or not isinstance(stored.get("results"), dict):
        raise ChapterError(f"the committed results file {path} is damaged; {advice}")
    return stored["results"]


def leaves(value, path: str = ""):
    """Every numeric leaf of a JSON value as ``(path, number)`` (run times left out)."""
    if isinstance(value, dict):
        for k, v in value.items():
            if k not in TIMES:
                yield from leaves(v, f"{path}.{k}" if path else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, float(value)


ROUNDOFF = ("lemma1_max_relative_residual", "max_log_difference", "path_max_log_difference")
"""Numbers that measure floating-point error itself (Lemma 1's residual, about 1e-14; the float32 path's largest log
difference from the float64 one): another machine's rounding changes them by definition, so their change is reported
(as an absolute difference), not judged against the tolerance."""


def compare(ours: dict, theirs: dict) -> dict:
    """Largest absolute and relative difference between two results' numeric leaves, and where they are; the
    :data:`ROUNDOFF` diagnostics apart (their largest absolute change); how many numbers and verdict counts differ.

    Examples
    --------
    >>> compare({"a": 1.0, "b": [2.0, 3.0]}, {"a": 1.0, "b": [2.0, 3.5]})["largest_relative"]
    {'path': 'b[1]', 'ours': 3.0, 'committed': 3.5, 'difference': 0.14285714285714285}
    >>> compare({"lemma1_max_relative_residual": 1e-14}, {"lemma1_max_relative_residual": 2e-14})["largest_relative"] is None
    True
    """
    a, b = dict(leaves(ours)), dict(leaves(theirs))
    missing = sorted(set(a) ^ set(b))
    worst_abs = worst_rel = worst_roundoff = None
    differing = [k for k in set(a) & set(b) if not (a[k] == b[k] or (math.isnan(a[k]) and math.isnan(b[k])))]
    for k in sorted(set(a) & set(b)):
        x, y = a[k], b[k]
        if math.isnan(x) and math.isnan(y):
            continue
        d = abs(x - y) if not (math.isnan(x) or math.isnan(y)) else math.inf
        r = d / max(abs(x), abs(y)) if d and math.isfinite(d) else (0.0 if not d else math.inf)
        entry = {"path": k, "ours": x, "committed": y}
        if k.rsplit(".", 1)[-1] in ROUNDOFF:
            if worst_roundoff is None or d > worst_roundoff["difference"]:
                worst_roundoff = {**entry, "difference": d}
            continue
        if worst_abs is None or d > worst_abs["difference"]:
            worst_abs = {**entry, "difference": d}
        if worst_rel is None or r > worst_rel["difference"]:
            worst_rel = {**entry, "difference": r}
    counts = [k for k in differing if k.endswith((".reversed", ".compared", ".ties"))]
    largest_count = max((abs(a[k] - b[k]) for k in counts), default=0.0)
    return {"compared": len(set(a) & set(b)), "differing": len(differing), "differing_counts": len(counts), "count_paths": sorted(counts),
            "largest_count_change": largest_count, "only_in_one": missing, "largest_absolute": worst_abs, "largest_relative": worst_rel,
            "largest_roundoff": worst_roundoff}


def verify(name: str, model: str | None = None, parameters: dict | None = None, profile: str = "full", kernels: str = "native") -> list[dict]:
    """Rerun a chapter into a temporary folder and compare every results file it writes with the committed one.

    ``kernels="baseline"`` reruns it with :data:`BASELINE_KERNELS` and a cache of its own (the dequantized GGUF
    folders are shared), so every model is run again on the other code paths.
    """
    import os

    from ..base.paths import cache_dir

    from .chapters import is_book_run

    chapter = find_chapter(name)
    if kernels not in ("native", "baseline"):
        raise ChapterError(f"unknown kernels {kernels!r}; use 'native' or 'baseline'")
    if not chapter.writes_results:
        raise ChapterError(f"chapter {chapter.key!r} writes no results of its own (it shows the other chapters' records); verify one of those")
    if not os.environ.get("ATTNCODA_RESULTS") and not is_book_run(chapter, model, profile, dict(parameters or {})):
        raise ChapterError(f"the book's record holds chapter {chapter.key!r} at its default model, the full profile and default parameters, "
                           "so this run would differ from it by design; verify at those, or set ATTNCODA_RESULTS to a record made like this run")
    tolerance = MODEL_TOLERANCE if chapter.per_model else 0.0
    reports = []
    with tempfile.TemporaryDirectory() as tmp:
        params = {**(parameters or {}), "results_dir": tmp}
        saved = {k: os.environ.get(k) for k in (*BASELINE_KERNELS, "ATTNCODA_CACHE")}
        if kernels == "baseline":
            models = cache_dir() / "models"
            (Path(tmp) / "cache").mkdir()
            if models.exists():
                (Path(tmp) / "cache" / "models").symlink_to(models)
            os.environ.update({**BASELINE_KERNELS, "ATTNCODA_CACHE": str(Path(tmp) / "cache")})
        try:
            run_chapter(chapter.key, model=model, parameters=params, output=Path(tmp) / "executed.ipynb", profile=profile, progress=False)
        finally:
            for k, v in saved.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        for fresh in sorted((Path(tmp) / chapter.key).glob("*.json")):
            committed = results_dir() / chapter.key / fresh.name
            if not committed.exists() and not committed.is_symlink():
                raise ChapterError(f"no committed results {committed} to compare {fresh.name} with; run the chapter without verify first")
            c = compare(json.loads(fresh.read_text())["results"], committed_results(committed))
            worst = c["largest_relative"]["difference"] if c["largest_relative"] else 0.0
            roundoff = c["largest_roundoff"]["difference"] if c["largest_roundoff"] else 0.0
            ok = worst <= tolerance and (roundoff == 0.0 or tolerance > 0.0) and not c["only_in_one"]  # exact chapters: every bit
            reports.append({"file": f"{chapter.key}/{fresh.name}", "tolerance": tolerance, "ok": ok,
                            "kernels": kernels, **c})
    if not reports:
        raise ChapterError(f"chapter {chapter.key!r} wrote no results to compare")
    return reports


def check_recordable(name: str, model: str | None, parameters: dict, profile: str) -> None:
    """``verify --record`` keeps a report of the chapter as the book builds it: refuse (one line) any other run."""
    from .chapters import is_book_run

    chapter = find_chapter(name)
    if not is_book_run(chapter, model, profile, dict(parameters)):
        raise ChapterError(f"--record keeps a report of chapter {chapter.key!r} as the book builds it (its default model, the full profile, "
                           "default parameters); drop --record to verify this run without keeping it")
    from ..base.paths import record_report

    record_report(f"{chapter.key}.json", "verify --record", ChapterError)  # where it would write, guarded before the rerun


def record(reports: list[dict], kernels: str) -> Path:
    """Keep a verify run's reports, with the code they checked, as ``data/verify/<chapter>.<kernels>.json`` (the
    reproducibility page shows them)."""
    from ..base.files import atomic_write_json
    from ..base.paths import record_report
    from ..base.provenance import code_version, library_versions

    chapter = reports[0]["file"].split("/")[0]
    path = record_report(f"{chapter}.{kernels}.json", "verify --record", ChapterError)
    atomic_write_json(path, {"chapter": chapter, "kernels": kernels, "environment": BASELINE_KERNELS if kernels == "baseline" else {},
                             "code": code_version(), "libraries": library_versions(), "reports": reports}, strict=True)
    return path
