"""Where things live: the project folder, its data, the results, and the cache."""

from __future__ import annotations

import os
import re
from pathlib import Path


PATH_ENVIRONMENT = ("ATTNCODA_CACHE", "ATTNCODA_OUTPUT", "ATTNCODA_RESULTS", "ATTNCODA_HOME")
"""The environment variables that name folders. :func:`absolute_environment` makes each absolute before a chapter's
kernel starts: the kernel runs in ``notebooks/``, where a relative path would name another folder."""


def absolute_environment() -> None:
    """Set each of :data:`PATH_ENVIRONMENT` that is given to its absolute form (``~`` expanded, relative to the folder
    the reader typed the command in), so the command line and a chapter's kernel mean the same folder."""
    for name in PATH_ENVIRONMENT:
        value = os.environ.get(name)
        if value:
            os.environ[name] = os.path.abspath(os.path.expanduser(value))


def cache_dir() -> Path:
    """``$ATTNCODA_CACHE`` (``~`` expanded, made absolute), else the platform's user cache folder for attncoda."""
    env = os.environ.get("ATTNCODA_CACHE")
    if env:
        return Path(os.path.abspath(os.path.expanduser(env)))
    import platformdirs

    return Path(platformdirs.user_cache_dir("attncoda"))


def _loops(link: Path) -> bool:
    """Whether following ``link`` never ends (a loop of symbolic links)."""
    try:
        link.resolve(strict=True)
    except (RuntimeError, OSError) as err:
        return isinstance(err, RuntimeError) or getattr(err, "errno", None) == 40  # ELOOP
    return False


def writable_folder(folder: Path, what: str, advice: str, error=None) -> Path:
    """``folder``, created if missing, after a real write into it (a permission bit says nothing to root or on a
    read-only file system); ``error`` (an AttncodaError class) in one line naming ``what`` and ``advice`` otherwise."""
    import tempfile

    from .errors import AttncodaError

    error = error or AttncodaError
    folder = Path(folder)
    dangling = next((f for f in (folder, *folder.parents) if f.is_symlink() and not f.exists()), None)
    if dangling is not None and _loops(dangling):
        raise error(f"{what}: the folder {folder} goes through a loop of symbolic links at {dangling}; remove the link ({advice})")
    if dangling is not None:
        raise error(f"{what}: the folder {folder} goes through the link {dangling}, which points to {os.readlink(dangling)}, and that "
                    f"does not exist; remove the link or create its target ({advice})")
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


def _is_project(folder: Path) -> bool:
    return (folder / "_toc.yml").exists() and (folder / "src" / "attncoda").is_dir()


def repo_root() -> Path:
    """The project folder: ``$ATTNCODA_HOME``, else the nearest parent of the cwd holding ``_toc.yml``, else the checkout
    the package runs from (an editable install, run from another folder), else the cwd."""
    env = os.environ.get("ATTNCODA_HOME")
    if env:
        return Path(env).expanduser().resolve()
    here = Path.cwd().resolve()
    for folder in (here, *here.parents):
        if _is_project(folder):
            return folder
    checkout = Path(__file__).resolve().parents[3]  # <checkout>/src/attncoda/base/paths.py
    return checkout if _is_project(checkout) else here


def build_dir() -> Path:
    """Where the book is staged and built: ``$ATTNCODA_OUTPUT/_build``, else ``<project>/_build`` (the site lands in its ``html``)."""
    env = os.environ.get("ATTNCODA_OUTPUT")
    return (_resolved(env) if env else repo_root()) / "_build"


def _resolved(path: str) -> Path:
    """``path`` with its links followed, or as an absolute path when they loop (the write guard then names the loop)."""
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(os.path.expanduser(path)))


def data_dir() -> Path:
    """``<project>/data``: committed inputs, frozen curves and predictors, results."""
    return repo_root() / "data"


PACKAGED_DATA = Path(__file__).resolve().parents[1] / "_data"
"""The frozen inputs the package carries for an install without its checkout (``pyproject.toml``'s package data):
copies of the files under ``data/`` with the same paths, held equal to them by ``tests/book/test_install.py`` (copies,
not links: a checkout without symbolic links, Git for Windows' default, would put each link's text in the wheel)."""


def frozen_dir() -> Path:
    """Where the frozen inputs an audit reads live (calibration curves, predictors, the staged audit's margins): the
    project's ``data``, else, when the package runs without its checkout (``pip install "attncoda @ git+…"``),
    :data:`PACKAGED_DATA`."""
    root = repo_root()
    return root / "data" if _is_project(root) else PACKAGED_DATA


