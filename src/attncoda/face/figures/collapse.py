"""Figures of the collapse chapter: entropy across training (Figure 5b) and reversal rate against sink mass (Figure 5a)."""

from __future__ import annotations

import textwrap

import matplotlib.pyplot as plt
import numpy as np

from ..plots import METRIC_LABELS, legend_outside, panels, readable


@readable
def collapse_trajectories(groups: dict[str, dict[str, list[dict]]], target: float = 0.5):
    """Figure 5b: mean ``H`` (red) and ``H(π)`` (green) across training, sink mass in grey (twin axis: on a task's
    non-trigger rows where the points have it, with the ``target`` dotted); one panel per group (a model size), one line
    style per run (a seed). Steps on a symmetric-log axis, so step 0 is drawn."""
    from matplotlib.lines import Line2D

    styles = ("-", "--", "-.", ":")
    fig, axes = panels(len(groups), 5.0)
    for ax, (title, runs) in zip(axes, groups.items()):
        twin = ax.twinx()
        for style, points in zip(styles * 4, runs.values()):
            steps = [p["step"] for p in points]
            ax.plot(steps, [p["entropy"] for p in points], style, marker="o", ms=3, color="#d62728")
            ax.plot(steps, [p["content_entropy"] for p in points], style, marker="s", ms=3, color="#2ca02c")
            twin.plot(steps, [p.get("other_sink_mass", p["sink_mass"]) for p in points], style, color="gray", alpha=0.8)
        ax.set_xscale("symlog", linthresh=1)
        ax.set_xlabel("training step")
        ax.set_ylabel("mean entropy (nats)")
        twin.set_ylabel("mean sink mass", color="gray")
        twin.set_ylim(0, 1)
        task = any("other_sink_mass" in p for points in runs.values() for p in points)
        if task:
            twin.axhline(target, color="gray", linewidth=0.8, linestyle=(0, (1, 3)))
        handles = [Line2D([], [], color="#d62728", marker="o", label="H"), Line2D([], [], color="#2ca02c", marker="s", label="H(π)"),
                   Line2D([], [], color="gray", label=("sink mass, non-trigger rows (right axis; dotted: the target)" if task else "sink mass (right axis)"))]
        handles += [Line2D([], [], color="black", linestyle=style, label=run) for style, run in zip(styles * 4, runs)]
        ax.set_title("\n".join(textwrap.wrap(title, 36)), fontsize="medium")  # two panels' long titles must not run into each other
    fig.tight_layout(rect=(0, 0.12, 1, 1))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize="small")
    return fig


@readable
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
