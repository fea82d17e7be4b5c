"""Helpers chapter notebooks use to hand numbers to the book's prose."""

from __future__ import annotations


def glue(name: str, value, display: bool = False) -> None:
    """Hand ``value`` to the book under ``name`` (myst-nb ``glue``).

    It returns nothing, so a ``glue`` call that ends a cell prints no stray output box.
    Outside a book build (Colab, plain Jupyter without myst-nb) it does nothing.
    """
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()  # numpy scalars would print as np.float64(...) and defeat format specs
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(name, value, display=display)


def mark(holds) -> str:
    """✓ for True, ✗ for False, n/a for None."""
    return {True: "✓", False: "✗", None: "n/a"}[None if holds is None else bool(holds)]


def spearman_sentence(x, y, what_x: str, what_y: str, units: str = "models") -> str:
    """A sentence on the rank correlation of ``x`` and ``y`` that says what the data support, with ρ, n and the two-sided p.

    Examples
    --------
    >>> spearman_sentence([1, 2, 3], [1, 2, 3], "sink mass", "reversal")
    'With 3 points, too few to test a rank correlation (at least 5 are needed), nothing can be said about how reversal moves with sink mass.'
    """
    n = len(x)
    if n < 5:
        return f"With {n} points, too few to test a rank correlation (at least 5 are needed), nothing can be said about how {what_y} moves with {what_x}."
    from scipy.stats import spearmanr

    result = spearmanr(x, y)
    rho, p = float(result.statistic), float(result.pvalue)
    direction = "rises" if rho > 0 else "falls"
    if p < 0.05:
        shown = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
        return f"Across {n} {units}, {what_y} {direction} with {what_x} (Spearman ρ = {rho:.2f}, two-sided {shown})."
    return (f"Across {n} {units} the rank correlation of {what_y} with {what_x} is ρ = {rho:.2f}, but with two-sided p = {p:.2f} "
            f"this is not evidence that {what_y} {direction} with {what_x}: {n} {units} are too few to tell.")
