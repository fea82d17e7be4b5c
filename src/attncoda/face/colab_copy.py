"""A chapter's Colab copy: the executed notebook with its Markdown in plain CommonMark, so a reader who opens it in
Colab sees every number and figure of the run that built the page before running anything.

Colab renders Markdown, not MyST. In each Markdown cell:

* ``{glue:text}`name:spec``` becomes the glued value, formatted by ``spec`` (``.1f``) where it is a number;
* ``{glue:md}`name:myst``` and a ```` ```{glue:md} name ```` block become the glued Markdown, itself converted;
* a ```` ```{glue:figure} name ```` block becomes the glued PNG, as an attachment of the cell, or the glued table's
  HTML;
* an ```` ```{admonition} Title ```` block becomes a block quote headed by its title in bold, and a
  ```` ```{list-table} ```` a pipe table;
* ``{doc}`text <path>``` and ``{ref}`text <label>``` become links to the published page;
* dollar math stays: Colab typesets ``$…$``.

Code cells keep their outputs. The book build writes these copies (:func:`attncoda.face.book.write_colab_notebooks`).
"""

from __future__ import annotations

import ast
import base64
import copy
import posixpath
import re

GLUE_PREFIX = "application/papermill.record/"
"""The MIME prefix myst-nb's glue gives a value's output."""

MYST_LEFT = re.compile(r"\{(glue|glue:text|glue:md|glue:figure|doc|ref|admonition|math)\}|^(```|:::)\{", re.M)
"""MyST syntax a plain copy must not keep (what a test looks for)."""


def glue_store(nb) -> dict[str, dict]:
    """Every glued value of an executed notebook: ``{name: {mime: data}}``, the MIME types without the glue prefix."""
    store = {}
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            name = output.get("metadata", {}).get("scrapbook", {}).get("name")
            if name:
                store[name] = {k.removeprefix(GLUE_PREFIX): v for k, v in output.get("data", {}).items()}
    return store


def _python_value(text: str):
    """A glued value's ``text/plain`` (the value's repr) read back as the number or string it was, else the text.

    >>> _python_value("0.25"), _python_value("'5 models'"), _python_value("<Figure size 10x8>")
    (0.25, '5 models', '<Figure size 10x8>')
    """
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def glue_text(store: dict, reference: str) -> str:
    """The text a ``{glue:text}`` reference shows: ``name`` or ``name:spec``, the spec applied to a number.

    >>> glue_text({"rate": {"text/plain": "26.0953"}, "n": {"text/plain": "'5 models'"}}, "rate:.1f"), glue_text({"n": {"text/plain": "'5 models'"}}, "n")
    ('26.1', '5 models')
    """
    name, _, spec = reference.partition(":")
    if name not in store:
        raise KeyError(f"the page names a glued value {name!r} that its run did not glue")
    value = _python_value(store[name].get("text/plain", ""))
    if spec and isinstance(value, (int, float)) and not isinstance(value, bool):
        return format(value, spec)
    return str(value)


def page_url(book_url: str, path: str, label: str = "") -> str:
    """The published address of a page named relative to the notebooks' folder (``../book/methods`` →
    ``<book>/book/methods.html``), with ``label`` as its anchor.

    >>> page_url("https://o.github.io/r", "../book/methods", "methods-scorecard")
    'https://o.github.io/r/book/methods.html#methods-scorecard'
    """
    target = posixpath.normpath(posixpath.join("notebooks", path))
    return f"{book_url.rstrip('/')}/{target}.html" + (f"#{label}" if label else "")


def _link(match: re.Match, book_url: str, role: str) -> str:
    body = match.group(1)
    found = re.fullmatch(r"(.*?)\s*<([^>]+)>", body, re.S)
    text, target = (found.group(1), found.group(2)) if found else (body, body)
    if role == "doc":
        return f"[{text}]({page_url(book_url, target)})"
    return f"[{text}]({page_url(book_url, '../book/methods', target)})"  # every {ref} label of the book is the methods page's


