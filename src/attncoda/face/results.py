"""Chapter results with their provenance, and the paper's own numbers.

Each chapter writes ``data/results/<chapter>/<name>.json``: the numbers it
reports, plus what produced them (:func:`attncoda.base.provenance.provenance`).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..base.files import atomic_write_json
from ..base.paths import data_dir, results_dir, slug
from ..base.provenance import provenance


def write_results(chapter: str, name: str, numbers: dict, parameters: dict, seed, started: float, directory=None, extra=None) -> Path:
    """Atomically write ``<results>/<chapter>/<slug(name)>.json`` with ``numbers`` and their provenance."""
    path = results_dir(directory) / chapter / f"{slug(name)}.json"
    atomic_write_json(path, {"chapter": chapter, "name": name, "results": numbers, "provenance": provenance(parameters, seed, started, extra)})
    return path


def read_results(chapter: str, name: str, directory=None) -> dict:
    """A chapter's committed results for ``name`` (FileNotFoundError with the command that makes them)."""
    path = results_dir(directory) / chapter / f"{slug(name)}.json"
    if not path.exists():
        raise FileNotFoundError(f"no {chapter} results for {name!r}; run: attncoda run {chapter} --model {name}")
    return json.loads(path.read_text())


def paper_reference() -> dict:
    """The paper's own numbers (``data/paper/reference.json``), to show beside ours, labelled as the paper's."""
    path = data_dir() / "paper" / "reference.json"
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; run from the project folder or set ATTNCODA_HOME")
    return json.loads(path.read_text())
