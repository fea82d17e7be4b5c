"""The book's chapters, and running one with papermill.

Each chapter is a notebook in ``notebooks/`` with one cell tagged ``parameters``.
``run_chapter`` executes it into a file beside the book sources (atomically: a
failed or interrupted run never replaces a good executed copy).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import ChapterError
from ..base.paths import build_dir, repo_root, slug


QUIET = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error", "PYTHONWARNINGS": "ignore:IProgress not found"}
"""The chapter kernel's environment: no download or loading progress bars and no advisory warnings in the pages."""


@dataclass(frozen=True)
class Chapter:
    key: str
    notebook: str
    title: str
    per_model: bool = False
    default_model: str = "synthetic"
    small: dict = field(default_factory=dict)
    test_family: str = "llama"  # the tiny architecture the notebook test passes as --model
    series: bool = False  # --model names a checkpoint series (a Hub id or a comma-separated list of folders), not one model


CHAPTERS: dict[str, Chapter] = {
    c.key: c
    for c in (
        Chapter(
            "theory",
            "01_theory_witness",
            "Theory witness",
            small={"n_positions": 2000, "rows_per_layer": 300, "invariance_samples": 300},
        ),
        Chapter(
            "calibration",
            "02_reversal_calibration",
            "Reversal calibration",
            small={"n_grid": 5, "n_heads": 30, "n_triples": 2000, "replicates": 1},
        ),
        Chapter(
            "measurement",
            "03_measurement",
            "The multi-model measurement",
            per_model=True,
            default_model="defaults",
            small={"seeds": [0], "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2},
        ),
        *(
            Chapter(key, notebook, title, per_model=True, default_model="defaults",
                    small={"seeds": [0], "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2})
            for key, notebook, title in (
                ("measurement-layers", "03b_layer_collapse", "Layer-wise collapse (Figure 4)"),
                ("measurement-audits", "03c_audits", "Audits (Tables 5-8)"),
                ("measurement-witness", "03d_witness", "A witness triple (Figure 7)"),
            )
        ),
        Chapter(
            "collapse",
            "04_collapse",
            "Entropy collapse across training",
            per_model=True,
            default_model="suite",
            small={"steps": 4, "endpoints": "minilm-l6", "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2},
            test_family="gpt_neox",
            series=True,
        ),
        Chapter(
            "clustering",
            "05_clustering",
            "Head clustering",
            per_model=True,
            default_model="encoders",
            small={"n": 4, "length": 24, "batch_size": 2, "signature_n": 4},
            test_family="bert",
        ),
        Chapter(
            "pruning",
            "06_pruning",
            "Pruning heads",
            per_model=True,
            default_model="causal",
            small={"seeds": [0, 1], "random_draws": 2, "random_draws_smallest": 2, "n_windows": 2, "length": 24, "signature_n": 4},
        ),
        Chapter("reproducibility", "09_reproducibility", "Reproducibility"),
    )
}


def find_chapter(name: str) -> Chapter:
    """Look a chapter up by key (``theory``), number (``1``, ``01``) or notebook name."""
    wanted = name.removesuffix(".ipynb").lower()
    for c in CHAPTERS.values():
        if wanted in (c.key, c.notebook, c.notebook.split("_", 1)[0], c.notebook.split("_", 1)[0].lstrip("0")):
            return c
    raise ChapterError(f"unknown chapter {name!r}; known: {', '.join(CHAPTERS)}")


def stage_dir() -> Path:
    """Where the book is assembled from (sources plus executed notebooks)."""
    return build_dir() / "stage"


def default_output(chapter: Chapter, model: str | None) -> Path:
    """Executed copy's path: in the book stage for the chapter's default model, else under ``_build/runs``."""
    if model in (None, chapter.default_model):
        return stage_dir() / "notebooks" / f"{chapter.notebook}.ipynb"
    return build_dir() / "runs" / chapter.notebook / f"{slug(model)}.ipynb"


class _ProgressEcho:
    """Echoes the lines a chapter's kernel writes to ``$ATTNCODA_PROGRESS`` to this terminal, prefixed by the chapter."""

    def __init__(self, key: str):
        import tempfile
        import threading

        fd, name = tempfile.mkstemp(prefix="attncoda-progress-", suffix=".log")
        os.close(fd)
        self.path, self.key = Path(name), key
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        with open(self.path, encoding="utf-8") as f:
            while True:
                line = f.readline()
                if line:
                    print(f"  [{self.key}] {line.rstrip()}", flush=True)
                elif self.done.is_set():
                    return
                else:
                    self.done.wait(0.5)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=5)
        self.path.unlink(missing_ok=True)


def run_chapter(
    name: str,
    model: str | None = None,
    parameters: dict | None = None,
    output: str | os.PathLike | None = None,
    profile: str = "full",
    progress: bool = True,
) -> Path:
    """Execute one chapter with papermill and return the executed notebook's path."""
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from ..base.progress import ENV as progress_env

    chapter = find_chapter(name)
    if profile not in ("full", "small"):
        raise ChapterError(f"unknown profile {profile!r}; use 'full' or 'small'")
    params = dict(chapter.small) if profile == "small" else {}
    params.update(parameters or {})
    if model is not None:
        if not chapter.per_model and model != chapter.default_model:
            raise ChapterError(f"chapter {chapter.key!r} does not take a model (it is {chapter.default_model!r})")
        if model.startswith("preset:"):
            from ..engine.presets import preset

            if not chapter.key.startswith("measurement"):
                raise ChapterError(f"--preset runs the measurement chapter and its sections; chapter {chapter.key!r} takes one model at a time")
            preset(model)  # an unknown preset fails here, in one line
        elif model != chapter.default_model and chapter.series:
            from ..engine.checkpoints import check_reachable, series

            # a bad series fails here, in one line, before a kernel starts
            check_reachable(series(model, (parameters or {}).get("revisions") or None))
        elif model != chapter.default_model:
            from ..engine.models import resolve

            resolve(model)  # a bad name or path fails here, in one line, before a kernel starts
        params["model"] = model
    root = repo_root()
    source = root / "notebooks" / f"{chapter.notebook}.ipynb"
    if not source.exists():
        raise ChapterError(f"{source} is missing; run from the project folder or set ATTNCODA_HOME")
    from .parameters import check_parameters

    check_parameters(chapter.key, source, {k: v for k, v in params.items() if k != "model"})
    target = Path(output) if output else default_output(chapter, model)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.stem}.part.ipynb")
    env_before = {k: os.environ.get(k) for k in (*QUIET, "ATTNCODA_HOME", progress_env)}
    os.environ.update(QUIET)
    os.environ["ATTNCODA_HOME"] = str(root)
    echo = _ProgressEcho(chapter.key) if progress else None
    if echo:
        os.environ[progress_env] = str(echo.path)
    try:
        papermill.execute_notebook(
            str(source), str(partial), parameters=params, kernel_name="python3", cwd=str(root / "notebooks"), progress_bar=progress
        )
    except PapermillExecutionError as err:
        on = f" on model {params['model']!r}" if "model" in params else ""
        raise ChapterError(f"chapter {chapter.key!r}{on} failed in cell {err.exec_count}: {err.ename}: {err.evalue} "
                           f"(the last good page is kept; the failed run is in {partial})") from None
    finally:
        if echo:
            echo.stop()
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    os.replace(partial, target)
    return target
