"""Figures and labels of the pruning chapter: perplexity against sparsity per selection metric, and the pruned heads."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..plots import METRIC_COLOURS, panels

SELECTION_LABELS = {"js": "JS′ (dropped-row JS)", "content": r"$d_A^\perp$ (content)", "aitchison": r"total $d_A$"}
"""Legend labels (matplotlib TeX)."""


SELECTION_COLOURS = {"js": METRIC_COLOURS["js"], "content": METRIC_COLOURS["content"], "aitchison": "#ff7f0e"}


def pruning_figure(results: dict[str, dict]):
    """Perplexity against sparsity per selection metric (mean over seeds, log scale), random draws as grey dots, one panel per model."""
    fig, axes = panels(len(results) + 1, 4.2)  # the last cell holds the legend
    for ax, (name, r) in zip(axes, results.items()):
        xs = np.asarray(r["sparsities"]) * 100
        for metric in SELECTION_LABELS:
            means = [np.mean([s["perplexity"] for s in r["selections"] if s["metric"] == metric and s["sparsity"] == sp]) for sp in r["sparsities"]]
            ax.plot(xs, means, "o-", color=SELECTION_COLOURS[metric], label=SELECTION_LABELS[metric], linewidth=2)
        rand = [(100 * d["sparsity"], d["perplexity"]) for d in r["random"]]
        if rand:
            rx, ry = zip(*rand)
            ax.scatter(np.asarray(rx) + np.random.default_rng(0).uniform(-0.8, 0.8, len(rx)), ry, color="#999999", s=14, label="random draws", zorder=1)
        ax.axhline(r["base"]["perplexity"], color="black", linestyle=":", label="unpruned")
        ax.set_yscale("log")
        ax.set_xticks(xs)
        ax.set_xlabel("heads pruned (%)")
        ax.set_ylabel("held-out perplexity")
        ax.set_title(name, fontsize=12)
    key = axes[len(results)]
    key.axis("off")
    key.legend(*axes[0].get_legend_handles_labels(), loc="center", fontsize="small")
    fig.tight_layout()
    return fig


def pruned_heads_figure(grids: dict[str, tuple[int, int, list[int]]]):
    """The pruned heads on the layer × head grid: ``grids[title] = (layers, heads, pruned flat indices)``."""
    fig, axes = panels(len(grids), 4.5, cols=3)
    for ax, (title, (layers, heads, pruned)) in zip(axes, grids.items()):
        grid = np.zeros((layers, heads))
        for i in pruned:
            grid[i // heads, i % heads] = 1
        ax.imshow(grid, cmap="Greys", aspect="auto", vmin=0, vmax=1.3, origin="lower")
        ax.set_xlabel("head")
        ax.set_ylabel("layer")
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig
