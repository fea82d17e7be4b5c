"""Helpers chapter notebooks use to hand numbers to the book's prose."""

from __future__ import annotations

from ..studies.significance import spearman_permutation  # the test lives with the studies; the page only words it


def glue(name: str, value, display: bool = False) -> None:
    """Hand ``value`` to the book under ``name`` (myst-nb ``glue``).

    It returns nothing, so a ``glue`` call that ends a cell prints no stray output box. In Colab, whose Markdown cells
    cannot paste a glued value, a computed sentence, table or figure is also shown as the cell's output
    (:func:`shown_in_colab`), so a rerun there shows the new values where the page shows them; a bare number or word
    stays hidden (it is part of a sentence the page writes). Without myst-nb it only does that.
    """
    from .colab import in_colab

    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        value = value.item()  # numpy scalars would print as np.float64(...) and defeat format specs
    if not display and in_colab() and shown_in_colab(value):
        from IPython.display import display as show

        show(value)
    try:
        from myst_nb import glue as myst_glue
    except ImportError:
        return
    myst_glue(name, value, display=display)


def shown_in_colab(value) -> bool:
    """Whether a glued value is a whole thing a reader can read on its own: a sentence or paragraph (Markdown), a
    table (anything with an HTML form) or a figure; not a bare number or word.

    >>> from IPython.display import Markdown
    >>> shown_in_colab(Markdown("Of 21 claims about models: 3 reproduced.")), shown_in_colab(0.93), shown_in_colab("gpt2")
    (True, False, False)
    """
    if isinstance(value, (str, int, float, bool)) or value is None:
        return False
    return any(hasattr(value, attr) for attr in ("_repr_markdown_", "_repr_html_", "savefig"))


def fmt(x, digits: int = 2) -> str:
    """A number for a table cell, or a dash where it is undefined (NaN or None).

    Examples
    --------
    >>> fmt(0.12345), fmt(float("nan")), fmt(None), fmt(3, 0), fmt(-0.001)
    ('0.12', '—', '—', '3', '0.00')
    """
    return "—" if x is None or x != x else fixed(x, digits)


def bound(x, digits: int = 2) -> str:
    """An interval's end for a table cell: :func:`fmt`, except that a nonzero value which would round to zero keeps its
    sign and two significant digits, so an interval that crosses zero never reads as one that starts at it.

    Examples
    --------
    >>> bound(-0.0013), bound(0.0004), bound(0.123), bound(0.0), bound(None)
    ('-0.0013', '0.0004', '0.12', '0.00', '—')
    """
    if x is None or x != x or x == 0 or round(abs(float(x)), digits) != 0:
        return fmt(x, digits)
    return f"{float(x):.2g}"


def fixed(x, digits: int = 2) -> str:
    """``x`` with ``digits`` decimals, where a value that rounds to zero reads 0, never −0.

    Examples
    --------
    >>> fixed(-0.001), fixed(-0.006), fixed(0.5, 1)
    ('0.00', '-0.01', '0.5')
    """
    text = f"{float(x):.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def decimals(x) -> int:
    """How many decimals a stored number has as Python writes it shortest (the paper's printed digits, read back).

    Examples
    --------
    >>> decimals(0.35), decimals(0.957), decimals(0.3), decimals(12), decimals(1e-06)
    (2, 3, 1, 0, 6)
    """
    text = format(float(x), "f") if "e" in repr(float(x)) else repr(float(x))
    return len(text.split(".")[1].rstrip("0")) if "." in text else 0


def paper_styler(frame):
    """The paper's numbers as it prints them: each numeric column at the most decimals any of its values has (a stored
    0.3 beside 0.35 reads 0.30; no 0.35 padded to 0.350), undefined cells as a dash."""
    formats = {}
    for column in frame.columns:
        values = [v for v in frame[column] if isinstance(v, (int, float)) and not isinstance(v, bool) and v == v]
        if values and len(values) == frame[column].notna().sum():
            formats[column] = (lambda digits: lambda v: fmt(v, digits))(max(decimals(v) for v in values))
    return frame.style.format(formats)


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


