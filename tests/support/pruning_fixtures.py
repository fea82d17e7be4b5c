"""A fake pruning sweep whose readings are known in advance, for the readings' and the page's tests."""

import math

import numpy as np

from attncoda.studies.pruning_sweep import PruningResult, Scored


def scored(kind, nll, tokens=10, **fields):
    nll = np.asarray(nll, float)
    return Scored(kind, fields.pop("heads", []), math.exp(nll.sum() / (tokens * len(nll))), nll.tolist(), [tokens] * len(nll), 0.0, **fields)


def fake_sweep(shift, noise=0.01, seeds=(0, 1, 2), n=24, draws=20):
    """A fake sweep: metric 'content' is ``shift`` nats per token better than 'aitchison'; random draws in between."""
    rng = np.random.default_rng(0)
    base = rng.uniform(20, 40, n)
    sets = [scored("base", base)]
    for seed in seeds:
        for metric, offset in (("content", -shift), ("aitchison", 0.0)):
            for tb in ("first", "last") if seed == seeds[0] else ("first",):
                nll = base + 10 * (1.0 + offset) + rng.normal(0, noise, n)
                sets.append(scored("metric", nll, metric=metric, seed=seed, sparsity=0.2, tie_break=tb, heads=[1000 + seed, len(sets)]))
    for draw in range(draws):
        sets.append(scored("random", base + 10 * (1.0 - shift / 2) + rng.normal(0, 0.3, n), sparsity=0.2, draw=draw, heads=[100 + draw]))
    return PruningResult("fake", {}, 2, 4, list(seeds), [0.2], 0.2, {}, sets, [], {}, {}, 0.0)
