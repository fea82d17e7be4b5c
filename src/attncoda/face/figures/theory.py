"""Figures of the theory chapters: the witness (Figure 1), the reversal region (Figure 6), synthetic layers (Figure 2) and the calibration curves (Figure 3)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ...math.coda import drop_sink
from ..plots import MAX_WIDTH_IN, METRIC_COLOURS, METRIC_LABELS, ROW_COLOURS, SMALLEST_PT, legend_outside, panels, readable, ternary
from ...math.metrics import CURVES


@readable
def witness_figure(rows: dict[str, np.ndarray]):
    """Figure 1: the witness rows with the sink (bars), without it (bars), and on the simplex."""
    fig = plt.figure(figsize=(MAX_WIDTH_IN, 8.4))
    names = list(rows)
    for col, (title, view) in enumerate((("(a) with the sink", lambda x: x), ("(b) sink dropped, re-closed", lambda x: np.r_[np.nan, drop_sink(x)]))):
        ax = fig.add_subplot(2, 2, col + 1)
        width = 0.25
        for j, name in enumerate(names):
            ax.bar(np.arange(3) + (j - 1) * width, view(rows[name]), width, color=ROW_COLOURS[name], label=name + ("'" if col else ""))
        ax.set_xticks(range(3), ["sink", "a", "b"])
        ax.set_ylim(0, 1.22)  # room above the bars for the legend
        ax.set_yticks(np.linspace(0, 1, 6))
        ax.set_title(title)
        ax.legend(loc="upper center", ncol=3, fontsize="small")
    ax = ternary(fig, 223)
    sizes = np.linspace(260, 70, len(rows))  # nested squares: a dropped row that lands on another stays visible
    for (name, x), size in zip(rows.items(), sizes):
        ax.scatter(*x, color=ROW_COLOURS[name], s=60, label=f"{name}", zorder=3)
        ax.scatter(*np.r_[0.0, drop_sink(x)], color=ROW_COLOURS[name], marker="s", facecolor="none", s=size, lw=1.8,
                   label=f"{name}'", zorder=3, clip_on=False)
    ax.set_title("(c) on the simplex (squares: sink dropped)", pad=30)
    ax.legend(loc="upper left", bbox_to_anchor=(1.25, 1.0), fontsize=SMALLEST_PT + 2)
    fig.tight_layout()
    return fig


@readable
def reversal_region_figure(q_positions: np.ndarray, reversed_mask: np.ndarray, p: np.ndarray, r: np.ndarray, rate: float):
    """Figure 6: third-row positions, red where the cosine verdict reverses between conventions."""
    fig = plt.figure(figsize=(8, 5.5))
    ax = ternary(fig, 111)
    ax.scatter(*q_positions[~reversed_mask].T, s=1, color="#bbbbbb", label="same verdict")
    ax.scatter(*q_positions[reversed_mask].T, s=1, color="#d62728", label="verdict reverses")
    ax.scatter(*p, marker="*", s=200, color=ROW_COLOURS["p"], edgecolor="black", label="p", zorder=3)
    ax.scatter(*r, marker="*", s=200, color=ROW_COLOURS["r"], edgecolor="black", label="r", zorder=3)
    ax.set_title(f"cosine reversal region: {100 * rate:.1f} % of positions", pad=30)
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize="small")
    for handle in legend.legend_handles[:2]:
        handle.set_sizes([20])
    return fig


@readable
def entropy_layers_figure(summaries: dict[str, dict[str, np.ndarray]]):
    """Figure 2: per-layer entropy ``H`` and ``C_A^⊥`` (twin axis), sink mass dotted; the legend under the panels."""
    fig, axes = panels(len(summaries), 4.2)
    for ax, (title, summary) in zip(axes, summaries.items()):
        layers = np.arange(1, len(summary["entropy"]) + 1)
        ax.plot(layers, summary["entropy"], "o-", color="#d62728", label="Shannon H (nats)")
        ax.plot(layers, summary["sink_mass"], ":", color="gray", label="sink mass")
        ax.set_xlabel("layer")
        ax.set_ylabel("H (nats) / sink mass")
        twin = ax.twinx()
        twin.plot(layers, summary["concentration"], "s-", color="#2ca02c", label=r"$C_A^\perp$")
        twin.set_ylabel(r"$C_A^\perp$", color="#2ca02c")
        twin.set_ylim(0, max(80.0, 1.1 * float(np.max(summary["concentration"]))))
        handles = ax.get_legend_handles_labels()[0] + twin.get_legend_handles_labels()[0]
        ax.set_title(title)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize="small")
    return fig


@readable
def calibration_figure(curves: dict, metrics=CURVES, ax=None):
    """Figure 3's curves: reversal rate against sink mass, solid ``α = 0.1``, dashed ``α = 1``."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.8))
    s = np.asarray(curves["grid"]["sink_masses"])
    for metric in metrics:
        for alpha, style in (("0.1", "-"), ("1.0", "--")):
            ys = 100 * np.asarray(curves["curves"][alpha][metric])
            label = f"{METRIC_LABELS[metric]}" if alpha == "0.1" else None
            if metric == "content":  # dotted, so its key differs from the α keys' solid and dashed lines
                ax.plot(s, ys, ":", color=METRIC_COLOURS[metric], label=label, lw=2.2)
            else:
                ax.plot(s, ys, style, color=METRIC_COLOURS[metric], label=label, lw=1.8)
    ax.plot([], [], "-", color="gray", label=r"$\alpha = 0.1$")
    ax.plot([], [], "--", color="gray", label=r"$\alpha = 1$")
    ax.set_xlabel("signature sink mass")
    ax.set_ylabel("keep-vs-drop reversal rate (%)")
    ax.set_ylim(-2, 60)
    legend_outside(ax, fontsize="small")
    return ax