SINK_WORDS = {"first": "first token", "bos": "BOS token", "first4": "first four tokens", "cls": "[CLS]", "cls_sep": "[CLS] and [SEP]"}
"""How a page names a sink set the code calls by its command-line name."""


def sink_words(name: str) -> str:
    """A sink set's name as a reader reads it (``cls_sep`` is "[CLS] and [SEP]"); key indices stay as they are.

    Examples
    --------
    >>> sink_words("cls_sep"), sink_words("first4"), sink_words("keys 0,3")
    ('[CLS] and [SEP]', 'first four tokens', 'keys 0,3')
    """
    return SINK_WORDS.get(name, name)


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


def escape(text, paragraphs: bool = False) -> str:
    """``text`` with the characters HTML reads as markup (``<``, ``>``, ``&``) written as entities, for Markdown a page
    renders: a model named ``<img src=x onerror=…>`` (any folder name a reader passes) shows as its name, never as HTML,
    and a control character in it as its escape (:func:`~attncoda.base.terminal.visible`), so a newline cannot break
    a table's row. With ``paragraphs`` (a page's own prose, with its paragraphs and lists) newlines stay newlines.

    Examples
    --------
    >>> escape("<img src=x onerror=alert(1)>")
    '&lt;img src=x onerror=alert(1)&gt;'
    >>> escape("p < 0.05 & ρ ≥ 0.7")
    'p &lt; 0.05 &amp; ρ ≥ 0.7'
    >>> escape("A.\\n\\n- b\\x1b", paragraphs=True)
    'A.\\n\\n- b\\\\x1b'
    """
    import html

    from ..base.terminal import visible

    return html.escape(visible(text, keep="\n" if paragraphs else ""), quote=False)


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


def _corner_name(frame) -> bool:
    """Whether a table's single index name can sit in its header's top-left corner (no column name is there)."""
    return frame.index.nlevels == 1 and frame.index.name is not None and frame.columns.nlevels == 1 and frame.columns.name is None


def fold_index_name(table):
    """A table (DataFrame or Styler) whose index name ("model", "metric") stands in the header's top-left corner instead
    of on a header row of its own, which would be empty but for it; the caller's frame is not changed.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"rate": [0.5]}, index=pd.Index(["gpt2"], name="model"))
    >>> html = fold_index_name(frame.style).to_html()
    >>> html.count("<tr>"), frame.index.name
    (2, 'model')
    """
    frame = getattr(table, "data", table)
    if not _corner_name(frame):
        return table
    folded = frame.rename_axis(index=None, columns=frame.index.name)
    if frame is table:
        return folded
    table.data, table.index, table.columns = folded, folded.index, folded.columns
    return table


NUMBER_WITH_EXPONENT = r"\d+(?:\.\d+)?e[-+]\d+"
"""A number written with an exponent (``1e-6``, ``2.5e+03``): a browser may break a line after its minus."""


def as_dataframe_table(table):
    """A Styler whose table carries the ``dataframe`` class a plain DataFrame's has, so that every table on a page is
    drawn one way by the theme (in dark mode too, where a table without it sits on a light box of its own)."""
    attributes = table.table_attributes or ""
    if "dataframe" not in attributes:
        table.set_table_attributes(f'class="dataframe" {attributes}'.strip() if "class=" not in attributes
                                   else attributes.replace('class="', 'class="dataframe ', 1))
    return table


