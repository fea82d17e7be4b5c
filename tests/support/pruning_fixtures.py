"""A fake pruning sweep whose readings are known in advance, for the readings' and the page's tests."""

import math

import numpy as np

from attncoda.studies.pruning_sweep import PruningResult, Scored


def scored(kind, nll, tokens=10, **fields):
    nll = np.asarray(nll, float)
    return Scored(kind, fields.pop("heads", []), math.exp(nll.sum() / (tokens * len(nll))), nll.tolist(), [tokens] * len(nll), 0.0, **fields)


def fake_sweep(shift, noise=0.01, seeds=(0, 1, 2), n=24, draws=4, randoms=40, model="fake"):
    """A fake sweep at 20 %: metric 'content' is ``shift`` nats per token better than 'aitchison'; random sets in between.
    Each seed has ``draws`` tie-break draws; a seed's draws share the head ``1000 + seed``, and its calibration (window
    study) sets are the base, each metric's first set and 4 random sets on ``2 n`` windows."""
    rng = np.random.default_rng(0)
    base = rng.uniform(20, 40, 2 * n)
    sets = [scored("base", base[:n])]
    study = [scored("base", base)]
    for seed in seeds:
        for metric, offset in (("content", -shift), ("aitchison", 0.0)):
            for draw in range(draws):
                nll = base + 10 * (1.0 + offset) + rng.normal(0, noise, 2 * n)
                heads = [1000 + seed, len(sets)]
                sets.append(scored("metric", nll[:n], metric=metric, seed=seed, sparsity=0.2, draw=draw, heads=heads))
                if seed == seeds[0] and draw == 0:
                    study.append(scored("metric", nll, metric=metric, seed=seed, sparsity=0.2, draw=draw, heads=heads))
    for draw in range(randoms):
        nll = base + 10 * (1.0 - shift / 2) + rng.normal(0, 0.3, 2 * n)
        sets.append(scored("random", nll[:n], sparsity=0.2, draw=draw, heads=[100 + draw]))
        if draw < 4:
            study.append(scored("random", nll, sparsity=0.2, draw=draw, heads=[100 + draw]))
    return PruningResult(model, {}, 2, 4, list(seeds), [0.2], 0.2, {"windows": n, "calibration_windows": 2 * n}, sets, [], study, {}, {}, 0.0)