def _blocks(text: str, store: dict, book_url: str, attachments: dict) -> str:
    """The fenced MyST blocks of a Markdown cell converted (glue:md, glue:figure, admonition)."""
    def block(match: re.Match) -> str:
        kind, argument, body = match.group(2), match.group(3).strip(), match.group(4)
        options = dict(re.findall(r"^:(\w[\w-]*):\s*(.*)$", body, re.M))
        content = re.sub(r"^:\w[\w-]*:.*\n?", "", body, flags=re.M).strip()
        if kind == "glue:md":
            return plain_markdown(str(_python_value(store[argument].get("text/markdown", store[argument].get("text/plain", "")))),
                                  store, book_url, attachments)
        if kind == "list-table":
            return _pipe_table(content, int(options.get("header-rows", "0") or 0), store, book_url, attachments)
        if kind == "glue:figure":
            glued = store.get(argument, {})
            png, html = glued.get("image/png"), glued.get("text/html")
            if png is not None:
                attachments[f"{argument}.png"] = {"image/png": png if isinstance(png, str) else base64.b64encode(png).decode()}
                return f"![{options.get('alt', argument)}](attachment:{argument}.png)"
            if html is not None:  # a glued table (a pandas Styler): its HTML, which Markdown passes through
                return html if isinstance(html, str) else "".join(html)
            return f"*(figure {argument}: not in this run)*"
        inner = plain_markdown(content, store, book_url, attachments)
        return "\n".join([f"> **{argument}**", ">"] + [f"> {line}" if line else ">" for line in inner.splitlines()])

    return re.sub(r"^(```|:::)\{(glue:md|glue:figure|admonition|list-table)\}([^\n]*)\n(.*?)^\1[ \t]*$", block, text, flags=re.M | re.S)


def _pipe_table(body: str, header_rows: int, store: dict, book_url: str, attachments: dict) -> str:
    """A ``list-table``'s rows (``* - a`` then ``  - b`` per cell) as a pipe table, its first row the header (an empty
    header where the list-table has none).

    >>> print(_pipe_table("* - verdict\\n  - claim\\n* - **reversed**\\n  - a | b", 1, {}, "https://b", {}))
    | verdict | claim |
    |---|---|
    | **reversed** | a \\| b |
    """
    rows = [[cell.strip() for cell in re.split(r"\n\s*- ", row.strip())] for row in re.split(r"^\* - ", body, flags=re.M) if row.strip()]
    cells = [[plain_markdown(c, store, book_url, attachments).replace("|", "\\|").replace("\n", " ") for c in row] for row in rows]
    width = max(len(r) for r in cells)
    head = cells[0] if header_rows else [""] * width
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * width]
    return "\n".join(lines + ["| " + " | ".join(r) + " |" for r in cells[1 if header_rows else 0:]])


def plain_markdown(text: str, store: dict, book_url: str, attachments: dict | None = None) -> str:
    """A Markdown cell's MyST in plain CommonMark, with the run's glued values in place (see the module's list).

    >>> store = {"n": {"text/plain": "'5 models'"}, "r": {"text/plain": "0.2612"}}
    >>> plain_markdown("On our {glue:text}`n`, {glue:text}`r:.1%` flip; see {doc}`the methods <../book/methods>`.", store, "https://b")
    'On our 5 models, 26.1% flip; see [the methods](https://b/book/methods.html).'
    """
    attachments = {} if attachments is None else attachments
    text = _blocks(text, store, book_url, attachments)
    text = re.sub(r"\{glue:md\}`([^`]+)`", lambda m: plain_markdown(
        str(_python_value(store[m.group(1).split(":")[0]].get("text/markdown", store[m.group(1).split(":")[0]].get("text/plain", "")))),
        store, book_url, attachments), text)
    text = re.sub(r"\{glue(?::text)?\}`([^`]+)`", lambda m: glue_text(store, m.group(1)), text)
    text = re.sub(r"\{doc\}`([^`]+)`", lambda m: _link(m, book_url, "doc"), text)
    text = re.sub(r"\{ref\}`([^`]+)`", lambda m: _link(m, book_url, "ref"), text)
    return re.sub(r"\{math\}`([^`]+)`", r"$\1$", text)


def colab_copy(executed, book_url: str):
    """A chapter's executed notebook as Colab shows it: its Markdown cells in plain CommonMark with the run's values
    and figures (:func:`plain_markdown`), its code cells and their outputs as they ran."""
    nb = copy.deepcopy(executed)
    store = glue_store(nb)
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        attachments: dict = {}
        cell.source = plain_markdown(cell.source, store, book_url, attachments)
        if attachments:
            cell["attachments"] = attachments
    return nb


def book_address(repository: str) -> str:
    """Where GitHub Pages publishes the book of a GitHub repository (``https://github.com/o/r`` →
    ``https://o.github.io/r``); any other address is returned as it is.

    >>> book_address("https://github.com/attncoda/attncoda")
    'https://attncoda.github.io/attncoda'
    """
    found = re.fullmatch(r"https://github\.com/([\w.-]+)/([\w.-]+)/?", repository)
    return f"https://{found.group(1)}.github.io/{found.group(2)}" if found else repository
