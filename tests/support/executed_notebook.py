"""A small executed chapter for the Colab-copy tests: a Markdown cell with every MyST construct the chapters use (glued
text with a format, glued Markdown as a block and inline, an admonition, a {ref} and a {doc} link, a glued figure)
and a code cell whose outputs hold the glued values and a printed line."""

import base64

import nbformat

PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n not really an image").decode()


def glued(name, data):
    return nbformat.v4.new_output("display_data", data={f"application/papermill.record/{k}": v for k, v in data.items()},
                                  metadata={"scrapbook": {"name": name, "mime_prefix": "application/papermill.record/"}})


def executed():
    """The executed chapter, with the values its Markdown names glued."""
    code = nbformat.v4.new_code_cell("glue(...)")
    code.outputs = [glued("n", {"text/plain": "'5 models'"}), glued("rate", {"text/plain": "26.0953"}),
                    glued("answer", {"text/markdown": "'**Differs:** ours $d_A^\\\\perp$; see {doc}`methods <../book/methods>`.'"}),
                    glued("fig", {"text/plain": "<Figure size 10x8>", "image/png": PNG}),
                    nbformat.v4.new_output("stream", name="stdout", text="a printed line\n")]
    page = ("# 3. A chapter\n\n```{glue:md} answer\n:format: myst\n```\n\nOn our {glue:text}`n`, {glue:text}`rate:.1f` % flip "
            "({glue:md}`answer:myst`).\n\n```{admonition} Protocol\n:class: note\nSeeds {glue:text}`n`; see {ref}`the rules <methods-scorecard>`.\n```\n\n"
            "```{glue:figure} fig\n:alt: Figure 3 (ours).\n```\n")
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(page), code])


