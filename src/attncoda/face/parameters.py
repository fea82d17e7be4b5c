"""A chapter's parameters, read from its notebook's ``parameters`` cell, and the check of a reader's values against them.

Every value a reader passes (``attncoda run CHAPTER -p NAME VALUE``) is checked before any kernel
or model starts: the name must be a parameter of that chapter, and the value must have the type of
the parameter's default (an int where the default is an int, a list where it is a list, …).
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..base.errors import ChapterError
from ..base.protocol import PERPLEXITY_DTYPES

AT_LEAST_ONE = {"n", "length", "n_triples", "batch_size", "n_windows", "signature_n", "n_positions", "rows_per_layer", "invariance_samples",
                "n_grid", "n_heads", "replicates", "samples", "tie_draws", "random_sets", "calibration_windows"}
"""Counts that must be positive."""

AT_LEAST = {**{name: 1 for name in AT_LEAST_ONE}, "length": 4, "n_heads": 3}
"""The smallest value of each count: a window needs room for its special tokens and some text (4 tokens), and a triple
of heads needs three heads."""

AT_MOST = {"n": 100_000, "n_windows": 100_000, "signature_n": 100_000, "calibration_windows": 100_000, "length": 131_072,
           "batch_size": 4_096, "n_triples": 10_000_000, "n_positions": 10_000_000, "rows_per_layer": 1_000_000,
           "invariance_samples": 1_000_000, "n_grid": 10_000, "n_heads": 100_000, "replicates": 1_000, "samples": 10_000,
           "holdout": 10_000, "tie_draws": 10_000, "random_sets": 100_000, "steps": 10_000_000, "text_steps": 10_000_000,
           "seed": 2**32 - 1}
"""The largest value of each count: far beyond any run that finishes on one machine (the full profile's values are
at most a few percent of these), so a typo such as ``1e30`` is refused before a kernel starts instead of failing
deep inside it."""

CHOICES = {"dtype": PERPLEXITY_DTYPES}
"""String parameters that take one of a few words."""

MODEL_LISTS = ("endpoints",)
"""String parameters that name models (comma-separated; "defaults" or "" for the chapter's own choice): each is resolved
before a kernel starts."""

LIST_ITEMS = {"revisions": (str, "Hub revision names such as [\"step0\", \"step1000\"]")}
"""What the items of a list parameter whose default is empty must be (there is no default item to take the type from)."""


def notebook_parameters(path: Path) -> dict:
    """``{name: default value}`` of the notebook's cell tagged ``parameters`` (literal defaults only)."""
    import nbformat

    nb = nbformat.read(str(path), as_version=4)
    cells = [c for c in nb.cells if c.cell_type == "code" and "parameters" in c.metadata.get("tags", [])]
    if len(cells) != 1:
        raise ChapterError(f"{path.name} must have exactly one cell tagged 'parameters'")
    out = {}
    for node in ast.parse(cells[0].source).body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = ast.literal_eval(node.value)
    return out


def _type_name(value) -> str:
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string", list: "a list such as [0, 1]"}.get(type(value), type(value).__name__)


def check_value(chapter: str, name: str, value, default) -> None:
    """One clear ChapterError if ``value`` does not fit the parameter ``name`` whose default is ``default``."""
    def fail(why):
        raise ChapterError(f"chapter {chapter!r}: parameter {name} = {value!r} {why}")

    if isinstance(default, bool):
        if not isinstance(value, bool):
            fail("must be true or false")
    elif isinstance(default, int):
        if isinstance(value, bool) or not isinstance(value, int):
            fail("must be a whole number")
        if name in AT_LEAST and value < AT_LEAST[name]:
            fail(f"must be at least {AT_LEAST[name]}")
        if value < 0:
            fail("must not be negative")
        if name in AT_MOST and value > AT_MOST[name]:
            fail(f"must be at most {AT_MOST[name]:,}")
    elif isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("must be a number")
    elif isinstance(default, str):
        if not isinstance(value, str):
            fail(f"must be a string, not {_type_name(value)}")
        if name in CHOICES and value not in CHOICES[name]:
            fail(f"must be one of {', '.join(CHOICES[name])}")
    elif isinstance(default, list):
        if not default and name in LIST_ITEMS:
            kind, described = LIST_ITEMS[name]
            if not isinstance(value, list) or not all(isinstance(x, kind) and x for x in value):
                fail(f"must be a list of {described}")
            return
        if not isinstance(value, list) or not value:
            fail("must be a non-empty list such as [0, 1]")
        kinds = {type(x) for x in default}
        if kinds == {int} and not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value):
            fail("must be a list of non-negative whole numbers")
        if kinds == {int} and any(x > AT_MOST["seed"] for x in value):
            fail(f"must be a list of whole numbers up to {AT_MOST['seed']:,}")
        if len(value) > 1_000:
            fail("must hold at most 1,000 entries")
        if kinds == {int} and len(set(value)) != len(value):
            fail("repeats an entry; each seed or draw must be distinct")


def check_parameters(chapter: str, notebook: Path, values: dict, known: dict | None = None) -> None:
    """Check every ``values`` entry against the notebook's parameters cell (``known``, read from ``notebook`` if not
    given): unknown names and wrong types fail in one line."""
    known = known if known is not None else notebook_parameters(notebook)
    empty_lists = [n for n, v in known.items() if v == [] and n not in LIST_ITEMS]
    if empty_lists:  # a list parameter without an item type would take anything: the check itself must know it
        raise ChapterError(f"{notebook.name}: list parameter {empty_lists[0]!r} has an empty default and no item type in LIST_ITEMS")
    for name, value in values.items():
        if name not in known:
            raise ChapterError(f"chapter {chapter!r} has no parameter {name!r}; its parameters are: {', '.join(known)}")
        check_value(chapter, name, value, known[name])
        if name in MODEL_LISTS and value not in ("", "defaults"):
            from ..engine.models import resolve

            for model in (m.strip() for m in value.split(",") if m.strip()):
                resolve(model)  # a bad name or path fails here, in one line
