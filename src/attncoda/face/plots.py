"""What every figure shares: type sizes and width (:data:`READABLE`, :data:`MAX_WIDTH_IN`), panel grids, legends
placed outside the data, and the metrics' colours and labels. Each part of the book draws its own figures in
:mod:`attncoda.face.figures` (matplotlib; ternary panels use mpltern)."""

from __future__ import annotations

import functools

import matplotlib.pyplot as plt
import numpy as np

from ..math.metrics import get_metric

READABLE = {"font.size": 13, "axes.titlesize": 13, "axes.labelsize": 13, "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": 11,
            "figure.dpi": 100}
"""Type sizes and resolution. A figure is at most :data:`MAX_WIDTH_IN` wide, so the book's column (about 760 px) shows it at
three quarters of its size or more, and its smallest type (:data:`SMALLEST_PT`) stays above 9 px on the page."""


def readable(draw):
    """``draw`` makes its figure under :data:`READABLE` as a style context (``plt.rc_context``), so that importing these
    modules leaves the reader's own matplotlib settings as they were. Sizes stick to the artists drawn inside it (tick
    labels included), so the figure keeps them when it is shown or saved later."""

    @functools.wraps(draw)
    def drawn(*args, **kwargs):
        with plt.rc_context(READABLE):
            return draw(*args, **kwargs)

    return drawn

MAX_WIDTH_IN = 10.0
"""The widest figure, in inches (1,000 px at 100 dpi): panels wrap onto rows of at most two."""

SMALLEST_PT = 9.0
"""The smallest type any figure uses, in points."""

SMALLEST_FONT_PX = SMALLEST_PT * READABLE["figure.dpi"] / 72
"""That type's height in the figure's own pixels (the site test scales it by how much the page shrinks the image)."""


def panels(n: int, panel_height: float, cols: int = 2, **options):
    """A figure of ``n`` panels in rows of at most ``cols``, :data:`MAX_WIDTH_IN` wide (or less for one panel);
    returns ``(fig, axes)`` with the axes flattened and any unused cell hidden."""
    cols = max(1, min(n, cols))
    rows = int(np.ceil(n / cols))
    width = MAX_WIDTH_IN if cols > 1 else min(MAX_WIDTH_IN, 7.5)
    fig, axes = plt.subplots(rows, cols, figsize=(width, panel_height * rows), squeeze=False, **options)
    for ax in axes.ravel()[n:]:
        ax.axis("off")
    return fig, axes.ravel()


def legend_outside(ax, **options) -> None:
    """A legend to the right of the axes, never over the data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0, **options)

METRIC_COLOURS = {
    "cosine": "#1f77b4",
    "js": "#d62728",
    "euclidean": "#2ca02c",
    "hellinger": "#9467bd",
    "content": "#000000",
}

METRIC_LABELS = {name: get_metric(name).label for name in METRIC_COLOURS} | {"hellinger": "Hellinger / Fisher–Rao", "content": r"$d_A^\perp$"}
"""Legend labels: the metrics table's labels, with Fisher–Rao named beside Hellinger (same verdicts) and d_A^⊥ in TeX."""

ROW_COLOURS = {"p": "#444444", "q": "#1f77b4", "r": "#ff7f0e"}
"""The witness rows' colours in every figure (red is kept for "the verdict reverses" in Figure 6)."""


def ternary(fig, position):
    """A ternary panel (sink, a, b) at ``position`` of ``fig``."""
    import mpltern  # noqa: F401  (registers the "ternary" projection)

    ax = fig.add_subplot(position, projection="ternary")
    ax.set_tlabel("sink")
    ax.set_llabel("a")
    ax.set_rlabel("b")
    for axis in (ax.taxis, ax.laxis, ax.raxis):  # no tick at a corner, where it would collide with the corner's label
        axis.set_ticks([0.2, 0.4, 0.6, 0.8])
        axis.set_label_rotation_mode("horizontal")  # corner labels upright, not turned along their axis
    ax.raxis.set_tick_params(pad=9)  # the bottom edge's labels clear of markers on the edge (a row without its sink)
    ax.grid(alpha=0.3)
    return ax


def figure_html(fig, alt: str, caption: str = "", dpi: int = 110):
    """A figure as HTML (an ``<img>`` with its alt text, PNG inline, scaled to the column, and a caption), for a page
    that shows a figure per model and so cannot name each one in its Markdown. Returns an IPython ``HTML`` object."""
    import base64
    import html
    import io

    from IPython.display import HTML

    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi, bbox_inches="tight")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    text = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
    return HTML(f'<figure class="attncoda-figure"><img alt="{html.escape(alt, quote=True)}" src="data:image/png;base64,{data}" '
                f'style="max-width:100%;height:auto">{text}</figure>')
