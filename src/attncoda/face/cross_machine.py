"""What moves between two CPUs: two records of the same code, built on different machines, compared chapter by chapter.

A record is every results file of a book build (``{chapter: {name: numbers}}``, :func:`~attncoda.face.results.read_record`).
For each chapter this counts the numbers that differ and the largest relative difference, then compares what the
numbers *say*: every reading a results file names (a field called ``reading``, ``outcome`` or ``direction``), and the
scorecard's verdicts (:mod:`attncoda.studies.claims`). The reproducibility page shows the committed comparison,
``data/verify/cross_cpu.json``; ``python -m attncoda.face.cross_machine BEFORE AFTER NOTE --record`` writes it from two commits whose
records were built on different machines.
"""

from __future__ import annotations

import json
import math
import statistics
import subprocess
import sys

READING_KEYS = ("reading", "outcome", "direction")
"""Fields of a results file that hold a reading in words rather than a number."""

DIAGNOSTICS = ("residual", "log_difference")
"""Round-off diagnostics (Lemma 1's residual, the float32 path's log difference): another machine's rounding changes
them by definition, so they are counted but left out of the relative changes."""

FLOOR = 0.01
"""The floor of a relative change's denominator: ``|x − y| / max(|x|, |y|, FLOOR)``. A number near zero that no reading
rests on (a p-value of 1e-5, a lower bound of 0.001) would otherwise show a large relative change from a tiny one."""


