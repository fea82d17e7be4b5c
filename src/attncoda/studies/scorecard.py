"""The paper's claims, judged on the record: one rule per claim, each a test with a stated level or tolerance.

A rule reads the numbers a chapter wrote (its results files, as plain mappings: ``record[chapter][name]``) and the
paper's numbers (``data/paper/reference.json``), and returns a :class:`Verdict`: one word of :data:`VERDICTS`, the
numbers it compared, and the test it used. The page modules only word verdicts (:mod:`attncoda.face.scorecard_text`).

The words, defined once (the methods page repeats them):

* **reproduced**: the same reading, within the stated tolerance;
* **differs**: the same direction, another size;
* **reversed**: the opposite direction, decided by a test;
* **undecided**: our test cannot decide;
* **not testable here**: the claim needs a model or data the record lacks.

A rule whose chapter is missing from the record (a reader who ran one chapter) says *not testable here*, so the same
rules judge a reader's own run with the rows that run can touch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from ..math.metrics import CLASSICAL  # the classical metrics of the paper's reversal range and taxonomy table
from .significance import binomial_interval, log_ratio_interval, spearman_permutation, t_interval, trend_test

REPRODUCED, DIFFERS, REVERSED, UNDECIDED, NOT_TESTABLE = "reproduced", "differs", "reversed", "undecided", "not testable here"
VERDICTS = (REPRODUCED, DIFFERS, REVERSED, UNDECIDED, NOT_TESTABLE)

LEVEL = 0.05
"""Every test's two-sided level."""
INTERVAL = 1 - LEVEL
"""Every interval's confidence."""
MIN_MODELS = 5
"""The fewest models a rank correlation over models is tested on (below, no ordering can reach :data:`LEVEL`)."""

TABLE1_TOLERANCE = 5e-5
"""Half a unit in the last of the four decimals the paper prints."""

RATE_TOLERANCE = 0.02
"""Reversal rates within 2 points of the paper's range count as inside it."""

ARI_TOLERANCE = 0.1
"""Between-convention ARIs within 0.1 of the paper's range count as inside it."""

DEVIATION_TOLERANCE_POINTS = 7.5
"""The frozen predictor's own confirmation threshold (mean absolute deviation, percentage points)."""

BLOW_UP = 100.0
"""The paper's "more than a hundredfold" perplexity inflation."""

SINK_GREW = 0.5
"""A run grew a sink when its final (non-trigger) sink mass exceeds this."""



@dataclass(frozen=True)
class Verdict:
    """One claim judged: its key (:data:`CLAIMS`), the verdict word, the numbers compared, the test and its level."""

    claim: str
    verdict: str
    ours: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)
    test: str = ""
    level: float | None = None
    why: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {VERDICTS}, not {self.verdict!r}")


def _missing(claim: str, chapter: str) -> Verdict:
    return Verdict(claim, NOT_TESTABLE, why=f"the record holds no {chapter} results")


def interval_verdict(low: float, high: float, paper_low: float, paper_high: float, null: float = 0.0) -> str:
    """A measured interval against the paper's range, on a scale where the paper's effect lies above ``null``:
    reproduced when they overlap; differs when ours lies wholly above ``null`` but off the range; reversed when it lies
    wholly below ``null``; undecided when it straddles ``null`` off the range.

    >>> [interval_verdict(*x, 0.3, 0.95) for x in ((0.2, 0.5), (0.03, 0.24), (-0.4, -0.1), (-0.01, 0.11))]
    ['reproduced', 'differs', 'reversed', 'undecided']
    """
    if high >= paper_low and low <= paper_high:
        return REPRODUCED
    if low > null:
        return DIFFERS
    if high < null:
        return REVERSED
    return UNDECIDED


def combine(verdicts) -> str:
    """One verdict from several parts (sizes of a ladder, say): reversed if any part is reversed; reproduced if all
    are; else differs if any part differs; else undecided.

    >>> combine([REPRODUCED, REPRODUCED]), combine([REPRODUCED, DIFFERS, UNDECIDED]), combine([REPRODUCED, UNDECIDED])
    ('reproduced', 'differs', 'undecided')
    """
    verdicts = list(verdicts)
    if not verdicts:
        return NOT_TESTABLE
    if REVERSED in verdicts:
        return REVERSED
    if all(v == REPRODUCED for v in verdicts):
        return REPRODUCED
    return DIFFERS if DIFFERS in verdicts else UNDECIDED


# --- Theory -------------------------------------------------------------------------------------------------------

def table1_witness(record: dict, paper: dict) -> Verdict:
    """Table 1: the three hand-written rows give the paper's distances to its printed digits."""
    theory = record.get("theory", {}).get("synthetic")
    if theory is None:
        return _missing("table1", "theory")
    diff = float(theory["table1_max_abs_diff_vs_paper"])
    return Verdict("table1", REPRODUCED if diff <= TABLE1_TOLERANCE else DIFFERS, ours={"max_abs_diff": diff},
                   test="largest absolute difference from the paper's printed values", level=TABLE1_TOLERANCE)


def figure6_rate(record: dict, paper: dict) -> Verdict:
    """Figure 6: the share of the simplex where cosine's verdict reverses, against the paper's 77.9 %."""
    theory = record.get("theory", {}).get("synthetic")
    if theory is None:
        return _missing("figure6", "theory")
    rate, n = float(theory["figure6"]["cosine_reversal_rate"]), int(theory["figure6"]["positions"])
    low, high = binomial_interval(rate, n, LEVEL)
    ref = paper["figure6"]["cosine_reversal_pct"] / 100
    if low <= ref <= high:
        verdict = REPRODUCED
    elif low <= 0.5 <= high:
        verdict = UNDECIDED
    else:
        verdict = DIFFERS if (low > 0.5) == (ref > 0.5) else REVERSED  # the same side of one half: the same majority
    return Verdict("figure6", verdict, ours={"rate": rate, "low": low, "high": high, "positions": n}, paper={"rate": ref},
                   test="Wilson interval over the sampled positions", level=LEVEL)


def curves_rise(record: dict, paper: dict) -> Verdict:
    """Figure 3's curves: on synthetic heads with peaked content, every classical metric's flip rate rises with sink
    mass (Spearman ρ over the grid, exact-permutation p at :data:`LEVEL`, every metric)."""
    calibration = record.get("calibration", {}).get("synthetic")
    if calibration is None:
        return _missing("curves_rise", "calibration")
    grid = calibration["grid"]
    curves = calibration["curves"][str(float(min(grid["alphas"])))]
    parts = {}
    for metric in CLASSICAL:
        rho, p, how = spearman_permutation(grid["sink_masses"], curves[metric])
        parts[metric] = (REPRODUCED if rho > 0 else REVERSED) if p < LEVEL else UNDECIDED
        parts[metric + "_rho"], parts[metric + "_p"] = rho, p
    verdict = combine(parts[m] for m in CLASSICAL)
    return Verdict("curves_rise", verdict, ours={m: {"rho": parts[m + "_rho"], "p": parts[m + "_p"]} for m in CLASSICAL},
                   test=f"Spearman ρ of rate against sink mass over {len(grid['sink_masses'])} grid points, {how} p", level=LEVEL)


# --- The measurement ----------------------------------------------------------------------------------------------

def reversal_range(record: dict, paper: dict) -> Verdict:
    """"17–47 % of closer-head verdicts flip": every model's mean classical rate against the paper's range."""
    models = record.get("measurement", {})
    if not models:
        return _missing("reversal_range", "measurement")
    rates = {name: {m: r["summary"]["reversal"][m]["mean"] for m in CLASSICAL} for name, r in models.items()}
    sds = [r["summary"]["reversal"][m]["sd"] for r in models.values() for m in CLASSICAL]
    values = [v for per in rates.values() for v in per.values()]
    ref = [v for row in paper["table2"]["models"].values() for m in CLASSICAL for v in [row[m][0] / 100]]
    low, high = min(values), max(values)
    inside = low >= min(ref) - RATE_TOLERANCE and high <= max(ref) + RATE_TOLERANCE
    some_zero = any(max(per[m] for per in rates.values()) == 0 for m in CLASSICAL)
    verdict = REPRODUCED if inside else REVERSED if some_zero else DIFFERS if low > 0 else UNDECIDED
    return Verdict("reversal_range", verdict, ours={"low": low, "high": high, "models": len(models), "largest_sd": max(sds)},
                   paper={"low": 0.17, "high": 0.47, "table2_low": min(ref), "table2_high": max(ref)},
                   test=f"every model's mean rate inside the paper's range, give or take {100 * RATE_TOLERANCE:g} points",
                   level=RATE_TOLERANCE)


