"""Where things live, and chapter results with their provenance.

Each chapter writes ``data/results/<chapter>/<name>.json``: the numbers it
reports, plus what produced them (code version, parameters, seed, wall time).
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

from .io import atomic_write_json
from .registry import installed_version


def repo_root() -> Path:
    """The project folder: ``$ATTNCODA_HOME``, else the nearest parent of the cwd holding ``_toc.yml``, else the cwd."""
    env = os.environ.get("ATTNCODA_HOME")
    if env:
        return Path(env).resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if (folder / "_toc.yml").exists() and (folder / "src" / "attncoda").is_dir():
            return folder
    return here


def data_dir() -> Path:
    """``<project>/data``: committed inputs, frozen curves and results."""
    return repo_root() / "data"


def results_dir(override: str | os.PathLike | None = None) -> Path:
    """Where chapter results go: ``override``, else ``$ATTNCODA_RESULTS``, else ``data/results``."""
    chosen = override or os.environ.get("ATTNCODA_RESULTS")
    return Path(chosen) if chosen else data_dir() / "results"


def slug(name: str) -> str:
    """A file-name-safe form of a model name or path (``EleutherAI/pythia-70m@step1000`` → ``EleutherAI--pythia-70m@step1000``)."""
    base = name.rstrip("/")
    if os.sep in base or "/" in base:
        parts = Path(base).parts if Path(base).exists() else base.split("/")
        base = "--".join(p for p in parts[-2:] if p not in ("", "/"))
    return re.sub(r"[^A-Za-z0-9._@+-]+", "-", base).strip("-") or "model"


def code_version() -> dict:
    """Package version and, when run from a git checkout, the commit and whether it had local changes."""
    info = {"attncoda": installed_version("attncoda")}
    root = Path(__file__).resolve().parents[2]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True, timeout=10)
        if commit.returncode == 0:
            info["git_commit"] = commit.stdout.strip()
            dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--", "src"], capture_output=True, text=True, timeout=10)
            info["git_dirty_src"] = bool(dirty.stdout.strip())
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def provenance(parameters: dict, seed, started: float, extra: dict | None = None) -> dict:
    """What produced a result: code, library versions, parameters, seed and wall time since ``started``."""
    libs = {n: installed_version(n) for n in ("numpy", "scipy", "torch", "transformers")}
    return {
        "code": code_version(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "libraries": {k: v for k, v in libs.items() if v},
        "parameters": parameters,
        "seed": seed,
        "wall_time_s": round(time.time() - started, 3),
        **(extra or {}),
    }


def write_results(chapter: str, name: str, numbers: dict, parameters: dict, seed, started: float, directory=None, extra=None) -> Path:
    """Atomically write ``<results>/<chapter>/<slug(name)>.json`` with ``numbers`` and their provenance."""
    path = results_dir(directory) / chapter / f"{slug(name)}.json"
    atomic_write_json(path, {"chapter": chapter, "name": name, "results": numbers, "provenance": provenance(parameters, seed, started, extra)})
    return path


def paper_reference() -> dict:
    """The paper's own numbers (``data/paper/reference.json``), to show beside ours, labelled as the paper's."""
    import json

    path = data_dir() / "paper" / "reference.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run from the project folder or set ATTNCODA_HOME")
    return json.loads(path.read_text())
