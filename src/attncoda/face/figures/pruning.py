"""Figures of the pruning chapter: every prune set of a model beside the random sets, and the pruned heads."""

from __future__ import annotations

import numpy as np

from matplotlib.ticker import MaxNLocator

from ..plots import METRIC_COLOURS, panels, readable
from ..report import dollar_math
from ...studies.pruning import SELECTION_NAMES

SELECTION_LABELS = {key: dollar_math(name) for key, name in SELECTION_NAMES.items()}
"""Legend labels (matplotlib TeX)."""

SELECTION_COLOURS = {"js_keep": "#8c564b", "content": METRIC_COLOURS["content"], "aitchison": "#ff7f0e", "js": METRIC_COLOURS["js"]}


SEED_MARKERS = ("o", "s", "^", "D", "v", "P")
"""One marker per seed (cycled), so a reader sees which sets share a text sample."""


@readable
def model_figure(result):
    """One model's prune sets, one panel per sparsity, log scale (:class:`~attncoda.studies.pruning_sweep.PruningResult`):
    per selection metric every set (each seed × tie-break draw; marker = seed), with a bar at the geometric mean; the
    random sets of the same size in grey; the unpruned model dotted."""
    fig, axes = panels(len(result.sparsities), 3.6, cols=len(result.sparsities), sharey=True)
    jitter = np.random.default_rng(0)
    for ax, sp in zip(axes, result.sparsities):
        metrics = result.metrics_at(sp)
        for x, metric in enumerate(metrics):
            colour = SELECTION_COLOURS[metric]
            for k, group in enumerate(result.by_seed(metric, sp)):
                values = [s.perplexity for s in group]
                ax.scatter(x + jitter.uniform(-0.28, 0.28, len(values)), values, color=colour, marker=SEED_MARKERS[k % len(SEED_MARKERS)],
                           s=14, alpha=0.75, linewidths=0, zorder=3)
            ax.hlines(np.exp(np.mean(np.log([s.perplexity for s in result.metric_sets(metric, sp)]))), x - 0.38, x + 0.38, color=colour, linewidth=2.2, zorder=4)
        draws = [s.perplexity for s in result.randoms(sp)]
        x = len(metrics)
        ax.scatter(x + jitter.uniform(-0.28, 0.28, len(draws)), draws, color="#9a9a9a", s=12, zorder=2)
        ax.hlines(np.exp(np.mean(np.log(draws))), x - 0.38, x + 0.38, color="#555555", linewidth=2.2, zorder=4)
        ax.axhline(result.base.perplexity, color="black", linestyle=":", linewidth=1)
        ax.set_xticks(range(x + 1), [SELECTION_LABELS[m] for m in metrics] + ["random"], rotation=35, ha="right")
        ax.set_yscale("log")
        ax.set_title(f"{100 * sp:.0f} % pruned")
    axes[0].set_ylabel("held-out perplexity")
    fig.suptitle(f"{result.model}: every prune set (marker: seed), bar: geometric mean; dotted: unpruned", fontsize=10)
    fig.tight_layout()
    return fig


@readable
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