def rates_rise_with_sink(record: dict, paper: dict) -> Verdict:
    """"Flip rates rise with sink mass", across the measured models: Spearman ρ of each model's mean classical rate
    against its signature sink mass, exact permutation p (two-sided, :data:`LEVEL`); fewer than 5 models cannot decide."""
    models = record.get("measurement", {})
    if not models:
        return _missing("rates_rise", "measurement")
    sinks = [r["summary"]["signature_sink_mass"]["mean"] for r in models.values()]
    rates = [float(np.mean([r["summary"]["reversal"][m]["mean"] for m in CLASSICAL])) for r in models.values()]
    if len(models) < MIN_MODELS:
        return Verdict("rates_rise", UNDECIDED, ours={"models": len(models)}, test="Spearman ρ, exact permutation p",
                       level=LEVEL, why=f"fewer than {MIN_MODELS} models")
    rho, p, how = spearman_permutation(sinks, rates)
    verdict = (REPRODUCED if rho > 0 else REVERSED) if p < LEVEL else UNDECIDED
    return Verdict("rates_rise", verdict, ours={"rho": rho, "p": p, "models": len(models)},
                   test=f"Spearman ρ over models, two-sided {how} p", level=LEVEL)


def content_flips_none(record: dict, paper: dict) -> Verdict:
    """"The content distance flips none": its reversal rate is exactly zero on every model and seed."""
    models = record.get("measurement", {})
    if not models:
        return _missing("content_none", "measurement")
    reversed_ = sum(s["reversal"]["content"]["reversed"] for r in models.values() for s in r["per_seed"])
    compared = sum(s["reversal"]["content"]["compared"] for r in models.values() for s in r["per_seed"])
    largest = reversed_ / compared if compared else 0.0
    return Verdict("content_none", REPRODUCED if largest == 0 else DIFFERS, ours={"rate": largest, "reversed": reversed_, "compared": compared,
                                                                                      "models": len(models)},
                   paper={"rate": 0.0}, test="exact: no triple of any model or seed reverses", level=0.0)


def calibration_deviation(record: dict, paper: dict) -> Verdict:
    """Figure 3's deviation of real models from the frozen curves (the paper: 4.8 points mean, 13 max): a t interval
    over models of each model's mean absolute deviation, against the predictor's confirmation threshold."""
    models = record.get("measurement", {})
    if not models:
        return _missing("deviation", "measurement")
    v1 = [r["predictor"]["v1"] for r in models.values() if r.get("predictor", {}).get("v1", {}).get("mean_abs_deviation_points") is not None]
    if not v1:
        return Verdict("deviation", UNDECIDED, test="t interval over models", level=LEVEL, why="no model was placed on the curves")
    means = [p["mean_abs_deviation_points"] for p in v1]
    worst = max(p["max_abs_deviation_points"] for p in v1)
    mean, low, high = t_interval(means, LEVEL)
    verdict = REPRODUCED if high <= DEVIATION_TOLERANCE_POINTS else DIFFERS if low > DEVIATION_TOLERANCE_POINTS else UNDECIDED
    return Verdict("deviation", verdict, ours={"mean": mean, "low": low, "high": high, "max": worst, "models": len(means)},
                   paper=dict(paper["figure3"]), test=f"t interval over models, against the {DEVIATION_TOLERANCE_POINTS:g}-point threshold",
                   level=LEVEL)


