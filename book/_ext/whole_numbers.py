"""Sphinx extension: a number with an exponent in an API signature (``eps=1e-06``) stays on one line.

The reference's signatures wrap on a phone (book/_static/attncoda.css lets them), and a browser may break a line after
the minus of ``1e-06``, which then reads as "1e-" and "06". Each such number in a signature's HTML is held in a
``white-space: nowrap`` span; the text a reader copies is unchanged.
"""

import re

NUMBER = re.compile(r"\d+(?:\.\d+)?e[-+]\d+")
SIGNATURE = re.compile(r'<dt class="sig[^"]*".*?</dt>', re.S)


def hold_numbers(html: str) -> str:
    """Every exponent number in the text of each signature (``<dt class="sig …">``) wrapped in a nowrap span."""
    def text(segment):
        return NUMBER.sub(lambda n: f'<span style="white-space: nowrap">{n.group(0)}</span>', segment.group(0))

    return SIGNATURE.sub(lambda sig: re.sub(r">[^<]+<", text, sig.group(0)), html)


def _page(app, pagename, templatename, context, doctree):
    if "body" in context:
        context["body"] = hold_numbers(context["body"])


def setup(app):
    app.connect("html-page-context", _page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
