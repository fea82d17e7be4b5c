"""The multi-model measurement (MATH.md sections 5-8; the paper's Table 2, Figures 3, 4, 7, Tables 5-8).

Everything here works on cached signatures (``signatures.get_signatures``) and
plain numpy; :func:`measure` gathers one model's numbers into a JSON-ready dict.
"""

from __future__ import annotations

import numpy as np

from ..math import coda
from ..math.metrics import get_metric
from ..math.verdicts import closer_verdicts, pairwise, reversal_from_verdicts, sample_triples

REVERSAL_METRICS = ("cosine", "js", "euclidean", "hellinger", "fisher_rao", "content")
CLASSICAL = ("cosine", "js", "euclidean")
SWEEP_METRICS = ("cosine", "js", "euclidean", "hellinger", "content")  # Fisher–Rao verdicts are Hellinger's
TEMPERATURES = (0.5, 0.7, 1.5, 2.0)
N_TRIPLES = 50_000
TEMPER_EPS = float(np.finfo(np.float64).tiny)
"""Zero replacement for tempered signatures: only true underflow. Signatures are strictly positive, and
re-replacing parts that tempering pushed below 1e-6 would break the exact ``clr(p)/τ`` scaling."""


def _pairwise(metric, rows, convention, sink, eps):
    return pairwise(metric, rows, convention, sink, eps, method="gram")


def verdict_table(rows: np.ndarray, metrics, triples: np.ndarray, sink, eps: float) -> dict[str, dict[str, np.ndarray]]:
    """``{metric: {"keep": verdicts, "drop": verdicts}}`` on one set of triples."""
    out = {}
    for name in metrics:
        m = get_metric(name)
        out[name] = {conv: closer_verdicts(_pairwise(m, rows, conv, sink, eps), triples, m.larger_is_closer) for conv in ("keep", "drop")}
    return out


def reversal_summary(verdicts: dict) -> dict[str, dict]:
    return {name: reversal_from_verdicts(name, v["keep"], v["drop"]).as_dict() for name, v in verdicts.items()}


def signature_sink_mass(rows: np.ndarray, sink) -> float:
    """Mean over heads of the signatures' sink mass."""
    return float(coda.sink_mass(rows, sink).mean())


def disagreeing_transitions(entropy, content_entropy) -> np.ndarray:
    """For each adjacent-layer transition: do ``H`` and ``H(π)`` move in opposite directions?"""
    return np.sign(np.diff(entropy)) * np.sign(np.diff(content_entropy)) < 0


def collapse_disagreement(entropy, content_entropy) -> float:
    """Share of adjacent-layer transitions on which ``H`` and ``H(π)`` move in opposite directions."""
    return float(np.mean(disagreeing_transitions(entropy, content_entropy)))


def eps_sweep(sig, metrics, triples, sink, base: dict, base_eps: float = 1e-6) -> dict:
    """Are keep and drop verdicts bit-identical when signatures and zero replacement use each ε of the sweep?

    ``base`` holds the verdicts already computed at ``base_eps``.
    """
    eps_values = [float(e) for e in sig.meta["eps_values"]]
    tables = {e: base if e == base_eps else verdict_table(sig.heads("aitchison", e), metrics, triples, sink, e) for e in eps_values}
    eps_values = [base_eps] + [e for e in eps_values if e != base_eps]
    identical = {}
    for name in metrics:
        identical[name] = all(np.array_equal(tables[e][name][c], base[name][c]) for e in eps_values[1:] for c in ("keep", "drop"))
    differing = {name: int(max(np.sum(tables[e][name][c] != base[name][c]) for e in eps_values[1:] for c in ("keep", "drop"))) for name in metrics}
    return {"eps_values": eps_values, "identical": identical, "all_identical": all(identical.values()), "max_differing_verdicts": differing}


def layer_profile(sig) -> dict[str, list[float]]:
    """Per-layer mean ``H``, ``H(π)``, sink mass and ``C_A^⊥`` over heads and query rows (causal: t >= 1)."""
    return {k: sig.layer_means(k).tolist() for k in ("entropy", "content_entropy", "sink_mass", "concentration")}


def _within_layer_redundancy(dist: np.ndarray, layers: int, heads: int) -> np.ndarray:
    """Distance from each head to the nearest other head of its own layer."""
    out = np.empty(layers * heads)
    for layer in range(layers):
        block = dist[layer * heads : (layer + 1) * heads, layer * heads : (layer + 1) * heads].copy()
        np.fill_diagonal(block, np.inf)
        out[layer * heads : (layer + 1) * heads] = block.min(axis=1)
    return out


def _top_share(values: np.ndarray, share: float = 0.2) -> set[int]:
    k = max(1, int(round(share * len(values))))
    return set(np.argsort(values, kind="stable")[:k].tolist())


