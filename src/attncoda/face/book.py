"""Build the website: run every chapter with papermill, then render the executed copies with Jupyter Book."""

from __future__ import annotations

import shutil
import subprocess
import sys
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


def build_book(profile: str = "full", run: bool = True, strict: bool = True, preset: str | None = None) -> Path:
    """Run every chapter (unless ``run`` is False), then build ``_build/html``; returns its path.

    With ``preset``, the measurement chapter measures that preset's models instead of the offline defaults.
    """
    stage = stage_sources()
    for chapter in CHAPTERS.values():
        executed = stage / "notebooks" / f"{chapter.notebook}.ipynb"
        if run:
            print(f"running chapter {chapter.key} ({chapter.notebook})", flush=True)
            model = f"preset:{preset}" if preset and chapter.key == "measurement" else None
            run_chapter(chapter.key, model=model, profile=profile,
                        output=(stage / "notebooks" / f"{chapter.notebook}.ipynb") if model else None)
        elif not executed.exists():
            raise ChapterError(f"{executed} has not been executed yet; run without --no-run")
    command = [_jupyter_book(), "build", str(stage), "--path-output", str(build_dir().parent), "--builder", "html"]
    if strict:
        command += ["--warningiserror", "--keep-going"]
    done = subprocess.run(command)
    if done.returncode != 0:
        raise ChapterError(f"jupyter-book build failed (exit {done.returncode}); its messages are above")
    return build_dir().parent / "_build" / "html"
