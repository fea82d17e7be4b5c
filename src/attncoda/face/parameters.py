"""A chapter's parameters, read from its notebook's ``parameters`` cell, and the check of a reader's values against them.

Every value a reader passes (``attncoda run CHAPTER -p NAME VALUE``) is checked before any kernel
or model starts: the name must be a parameter of that chapter, and the value must have the type of
the parameter's default (an int where the default is an int, a list where it is a list, …).
"""

from __future__ import annotations

import ast
from pathlib import Path

from ..base.errors import ChapterError

AT_LEAST_ONE = {"n", "length", "n_triples", "batch_size", "n_windows", "signature_n", "n_positions", "rows_per_layer", "invariance_samples",
                "n_grid", "n_heads", "replicates"}
"""Counts that must be positive."""


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
        if name in AT_LEAST_ONE and value < 1:
            fail("must be at least 1")
        if value < 0:
            fail("must not be negative")
    elif isinstance(default, float):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            fail("must be a number")
    elif isinstance(default, str):
        if not isinstance(value, str):
            fail(f"must be a string, not {_type_name(value)}")
    elif isinstance(default, list):
        if not isinstance(value, list) or not value:
            fail("must be a non-empty list such as [0, 1]")
        kinds = {type(x) for x in default}
        if kinds == {int} and not all(isinstance(x, int) and not isinstance(x, bool) and x >= 0 for x in value):
            fail("must be a list of non-negative whole numbers")


def check_parameters(chapter: str, notebook: Path, values: dict) -> None:
    """Check every ``values`` entry against the notebook's parameters cell (unknown names and wrong types fail in one line)."""
    known = notebook_parameters(notebook)
    for name, value in values.items():
        if name not in known:
            raise ChapterError(f"chapter {chapter!r} has no parameter {name!r}; its parameters are: {', '.join(known)}")
        check_value(chapter, name, value, known[name])
