"""Which heads to prune: same-layer keep-one selection by a signature distance (MATH.md section 10; Tables 8, 10, 11).

Heads are indexed layer-major (``index = layer · heads + head``). Every function takes
signatures (``(layers·heads, L)`` rows) or distance matrices, never a model.
"""

from __future__ import annotations

import time

import numpy as np

from ..base.progress import Steps
from ..base.protocol import DEFAULT_EPS, N_WINDOWS, PRUNE_SHARE, TEMPERATURES, WINDOW_LENGTH
from ..math import coda
from .redundancy import TEMPER_EPS, nearest_in_layer
from .reversal import distances

SELECTION_METRICS = {"js": ("js", "drop"), "content": ("content", "keep"), "aitchison": ("aitchison", "keep")}
"""Selection metric → (row metric, convention): JS′ is dropped-row JS; d_A^⊥ is the same under both; total d_A keeps the sink."""
SELECTION_NAMES = {"js": "JS′ (dropped-row JS)", "content": "content distance", "aitchison": "total Aitchison distance"}
"""What each selection metric is called in the pruning chapter's tables and sentences."""


def chosen_models(model: str) -> list[str]:
    """What the pruning chapter prunes for its ``model`` parameter: ``causal`` means every offline causal model."""
    from ..engine.registry import REGISTRY

    return [n for n, m in REGISTRY.items() if m.causal] if model == "causal" else [model]


def jobs(params: dict) -> list[tuple]:
    """The signature lookups the pruning chapter makes (``signature_n`` windows per model and seed), as
    ``(kind, model, seed, options)``; its perplexity evaluations stay in the chapter."""
    options = {"n": params["signature_n"], "length": params["length"], "batch_size": 8}
    return [("signatures", name, seed, options) for name in chosen_models(params["model"]) for seed in params["seeds"]]


def target_count(sparsity: float, total: int) -> int:
    """Number of heads a sparsity prunes: ``round(sparsity · total)``."""
    if not 0 < sparsity < 1:
        raise ValueError(f"sparsity must lie strictly between 0 and 1, got {sparsity}")
    return int(round(sparsity * total))


def keep_one_selection(dist: np.ndarray, layers: int, heads: int, sparsity: float) -> list[int]:
    """Same-layer keep-one pruning: walk heads from most to least redundant (smallest distance to their
    layer's nearest other head first); prune a head only while that nearest head is still kept and its
    layer keeps at least one head, until ``sparsity`` of all heads are pruned (or no head qualifies).

    Examples
    --------
    >>> d = np.array([[0, 1, 5, 5], [1, 0, 5, 5], [5, 5, 0, 2], [5, 5, 2, 0]], float)
    >>> keep_one_selection(d, 2, 2, 0.5)  # one head of each pair; never both heads of a layer
    [0, 2]
    """
    values, nearest = nearest_in_layer(dist, layers, heads)
    want = target_count(sparsity, layers * heads)
    pruned: set[int] = set()
    left = np.full(layers, heads)
    for h in np.argsort(values, kind="stable"):
        if len(pruned) == want:
            break
        layer = h // heads
        if nearest[h] not in pruned and left[layer] > 1:
            pruned.add(int(h))
            left[layer] -= 1
    return sorted(pruned)


