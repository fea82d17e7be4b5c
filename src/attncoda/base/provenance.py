"""What produced a result: the code (commit, a hash of the package source, a clean tree), the libraries, the run.

A result names the package modules that can have computed its numbers and a hash of their source
(:func:`modules_sha256`): the modules the writing process imported and every module their code can run
(:func:`reachable_modules`). The closure matters because a number read from the cache was computed by code this
process never imported (signatures captured by an earlier run), and the module that reads a cache entry is the one
that computes it on a miss. A result stays current until one of those modules changes, so a change elsewhere in the
package does not make it stale. Nothing here records a path of the machine that ran the code.
"""

from __future__ import annotations

import ast
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


STAMPING_MODULES = frozenset({"attncoda.base.provenance"})
"""Modules that write a result's stamp and compute none of its numbers: left out of :func:`modules_sha256`, so a change
to how results are stamped does not make the numbers stale."""


def module_file(name: str, package_dir: Path = PACKAGE_DIR) -> Path | None:
    """The source file of package module ``name`` (``attncoda.x.y`` is ``x/y.py`` or ``x/y/__init__.py``), or None."""
    parts = name.split(".")[1:]
    base = Path(package_dir).joinpath(*parts)
    for path in (base / "__init__.py", base.with_suffix(".py") if parts else None):
        if path is not None and path.is_file():
            return path
    return None


def imported_names(source: str, module: str, is_package: bool = False) -> set[str]:
    """Every ``attncoda`` name that ``source`` (the code of ``module``) imports, anywhere in it (inside functions too):
    ``import attncoda.x`` gives ``attncoda.x``; ``from .x import y`` gives ``attncoda.x`` and ``attncoda.x.y`` (a name
    that is not a module is dropped later, by :func:`reachable_modules`)."""
    package = module if is_package else module.rpartition(".")[0]
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.split(".")[0] == "attncoda")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                parts = parts[:len(parts) - (node.level - 1)]
                base = ".".join(parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            if base.split(".")[0] == "attncoda":
                names.add(base)
                names.update(f"{base}.{a.name}" for a in node.names)
    return names


def reachable_modules(roots, package_dir: Path = PACKAGE_DIR) -> list[str]:
    """The package modules that ``roots`` (module names) can run: the roots, every module their code imports (read from
    the source, so an import inside a function counts whether or not it ran), the packages above each (importing
    ``attncoda.x.y`` runs ``attncoda/__init__.py`` and ``attncoda/x/__init__.py``), and so on until nothing is added."""
    seen, todo = set(), [r for r in roots if r.split(".")[0] == "attncoda"]
    while todo:
        name = todo.pop()
        parts = name.split(".")
        for upper in (".".join(parts[:i]) for i in range(1, len(parts) + 1)):
            path = module_file(upper, package_dir)
            if upper in seen or path is None:
                continue
            seen.add(upper)
            todo.extend(imported_names(path.read_text(), upper, path.name == "__init__.py"))
    return sorted(seen)


def modules_sha256(modules, package_dir: Path = PACKAGE_DIR) -> str:
    """SHA-256 over the named modules' source, each its name then its bytes, in name order, leaving out
    :data:`STAMPING_MODULES`. A module that no longer exists hashes as missing, so the hash no longer matches."""
    digest = hashlib.sha256()
    for name in sorted(set(modules) - STAMPING_MODULES):
        path = module_file(name, package_dir)
        digest.update(name.encode() + b"\0")
        digest.update((path.read_bytes() if path else b"<missing>") + b"\0")
    return digest.hexdigest()


def closure_sha256(roots, package_dir: Path = PACKAGE_DIR) -> str:
    """:func:`modules_sha256` of :func:`reachable_modules` of ``roots``: the source of everything ``roots`` can run."""
    return modules_sha256(reachable_modules(roots, package_dir), package_dir)


def notebook_imports(notebook: Path) -> set[str]:
    """The ``attncoda`` names a notebook's code cells import (its lines of IPython magic and shell left out)."""
    import json

    names = set()
    for cell in json.loads(Path(notebook).read_text())["cells"]:
        if cell["cell_type"] == "code":
            lines = "".join(cell["source"]).splitlines()
            names |= imported_names("\n".join(line for line in lines if not line.lstrip().startswith(("%", "!"))), "__main__")
    return names


def loaded_modules() -> list[str]:
    """The package modules this process has imported so far."""
    return sorted(name for name in sys.modules if name == "attncoda" or name.startswith("attncoda."))


def _git(*args: str, where: Path = PACKAGE_DIR) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(where), *args], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def version_tag(where: Path = PACKAGE_DIR) -> str | None:
    """``git describe`` against the version tags (``v`` and a digit): the tag itself on a tagged commit, else the tag,
    the commits since it and the commit (``v0.1.0-3-g0123456789ab``); None without a tag or a git checkout."""
    return _git("describe", "--tags", "--match", "v[0-9]*", "--abbrev=12", where=where) or None


def code_version(package_dir: Path = PACKAGE_DIR) -> dict:
    """The package version, the hash of its whole source, the package modules this process's numbers can come from
    (:func:`reachable_modules` of those it has imported) with :func:`modules_sha256` of them, and, in a git checkout,
    the commit and whether the code was clean.

    ``clean`` is True when ``git status --porcelain -- src notebooks``, run at the repository's top folder (git reads
    pathspecs relative to the folder it runs in), lists nothing: no tracked file changed and no untracked file added.
    ``git_describe`` names the newest version tag (``v0.1.0``) and how far the commit is past it (``v0.1.0-3-g…``),
    where the history holds one.
    """
    modules = reachable_modules(loaded_modules(), package_dir)
    info = {"attncoda": installed_version("attncoda"), "source_sha256": source_sha256(package_dir), "modules": modules,
            "modules_sha256": modules_sha256(modules, package_dir)}
    commit = _git("rev-parse", "HEAD", where=package_dir)
    top = _git("rev-parse", "--show-toplevel", where=package_dir) if commit else None
    if commit and top:
        changed = _git("status", "--porcelain", "--untracked-files=all", "--", "src", "notebooks", where=Path(top))
        info["git_commit"] = commit
        info["clean"] = changed == ""
        if described := version_tag(package_dir):
            info["git_describe"] = described
    return info


def is_current(code: dict, package_dir: Path = PACKAGE_DIR) -> bool:
    """Whether a result's ``code`` stamp still describes this package: the modules it names have the source they had."""
    return bool(code.get("modules")) and code.get("modules_sha256") == modules_sha256(code["modules"], package_dir)


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
