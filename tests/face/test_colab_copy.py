"""A chapter's Colab copy reads like its page: the run's numbers, Markdown and figures in plain CommonMark, no MyST left,
and the code cells' outputs kept."""

import glob

import nbformat
import pytest

from executed_notebook import PNG, executed

from attncoda.base.paths import build_dir

from attncoda.face.colab_copy import MYST_LEFT, colab_copy, glue_store, glue_text, page_url, plain_markdown

def test_the_copy_holds_the_runs_values_and_figures_in_plain_markdown():
    copy = colab_copy(executed(), "https://o.github.io/r")
    text = copy.cells[0].source
    assert not MYST_LEFT.search(text), text
    assert "On our 5 models, 26.1 % flip" in text and "**Differs:** ours $d_A^\\perp$" in text
    assert "[methods](https://o.github.io/r/book/methods.html)" in text
    assert "> **Protocol**" in text and "[the rules](https://o.github.io/r/book/methods.html#methods-scorecard)" in text
    assert "![Figure 3 (ours).](attachment:fig.png)" in text and copy.cells[0].attachments["fig.png"]["image/png"] == PNG
    assert copy.cells[1].outputs[-1]["text"] == "a printed line\n", "the code cells keep their outputs"


def test_a_value_the_run_did_not_glue_is_named():
    with pytest.raises(KeyError, match="'missing'"):
        plain_markdown("{glue:text}`missing`", {}, "https://b")


def test_glue_reading_and_page_addresses():
    assert glue_store(executed())["rate"]["text/plain"] == "26.0953"
    assert glue_text({"x": {"text/plain": "'a string'"}}, "x:.1f") == "a string"
    assert page_url("https://b/", "09_reproducibility") == "https://b/notebooks/09_reproducibility.html"


@pytest.mark.parametrize("path", sorted(glob.glob(str(build_dir() / "stage" / "notebooks" / "*.ipynb"))) or [None])
def test_every_executed_chapter_of_a_book_build_converts_without_myst_left(path):
    """Where a book was built (``_build/stage``, under ``$ATTNCODA_OUTPUT`` if set), each executed chapter converts whole."""
    if path is None:
        pytest.skip("no book was built in this checkout")
    copy = colab_copy(nbformat.read(path, as_version=4), "https://o.github.io/r")
    left = [m.group(0) for c in copy.cells if c.cell_type == "markdown" for m in MYST_LEFT.finditer(c.source)]
    assert not left, f"{path}: {left[:5]}"


def test_a_glued_list_table_becomes_a_pipe_table():
    """The scorecard glues its card as MyST list-tables: Colab gets pipe tables, a cell's own '|' escaped."""
    card = "### Claims\n\n```{list-table}\n:header-rows: 1\n:class: scorecard\n\n* - verdict\n  - ours\n* - **reversed**\n  - 0.24 | 0.46\n```"
    text = plain_markdown("{glue:md}`card:myst`", {"card": {"text/markdown": repr(card)}}, "https://b")
    assert not MYST_LEFT.search(text) and "| verdict | ours |\n|---|---|\n| **reversed** | 0.24 \\| 0.46 |" in text


def test_a_glued_table_figure_keeps_its_html():
    text = plain_markdown("```{glue:figure} table\n:figwidth: 100%\n```\n", {"table": {"text/html": "<table><tr><td>1</td></tr></table>"}}, "https://b")
    assert text.strip() == "<table><tr><td>1</td></tr></table>"
