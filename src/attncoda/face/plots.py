"""Figures for the chapters (matplotlib; ternary panels use mpltern)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..math.coda import drop_sink
from ..math.metrics import get_metric
from ..studies.profiles import disagreeing_transitions

READABLE = {"font.size": 13, "axes.titlesize": 13, "axes.labelsize": 13, "xtick.labelsize": 11, "ytick.labelsize": 11, "legend.fontsize": 11,
            "figure.dpi": 100, "savefig.dpi": 100}
"""Type sizes and resolution. A figure is at most :data:`MAX_WIDTH_IN` wide, so the book's column (about 760 px) shows it at
three quarters of its size or more, and its smallest type (:data:`SMALLEST_PT`) stays above 9 px on the page."""
plt.rcParams.update(READABLE)

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
ROW_COLOURS = {"p": "#444444", "q": "#1f77b4", "r": "#d62728"}


def _ternary(fig, position):
    import mpltern  # noqa: F401  (registers the "ternary" projection)

    ax = fig.add_subplot(position, projection="ternary")
    ax.set_tlabel("sink")
    ax.set_llabel("a")
    ax.set_rlabel("b")
    ax.grid(alpha=0.3)
    return ax


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
    ax = _ternary(fig, 223)
    for name, x in rows.items():
        ax.scatter(*x, color=ROW_COLOURS[name], s=60, label=f"{name}", zorder=3)
        ax.scatter(*np.r_[0.0, drop_sink(x)], color=ROW_COLOURS[name], marker="s", facecolor="none", s=60, label=f"{name}'", zorder=3)
    ax.set_title("(c) on the simplex (squares: dropped)", pad=30)
    ax.legend(loc="upper left", bbox_to_anchor=(1.25, 1.0), fontsize=SMALLEST_PT + 2)
    fig.tight_layout()
    return fig


def reversal_region_figure(q_positions: np.ndarray, reversed_mask: np.ndarray, p: np.ndarray, r: np.ndarray, rate: float):
    """Figure 6: third-row positions, red where the cosine verdict reverses between conventions."""
    fig = plt.figure(figsize=(8, 5.5))
    ax = _ternary(fig, 111)
    ax.scatter(*q_positions[~reversed_mask].T, s=1, color="#bbbbbb", label="same verdict")
    ax.scatter(*q_positions[reversed_mask].T, s=1, color="#d62728", label="verdict reverses")
    ax.scatter(*p, marker="*", s=200, color="black", label="p", zorder=3)
    ax.scatter(*r, marker="*", s=200, color="#1f77b4", label="r", zorder=3)
    ax.set_title(f"cosine reversal region: {100 * rate:.1f} % of positions", pad=30)
    legend = ax.legend(loc="upper left", bbox_to_anchor=(1.15, 1.0), fontsize="small")
    for handle in legend.legend_handles[:2]:
        handle.set_sizes([20])
    return fig


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


def calibration_figure(curves: dict, metrics=("cosine", "js", "euclidean", "hellinger", "content"), ax=None):
    """Figure 3's curves: reversal rate against sink mass, solid ``α = 0.1``, dashed ``α = 1``."""
    if ax is None:
        _, ax = plt.subplots(figsize=(9, 4.8))
    s = np.asarray(curves["grid"]["sink_masses"])
    for metric in metrics:
        for alpha, style in (("0.1", "-"), ("1.0", "--")):
            ys = 100 * np.asarray(curves["curves"][alpha][metric])
            label = f"{METRIC_LABELS[metric]}" if alpha == "0.1" else None
            ax.plot(s, ys, style, color=METRIC_COLOURS[metric], label=label, lw=1.8 if metric != "content" else 1.0)
    ax.plot([], [], "k-", label=r"$\alpha = 0.1$")
    ax.plot([], [], "k--", label=r"$\alpha = 1$")
    ax.set_xlabel("signature sink mass")
    ax.set_ylabel("keep-vs-drop reversal rate (%)")
    ax.set_ylim(-2, 60)
    legend_outside(ax, fontsize="small")
    return ax


