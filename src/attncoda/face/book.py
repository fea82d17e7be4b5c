"""Build the website: run every chapter with papermill, then render the executed copies with Jupyter Book."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .chapters import CHAPTERS, ChapterError, run_chapter, stage_dir
from ..base.paths import build_dir, repo_root


def stage_sources() -> Path:
    """Copy the book's configuration and prose pages into the stage (the notebooks are written there by runs)."""
    root, stage = repo_root(), stage_dir()
    stage.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, stage / name)
    if (stage / "book").exists():
        shutil.rmtree(stage / "book")
    shutil.copytree(root / "book", stage / "book")
    return stage


def _jupyter_book() -> str:
    beside = Path(sys.executable).with_name("jupyter-book")
    found = str(beside) if beside.exists() else shutil.which("jupyter-book")
    if not found:
        raise ChapterError("jupyter-book is not installed; run `make book` (it installs everything into .venv)")
    return found


INPUTS = ("data/calibration/curves.json", "data/predictor/frozen.json", "data/predictor/v2.json", "data/paper/reference.json")
"""Committed inputs a chapter reads; a change to any of them reruns every chapter."""


def chapter_key(chapter, model: str | None, profile: str) -> str:
    """What an executed chapter depends on: its notebook, model and profile, the package source and the committed inputs.

    An executed copy whose key is unchanged (and whose results files exist) is reused instead of rerun.
    """
    from ..base.provenance import source_sha256

    root = repo_root()
    h = hashlib.sha256()
    h.update((root / "notebooks" / f"{chapter.notebook}.ipynb").read_bytes())
    h.update(json.dumps({"model": model, "profile": profile, "source": source_sha256()}, sort_keys=True).encode())
    for name in INPUTS:
        path = root / name
        h.update(path.read_bytes() if path.exists() else b"-")
    return h.hexdigest()


def build_book(profile: str = "full", run: bool = True, strict: bool = True, preset: str | None = None, reuse: bool = True) -> Path:
    """Run every chapter (unless ``run`` is False), then build ``_build/html``; returns its path.

    A chapter whose :func:`chapter_key` matches its last executed copy is not rerun (``reuse=False`` reruns
    everything). With ``preset``, the measurement chapter measures that preset's models instead of the defaults.
    Prints each chapter's time and the total.
    """
    from ..base.paths import results_dir

    started = time.perf_counter()
    stage = stage_sources()
    for chapter in CHAPTERS.values():
        executed = stage / "notebooks" / f"{chapter.notebook}.ipynb"
        if run:
            model = f"preset:{preset}" if preset and chapter.key == "measurement" else None
            key = chapter_key(chapter, model, profile)
            stamp = executed.with_suffix(".key")
            has_results = any((results_dir() / chapter.key).glob("*.json"))
            summary_page = chapter.key == "reproducibility"  # it reads every other chapter's results: always rerun (seconds)
            if reuse and not summary_page and executed.exists() and has_results and stamp.exists() and stamp.read_text() == key:
                print(f"chapter {chapter.key}: unchanged (notebook, package source, inputs), its executed copy is reused", flush=True)
                continue
            t0 = time.perf_counter()
            print(f"chapter {chapter.key}: running {chapter.notebook}", flush=True)
            stamp.unlink(missing_ok=True)
            run_chapter(chapter.key, model=model, profile=profile, output=executed if model else None)
            stamp.write_text(key)
            print(f"chapter {chapter.key}: done in {time.perf_counter() - t0:.0f} s", flush=True)
        elif not executed.exists():
            raise ChapterError(f"{executed} has not been executed yet; run without --no-run")
    command = [_jupyter_book(), "build", str(stage), "--path-output", str(build_dir().parent), "--builder", "html"]
    if strict:
        command += ["--warningiserror", "--keep-going"]
    done = subprocess.run(command)
    if done.returncode != 0:
        raise ChapterError(f"jupyter-book build failed (exit {done.returncode}); its messages are above")
    print(f"book built in {time.perf_counter() - started:.0f} s", flush=True)
    return build_dir().parent / "_build" / "html"
