"""Chapter results with their provenance, and the paper's own numbers.

Each chapter writes ``data/results/<chapter>/<name>.json``: the numbers it
reports, plus what produced them (:func:`attncoda.base.provenance.provenance`).
Run times are machine facts, not results: they go to ``<chapter>/timings/<name>.json``
beside it, so that a rerun of the same code on the same inputs (serial or
parallel) writes a byte-identical results file.
"""

from __future__ import annotations

import json
from pathlib import Path

from ..base.files import atomic_write_json
from ..base.paths import data_dir, results_dir, run_folder, slug
from ..base.provenance import provenance

TIMES = ("wall_time_s", "seconds", "compute_s", "chapter_seconds", "measure_seconds", "grid_seconds", "training_seconds")
"""Keys that hold run times: written to the timings file, never to the results file."""


def split_times(value):
    """``(value without TIMES keys, the TIMES keys alone in the same nesting)``; the second is None when there are none.

    Examples
    --------
    >>> split_times({"rate": 0.3, "wall_time_s": 2.0, "runs": [{"seconds": 1.5, "ppl": 20.0}]})
    ({'rate': 0.3, 'runs': [{'ppl': 20.0}]}, {'wall_time_s': 2.0, 'runs': [{'seconds': 1.5}]})
    """
    if isinstance(value, dict):
        kept, times = {}, {}
        for k, v in value.items():
            if k in TIMES:
                times[k] = v
            else:
                kept[k], inner = split_times(v)
                if inner is not None:
                    times[k] = inner
        return kept, (times or None)
    if isinstance(value, list):
        pairs = [split_times(v) for v in value]
        inner = [t if t is not None else {} for _, t in pairs]
        return [k for k, _ in pairs], (inner if any(inner) else None)
    return value, None


def run_parameters(chapter: str, namespace: dict) -> dict:
    """Every parameter of ``chapter`` with the value it has in this kernel (``namespace``: the notebook's ``globals()``),
    for its results' provenance: the names are those of the notebook's parameter cell, so no parameter can go missing
    from the record; ``results_dir`` (a folder of this machine) is left out.

    The names come from the run's setting in a chapter run (:mod:`attncoda.base.run_setting`: its runner read the
    notebook once), else from the chapter's notebook (one opened in Jupyter or Colab).
    """
    from ..base.run_setting import current

    names = list(current().parameter_names)
    if not names:
        from ..base.paths import repo_root
        from .chapters import find_chapter
        from .parameters import notebook_parameters

        names = list(notebook_parameters(repo_root() / "notebooks" / f"{find_chapter(chapter).notebook}.ipynb"))
    missing = [n for n in names if n not in namespace]
    if missing:
        raise KeyError(f"chapter {chapter!r}: parameter {missing[0]!r} is not defined in this kernel; run the notebook's parameter cell first")
    return {n: namespace[n] for n in names if n != "results_dir"}


def timings_path(chapter: str, name: str, directory=None) -> Path:
    return results_dir(directory) / chapter / "timings" / f"{slug(name)}.json"


def write_results(chapter: str, name: str, numbers: dict, parameters: dict, seed, wall_seconds: float, directory=None, extra=None) -> Path:
    """Atomically write ``<directory>/<chapter>/<slug(name)>.json`` with ``numbers`` and their provenance, and the run
    times among them (and ``wall_seconds``, the time the result took) to :func:`timings_path`. The file is strict JSON: an undefined
    number is ``null``.

    ``directory`` is the notebook's ``results_dir``, which ``attncoda run`` sets to the run's own folder. A recorded
    run (``attncoda book``, ``attncoda run --record``) injects none and its setting says ``record``
    (:mod:`attncoda.base.run_setting`): it writes the book's record. A notebook executed some other way (plain papermill, Jupyter) passes none and writes to a
    :func:`~attncoda.base.paths.run_folder` of its own, never to the record.
    """
    from ..base.run_setting import current

    if not directory and current().record:
        directory = results_dir()  # a recorded run (attncoda book, attncoda run --record)
    elif not directory:
        directory = run_folder(chapter, name, "notebook", {**parameters, "seed": seed}) / "results"
        print(f"results written to {directory} (the book's record changes only with attncoda book or attncoda run --record)")
    path = results_dir(directory) / chapter / f"{slug(name)}.json"
    record, times = split_times({"results": numbers, "provenance": provenance(parameters, seed, wall_seconds, extra)})
    atomic_write_json(timings_path(chapter, name, directory), {"chapter": chapter, "name": name, **(times or {})}, strict=True)
    atomic_write_json(path, {"chapter": chapter, "name": name, **record}, strict=True)
    return path


def read_timings(chapter: str, name: str, directory=None) -> dict:
    """The run times a chapter recorded for ``name`` (empty when it recorded none)."""
    path = timings_path(chapter, name, directory)
    return json.loads(path.read_text()) if path.exists() else {}


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


def read_record(directory=None) -> dict:
    """Every results file in a record, as ``{chapter: {name: numbers}}`` (the numbers without their provenance): what
    the scorecard's rules read (:func:`attncoda.studies.claims.judge`)."""
    record: dict = {}
    for path in sorted(results_dir(directory).glob("*/*.json")):
        stored = json.loads(path.read_text())
        record.setdefault(stored["chapter"], {})[stored["name"]] = stored["results"]
    return record
