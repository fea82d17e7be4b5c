"""A synthetic :class:`~attncoda.studies.clustering.EncoderClustering` for the clustering tests."""

import numpy as np

from attncoda.engine.head_distances import HeadDistances
from attncoda.studies import clustering
from metas import head_distance_meta


def synthetic_clustering(name, seeds=(0, 1, 2), sep_members=True, held_out=()):
    """An EncoderClustering from synthetic distances: 12 heads in 3-D, the drop convention a noisy copy (content exact);
    ``held_out`` seeds add samples kept out of the ranges."""
    rng = np.random.default_rng(len(name))
    samples, first = [], None
    att = rng.dirichlet(np.ones(5), 12)
    att[:, 4] = 0.05  # no head reaches the threshold on [SEP] (key 4) ...
    att[:, :4] *= 0.95 / att[:, :4].sum(axis=1, keepdims=True)
    if sep_members:  # ... but heads 0, 1, 2
        att[:3] = [0.05, 0.05, 0.05, 0.05, 0.8]
    for _ in [*seeds, *held_out]:
        x = rng.normal(size=(12, 3))
        y = x + rng.normal(scale=0.8, size=x.shape)
        d, drop = (np.sqrt(((v[:, None] - v[None]) ** 2).sum(-1)) for v in (x, y))
        distances = {m: {"keep": d, "drop": d if m == "content" else drop} for m in clustering.CLUSTER_METRICS}
        hd = HeadDistances(head_distance_meta(model=name, model_info={"name": name}, positions=64, sink=[0, 4]), distances, att)
        first = hd if first is None else first
        samples.append(clustering.table9(distances, clustering.head_sets(att, 0, [4])))
    return clustering.EncoderClustering(name, list(seeds), first, clustering.head_sets(att, 0, [4]), samples[: len(seeds)], 1.5, list(held_out),
                                        samples[len(seeds) :])
