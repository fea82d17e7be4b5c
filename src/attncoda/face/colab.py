"""Colab: the model a chapter measures there, and the notebooks the "Open in Colab" button opens.

In Colab the offline default models (registry packages of about 1.3 GB) are not installed, but the Hub is
reachable, so each model chapter measures a model Colab can download: the paper's own where it fits the
chapter (its :attr:`~attncoda.face.chapters.Chapter.colab_model`). A reader who sets ``model`` in the parameters cell gets that model instead.

The button opens a copy of the chapter's notebook whose first cell installs the package at the commit the
page was built from (:func:`pin_colab_cell`); ``attncoda book`` writes those copies to ``_build/colab/<commit>/``
and the publishing workflow pushes them to the repository's ``colab`` branch.
"""

from __future__ import annotations

import os
import re
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


def pin_colab_cell(source: str, repository: str, commit: str) -> str:
    """The Colab cell's source with its ``REPOSITORY`` and ``COMMIT`` lines set.

    Examples
    --------
    >>> pin_colab_cell('REPOSITORY = "x"  # a\\nCOMMIT = "main"  # b', "https://github.com/o/r", "abc123")
    'REPOSITORY = "https://github.com/o/r"  # a\\nCOMMIT = "abc123"  # b'
    """
    source, found_repo = re.subn(r'^REPOSITORY = "[^"]*"', f'REPOSITORY = "{repository}"', source, count=1, flags=re.M)
    source, found_commit = re.subn(r'^COMMIT = "[^"]*"', f'COMMIT = "{commit}"', source, count=1, flags=re.M)
    if not (found_repo and found_commit):
        raise ValueError("the notebook's Colab cell has no REPOSITORY = \"...\" and COMMIT = \"...\" lines")
    return source


def repository_url() -> str:
    """The repository's address: the one setting, ``repository.url`` in ``_config.yml``."""
    import yaml

    from ..base.paths import repo_root

    return yaml.safe_load((repo_root() / "_config.yml").read_text())["repository"]["url"].rstrip("/")