def models_on_curves(curves: dict, points: dict[str, dict], metrics=("cosine", "js", "euclidean")):
    """Figure 3: the frozen curves of ``metrics`` with each model as a star at its signature sink mass.

    ``points[model] = {"sink_mass": s, "rates": {metric: rate}}``.
    """
    fig, axes = panels(len(metrics) + 1, 4.4)  # the last cell holds the legend
    s = np.asarray(curves["grid"]["sink_masses"])
    markers = "*ovD^sPX"
    for ax, metric in zip(axes, metrics):
        for alpha, style in (("0.1", "-"), ("1.0", "--")):
            ax.plot(s, 100 * np.asarray(curves["curves"][alpha][metric]), style, color=METRIC_COLOURS[metric], label=f"curve, α = {float(alpha):g}")
        ax.plot(s, 100 * np.asarray(curves["curves"]["0.1"]["content"]), ":", color="black", lw=1, label=r"$d_A^\perp$ (zero)")
        for i, (name, pt) in enumerate(points.items()):
            ax.scatter(pt["sink_mass"], 100 * pt["rates"][metric], marker=markers[i % len(markers)], s=120, color="black", facecolor="gold", zorder=3, label=name)
        ax.set_title(METRIC_LABELS[metric])
        ax.set_xlabel("signature sink mass")
        ax.set_ylim(-2, 60)
        ax.set_ylabel("reversal rate (%)")
    from matplotlib.lines import Line2D

    handles, labels = axes[0].get_legend_handles_labels()
    handles[:2] = [Line2D([], [], color="black", linestyle=style) for style in ("-", "--")]  # the curves' key, in no metric's colour
    key = axes[len(metrics)]
    key.axis("off")
    key.legend(handles, labels, loc="center", fontsize="small")
    fig.tight_layout()
    return fig


def layer_collapse_grid(profiles: dict[str, dict]):
    """Figure 4: per model, layer-wise ``H`` (red) and ``H(π)`` (green), sink mass dotted; shaded where they disagree in sign."""
    n = len(profiles)
    fig, axes = panels(n, 3.4)
    for ax, (name, prof) in zip(axes, profiles.items()):
        h, hp, s = (np.asarray(prof[k]) for k in ("entropy", "content_entropy", "sink_mass"))
        layers = np.arange(1, len(h) + 1)
        for i in np.flatnonzero(disagreeing_transitions(h, hp)):
            ax.axvspan(layers[i], layers[i + 1], color="#dddddd", lw=0)
        ax.plot(layers, h, "o-", color="#d62728", ms=3, label="H")
        ax.plot(layers, hp, "s-", color="#2ca02c", ms=3, label="H(π)")
        twin = ax.twinx()
        twin.plot(layers, s, ":", color="gray", label="sink mass")
        twin.set_ylim(0, 1)
        ax.set_title(name, fontsize=11)
        ax.set_xlabel("layer")
        ax.set_ylabel("nats")
    handles = axes[0].get_legend_handles_labels()[0] + [plt.Line2D([], [], ls=":", color="gray")]
    fig.tight_layout(rect=(0, 0.06 / int(np.ceil(n / 2)), 1, 1))
    fig.legend(handles, ["H", "H(π)", "sink mass (right axis)"], loc="lower center", ncol=3, fontsize="small")
    return fig


def witness_triple_figure(triples: dict[str, dict], sink, top: int = 6):
    """Figure 7: per model, a measured head triple on which all classical verdicts reverse.

    Bars: the sink mass, then the ``top`` content keys with most mass in ``p``.
    """
    fig, axes = panels(len(triples), 3.8)
    for ax, (name, t) in zip(axes, triples.items()):
        rows = np.asarray(t["rows"])
        s = list(t.get("sink", sink))
        content = np.setdiff1d(np.arange(rows.shape[1]), s)
        order = content[np.argsort(-rows[0, content])[:top]]
        values = np.column_stack([rows[:, s].sum(axis=1), rows[:, order]])
        width = 0.27
        for j, (label, colour) in enumerate(zip("pqr", ROW_COLOURS.values())):
            head = t["heads"][j]
            ax.bar(np.arange(values.shape[1]) + (j - 1) * width, values[j], width, color=colour, label=f"{label}: L{head['layer']}H{head['head']}")
        ax.set_xticks(range(values.shape[1]), ["sink"] + [f"k{k}" for k in order], fontsize=SMALLEST_PT + 1)
        ax.set_yscale("log")
        ax.set_title(name, fontsize=11)
        ax.legend(fontsize=SMALLEST_PT, loc="lower left")
    fig.tight_layout()
    return fig


def head_map_figure(embeddings: dict[str, np.ndarray], labels: dict[str, np.ndarray], members, member_name: str, title: str):
    """The heads embedded in 2-D (MDS) under keep and under drop, side by side: colour = cluster, ring = member of a head set."""
    fig, axes = panels(len(embeddings), 4.6)
    members = set(members)
    for ax, (conv, xy) in zip(axes, embeddings.items()):
        lab = labels[conv]
        ax.scatter(xy[:, 0], xy[:, 1], c=lab, cmap="tab10", s=40, edgecolor="none")
        ring = [i for i in range(len(xy)) if i in members]
        if ring:
            ax.scatter(xy[ring, 0], xy[ring, 1], s=140, facecolor="none", edgecolor="black", linewidth=1.2, label=member_name)
            ax.legend(fontsize=10, loc="best")
        ax.set_title(f"{title}: sink {'kept' if conv == 'keep' else 'dropped'}", fontsize=12)
        ax.set_xticks([])
        ax.set_yticks([])
    fig.tight_layout()
    return fig