def predictor_record(record: dict, paper: dict) -> Verdict:
    """The frozen predictor's record (the paper: one confirmation, one abstention, one failure): reproduced when ours
    is mixed too (at least one confirmation and one failure), differs when it is one-sided."""
    models = record.get("measurement", {})
    if not models:
        return _missing("predictor", "measurement")
    outcomes = [r["predictor"]["v1"]["outcome"] for r in models.values()]
    counts = {o: outcomes.count(o) for o in ("confirmation", "abstention", "failure")}
    decided = counts["confirmation"] + counts["failure"]
    verdict = UNDECIDED if decided == 0 else REPRODUCED if counts["confirmation"] and counts["failure"] else DIFFERS
    return Verdict("predictor", verdict, ours=counts, paper={"confirmation": 1, "abstention": 1, "failure": 1},
                   test="outcomes of the frozen v1 rule, counted", level=None)


def taxonomy_stability(record: dict, paper: dict) -> Verdict:
    """Table 5: between-convention ARI of the head taxonomies; the paper's classical ARIs lie near 0 and the content
    distance's is 1. Reproduced when every model's content ARI is 1 and its classical ARIs lie in the paper's range
    give or take :data:`ARI_TOLERANCE`; differs when they lie below 1 but outside; reversed when one reaches 1."""
    models = record.get("measurement", {})
    if not models:
        return _missing("taxonomy", "measurement")
    aris = {name: {m: float(np.mean([s["taxonomy_ari"][m] for s in r.get("per_seed", []) if s.get("taxonomy_ari")]))
                   for m in (*CLASSICAL, "content")} for name, r in models.items()
            if any(s.get("taxonomy_ari") for s in r.get("per_seed", []))}
    if not aris:
        return Verdict("taxonomy", NOT_TESTABLE, why="no taxonomy was measured")
    ref = [v for row in paper["table5"]["models"].values() for v in row.values()]
    classical = [a[m] for a in aris.values() for m in CLASSICAL]
    content_one = all(abs(a["content"] - 1) < 1e-12 for a in aris.values())
    if not content_one or max(classical) >= 1 - 1e-12:
        verdict = REVERSED
    elif min(classical) >= min(ref) - ARI_TOLERANCE and max(classical) <= max(ref) + ARI_TOLERANCE:
        verdict = REPRODUCED
    else:
        verdict = DIFFERS
    return Verdict("taxonomy", verdict, ours={"low": min(classical), "high": max(classical), "content_one": content_one, "models": len(aris)},
                   paper={"low": min(ref), "high": max(ref)}, test=f"range of ARIs against the paper's, give or take {ARI_TOLERANCE}",
                   level=ARI_TOLERANCE)


def temperature_invariance(record: dict, paper: dict) -> Verdict:
    """Table 8: one logit temperature for every row changes no content-distance verdict (exactly) and some JS′
    verdicts. Reproduced when the content flip rate is 0 on every model and seed and JS′ flips some on each."""
    models = record.get("measurement", {})
    seeds = [s["temperature"] for r in models.values() for s in r.get("per_seed", []) if s.get("temperature")]
    if not seeds:
        return _missing("temperature", "measurement")
    content = max(s["content"]["flip_max"] for s in seeds)
    js = [s["js"]["flip_max"] for s in seeds]
    verdict = REPRODUCED if content == 0 and min(js) > 0 else DIFFERS
    ref = [row["temp_flip_max"] for row in paper["table8"]["models"].values()]
    return Verdict("temperature", verdict, ours={"content": content, "js_low": min(js), "js_high": max(js)},
                   paper={"content": 0.0, "js_low": min(ref), "js_high": max(ref)},
                   test="exact: the content distance's largest flip rate over temperatures is 0", level=0.0)


# --- Collapse -------------------------------------------------------------------------------------------------------

def _ladder(record: dict) -> list[dict] | None:
    suite = record.get("collapse", {}).get("suite")
    if suite is None:
        return None
    return [s for s in suite.get("sizes", []) if s.get("kind") == "ladder"]


def collapse_share(record: dict, paper: dict) -> Verdict:
    """"Most of the entropy fall is the sink (30–95 %)": each ladder size's mean share over seeds (t interval) against
    the paper's range (:func:`interval_verdict`), combined over sizes (:func:`combine`)."""
    sizes = _ladder(record)
    ref = list(paper["figure5"]["pythia_shares"].values())
    if not sizes:
        return _series_share(record, ref)
    per_size = {}
    for s in sizes:
        shown = s["shares"]["pooled (shown)"]
        per_size[s["group"]] = {"mean": shown["mean"], "low": shown["low"], "high": shown["high"],
                                "verdict": interval_verdict(shown["low"], shown["high"], min(ref), max(ref))}
    return Verdict("collapse_share", combine(v["verdict"] for v in per_size.values()), ours=per_size,
                   paper={"low": min(ref), "high": max(ref)}, test="t interval over seeds per size, against the paper's range",
                   level=LEVEL)


