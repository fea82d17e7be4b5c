"""Figures of the clustering chapter: head maps, dendrograms and each head's attention to [CLS], [SEP] and the sink."""

from __future__ import annotations

import matplotlib.pyplot as plt
import numpy as np

from ..plots import MAX_WIDTH_IN, SMALLEST_PT, panels, readable
from ...math.metrics import CLUSTERED, get_metric


@readable
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


@readable
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


@readable
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


ARI_METRICS = {name: get_metric(name).short for name in CLUSTERED if name != "content"}
ARI_COLOURS = {"js": "#d62728", "cosine": "#1f77b4", "euclidean": "#2ca02c"}


@readable
def ari_strip_figure(spreads: dict[str, dict], paper_js: dict[int, float]):
    """Between-convention ARI of each window sample (dots), per K and classical metric, one panel per model
    (``spreads[model]`` from :func:`attncoda.studies.clustering.sample_spread`); the median as a bar, the paper's JS
    value on BERT-base as a black diamond."""
    fig, axes = panels(len(spreads), 4.0)
    jitter = np.random.default_rng(0)
    for ax, (name, spread) in zip(axes, spreads.items()):
        ks = list(spread)
        for j, (metric, label) in enumerate(ARI_METRICS.items()):
            dx = (j - 1) * 0.25
            for i, k in enumerate(ks):
                s = spread[k]["cross_ari"][metric]
                ax.scatter(np.full(len(s.values), i + dx) + jitter.uniform(-0.05, 0.05, len(s.values)), s.values, s=16,
                           color=ARI_COLOURS[metric], alpha=0.8, label=label if i == 0 else None)
                ax.plot([i + dx - 0.1, i + dx + 0.1], [s.median, s.median], color=ARI_COLOURS[metric], linewidth=2.5)
        paper = [paper_js.get(k) for k in ks]
        ax.scatter([i - 0.25 for i, v in enumerate(paper) if v is not None], [v for v in paper if v is not None], marker="D", s=36,
                   color="black", zorder=5, label="paper, JS (BERT-base)")
        ax.set_xticks(range(len(ks)), [f"K = {k}" for k in ks])
        ax.set_ylim(-0.1, 1.05)
        ax.set_ylabel("ARI, sink kept vs dropped")
        ax.set_title(name)
        ax.axhline(0, color="#999999", linewidth=0.8)
    axes[0].legend(loc="upper right")
    fig.tight_layout()
    return fig