def project_path(path: Path) -> Path:
    """Where a writer puts a frozen input read from ``path``: ``path`` itself, or for one of the package's copies the
    same file under the project's ``data`` (the copies are never written)."""
    try:
        inside = Path(path).resolve().relative_to(PACKAGED_DATA)
    except ValueError:
        return Path(path)
    return data_dir() / inside


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
    path, folder = _resolved(str(path)), _resolved(str(folder))
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


PROTECTED = ("src", "notebooks", "book", "data", "tests", "tests_interop", "benchmarks", ".git", ".github", ".ci")
"""The project's sources and committed inputs and record: no run writes inside them (the record itself only through a
recorded run's kernel, whose setting says ``record``, :mod:`attncoda.base.run_setting`)."""


def _tracked(path: Path, root: Path) -> bool:
    """Whether git tracks ``path`` (a file) or any file under it (a folder) in the checkout ``root``."""
    import subprocess

    try:
        done = subprocess.run(["git", "-C", str(root), "ls-files", "--", str(path.relative_to(root))], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError, ValueError):
        return False
    return done.returncode == 0 and bool(done.stdout.strip())


def refuse_protected(path: str | os.PathLike, what: str, error=None, record: bool = False, stage: bool | None = None,
                     advice: str | None = None) -> Path:
    """The one guard on every path a run may write (``--output``, ``results_dir`` and the folders the environment names):
    ``path`` with links followed, or ``error`` in one line when it lies in the project's sources or committed files
    (:data:`PROTECTED`, the project folder itself, any file git tracks, or a folder holding one), the book's record
    (``data/results`` or ``$ATTNCODA_RESULTS``) unless ``record``, or the book's stage (``_build/stage``) unless ``stage``
    (by default: ``record``; a small-profile book build stages its pages but writes no record). ``advice`` replaces
    the line's advice, for a command that has no ``--record``."""
    from .errors import AttncodaError

    error = error or AttncodaError
    try:
        resolved = Path(os.path.abspath(os.path.expanduser(str(path)))).resolve()
    except (RuntimeError, OSError):  # Python raises RuntimeError (3.11) or OSError (3.13) for a loop of links
        raise error(f"{what} {path} goes through a loop of symbolic links, so it names no folder; point it at a real folder") from None
    root = repo_root()
    stage = record if stage is None else stage
    areas = [] if record else [(results_dir(), "the book's record"), (data_dir() / "results", "the book's record")]
    areas += [] if stage else [(build_dir() / "stage", "the book's stage")]
    areas += [(root / name, f"the project's {name}/") for name in PROTECTED]
    for area, name in areas:
        if is_inside(resolved, area):
            shown = f" ({resolved})" if str(resolved) != os.path.abspath(os.path.expanduser(str(path))) else ""
            told = advice or ("use --record to write the record, or pass another folder" if name == "the book's record" else "choose a folder outside it")
            raise error(f"{what} {path}{shown} is inside {name} {area.resolve()}, which no run writes; {told}")
    if resolved == root.resolve() or (is_inside(resolved, root) and _tracked(resolved, root.resolve())):
        raise error(f"{what} {path} would write over files the project tracks in git; choose a folder outside them")
    return resolved


def verify_dir() -> Path:
    """Where the reproducibility page's reports live (``verify --record``, the cross-machine comparison): ``data/verify``
    beside the book's record, or a ``verify`` folder beside a record that ``$ATTNCODA_RESULTS`` moved."""
    moved = os.environ.get("ATTNCODA_RESULTS")
    return Path(os.path.abspath(moved)).parent / "verify" if moved else data_dir() / "verify"


def record_report(name: str, what: str, error=None) -> Path:
    """The path a command asked to keep a report (``--record``) writes: ``name`` in :func:`verify_dir`. The committed
    ``data/verify`` is the one place in the project such a command writes; a moved record's folder goes through
    :func:`refuse_protected` (never the sources, the notebooks or the committed record)."""
    folder = verify_dir()
    if _resolved(str(folder)) != _resolved(str(data_dir() / "verify")):
        folder = refuse_protected(folder, what, error, record=True)
    return folder / name


def check_environment_folders(error=None) -> None:
    """Refuse, in one line, an ``$ATTNCODA_CACHE`` or ``$ATTNCODA_OUTPUT`` inside the project's sources or record, and an
    ``$ATTNCODA_RESULTS`` inside its sources (the record may be moved, never into the code)."""
    for name in ("ATTNCODA_CACHE", "ATTNCODA_OUTPUT"):
        if os.environ.get(name):
            refuse_protected(os.environ[name], f"${name} =", error)
    moved = os.environ.get("ATTNCODA_RESULTS")
    if moved and not is_inside(moved, data_dir() / "results"):
        refuse_protected(moved, "$ATTNCODA_RESULTS =", error, record=True)
