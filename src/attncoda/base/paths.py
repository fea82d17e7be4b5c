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


def writable_folder(folder: Path, what: str, advice: str, error=None) -> Path:
    """``folder``, created if missing, after a real write into it (a permission bit says nothing to root or on a
    read-only file system); ``error`` (an AttncodaError class) in one line naming ``what`` and ``advice`` otherwise."""
    import tempfile

    from .errors import AttncodaError

    error = error or AttncodaError
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryFile(dir=folder):
            pass
    except OSError as err:
        raise error(f"{what}: cannot write to the folder {folder} ({err.strerror}); {advice}") from None
    return folder


def writable_cache() -> Path:
    """The cache folder, checked writable before any work (a CacheError in one line otherwise)."""
    from .errors import CacheError

    return writable_folder(cache_dir(), "cache", "set ATTNCODA_CACHE to a writable folder", CacheError)


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
    """The book's record of chapter results: ``override``, else ``$ATTNCODA_RESULTS``, else ``data/results``.

    Only a book build at each chapter's defaults (or ``attncoda run --record``) writes here; every other run
    writes to its own :func:`run_folder`.
    """
    chosen = override or os.environ.get("ATTNCODA_RESULTS")
    return Path(chosen) if chosen else data_dir() / "results"


def run_folder(chapter: str, model: str | None, profile: str, parameters: dict) -> Path:
    """``_build/runs/<chapter>/<model>-<seed>-<profile>-<hash>``: the folder of one run that is not the book's record,
    named by what produced it (the hash covers the model, the profile and every parameter).

    Examples
    --------
    >>> run_folder("theory", None, "full", {"seed": 1}).name
    'synthetic-seed1-full-a7d5d263'
    """
    import hashlib
    import json

    seed = parameters.get("seed", parameters.get("seeds"))
    seed_part = "seed" + ("-".join(map(str, seed)) if isinstance(seed, list) else str(seed)) if seed is not None else "seed-default"
    described = json.dumps({"model": model, "profile": profile, "parameters": parameters}, sort_keys=True, default=str)
    digest = hashlib.sha256(described.encode()).hexdigest()[:8]
    return build_dir() / "runs" / chapter / f"{slug(model or 'synthetic')}-{seed_part}-{profile}-{digest}"


def is_inside(path: str | os.PathLike, folder: str | os.PathLike) -> bool:
    """Whether ``path`` (resolved, links followed) lies inside ``folder`` or is ``folder`` itself."""
    path, folder = Path(path).resolve(), Path(folder).resolve()
    return path == folder or folder in path.parents


def slug(name: str) -> str:
    """A file-name-safe form of a model name or path.

    Examples
    --------
    >>> slug("EleutherAI/pythia-70m@step1000")
    'EleutherAI--pythia-70m@step1000'
    >>> slug("smollm2-135m")
    'smollm2-135m'
    >>> slug(".."), slug("../../etc")
    ('model', 'etc')
    """
    base = name.rstrip("/")
    if os.sep in base or "/" in base:
        parts = Path(base).parts if Path(base).exists() else base.split("/")
        base = "--".join(p for p in parts[-2:] if p not in ("", "/"))
    # never "." or "..", never a hidden name: a cache or results path stays inside its folder whatever the name
    return re.sub(r"[^A-Za-z0-9._@+-]+", "-", base).lstrip(".-").rstrip("-") or "model"
