"""Figures of the pruning chapter: perplexity against sparsity per selection metric, and the pruned heads."""

from __future__ import annotations

import numpy as np

from matplotlib.ticker import MaxNLocator

from ..plots import METRIC_COLOURS, panels
from ..report import dollar_math
from ...studies.pruning import SELECTION_NAMES

SELECTION_LABELS = {key: dollar_math(name) for key, name in SELECTION_NAMES.items()}
"""Legend labels (matplotlib TeX)."""

SELECTION_COLOURS = {"js_keep": "#8c564b", "content": METRIC_COLOURS["content"], "aitchison": "#ff7f0e", "js": METRIC_COLOURS["js"]}
OFFSETS = {"js_keep": -1.2, "content": -0.4, "aitchison": 0.4, "js": 1.2}
"""Horizontal nudges (percentage points) so the metrics' seeds do not sit on each other."""


def pruning_figure(results: dict):
    """Perplexity against sparsity, log scale, one panel per model (:class:`~attncoda.studies.pruning_sweep.PruningResult`):
    per metric the geometric mean over seeds (line), each seed (dots) and the first seed's other tie-break (cross);
    random prune sets as grey dots; the unpruned model dotted."""
    fig, axes = panels(len(results) + 1, 4.2)  # the last cell holds the legend
    jitter = np.random.default_rng(0)
    for ax, (name, r) in zip(axes, results.items()):
        xs = np.asarray(r.sparsities) * 100
        for sp in r.sparsities:
            draws = [s.perplexity for s in r.randoms(sp)]
            ax.scatter(100 * sp + jitter.uniform(-2.2, 2.2, len(draws)), draws, color="#bbbbbb", s=12, zorder=1,
                       label="random sets" if sp == r.sparsities[0] else None)
        for metric in r.metrics:
            colour, dx = SELECTION_COLOURS[metric], OFFSETS[metric]
            seeds = [[s.perplexity for s in r.metric_sets(metric, sp)] for sp in r.sparsities]
            means = [float(np.exp(np.mean(np.log(v)))) for v in seeds]
            ax.plot(xs + dx, means, "-", color=colour, linewidth=2, label=SELECTION_LABELS[metric], zorder=3)
            for x, v in zip(xs, seeds):
                ax.scatter(np.full(len(v), x + dx), v, color=colour, s=18, zorder=4)
            other = [s.perplexity for sp in r.sparsities for s in r.metric_sets(metric, sp, "last")]
            if len(other) == len(xs):
                ax.scatter(xs + dx, other, color=colour, marker="x", s=30, zorder=4)
        ax.axhline(r.base.perplexity, color="black", linestyle=":", label="unpruned")
        ax.scatter([], [], color="#555555", marker="x", s=30, label="other tie-break (seed 0)")
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xlabel("heads pruned (%)")
        ax.set_ylabel("held-out perplexity")
        ax.set_title(name)
    key = axes[len(results)]
    key.axis("off")
    key.legend(*axes[0].get_legend_handles_labels(), loc="center")
    fig.tight_layout()
    return fig


def pruned_heads_figure(grids: dict[str, tuple[int, int, list[int]]]):
    """The pruned heads on the layer × head grid: ``grids[title] = (layers, heads, pruned flat indices)``; notation in a
    title (``d_A^⊥``) is set as math, and heads and layers are counted in whole numbers."""
    fig, axes = panels(len(grids), 4.5, cols=2)
    for ax, (title, (layers, heads, pruned)) in zip(axes, grids.items()):
        grid = np.zeros((layers, heads))
        for i in pruned:
            grid[i // heads, i % heads] = 1
        ax.imshow(grid, cmap="Greys", aspect="auto", vmin=0, vmax=1.3, origin="lower")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.yaxis.set_major_locator(MaxNLocator(integer=True))
        ax.set_title(dollar_math(title))
    fig.tight_layout()
    return fig
