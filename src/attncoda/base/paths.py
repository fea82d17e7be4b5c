"""Where things live: the project folder, its data, the results, and the cache."""

from __future__ import annotations

import os
import re
from pathlib import Path


def cache_dir() -> Path:
    """``$ATTNCODA_CACHE``, else the platform's user cache folder for attncoda."""
    env = os.environ.get("ATTNCODA_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("attncoda"))


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


def build_dir() -> Path:
    """Where the book is staged and built: ``$ATTNCODA_OUTPUT/_build``, else ``<project>/_build`` (the site lands in its ``html``)."""
    env = os.environ.get("ATTNCODA_OUTPUT")
    return (Path(env).resolve() if env else repo_root()) / "_build"


def data_dir() -> Path:
    """``<project>/data``: committed inputs, frozen curves and predictors, results."""
    return repo_root() / "data"


def results_dir(override: str | os.PathLike | None = None) -> Path:
    """Where chapter results go: ``override``, else ``$ATTNCODA_RESULTS``, else ``data/results``."""
    chosen = override or os.environ.get("ATTNCODA_RESULTS")
    return Path(chosen) if chosen else data_dir() / "results"


def slug(name: str) -> str:
    """A file-name-safe form of a model name or path.

    Examples
    --------
    >>> slug("EleutherAI/pythia-70m@step1000")
    'EleutherAI--pythia-70m@step1000'
    >>> slug("smollm2-135m")
    'smollm2-135m'
    """
    base = name.rstrip("/")
    if os.sep in base or "/" in base:
        parts = Path(base).parts if Path(base).exists() else base.split("/")
        base = "--".join(p for p in parts[-2:] if p not in ("", "/"))
    return re.sub(r"[^A-Za-z0-9._@+-]+", "-", base).strip("-") or "model"
