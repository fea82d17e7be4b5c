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


def fmt(x, digits: int = 2) -> str:
    """A number for a table cell, or a dash where it is undefined (NaN or None).

    Examples
    --------
    >>> fmt(0.12345), fmt(float("nan")), fmt(None), fmt(3, 0)
    ('0.12', '—', '—', '3')
    """
    return "—" if x is None or x != x else f"{x:.{digits}f}"


def pct(ms) -> str:
    """A mean ± sd (a :class:`~attncoda.studies.measurement_results.MeanSd`, or anything with ``mean`` and ``sd``) of a
    rate, in percent with one decimal.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> pct(SimpleNamespace(mean=0.1234, sd=0.0056))
    '12.3 ± 0.6'
    """
    return f"{100 * ms.mean:.1f} ± {100 * ms.sd:.1f}"


def plural(count: int, word: str, many: str | None = None) -> str:
    """``count`` and ``word``, in the plural when ``count`` is not 1.

    Examples
    --------
    >>> plural(1, "failure"), plural(0, "failure"), plural(2, "abstention")
    ('1 failure', '0 failures', '2 abstentions')
    """
    return f"{count} {word if count == 1 else (many or word + 's')}"


def show_with_reasons(table, caption: str, reasons: str = "why") -> None:
    """Display ``table`` without its long ``reasons`` column, then that column as a list under it (a sentence per
    row reads as prose, not as a cell twenty lines tall)."""
    from IPython.display import Markdown, display

    display(table.drop(columns=reasons).style.set_caption(caption))
    display(Markdown("\n".join(f"* **{escape(name)}**: {escape(why)}" for name, why in table[reasons].items())))


def escape(text) -> str:
    """``text`` with the characters HTML reads as markup (``<``, ``>``, ``&``) written as entities, for Markdown a page
    renders: a model named ``<img src=x onerror=…>`` (any folder name a reader passes) shows as its name, never as HTML.

    Examples
    --------
    >>> escape("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    >>> escape("p < 0.05 & ρ ≥ 0.7")
    'p &lt; 0.05 &amp; ρ ≥ 0.7'
    """
    import html

    return html.escape(str(text), quote=False)


MARKUP = ("<", ">", "&")


def escape_styler(table):
    """A pandas Styler with every label and text cell that holds :data:`MARKUP` escaped as HTML (a Styler renders them
    raw), and its caption; cells without such characters keep their formats."""
    import pandas as pd

    def marked(values) -> bool:
        return any(isinstance(v, str) and any(c in v for c in MARKUP) for v in values)

    for axis, labels in ((0, table.index), (1, table.columns)):
        flat = [x for label in labels for x in (label if isinstance(label, tuple) else (label,))]
        if marked(flat):
            table.format_index(escape="html", axis=axis)
    columns = [c for c in table.data.columns if marked(table.data[c])]
    if columns:
        table.format(escape="html", subset=pd.IndexSlice[:, columns])
    if isinstance(table.caption, str):
        table.caption = escape(table.caption)
    return table


TEX = {"d_A^⊥": r"\(d_A^\perp\)", "C_A^⊥": r"\(C_A^\perp\)", "ρ_A": r"\(\rho_A\)", "d_A": r"\(d_A\)"}
"""The notation that table labels write in plain characters, and its math form (typeset in cell outputs)."""


def tex(label: str) -> str:
    r"""``label`` with its notation in math delimiters, for a table the book typesets.

    Examples
    --------
    >>> print(tex("d_A^⊥ retention"), tex("total d_A"), tex("ρ_A"))
    \(d_A^\perp\) retention total \(d_A\) \(\rho_A\)
    """
    import re

    if not isinstance(label, str):
        return label
    return re.sub("|".join(rf"(?<!\\\(){re.escape(k)}" for k in TEX), lambda m: TEX[m.group(0)], label)  # not twice


def dollar_math(text: str) -> str:
    r"""``text`` with its notation (:data:`TEX`) in MyST's dollar math, for a sentence pasted as Markdown.

    Examples
    --------
    >>> print(dollar_math("JS (sink kept) prunes better than d_A^⊥ (content) and total d_A"))
    JS (sink kept) prunes better than $d_A^\perp$ (content) and total $d_A$
    """
    return tex(text).replace(r"\(", "$").replace(r"\)", "$")


def glue_sentence(name: str, sentence: str) -> None:
    """Hand a computed sentence to the book as Markdown with its notation typeset; the page pastes it with the
    ``glue:md`` role in MyST format, ``name:myst`` (the default CommonMark format leaves ``$…$`` as it is, and the
    ``glue:text`` role would show ``d_A^⊥`` as raw characters)."""
    from IPython.display import Markdown

    glue(name, Markdown(dollar_math(escape(sentence))))


def typeset_tables() -> None:
    """Have every table this kernel displays (a pandas DataFrame or Styler) write its notation as math (:func:`tex`),
    which the book typesets, and show any text in it as text (:func:`escape_styler`); outside IPython it does nothing."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is None:
        return
    import pandas as pd
    from pandas.io.formats.style import Styler

    html = shell.display_formatter.formatters["text/html"]
    html.for_type(pd.DataFrame, lambda table: tex(table._repr_html_()))  # a DataFrame escapes its text itself
    html.for_type(Styler, lambda table: tex(escape_styler(table)._repr_html_()))


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
    pairs = [(a, b) for a, b in zip(x, y) if a == a and b == b]  # a point without a defined value cannot be ranked
    left_out = len(x) - len(pairs)
    x, y = [a for a, _ in pairs], [b for _, b in pairs]
    n = len(x)
    note = f" ({left_out} without a defined value left out)" if left_out else ""
    if n < 5:
        return f"With {n} points, too few to test a rank correlation (at least 5 are needed), nothing can be said about how {what_y} moves with {what_x}."
    from scipy.stats import spearmanr

    result = spearmanr(x, y)
    rho, p = float(result.statistic), float(result.pvalue)
    direction = "rises" if rho > 0 else "falls"
    if p < 0.05:
        shown = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
        return f"Across {n} {units}{note}, {what_y} {direction} with {what_x} (Spearman ρ = {rho:.2f}, two-sided {shown})."
    return (f"Across {n} {units}{note} the rank correlation of {what_y} with {what_x} is ρ = {rho:.2f}, but with two-sided p = {p:.2f} "
            f"this is not evidence that {what_y} {direction} with {what_x}: {n} {units} are too few to tell.")