def _leaves(value, path=""):
    """Every (path, leaf) of a results file's numbers."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}/{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


def relative_change(x: float, y: float) -> float:
    """How far two readings of one number differ, relative to the larger, with the :data:`FLOOR`.

    >>> relative_change(100.0, 101.0), relative_change(0.0001, 0.0002)
    (0.00990099009901, 0.01)
    """
    return round(abs(x - y) / max(abs(x), abs(y), FLOOR), 14)


def number_changes(before, after) -> dict:
    """How many numbers two results files hold in the same place, how many differ, the largest relative change
    (:func:`relative_change`) with where it is, and the relative changes of the differing numbers, round-off
    diagnostics left out.

    >>> n = number_changes({"a": 1.0, "b": [2.0, 3.0]}, {"a": 1.0, "b": [2.0, 3.3]})
    >>> n["compared"], n["differing"], n["largest_relative"], n["where"]
    (3, 1, 0.090909090909, '/b[1]')
    """
    theirs = dict(_leaves(after))
    compared = differing = 0
    largest, where, changes = 0.0, "", []
    for path, x in _leaves(before):
        y = theirs.get(path)
        if isinstance(x, bool) or not isinstance(x, (int, float)) or isinstance(y, bool) or not isinstance(y, (int, float)):
            continue
        compared += 1
        if x != y and not (math.isnan(x) and math.isnan(y)):
            differing += 1
            if any(d in path for d in DIAGNOSTICS) or math.isnan(x) or math.isnan(y):
                continue
            relative = relative_change(x, y)
            changes.append(relative)
            if relative > largest:
                largest, where = relative, path
    return {"compared": compared, "differing": differing, "largest_relative": round(largest, 12), "where": where, "changes": changes}


def reading_changes(before, after) -> dict:
    """How many readings in words (fields named in :data:`READING_KEYS`) two results files hold, and which moved.

    >>> reading_changes({"cells": [{"reading": "better"}, {"reading": "worse"}]}, {"cells": [{"reading": "better"}, {"reading": "tie"}]})
    {'compared': 2, 'moved': [{'where': '/cells[1]/reading', 'before': 'worse', 'after': 'tie'}]}
    """
    theirs = dict(_leaves(after))
    compared, moved = 0, []
    for path, x in _leaves(before):
        if path.rsplit("/", 1)[-1] not in READING_KEYS or not isinstance(x, str):
            continue
        compared += 1
        if theirs.get(path) != x:
            moved.append({"where": path, "before": x, "after": theirs.get(path)})
    return {"compared": compared, "moved": moved}


def compare_records(before: dict, after: dict, paper: dict) -> dict:
    """Per chapter: the numbers and readings that moved between two records, and the scorecard verdicts at each."""
    from ..studies import claims

    chapters = {}
    for chapter in sorted(set(before) & set(after)):
        numbers = {"compared": 0, "differing": 0, "largest_relative": 0.0, "where": ""}
        readings = {"compared": 0, "moved": []}
        changes = []
        for name in sorted(set(before[chapter]) & set(after[chapter])):
            n = number_changes(before[chapter][name], after[chapter][name])
            numbers["compared"] += n["compared"]
            numbers["differing"] += n["differing"]
            changes += n["changes"]
            if n["largest_relative"] > numbers["largest_relative"]:
                numbers["largest_relative"], numbers["where"] = n["largest_relative"], f"{name}{n['where']}"
            r = reading_changes(before[chapter][name], after[chapter][name])
            readings["compared"] += r["compared"]
            readings["moved"] += [{**m, "where": f"{name}{m['where']}"} for m in r["moved"]]
        numbers["median_relative"] = round(statistics.median(changes), 12) if changes else 0.0
        chapters[chapter] = {"numbers": numbers, "readings": readings}
    verdicts = {}
    for key in claims.RULES:
        a, b = claims.RULES[key](before, paper), claims.RULES[key](after, paper)
        verdicts[key] = {"before": a.verdict, "after": b.verdict}
    return {"floor": FLOOR, "chapters": chapters, "verdicts": verdicts}


def _record_at(commit: str) -> dict:
    """The record committed at ``commit`` (read from git, without touching the work tree)."""
    from ..base.paths import repo_root

    root = repo_root()
    names = subprocess.run(["git", "ls-tree", "-r", "--name-only", commit, "data/results"], cwd=root, capture_output=True, text=True,
                           check=True).stdout.split()
    record: dict = {}
    for path in names:
        if "/timings/" in path or not path.endswith(".json"):
            continue
        stored = json.loads(subprocess.run(["git", "show", f"{commit}:{path}"], cwd=root, capture_output=True, text=True, check=True).stdout)
        record.setdefault(stored["chapter"], {})[stored["name"]] = stored["results"]
    return record


def main(argv=None) -> int:
    """``python -m attncoda.face.cross_machine BEFORE AFTER [NOTE]``: compare the records of two commits and write
    ``data/verify/cross_cpu.json``."""
    from ..base.errors import AttncodaError
    from ..base.files import atomic_write_json
    from ..base.paths import record_report
    from .results import paper_reference

    args = list(sys.argv[1:] if argv is None else argv)
    keep = "--record" in args
    args = [a for a in args if a != "--record"]
    if len(args) < 2:
        print("usage: python -m attncoda.face.cross_machine BEFORE AFTER [NOTE] [--record]  (two commits whose records were built on "
              "different CPUs; --record keeps the comparison in data/verify/cross_cpu.json)")
        return 2
    try:
        path = record_report("cross_cpu.json", "cross_machine --record") if keep else None  # the write guard, before any work
        before, after = args[0], args[1]
        for commit in (before, after):
            if subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"{commit}^{{commit}}"], cwd=_root(), capture_output=True).returncode:
                raise ValueError(f"{commit!r} is not a commit of this repository; name two commits whose records were built on different CPUs")
        comparison = compare_records(_record_at(before), _record_at(after), paper_reference())
        out = {"before": before, "after": after, "note": args[2] if len(args) > 2 else "", **comparison}
        if path is None:
            print(json.dumps(out, indent=1))
            print("not kept: pass --record to write it to the reproducibility page's data/verify/cross_cpu.json", file=sys.stderr)
            return 0
        atomic_write_json(path, out)
    except (AttncodaError, ValueError, OSError, subprocess.CalledProcessError) as err:
        print(f"cross_machine: error: {err}", file=sys.stderr)
        return 1
    print(f"wrote {path}")
    return 0


def _root():
    from ..base.paths import repo_root

    return repo_root()


if __name__ == "__main__":
    raise SystemExit(main())
