"""Helpers chapter notebooks use to hand numbers to the book's prose."""

from __future__ import annotations


def glue(name: str, value, display: bool = False):
    """Hand ``value`` to the book under ``name`` (myst-nb ``glue``); returns ``value``.

    Outside a book build (Colab, plain Jupyter without myst-nb) it only returns the value.
    """
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()  # numpy scalars would print as np.float64(...) and defeat format specs
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return value
    myst_glue(name, value, display=display)
    return value


def mark(holds) -> str:
    """✓ for True, ✗ for False, n/a for None."""
    return {True: "✓", False: "✗", None: "n/a"}[None if holds is None else bool(holds)]