def whole_header_numbers(html: str) -> str:
    """A table's HTML with every number in its header that has an exponent (``1e-6``) held on one line, so that a
    wrapping header never splits it as "1e-" / "6"; the text itself (what a reader copies) is unchanged.

    Examples
    --------
    >>> whole_header_numbers('<thead><th id="c1e-2">share &lt; 1e-6</th></thead><td>1e-06</td>')
    '<thead><th id="c1e-2">share &lt; <span style="white-space: nowrap">1e-6</span></th></thead><td>1e-06</td>'
    """
    import re

    def text(segment):
        return re.sub(NUMBER_WITH_EXPONENT, lambda n: f'<span style="white-space: nowrap">{n.group(0)}</span>', segment.group(0))

    return re.sub(r"<thead>.*?</thead>", lambda head: re.sub(r">[^<]+<", text, head.group(0)), html, flags=re.S)


TEX = {"d_A^⊥": r"\(d_A^\perp\)", "C_A^⊥": r"\(C_A^\perp\)", "ρ_A": r"\(\rho_A\)", "d_A": r"\(d_A\)"}
"""The notation that table labels write in plain characters, and its math form (typeset in cell outputs)."""


def tex(label: str) -> str:
    r"""``label`` with its notation in math delimiters, for a table the book typesets.

    Examples
    --------
    >>> print(tex("d_A^⊥ retention"), tex("total d_A"), tex("ρ_A"))
    \(d_A^\perp\) retention total \(d_A\) \(\rho_A\)
    >>> print(tex("synthetic/table4/d_A/sink"))  # a key in a results file's path is a name, not notation
    synthetic/table4/d_A/sink
    """
    import re

    if not isinstance(label, str):
        return label
    return re.sub("|".join(rf"(?<!\\\()(?<!/){re.escape(k)}" for k in TEX), lambda m: TEX[m.group(0)], label)  # not twice, not in a path


def dollar_math(text: str) -> str:
    r"""``text`` with its notation (:data:`TEX`) in MyST's dollar math, for a sentence pasted as Markdown.

    Examples
    --------
    >>> print(dollar_math("JS (sink kept) prunes better than d_A^⊥ (content) and total d_A"))
    JS (sink kept) prunes better than $d_A^\perp$ (content) and total $d_A$
    """
    return tex(text).replace(r"\(", "$").replace(r"\)", "$")


def glue_markdown(name: str, text: str) -> None:
    """Hand Markdown the page module wrote (lists, bold verdict words, ``$…$`` math) to the book as it is; the page pastes
    it with the ``glue:md`` directive in MyST format (``:format: myst``)."""
    from IPython.display import Markdown

    glue(name, Markdown(text))


def glue_sentence(name: str, sentence: str) -> None:
    """Hand a computed sentence to the book as Markdown with its notation typeset; the page pastes it with the
    ``glue:md`` role in MyST format, ``name:myst`` (the default CommonMark format leaves ``$…$`` as it is, and the
    ``glue:text`` role would show ``d_A^⊥`` as raw characters)."""
    from IPython.display import Markdown

    glue(name, Markdown(dollar_math(escape(sentence, paragraphs=True))))


def typeset_tables() -> None:
    """Have every table this kernel displays (a pandas DataFrame or Styler) write its notation as math (:func:`tex`),
    which the book typesets, show any text in it as text (:func:`escape_styler`) and its index name in the header's
    corner (:func:`fold_index_name`); outside IPython it does nothing."""
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
    html.for_type(pd.DataFrame, lambda table: whole_header_numbers(tex(fold_index_name(table)._repr_html_())))  # it escapes its text
    html.for_type(Styler, lambda table: whole_header_numbers(tex(escape_styler(as_dataframe_table(fold_index_name(table)))._repr_html_())))


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
    rho, p, how = spearman_permutation(x, y)
    direction = "rises" if rho > 0 else "falls"
    if p < 0.05:
        shown = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
        return f"Across {n} {units}{note}, {what_y} {direction} with {what_x} (Spearman ρ = {rho:.2f}, two-sided {how} {shown})."
    return (f"Across {n} {units}{note} the rank correlation of {what_y} with {what_x} is ρ = {rho:.2f}, with two-sided {how} p = {p:.2f}. "
            f"That is not evidence that {what_y} {direction} with {what_x}: {n} {units} are too few to tell.")


