"""Sphinx extension: notation in a notebook's outputs (a table's column names, say) is typeset like the prose's.

Sphinx's MathJax skips everything under the page's ``document`` class except elements of a processed class
(``math``, ``mathjax_process``, ...). Every cell output gets ``mathjax_process``, so an output that writes
``\\(d_A^\\perp\\)`` shows d_A^⊥ in math type, not as the characters d, _, A, ^, ⊥.
"""

from docutils import nodes


def _mark_outputs(app, doctree, docname):
    for node in doctree.findall(nodes.container):
        if "cell_output" in node.get("classes", []) and "mathjax_process" not in node["classes"]:
            node["classes"].append("mathjax_process")


def setup(app):
    app.connect("doctree-resolved", _mark_outputs)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