def random_selection(rng: np.random.Generator, layers: int, heads: int, count: int) -> list[int]:
    """``count`` heads drawn uniformly at random, redrawn until every layer keeps at least one head."""
    if count > layers * (heads - 1):
        raise ValueError(f"cannot prune {count} heads and keep one in each of {layers} layers of {heads}")
    while True:
        chosen = rng.choice(layers * heads, size=count, replace=False)
        if np.all(np.bincount(chosen // heads, minlength=layers) < heads):
            return sorted(int(i) for i in chosen)


def selection_distances(rows: np.ndarray, metric: str, sink, eps: float = DEFAULT_EPS) -> np.ndarray:
    """The signature distance matrix a selection metric prunes by (see :data:`SELECTION_METRICS`)."""
    name, convention = SELECTION_METRICS[metric]
    return distances(name, rows, convention, sink, eps)


def prune_set(rows: np.ndarray, layers: int, heads: int, metric: str, sparsity: float, sink, eps: float = DEFAULT_EPS) -> list[int]:
    """The keep-one prune set of a selection metric at one sparsity."""
    return keep_one_selection(selection_distances(rows, metric, sink, eps), layers, heads, sparsity)


def overlap(a, b) -> float:
    """Share of the first set that the second keeps: ``|a ∩ b| / |a|`` (1 for two empty sets)."""
    a, b = set(a), set(b)
    return len(a & b) / len(a) if a else 1.0


def prune_set_stakes(rows: np.ndarray, layers: int, heads: int, sink, alternative, share: float = PRUNE_SHARE,
                     temperatures=TEMPERATURES) -> dict:
    """Table 8's stakes for pruning: the ``share`` keep-one prune set's retention under each logit temperature,
    and its overlap between the default and an alternative sink set, for JS′ and ``d_A^⊥``."""
    out = {}
    for metric in ("js", "content"):
        base = prune_set(rows, layers, heads, metric, share, sink, TEMPER_EPS)
        tempered = [overlap(base, prune_set(coda.temper(rows, tau), layers, heads, metric, share, sink, TEMPER_EPS)) for tau in temperatures]
        other = prune_set(rows, layers, heads, metric, share, alternative, TEMPER_EPS)
        out[metric] = {"temperatures": list(temperatures), "retention": tempered, "retention_min": min(tempered), "sink_set_overlap": overlap(base, other)}
    return out


def percentile_in(value: float, draws) -> float:
    """Percent of random draws at or below ``value`` (lower perplexity is better: a small percentile beats chance).

    Examples
    --------
    >>> percentile_in(30.0, [10, 20, 40, 50])
    50.0
    """
    draws = np.asarray(draws, dtype=float)
    return float(100 * np.mean(draws <= value))


def sweep(model: str, seeds=(0, 1, 2), sparsities=None, metrics=tuple(SELECTION_METRICS), random_draws: int = 5, n_windows: int = 32,
          length: int = WINDOW_LENGTH, signature_n: int = N_WINDOWS, progress: bool = False) -> dict:
    """Tables 10-11 for one model: base perplexity, each selection metric's prune sets and perplexities per seed
    and sparsity, and ``random_draws`` random prune sets per sparsity; plus Table 8's prune-set stakes (seed 0).

    Every perplexity is cached (see :mod:`attncoda.engine.perplexity`), so a rerun or an interrupted sweep resumes.
    """
    from ..base.protocol import SPARSITIES
    from ..engine.models import load_model, resolve
    from ..engine.perplexity import heldout_windows, perplexity
    from ..engine.signatures import signature_sets

    sparsities = tuple(sparsities or SPARSITIES)
    started = time.perf_counter()
    loaded = load_model(model, resolve(model))  # needed for perplexity anyway: signatures reuse it instead of loading again
    sigs = signature_sets(model, tuple(seeds), n=signature_n, length=length, loaded=loaded)
    layers, heads, _ = sigs[0].shape
    ids = heldout_windows(loaded.processor, n_windows, length)

    total = 1 + len(seeds) * len(metrics) * len(sparsities) + random_draws * len(sparsities)
    steps = Steps(f"{model}: perplexity evaluations (cached ones are instant)", total)
    done = [0]

    def ppl(flat, label):
        pairs = [(i // heads, i % heads) for i in flat]
        result = perplexity(loaded, ids, pairs, progress=label if progress else None)
        done[0] += 1
        steps.step(done[0])
        return result

    base = ppl([], "base")
    selections = []
    for seed, sig in zip(seeds, sigs):
        rows = sig.heads()
        for metric in metrics:
            dist = selection_distances(rows, metric, sig.sink())
            for sparsity in sparsities:
                chosen = keep_one_selection(dist, layers, heads, sparsity)
                selections.append({"seed": seed, "metric": metric, "sparsity": sparsity, "heads": chosen, **ppl(chosen, f"{metric} {sparsity:g} seed {seed}")})
    randoms = []
    for j, sparsity in enumerate(sparsities):
        rng = np.random.default_rng([12345, j])
        for draw in range(random_draws):
            chosen = random_selection(rng, layers, heads, target_count(sparsity, layers * heads))
            randoms.append({"draw": draw, "sparsity": sparsity, "heads": chosen, **ppl(chosen, f"random {sparsity:g} #{draw}")})
    first = sigs[0]
    stakes = prune_set_stakes(first.heads(), layers, heads, first.sink(), first.sink(first.alternative_sink))
    return {"model": model, "model_info": loaded.info.as_dict(), "layers": layers, "heads": heads, "seeds": list(seeds), "sparsities": list(sparsities),
            "heldout": {"windows": n_windows, "length": length, "tokens": base["tokens"], "kind": base["kind"]},
            "base": base, "selections": selections, "random": randoms, "stakes": {**stakes, "alternative_sink": first.alternative_sink},
            "wall_time_s": time.perf_counter() - started}


def summary_table(result: dict) -> list[dict]:
    """Per metric and sparsity: mean ± sd perplexity over seeds, the random draws' median, and the metric's percentile among them."""
    out = []
    for sparsity in result["sparsities"]:
        draws = [r["perplexity"] for r in result["random"] if r["sparsity"] == sparsity]
        for metric in sorted({s["metric"] for s in result["selections"]}):
            values = [s["perplexity"] for s in result["selections"] if s["metric"] == metric and s["sparsity"] == sparsity]
            mean = float(np.mean(values))
            out.append({"sparsity": sparsity, "metric": metric, "mean": mean, "sd": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
                        "random_median": float(np.median(draws)) if draws else float("nan"), "random_min": float(min(draws)) if draws else float("nan"),
                        "random_max": float(max(draws)) if draws else float("nan"), "percentile": percentile_in(mean, draws) if draws else float("nan")})
    return out