def _series_share(record: dict, ref: list) -> Verdict:
    """A reader's checkpoint series (one model, no seeds): its share from step 0 (or from the peak, where the chapter
    used one) as a point: inside the paper's range it is reproduced; outside, one run without resamples is undecided."""
    series = [s for r in record.get("collapse", {}).values() for s in r.get("series", [])]
    shares = []
    for s in series:
        start = next((v for k, v in s.get("shares", {}).items() if isinstance(v, dict) and v.get("used") and "share" in v), None) \
            or s.get("shares", {}).get("from_step0", {})
        if start.get("share") is not None and start["share"] == start["share"]:
            shares.append((s["name"], float(start["share"])))
    if not shares:
        return _missing("collapse_share", "collapse")
    per = {name: {"mean": v, "low": v, "high": v, "verdict": REPRODUCED if min(ref) <= v <= max(ref) else UNDECIDED}
           for name, v in shares}  # one run per series: outside the range, no test can say by how much
    return Verdict("collapse_share", combine(v["verdict"] for v in per.values()), ours=per, paper={"low": min(ref), "high": max(ref)},
                   test="each series' share (one run each: a point, no interval), against the paper's range", level=None)


def share_rises_with_scale(record: dict, paper: dict) -> Verdict:
    """"The share rises with scale": a trend test of the share along the ladder's sizes, the runs (seeds) as the unit
    (:func:`~attncoda.studies.significance.trend_test`, two-sided at :data:`LEVEL`)."""
    sizes = _ladder(record)
    if not sizes or len(sizes) < 2:
        return _missing("share_scale", "collapse")
    groups = [[v for v in s["shares"]["pooled (shown)"]["values"] if v is not None and v == v] for s in sizes]
    if sum(len(g) > 0 for g in groups) < 2:
        return Verdict("share_scale", UNDECIDED, test="Jonckheere–Terpstra trend over sizes", level=LEVEL, why="fewer than two sizes with a share")
    shift, p, how = trend_test(groups)
    grew = [sum(m > SINK_GREW for m in s["final_other_sink"]) for s in sizes]
    verdict = (REPRODUCED if shift > 0 else REVERSED) if p < LEVEL else UNDECIDED
    return Verdict("share_scale", verdict, ours={"means": [float(np.mean(g)) for g in groups], "p": p, "sizes": [s["group"] for s in sizes],
                                                  "grew": grew, "seeds": [len(g) for g in groups]},
                   paper=dict(paper["figure5"]["pythia_shares"]), test=f"Jonckheere–Terpstra trend over sizes, {how} p", level=LEVEL,
                   why="" if all(g == n for g, n in zip(grew, (len(x) for x in groups))) else "not every size grew a sink")


def run_correlations(series: list[dict], metric: str = "js") -> list[tuple[str, float]]:
    """Spearman ρ of a run's reversal rate with its signature sink mass over its checkpoints, one per run that has at
    least five checkpoints with a head triple (3 heads) and a varying rate: checkpoints of one run are not independent,
    so each ρ describes its run, and the runs are the unit of any test over them."""
    from scipy.stats import spearmanr

    rhos = []
    for s in series:
        pts = [(p["signature_sink_mass"], p["reversal"][metric]) for p in s.get("points", [])
               if p.get("heads", 0) >= 3 and p["reversal"].get(metric) is not None and p["reversal"][metric] == p["reversal"][metric]]
        if len(pts) >= 5 and len({x for x, _ in pts}) > 1 and len({y for _, y in pts}) > 1:
            rhos.append((s["name"], float(spearmanr(*zip(*pts))[0])))
    return rhos