def dendrogram_figure(matrices: dict[str, np.ndarray], title: str):
    """Average-linkage dendrograms of the heads from each convention's distance matrix."""
    from scipy.cluster.hierarchy import dendrogram, linkage
    from scipy.spatial.distance import squareform

    fig, axes = plt.subplots(len(matrices), 1, figsize=(MAX_WIDTH_IN, 3.2 * len(matrices)))
    for ax, (conv, m) in zip(np.atleast_1d(axes), matrices.items()):
        d = (m + m.T) / 2
        np.fill_diagonal(d, 0.0)
        dendrogram(linkage(squareform(d, checks=False), method="average"), ax=ax, no_labels=True, color_threshold=None)
        ax.set_title(f"{title}: sink {'kept' if conv == 'keep' else 'dropped'}", fontsize=13)
        ax.set_ylabel("distance")
    fig.tight_layout()
    return fig


def head_mass_figure(masses: dict[str, dict[str, list]], threshold: float):
    """Per model, the distribution over heads of the mean attention to [SEP], to [CLS] and to both, with the set threshold."""
    fig, axes = panels(len(masses), 3.8)
    for ax, (name, m) in zip(axes, masses.items()):
        bins = np.linspace(0, 1, 41)
        for key, colour in (("sep", "#d62728"), ("cls", "#1f77b4"), ("sink", "#444444")):
            ax.hist(m[key], bins=bins, histtype="step", linewidth=1.8, color=colour, label={"sep": "[SEP]", "cls": "[CLS]", "sink": "[CLS] + [SEP]"}[key])
        ax.axvline(threshold, color="black", linestyle=":", label=f"threshold {threshold:g}")
        ax.set_title(name, fontsize=12)
        ax.set_xlabel("mean attention of a head")
        ax.set_ylabel("heads")
        ax.legend(fontsize=SMALLEST_PT)
    fig.tight_layout()
    return fig


SELECTION_LABELS = {"js": "JS′ (dropped-row JS)", "content": r"$d_A^\perp$ (content)", "aitchison": r"total $d_A$"}
"""Legend labels (matplotlib TeX)."""
SELECTION_TEXT = {"js": "JS′ (dropped-row JS)", "content": "content distance", "aitchison": "total Aitchison distance"}
"""The same labels in words, for tables, sentences and figure titles (no notation outside math)."""
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


def collapse_trajectories(groups: dict[str, dict[str, list[dict]]]):
    """Figure 5b: mean ``H`` (red) and ``H(π)`` (green) across training, sink mass in grey (twin axis); one panel per
    group (a model size), one line style per run (a seed). Steps on a symmetric-log axis, so step 0 is drawn."""
    from matplotlib.lines import Line2D

    styles = ("-", "--", "-.", ":")
    fig, axes = panels(len(groups), 5.0)
    for ax, (title, runs) in zip(axes, groups.items()):
        twin = ax.twinx()
        for style, points in zip(styles * 4, runs.values()):
            steps = [p["step"] for p in points]
            ax.plot(steps, [p["entropy"] for p in points], style, marker="o", ms=3, color="#d62728")
            ax.plot(steps, [p["content_entropy"] for p in points], style, marker="s", ms=3, color="#2ca02c")
            twin.plot(steps, [p["sink_mass"] for p in points], style, color="gray", alpha=0.8)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("training step")
        ax.set_ylabel("mean entropy (nats)")
        twin.set_ylabel("mean sink mass", color="gray")
        twin.set_ylim(0, 1)
        handles = [Line2D([], [], color="#d62728", marker="o", label="H"), Line2D([], [], color="#2ca02c", marker="s", label="H(π)"),
                   Line2D([], [], color="gray", label="sink mass (right axis)")]
        handles += [Line2D([], [], color="black", linestyle=style, label=run) for style, run in zip(styles * 4, runs)]
        ax.set_title(title)
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize="small")
    return fig


def reversal_against_sink(groups: dict[str, list[tuple[float, float]]], metric: str = "js"):
    """Figure 5a: a metric's keep-vs-drop reversal rate (%) against signature sink mass, one marker per group of points."""
    markers = ("o", "s", "^", "D", "v", "P", "X")
    fig, ax = plt.subplots(figsize=(9, 5))
    xs = []
    for marker, (label, points) in zip(markers * 3, groups.items()):
        if points:
            x, y = zip(*points)
            xs += list(x)
            ax.scatter(x, 100 * np.asarray(y), marker=marker, s=40, alpha=0.8, label=label)
    ax.set_xlabel("signature sink mass (log scale)")
    ax.set_ylabel(f"{METRIC_LABELS.get(metric, metric)} reversal rate (%)")
    positive = [x for x in xs if x > 0]
    ax.set_xscale("log")  # checkpoints far below 0.1 and trained models near 1 are both readable
    ax.set_xlim(min(positive) / 1.5 if positive else 1e-3, 1)
    legend_outside(ax, fontsize="small")
    fig.tight_layout()
    return fig
