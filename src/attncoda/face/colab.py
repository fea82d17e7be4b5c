"""Colab: the model a chapter measures there, and the notebooks the "Open in Colab" button opens.

In Colab the offline default models (registry packages of about 1.3 GB) are not installed, but the Hub is
reachable, so each model chapter measures a model Colab can download: the paper's own where it fits the
chapter (its :attr:`~attncoda.face.chapters.Chapter.colab_model`). A reader who sets ``model`` in the parameters cell gets that model instead.

The button opens a copy of the chapter's notebook whose first code cell installs the package at the commit the
page was built from: the chapters are committed without that cell, and ``attncoda book`` inserts it
(:func:`with_colab_cell`) into the copies it writes to ``_build/colab/<commit>/`` and into each page's download; the
publishing workflow pushes the copies to the repository's ``colab`` branch.
"""

from __future__ import annotations

import os
import sys

FORCE = "ATTNCODA_COLAB"
"""Set to 1 to take the Colab branch outside Colab (the bare-environment test does)."""


def in_colab() -> bool:
    """Whether this kernel runs in Google Colab (or the Colab branch is forced with ``$ATTNCODA_COLAB=1``)."""
    return "google.colab" in sys.modules or os.environ.get(FORCE) == "1"


def colab_model(chapter: str, model: str) -> str:
    """``model``, or in Colab the chapter's ``colab_model`` when ``model`` is still the offline default."""
    from .chapters import CHAPTERS

    entry = CHAPTERS[chapter]
    if in_colab() and entry.colab_model and model == entry.default_model:
        print(f"In Colab: this chapter measures {entry.colab_model} (the offline default models are not installed here); "
              "set model in the parameters cell to measure another.")
        return entry.colab_model
    return model


COLAB_SOURCE = """\
# In Colab only (elsewhere nothing happens): install attncoda at the commit this notebook was built from, with its text
# corpora, and work in its checkout, whose data/ the chapters read. The book build inserts this cell.
import importlib, os, subprocess, sys
REPOSITORY = "{repository}"
COMMIT = "{commit}"
if "google.colab" in sys.modules or os.environ.get("ATTNCODA_COLAB") == "1":
    start = globals().setdefault("_attncoda_start", os.getcwd())  # Colab's /content; a rerun of this cell keeps it
    checkout = os.path.join(start, "attncoda-src")
    installed = os.path.join(checkout, ".attncoda-installed")  # written last: an interrupted install is redone
    if not os.path.exists(installed):
{fetch}
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", checkout + "[colab]"], check=True)
        subprocess.run([sys.executable, "-m", "attncoda.face.cli", "models", "--corpora"], check=True, stdout=subprocess.DEVNULL)
        open(installed, "w").close()
        importlib.invalidate_caches()
    os.chdir(os.path.join(checkout, "notebooks"))"""
"""The Colab cell's source, with ``{repository}``, ``{commit}`` and ``{fetch}`` (:data:`FETCH_ONE_COMMIT`) to fill in."""

FETCH_ONE_COMMIT = """\
        subprocess.run(["rm", "-rf", checkout], check=True)
        os.makedirs(checkout)
        subprocess.run(["git", "-C", checkout, "init", "--quiet"], check=True)
        # one commit, not the history: a shallow fetch of COMMIT alone, then its files
        subprocess.run(["git", "-C", checkout, "fetch", "--quiet", "--depth", "1", REPOSITORY, COMMIT], check=True)
        subprocess.run(["git", "-C", checkout, "checkout", "--quiet", "FETCH_HEAD"], check=True)"""
"""The Colab cell's download: a shallow fetch of the one commit the page was built from (the history holds files that
left the tree long ago, several times the commit's size)."""

PLACEHOLDER = "https://github.com/attncoda/attncoda"
"""The repository address ``_config.yml`` ships with, until a fork sets its own."""
COLAB_TAG = "colab"


def with_colab_cell(nb, repository: str, commit: str):
    """``nb`` with the Colab cell (:data:`COLAB_SOURCE`, pinned to ``repository`` at ``commit``, tagged ``remove-cell``
    so no page shows it) as its first code cell, after the title; a Colab cell already there is replaced, so inserting
    twice gives one cell.

    Examples
    --------
    >>> import nbformat
    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Title"), nbformat.v4.new_code_cell("x = 1")])
    >>> nb = with_colab_cell(with_colab_cell(nb, "https://github.com/o/r", "main"), "https://github.com/o/r", "abc123")
    >>> [c.cell_type for c in nb.cells], 'COMMIT = "abc123"' in nb.cells[1].source
    (['markdown', 'code', 'code'], True)
    """
    import nbformat

    if '"' in repository or '"' in commit or "\n" in repository + commit:
        raise ValueError(f"a repository address or commit with quotes or line breaks cannot be written into the Colab cell: {repository!r} {commit!r}")
    cells = [c for c in nb.cells if COLAB_TAG not in c.metadata.get("tags", [])]
    cell = nbformat.v4.new_code_cell(COLAB_SOURCE.format(repository=repository, commit=commit, fetch=FETCH_ONE_COMMIT))
    cell.metadata["tags"] = ["remove-cell", COLAB_TAG]
    cell.id = "colab-install"
    first = 1 if cells and cells[0].cell_type == "markdown" else 0
    nb.cells = cells[:first] + [cell] + cells[first:]
    return nb


def github_remote(root=None) -> str | None:
    """The checkout's ``origin`` as an https address, when it is a GitHub repository; None otherwise."""
    import subprocess

    from ..base.paths import repo_root

    found = subprocess.run(["git", "-C", str(root or repo_root()), "remote", "get-url", "origin"], capture_output=True, text=True)
    return normalized_github(found.stdout.strip()) if found.returncode == 0 else None


def normalized_github(remote: str) -> str | None:
    """A GitHub remote (https or ssh, with or without ``.git``) as its https address; None for any other remote.

    >>> normalized_github("git@github.com:someone/attncoda.git"), normalized_github("/work/main")
    ('https://github.com/someone/attncoda', None)
    """
    import re

    found = re.fullmatch(r"(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([\w.-]+/[\w.-]+?)(?:\.git)?/?", remote)
    return f"https://github.com/{found.group(1)}" if found else None


def repository_url(root=None) -> str:
    """The repository's address: ``repository.url`` in ``_config.yml``, the one setting; while that is still the
    :data:`PLACEHOLDER`, the checkout's GitHub ``origin`` where it has one, else the placeholder with a one-line warning."""
    import yaml

    from ..base.paths import repo_root

    configured = yaml.safe_load(((root or repo_root()) / "_config.yml").read_text())["repository"]["url"].rstrip("/")
    if configured != PLACEHOLDER:
        return configured
    remote = github_remote(root)
    if remote:
        return remote
    global _WARNED
    if not _WARNED:
        print(f"note: repository.url in _config.yml is still the placeholder {PLACEHOLDER}; set your repository's address there "
              "(the Colab buttons and the citation use it)", file=sys.stderr)
        _WARNED = True
    return configured


_WARNED = False  # the placeholder warning is said once per process