def training_rates_rise(record: dict, paper: dict) -> Verdict:
    """Figure 5a: across training, the JS flip rate rises with the signatures' sink mass. Each run gives one ρ over its
    checkpoints (:func:`run_correlations`); an exact two-sided sign test over runs decides at :data:`LEVEL`, and says
    undecided where too few runs could never reach it."""
    from scipy.stats import binomtest

    series = [s for r in record.get("collapse", {}).values() for s in r.get("series", [])]
    if not series:
        return _missing("training_rise", "collapse")
    rhos = run_correlations(series)
    up = sum(r > 0 for _, r in rhos)
    smallest = 2 * 0.5 ** len(rhos) if rhos else 1.0
    p = float(binomtest(up, len(rhos), 0.5).pvalue) if rhos else 1.0
    verdict = UNDECIDED if smallest >= LEVEL or p >= LEVEL else REPRODUCED if up > len(rhos) / 2 else REVERSED
    return Verdict("training_rise", verdict, ours={"runs": len(rhos), "up": up, "p": p, "smallest_p": smallest, "rhos": dict(rhos)},
                   test="exact two-sided sign test over runs of each run's Spearman ρ", level=LEVEL,
                   why="too few runs to reach the level" if rhos and smallest >= LEVEL else "" if rhos else "no run has five checkpoints with a head triple")


# --- Clustering -----------------------------------------------------------------------------------------------------

def clustering_artifact(record: dict, paper: dict) -> Verdict:
    """Table 9: with the sink kept, JS clustering finds a [SEP]-head family that dropping the sink loses. Testable only
    on a model that has [SEP] heads; there, each sample's keep-minus-drop Jaccard (median over K) enters a sign test."""
    models = record.get("clustering", {})
    if not models:
        return _missing("clustering", "clustering")
    with_sep = {n: r for n, r in models.items() if r.get("head_sets", {}).get("sep", {}).get("members")}
    cross = [row["js_cross_ari"] for r in models.values() for row in r.get("table9", []) if row.get("js_cross_ari") is not None]
    ours = {"models": len(models), "with_sep": len(with_sep), "js_cross_low": min(cross, default=math.nan), "js_cross_high": max(cross, default=math.nan)}
    if not with_sep:
        return Verdict("clustering", NOT_TESTABLE, ours=ours, why="no offline model has [SEP] heads")
    from scipy.stats import binomtest

    gaps = []
    for r in with_sep.values():
        for sample in r["table9_samples"]["per_sample"]:
            keep = [row["js_sep_jaccard_keep"] for row in sample if row.get("js_sep_jaccard_keep") is not None]
            drop = [row["js_sep_jaccard_drop"] for row in sample if row.get("js_sep_jaccard_drop") is not None]
            if keep and drop:
                gaps.append(float(np.median(keep) - np.median(drop)))
    wins, losses = sum(g > 0 for g in gaps), sum(g < 0 for g in gaps)
    p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
    verdict = (REPRODUCED if wins > losses else REVERSED) if p < LEVEL else UNDECIDED
    return Verdict("clustering", verdict, ours={**ours, "wins": wins, "losses": losses, "p": p},
                   test="sign test over samples of the keep-minus-drop [SEP] Jaccard", level=LEVEL)


# --- Pruning --------------------------------------------------------------------------------------------------------

def pruning_blow_up(record: dict, paper: dict) -> Verdict:
    """"Pruning by the wrong channel inflates perplexity more than a hundredfold": the largest JS-with-sink cell, its
    seeds' median perplexities over the unpruned one (geometric mean, t interval of the log), against 100×."""
    models = record.get("pruning", {})
    if not models:
        return _missing("blow_up", "pruning")
    best = None
    for name, r in models.items():
        base = next(s["perplexity"] for s in r["scored"] if s["kind"] == "base")
        for cell in r["readings"]["cells"]:
            if cell["metric"] != "js_keep":
                continue
            ratio, low, high = log_ratio_interval(cell["seed_medians"], base, LEVEL)
            if best is None or ratio > best["ratio"]:
                best = {"model": name, "sparsity": cell["sparsity"], "ratio": ratio, "low": low, "high": high, "base": base,
                        "perplexity": cell["geometric_mean"]}
    if best is None:
        return _missing("blow_up", "pruning")
    verdict = REPRODUCED if best["low"] > BLOW_UP else DIFFERS if best["low"] > 1 and best["high"] < BLOW_UP else \
        REVERSED if best["high"] < 1 else UNDECIDED
    ref = paper["table10"]["models"]["Llama-3.2-1B"]
    return Verdict("blow_up", verdict, ours=best,
                   paper={"model": "Llama-3.2-1B", "sparsity": 0.2, "js": ref["rows"]["0.2"]["js_keep"][0], "base": ref["base"][0],
                          "ratio": ref["rows"]["0.2"]["js_keep"][0] / ref["base"][0]},
                   test="t interval over seeds of the log ratio to the unpruned perplexity, against 100×", level=LEVEL)