def temperature_stakes(rows: np.ndarray, layers: int, heads: int, triples: np.ndarray, sink) -> dict:
    """Table 8, temperature: JS′ (dropped-row JS) verdict flips and top-20 % redundancy-set retention, and the same for ``d_A^⊥``."""
    out = {}
    eps = TEMPER_EPS
    for name in ("js", "content"):
        m = get_metric(name)
        base_dist = _pairwise(m, rows, "drop", sink, eps)
        base_verdicts = closer_verdicts(base_dist, triples, m.larger_is_closer)
        base_set = _top_share(_within_layer_redundancy(base_dist, layers, heads))
        flips, retention = [], []
        for tau in TEMPERATURES:
            dist = _pairwise(m, coda.temper(rows, tau), "drop", sink, eps)
            v = closer_verdicts(dist, triples, m.larger_is_closer)
            flips.append(reversal_from_verdicts(name, base_verdicts, v).rate)
            retention.append(len(_top_share(_within_layer_redundancy(dist, layers, heads)) & base_set) / len(base_set))
        out[name] = {"temperatures": list(TEMPERATURES), "flip_rates": flips, "flip_max": max(flips), "retention": retention, "retention_min": min(retention)}
    return out


def sink_set_stakes(rows: np.ndarray, triples: np.ndarray, eps: float) -> dict:
    """Table 8, sink set: closer-head verdict flip rate between first-token and first-four-token sink sets (JS′ and ``d_A^⊥``)."""
    out = {}
    for name in ("js", "content"):
        m = get_metric(name)
        v = [closer_verdicts(_pairwise(m, rows, "drop", s, eps), triples, m.larger_is_closer) for s in ((0,), (0, 1, 2, 3))]
        out[name] = reversal_from_verdicts(name, *v).rate
    return out


def _clusters(dist: np.ndarray, k: int) -> np.ndarray:
    from scipy.cluster.hierarchy import fcluster, linkage
    from scipy.spatial.distance import squareform

    condensed = squareform((dist + dist.T) / 2, checks=False)
    return fcluster(linkage(condensed, method="average"), k, criterion="maxclust")


def taxonomy_stability(rows: np.ndarray, sink, eps: float, ks=(4, 6, 8)) -> dict[str, float]:
    """Table 5: adjusted Rand index between the average-linkage taxonomies of the heads built with and
    without the sink, mean over ``ks``, for ``1 − cos``, JS, Euclidean and (as a check, exactly 1) ``d_A^⊥``."""
    from sklearn.metrics import adjusted_rand_score

    out = {}
    for name in ("cosine", "js", "euclidean", "content"):
        m = get_metric(name)
        views = []
        for conv in ("keep", "drop"):
            d = _pairwise(m, rows, conv, sink, eps)
            views.append(1.0 - d if m.larger_is_closer else d)
        np.fill_diagonal(views[0], 0.0)
        np.fill_diagonal(views[1], 0.0)
        out[name] = float(np.mean([adjusted_rand_score(_clusters(views[0], k), _clusters(views[1], k)) for k in ks]))
    return out


def audit(rows: np.ndarray, sink, eps: float, pair_sample: int = 2000, seed: int = 0) -> dict:
    """Table 6's audit columns: the share of squared ``d_A^⊥`` carried by log-ratio pairs with an entry below 1e-6,
    and dropped-row JS against ``d_A^⊥``: Spearman correlation of pairwise distances, nearest-neighbour
    agreement, and mean cross-ARI of average-linkage taxonomies over K ∈ {4, 6, 8}."""
    from scipy.stats import spearmanr
    from sklearn.metrics import adjusted_rand_score

    js = _pairwise("js", rows, "drop", sink, eps)
    content = _pairwise("content", rows, "keep", sink, eps)
    upper = np.triu_indices(len(rows), 1)
    rho = float(spearmanr(js[upper], content[upper]).statistic)
    masked_js, masked_c = js + np.diag(np.full(len(rows), np.inf)), content + np.diag(np.full(len(rows), np.inf))
    nn_agreement = float(np.mean(masked_js.argmin(axis=1) == masked_c.argmin(axis=1)))
    cross_ari = float(np.mean([adjusted_rand_score(_clusters(js, k), _clusters(content, k)) for k in (4, 6, 8)]))

    _, content_idx = coda.split_indices(sink, rows.shape[1])
    pi = coda.closure(coda.replace_zeros(rows, eps)[:, content_idx])
    rng = np.random.default_rng(seed)
    a = rng.integers(0, len(rows), pair_sample)
    b = (a + rng.integers(1, len(rows), pair_sample)) % len(rows)
    flagged = total = 0.0
    for i, j in zip(a, b):
        u = np.log(pi[i]) - np.log(pi[j])
        sq = (u[:, None] - u[None, :]) ** 2
        low = np.minimum(pi[i], pi[j]) < 1e-6
        flagged += sq[low[:, None] | low[None, :]].sum()
        total += sq.sum()
    return {"share_below_1e-6": float(flagged / total) if total else 0.0, "spearman": rho, "nn_agreement": nn_agreement, "cross_ari": cross_ari}


