"""Figures of the measurement chapter: models on the calibration curves (Figure 3), the layer-wise collapse (Figure 4) and witness triples (Figure 7)."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator

from ...studies.profiles import disagreeing_transitions
from ..plots import METRIC_COLOURS, METRIC_LABELS, ROW_COLOURS, SMALLEST_PT, panels, readable
from ...math.metrics import CLASSICAL


@readable
def models_on_curves(curves: dict, points: dict[str, dict], metrics=CLASSICAL):
    """Figure 3: the frozen curves of ``metrics`` with each model as a star at its signature sink mass.

    ``points[model] = {"sink_mass": s, "rates": {metric: rate}}``.
    """
    fig, axes = panels(len(metrics) + 1, 4.4)  # the last cell holds the legend
    s = np.asarray(curves["grid"]["sink_masses"])
    markers = "*ovD^sPX"
    for ax, metric in zip(axes, metrics):
        for alpha, style in (("0.1", "-"), ("1.0", "--")):
            ax.plot(s, 100 * np.asarray(curves["curves"][alpha][metric]), style, color=METRIC_COLOURS[metric], label=f"curve, α = {float(alpha):g}")
        ax.plot(s, 100 * np.asarray(curves["curves"]["0.1"]["content"]), ":", color="black", lw=2.2, label=r"$d_A^\perp$ (zero)")
        for i, (name, pt) in enumerate(points.items()):
            ax.scatter(pt["sink_mass"], 100 * pt["rates"][metric], marker=markers[i % len(markers)], s=120, color="black", facecolor="gold", zorder=3, label=name)
        ax.set_title(METRIC_LABELS[metric])
        ax.set_xlabel("signature sink mass")
        ax.set_ylim(-2, 60)
        ax.set_ylabel("reversal rate (%)")
    from matplotlib.lines import Line2D

    handles, labels = axes[0].get_legend_handles_labels()
    handles[:2] = [Line2D([], [], color="gray", linestyle=style) for style in ("-", "--")]  # the curves' key, in no metric's colour
    key = axes[len(metrics)]
    key.axis("off")
    key.legend(handles, labels, loc="center", fontsize="small")
    fig.tight_layout()
    return fig


@readable
def layer_collapse_grid(profiles: dict[str, dict]):
    """Figure 4: per model, layer-wise ``H`` (red) and ``H(π)`` (green), sink mass dotted; shaded where they disagree in sign."""
    n = len(profiles)
    fig, axes = panels(n, 3.4, cols=1 if n == 1 else 2)
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
        twin.set_ylabel("sink mass", color="gray")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # layers are whole numbers
        ax.set_title(name, fontsize=12)
        ax.set_xlabel("layer")
        ax.set_ylabel("nats")
    handles = axes[0].get_legend_handles_labels()[0] + [plt.Line2D([], [], ls=":", color="gray")]
    fig.tight_layout(rect=(0, 0.06 / int(np.ceil(n / 2)), 1, 1))
    fig.legend(handles, ["H", "H(π)", "sink mass (right axis)"], loc="lower center", ncol=3, fontsize="small")
    return fig


@readable
def witness_triple_figure(triples: dict[str, dict], sink, top: int = 6):
    """Figure 7: per model, a measured head triple on which all classical verdicts reverse.

    Bars: the sink mass, then the ``top`` content keys with most mass in ``p``. With no triple, a one-line note.
    """
    if not triples:
        fig, ax = plt.subplots(figsize=(6, 1))
        ax.text(0.5, 0.5, "no sampled triple reverses all three classical verdicts", ha="center", va="center")
        ax.axis("off")
        return fig
    fig, axes = panels(len(triples), 4.4)
    for ax, (name, t) in zip(axes, triples.items()):
        rows = np.asarray(t["rows"])
        s = list(t.get("sink", sink))
        content = np.setdiff1d(np.arange(rows.shape[1]), s)
        order = content[np.argsort(-rows[0, content])[:top]]
        values = np.column_stack([rows[:, s].sum(axis=1), rows[:, order]])
        offset = 0.22
        for j, (label, colour, marker) in enumerate(zip("pqr", ROW_COLOURS.values(), "os^")):
            head = t["heads"][j]
            ax.plot(np.arange(values.shape[1]) + (j - 1) * offset, values[j], marker, ms=7, color=colour, linestyle="none",
                    label=f"{label}: L{head['layer']}H{head['head']}")  # points, not bars: on a log axis a bar's length means nothing
        ax.set_xticks(range(values.shape[1]), ["sink"] + [f"k{k}" for k in order], fontsize=SMALLEST_PT + 1)
        ax.set_yscale("log")
        ax.set_ylabel("attention weight")
        ax.grid(axis="y", alpha=0.3)
        ax.set_title(name, fontsize=12)
        ax.legend(fontsize=SMALLEST_PT + 1, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=3, frameon=False)
    fig.tight_layout()
    return fig