def js_worse_than_content(record: dict, paper: dict) -> Verdict:
    """"JS pruning is worse than content-distance pruning" (the paper's Llama): every JS-with-sink against d_A^⊥
    contrast the tests decide (Holm-adjusted at :data:`LEVEL`) votes; all for JS worse is reproduced, all for JS better
    reversed, none decided or mixed undecided."""
    models = record.get("pruning", {})
    if not models:
        return _missing("js_worse", "pruning")
    pairs = [c for r in models.values() for c in r["readings"]["contrasts"] if {c["a"], c["b"]} == {"js_keep", "content"}]
    decided = [c for c in pairs if c["p_holm"] < LEVEL]
    js_better = sum((c["ratio"] < 1) == (c["a"] == "js_keep") for c in decided)
    js_worse = len(decided) - js_better
    verdict = UNDECIDED if not decided or (js_better and js_worse) else REVERSED if js_better else REPRODUCED
    llama, gpt2 = paper["table10"]["models"]["Llama-3.2-1B"]["rows"]["0.2"], paper["table10"]["models"]["GPT-2 (124M)"]["rows"]["0.2"]
    return Verdict("js_worse", verdict, ours={"pairs": len(pairs), "decided": len(decided), "js_better": js_better, "js_worse": js_worse,
                                               "models": len(models)},
                   paper={"llama_js": llama["js_keep"][0], "llama_content": llama["content"][0], "gpt2_js": gpt2["js_keep"][0],
                          "gpt2_content": gpt2["content"][0]},
                   test="hierarchical-bootstrap contrasts over seeds, Holm-adjusted", level=LEVEL)


RULES = {
    "table1": table1_witness,
    "figure6": figure6_rate,
    "curves_rise": curves_rise,
    "reversal_range": reversal_range,
    "rates_rise": rates_rise_with_sink,
    "content_none": content_flips_none,
    "taxonomy": taxonomy_stability,
    "clustering": clustering_artifact,
    "collapse_share": collapse_share,
    "share_scale": share_rises_with_scale,
    "training_rise": training_rates_rise,
    "blow_up": pruning_blow_up,
    "js_worse": js_worse_than_content,
    "predictor": predictor_record,
    "deviation": calibration_deviation,
    "temperature": temperature_invariance,
}
"""Every claim's rule, in the scorecard's order."""

CHAPTER_CLAIMS = {
    "theory": ("table1", "figure6"),
    "calibration": ("curves_rise",),
    "measurement": ("reversal_range", "rates_rise", "content_none", "deviation", "predictor"),
    "measurement-audits": ("taxonomy", "temperature"),
    "clustering": ("clustering",),
    "collapse": ("collapse_share", "share_scale", "training_rise"),
    "pruning": ("js_worse", "blow_up"),
}
"""The claims each chapter answers, first the one its page opens with."""


def judge(record: dict, paper: dict, claims=None) -> list[Verdict]:
    """Every claim's verdict (or those named in ``claims``), in :data:`RULES` order."""
    return [RULES[key](record, paper) for key in (claims or RULES)]


def chapter_verdicts(chapter: str, results: dict, paper: dict) -> list[Verdict]:
    """The verdicts a chapter's page opens with, on that chapter's own results (``{name: results}``): the book's models
    or a reader's own."""
    record = {chapter: results}
    if chapter.startswith("measurement"):
        record["measurement"] = results
    return judge(record, paper, CHAPTER_CLAIMS.get(chapter, ()))
