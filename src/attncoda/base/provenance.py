"""What produced a result: the code (commit, a hash of the package source, a clean tree), the libraries, the run.

Nothing here records a path of the machine that ran the code.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
from pathlib import Path

from .checksums import installed_version
from .paths import repo_root

PACKAGE_DIR = Path(__file__).resolve().parents[1]
"""The installed ``attncoda`` package folder (``src/attncoda`` in a checkout)."""

LIBRARIES = ("numpy", "scipy", "numba", "torch", "transformers", "tokenizers", "gguf", "scikit-learn")


def source_sha256(package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 over every ``.py`` file of the package: its path relative to the package, then its bytes, in path order.

    Two checkouts with the same package code give the same hash, wherever they live.
    """
    digest = hashlib.sha256()
    for path in sorted(Path(package_dir).rglob("*.py")):
        digest.update(path.relative_to(package_dir).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def _git(*args: str, where: Path = PACKAGE_DIR) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def code_version(package_dir: Path = PACKAGE_DIR) -> dict:
    """The package version, the hash of its source and, in a git checkout, the commit and whether the code was clean.

    ``clean`` is True when ``git status --porcelain -- src notebooks``, run at the repository's top folder (git reads
    pathspecs relative to the folder it runs in), lists nothing: no tracked file changed and no untracked file added.
    """
    info = {"attncoda": installed_version("attncoda"), "source_sha256": source_sha256(package_dir)}
    commit = _git("rev-parse", "HEAD", where=package_dir)
    top = _git("rev-parse", "--show-toplevel", where=package_dir) if commit else None
    if commit and top:
        changed = _git("status", "--porcelain", "--untracked-files=all", "--", "src", "notebooks", where=Path(top))
        info["git_commit"] = commit
        info["clean"] = changed == ""
    return info


def library_versions(names=LIBRARIES) -> dict[str, str]:
    """Installed versions of the libraries the numbers depend on (those that are installed)."""
    return {n: v for n in names if (v := installed_version(n))}


def provenance(parameters: dict, seed, wall_seconds: float, extra: dict | None = None) -> dict:
    """What produced a result: code, Python and library versions, parameters, seed and its wall time in seconds."""
    return {
        "code": code_version(),
        "python": sys.version.split()[0],
        "libraries": library_versions(),
        "parameters": parameters,
        "seed": seed,
        "wall_time_s": round(float(wall_seconds), 3),
        **(extra or {}),
    }


def first_commit(path: str) -> tuple[str, str] | None:
    """``(short hash, date)`` of the commit that added ``path`` to the project's history, or None when git or the
    history cannot say (no git, a shallow clone, a file never committed)."""
    try:
        out = subprocess.run(["git", "log", "--diff-filter=A", "--format=%h %cs", "--", path], cwd=repo_root(), capture_output=True,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    words = out.stdout.split()
    return (words[-2], words[-1]) if out.returncode == 0 and len(words) >= 2 else None