def find_witness_triple(rows: np.ndarray, triples: np.ndarray, verdicts: dict, sink, eps: float) -> dict | None:
    """A real triple on which cosine, JS and Euclidean all reverse between conventions (Theorem 1), or None.

    Among qualifying triples it picks the one whose smallest relative verdict gap,
    over the three metrics and both conventions, is largest (the least fragile).
    """
    all_reverse = np.ones(len(triples), dtype=bool)
    for name in CLASSICAL:
        k, d = verdicts[name]["keep"], verdicts[name]["drop"]
        all_reverse &= (k != 0) & (d != 0) & (k != d)
    candidates = np.flatnonzero(all_reverse)
    if len(candidates) == 0:
        return None
    picked = triples[candidates]
    margins = np.full(len(picked), np.inf)
    for name in CLASSICAL:
        m = get_metric(name)
        for conv in ("keep", "drop"):
            p, q, r = (rows[picked[:, i]] for i in range(3))
            dq, dr = m(p, q, conv, sink, eps), m(p, r, conv, sink, eps)
            margins = np.minimum(margins, np.abs(dq - dr) / np.maximum(np.abs(dq) + np.abs(dr), 1e-300))
    best = picked[int(np.argmax(margins))]
    return {"triple": best.tolist(), "share_of_triples": float(len(candidates) / len(triples)), "min_relative_gap": float(margins.max())}


def measure(model: str, seeds=(0, 1, 2), n: int = 64, length: int = 128, n_triples: int = N_TRIPLES, batch_size: int = 8, progress: bool = False) -> dict:
    """Every per-model number of the chapter (signatures from the cache, computed when missing)."""
    from ..engine.models import load_model
    from ..engine.signatures import get_signatures

    loaded, sigs = None, []
    for seed in seeds:
        options = dict(n=n, length=length, seed=seed, batch_size=batch_size, progress=progress)
        sig = get_signatures(model, cache_only=True, loaded=loaded, **options)
        if sig is None:
            loaded = loaded or load_model(model)  # loaded once, only if some seed is not cached
            sig = get_signatures(model, loaded=loaded, **options)
        sigs.append(sig)
    first = sigs[0]
    layers, heads, _ = first.shape
    sink = first.sink()
    eps = 1e-6
    per_seed = []
    for seed, sig in zip(seeds, sigs):
        rows = sig.heads("aitchison", eps)
        triples = sample_triples(len(rows), n_triples, seed)
        verdicts = verdict_table(rows, REVERSAL_METRICS, triples, sink, eps)
        profile = layer_profile(sig)
        entry = {
            "seed": seed,
            "row_sink_mass": sig.row_mean("sink_mass"),
            "signature_sink_mass": signature_sink_mass(rows, sink),
            "reversal": reversal_summary(verdicts),
            "eps_sweep": eps_sweep(sig, SWEEP_METRICS, triples, sink, {m: verdicts[m] for m in SWEEP_METRICS}, eps),
            "collapse_disagreement": collapse_disagreement(profile["entropy"], profile["content_entropy"]),
            "layers": profile,
        }
        if seed == seeds[0]:
            arithmetic = sig.heads("arithmetic")
            entry["arithmetic_reversal"] = reversal_summary(verdict_table(arithmetic, CLASSICAL, triples, sink, eps))
            entry["audit"] = audit(rows, sink, eps, seed=seed)
            entry["taxonomy_ari"] = taxonomy_stability(rows, sink, eps)
            entry["temperature"] = temperature_stakes(rows, layers, heads, triples, sink)
            entry["sink_set"] = sink_set_stakes(rows, triples, eps)
            witness = find_witness_triple(rows, triples, verdicts, sink, eps)
            if witness is not None:
                witness["heads"] = [{"layer": int(i // heads), "head": int(i % heads)} for i in witness["triple"]]
                witness["rows"] = rows[witness["triple"]].tolist()
            entry["witness"] = witness
        per_seed.append(entry)

    def mean_sd(values):
        return {"mean": float(np.mean(values)), "sd": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0}

    summary = {
        "row_sink_mass": mean_sd([e["row_sink_mass"] for e in per_seed]),
        "signature_sink_mass": mean_sd([e["signature_sink_mass"] for e in per_seed]),
        "reversal": {m: mean_sd([e["reversal"][m]["rate"] for e in per_seed]) for m in REVERSAL_METRICS},
        "collapse_disagreement": mean_sd([e["collapse_disagreement"] for e in per_seed]),
        "eps_bit_identical": all(e["eps_sweep"]["all_identical"] for e in per_seed),
    }
    return {"model": model, "model_info": first.meta["model_info"], "protocol": {k: first.meta[k] for k in ("corpus", "corpus_attribution", "n", "length", "batch_size", "eps_values", "default_sink", "sink_sets", "layout", "causal")},
            "weights_sha256": first.meta["weights_sha256"], "layers": layers, "heads": heads, "sink": list(sink), "seeds": list(seeds),
            "n_triples": n_triples, "summary": summary, "per_seed": per_seed}
