"""The paper's claims, judged on the record: each claim quoted from the paper, one tested rule per claim (the
scorecard's rules; the words are :mod:`attncoda.face.claims_text`).

Two kinds of row:

* a **check** (:data:`MATH`) tests mathematics that correct code cannot fail (an identity, an exact value, a Monte
  Carlo share of the simplex): *reproduced* when it holds, *differs* when it does not, which would be a bug;
* a **claim about models** (:data:`MODELS`) is judged in three steps. First its premise: can our evidence test it at
  all (enough models, a wide enough span of sizes, an effect that exists here)? If not, *not testable here*, with the
  reason and the command that tests it where the Hub is reachable. Then each independent unit (a model, a ladder size,
  a sample) gives an interval on the claim's scale, judged against the paper's range by :func:`unit_verdict`. Then
  :func:`combine` joins the units' verdicts.

The words, defined once (the methods page repeats them):

* **reproduced**: the paper's direction, decided by an interval or test, and (for a claim with a size) a reading that
  overlaps the paper's range;
* **differs**: the paper's direction, decided, but off the paper's range;
* **reversed**: the opposite direction, decided;
* **undecided**: our interval or test cannot decide: it straddles the null, or a reading of one seed lies off the
  paper's range (one seed cannot show a difference);
* **not testable here**: the premise fails: the claim needs models or data the record lacks.

Every claim about models also states the paper's own numbers as units, and a test holds that the rule passes them
(*reproduced*), reverses them when they are mirrored about the claim's null, and says *differs* when they are moved
off the paper's range on the same side. A rule whose chapter is missing from the record (a reader who ran one
chapter) says *not testable here*, so the same rules judge a reader's own run with the rows that run can touch.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..math.metrics import CLASSICAL, STAKES  # the classical metrics; the pair Table 8 compares (JS′, d_A^⊥)
from .significance import binomial_interval, log_ratio_interval, spearman_permutation, t_interval

REPRODUCED, DIFFERS, REVERSED, UNDECIDED, NOT_TESTABLE = "reproduced", "differs", "reversed", "undecided", "not testable here"
VERDICTS = (REPRODUCED, DIFFERS, REVERSED, UNDECIDED, NOT_TESTABLE)

MATH, MODELS = "mathematics", "models"
"""The two groups of rows: checks of the mathematics, and claims about models."""

LEVEL = 0.05
"""Every test's two-sided significance level."""
CONFIDENCE = 1 - LEVEL
"""Every interval's confidence."""

EXACT = 1e-9
"""The largest residual an exact identity may show in float64 (a relative or absolute error)."""

TABLE1_TOLERANCE = 5e-5
"""Half a unit in the last of the four decimals the paper prints."""

FIGURE2_TOLERANCE = 0.05
"""Figure 2's relative changes (entropy, concentration) within 5 points of the paper's, on synthetic rows."""

MIN_MODELS = 4
"""The fewest models a trend over models is fitted on (a slope's t interval then has 2 degrees of freedom)."""

MIN_SINK_SPAN = 0.25
"""A trend in sink mass needs models whose signature sink masses span at least this much of the scale."""

MIN_SCALE_SPAN = 10.0
"""A claim about scale needs sizes spanning at least this factor of parameters, each of which grew a sink."""

SINK_GREW = 0.5
"""A training run grew a sink when its final (non-trigger) sink mass exceeds this."""

ON_MODELS = "every measured model's signatures, every seed"
"""The scope of a check of the mathematics that runs on the measured models rather than on synthetic rows."""

PRUNING_SPARSITY = 0.2
"""The sparsity the paper's pruning claims are printed at (its Tables 10 and 11)."""


@dataclass(frozen=True)
class Verdict:
    """One claim judged: its key, the verdict word, the numbers compared, the test, its level, the reason and scope."""

    claim: str
    verdict: str
    ours: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)
    test: str = ""
    level: float | None = None
    why: str = ""
    scope: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {VERDICTS}, not {self.verdict!r}")


# --- One comparison for every row -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Unit:
    """One independent unit's reading on a claim's scale: an interval (``low == high`` for a point) and, where a test
    rather than the interval decides the direction, that test's side (+1 the paper's, -1 the other, 0 undecided).
    ``resampled`` is False for a reading of one seed with no resample behind it: it can agree with the paper's range,
    but cannot show that it differs from it (the paper's own numbers are taken as stated)."""

    name: str
    low: float
    high: float
    side: int | None = None
    resampled: bool = True

    @property
    def value(self) -> float:
        return (self.low + self.high) / 2 if math.isfinite(self.low + self.high) else self.low


def overlaps(low: float, high: float, paper_low: float, paper_high: float) -> bool:
    """Whether a reading's interval meets the paper's range: the one range comparison of every row.

    >>> overlaps(0.2, 0.5, 0.3, 0.95), overlaps(0.03, 0.24, 0.3, 0.95)
    (True, False)
    """
    return high >= paper_low and low <= paper_high


def side_of(unit: Unit, null: float | None, direction: int = 1) -> int:
    """The side of ``null`` a unit's interval lies on, counted +1 on the paper's side (above ``null`` when
    ``direction`` is 1, below when -1), -1 on the other, 0 when it straddles ``null``; a test's side where it gave one.
    A claim without a null (a size only) is always on the paper's side.

    >>> side_of(Unit("a", 0.1, 0.2), 0.0), side_of(Unit("a", -0.2, 0.1), 0.0), side_of(Unit("a", 0.3, 0.4), 0.5, -1)
    (1, 0, 1)
    """
    if unit.side is not None:
        return unit.side
    if null is None:
        return 1
    if direction * (unit.low - null) > 0 and direction * (unit.high - null) > 0:
        return 1
    if direction * (unit.low - null) < 0 and direction * (unit.high - null) < 0:
        return -1
    return 0


def unit_verdict(unit: Unit, null: float | None, paper_range: tuple[float, float], direction: int = 1) -> str:
    """One unit against the paper: reversed on the other side of ``null``, undecided across it, else reproduced where
    the interval overlaps the paper's range (:func:`overlaps`) and differs where it does not.

    >>> [unit_verdict(Unit("u", *x), 0.0, (0.3, 0.95)) for x in ((0.2, 0.5), (0.03, 0.24), (-0.4, -0.1), (-0.01, 0.11))]
    ['reproduced', 'differs', 'reversed', 'undecided']
    """
    side = side_of(unit, null, direction)
    if side == 0:
        return UNDECIDED
    verdict = REVERSED if side < 0 else REPRODUCED if overlaps(unit.low, unit.high, *paper_range) else DIFFERS
    return verdict if verdict == REPRODUCED or unit.resampled else UNDECIDED  # one seed cannot show a difference


def combine(verdicts) -> str:
    """One verdict from the units': reversed if any unit is reversed (one counterexample reverses a claim about every
    model); reproduced if all are; else differs if any differs; else undecided.

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


def seed_interval(name: str, values) -> Unit:
    """A unit from its seeds' values: the t interval of their mean (:data:`CONFIDENCE`), or the value itself as a
    point where only one seed carries it."""
    values = [float(v) for v in values if v is not None and v == v]
    if len(values) < 2:
        return Unit(name, values[0], values[0], resampled=False)
    _, low, high = t_interval(values, LEVEL)
    return Unit(name, low, high)


def paper_interval(name: str, mean: float, sd: float, n: int = 3, scale: float = 1.0) -> Unit:
    """A unit from a printed mean ± sd over ``n`` seeds: the same t interval as ours."""
    from scipy.stats import t

    half = float(t.ppf(1 - LEVEL / 2, n - 1)) * sd / math.sqrt(n)
    return Unit(name, (mean - half) * scale, (mean + half) * scale)


# --- Claims ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    """A claim of the paper about models, and how our record and the paper's numbers are read for it.

    ``units(record)`` and ``paper_units(paper)`` return the independent units on the claim's scale; ``premise(record)``
    returns the reason the record cannot test the claim, or ''. ``null`` is the no-effect value (None for a claim of
    size only); the paper's side of it is above when ``direction`` is 1, below when -1. ``paper_range(paper)`` is the
    range the paper states, (low, high), with an infinite end for a claim of direction only.
    """

    key: str
    quote: str
    place: str
    chapter: str
    needs: str
    units: Callable[[dict], list]
    paper_units: Callable[[dict], list] | None
    paper_range: Callable[[dict], tuple]
    null: float | None
    test: str
    scope: Callable[[dict], str]
    premise: Callable[[dict], str] = lambda record: ""
    direction: int = 1
    level: float | None = LEVEL
    group: str = MODELS
    no_paper_numbers: str = ""  # why the paper's own numbers cannot be put to the rule (a plot with no printed values)
    detail: Callable[[dict], dict] | None = None  # numbers the page shows beside the units


@dataclass(frozen=True)
class Check:
    """A check of the mathematics: ``holds(record, paper)`` returns (passed, the numbers behind it), or None when the record
    lacks the chapter it reads."""

    key: str
    quote: str
    place: str
    chapter: str
    needs: str
    holds: Callable[[dict], tuple | None]
    test: str
    level: float | None = None
    group: str = MATH
    scope: str = "synthetic rows"


def judge_units(units: list[Unit], claim: Claim, paper: dict) -> tuple[str, dict]:
    """A claim's verdict on some units, with each unit's verdict."""
    paper_range = claim.paper_range(paper)
    each = {u.name: unit_verdict(u, claim.null, paper_range, claim.direction) for u in units}
    return combine(each.values()), each


def judge_claim(claim, record: dict, paper: dict) -> Verdict:
    """One row's verdict: a check's pass or fail, or a claim's premise, units and combined verdict."""
    if claim.needs and not record.get(claim.needs):
        return Verdict(claim.key, NOT_TESTABLE, test=claim.test, level=claim.level,
                       why=f"the record holds no {claim.needs} results")
    if isinstance(claim, Check):
        result = claim.holds(record, paper)
        if result is None:
            return Verdict(claim.key, NOT_TESTABLE, test=claim.test, why=f"the record holds no {claim.needs} results")
        passed, ours = result
        return Verdict(claim.key, REPRODUCED if passed else DIFFERS, ours=ours, test=claim.test, level=claim.level, scope=claim.scope)
    scope = claim.scope(record)
    why = claim.premise(record)
    if why:
        return Verdict(claim.key, NOT_TESTABLE, test=claim.test, level=claim.level, why=why, scope=scope)
    units = claim.units(record)
    if not units:
        return Verdict(claim.key, NOT_TESTABLE, test=claim.test, level=claim.level, why="no unit of the record carries this reading",
                       scope=scope)
    verdict, each = judge_units(units, claim, paper)
    low, high = claim.paper_range(paper)
    ours = {"units": [(u.name, u.low, u.high, each[u.name]) for u in units]}
    if claim.detail:
        ours["detail"] = claim.detail(record)
    return Verdict(claim.key, verdict, ours=ours,
                   paper={"low": low, "high": high}, test=claim.test, level=claim.level, scope=scope)


# --- Reading the record ---------------------------------------------------------------------------------------------

def _measured(record: dict) -> dict:
    return record.get("measurement", {})


def _per_seed(result: dict, *path):
    """One value per seed along ``path`` in a measurement result (None where a seed lacks it)."""
    out = []
    for s in result.get("per_seed", []):
        v = s
        for key in path:
            v = v.get(key) if isinstance(v, dict) else None
        out.append(v)
    return out


def _models_scope(models: dict, unit: str = "seeds") -> str:
    """'5 models (2 encoders, 3 decoders; 22–494 M parameters), 3 seeds each' from the record's model info."""
    if not models:
        return ""
    info = [r.get("model_info", {}) for r in models.values()]
    causal = sum(bool(i.get("causal")) for i in info)
    seeds = {len(r.get("seeds", r.get("per_seed", []))) for r in models.values()}
    kinds = ", ".join(part for part in (f"{len(info) - causal} encoder{'s' if len(info) - causal != 1 else ''}" if len(info) > causal else "",
                                        f"{causal} decoder{'s' if causal != 1 else ''}" if causal else "") if part)
    names = ", ".join(models)
    seed_text = f"; {max(seeds)} {unit} each" if seeds and max(seeds) > 1 else ""
    return f"{len(models)} models ({kinds}: {names}){seed_text}"


def _chapter_scope(chapter: str, unit: str = "seeds", stand_in: str = "") -> Callable[[dict], str]:
    def scope(record):
        text = _models_scope(record.get(chapter, {}), unit)
        return text + (f"; {stand_in}" if text and stand_in else "")
    return scope


def _classical_units(record: dict) -> list[Unit]:
    return [seed_interval(f"{name} {m}", _per_seed(r, "reversal", m, "rate")) for name, r in _measured(record).items() for m in CLASSICAL]


def _paper_table2_units(paper: dict) -> list[Unit]:
    return [paper_interval(f"{name} {m}", *row[m], scale=0.01) for name, row in paper["table2"]["models"].items() for m in CLASSICAL]


def _slope_unit(name: str, x, y) -> Unit:
    """The least-squares slope of ``y`` on ``x`` with its t interval (n - 2 degrees of freedom)."""
    from scipy.stats import linregress, t

    fit = linregress(x, y)
    half = float(t.ppf(1 - LEVEL / 2, len(x) - 2)) * fit.stderr
    return Unit(name, fit.slope - half, fit.slope + half)


def _mean_classical(r: dict) -> float:
    return float(np.mean([r["summary"]["reversal"][m]["mean"] for m in CLASSICAL]))


def _rates_premise(record: dict) -> str:
    models = _measured(record)
    if len(models) < MIN_MODELS:
        return f"a trend over models needs at least {MIN_MODELS}; the record has {len(models)}"
    sinks = [r["summary"]["signature_sink_mass"]["mean"] for r in models.values()]
    if max(sinks) - min(sinks) < MIN_SINK_SPAN:
        return f"our models' signature sink masses span {min(sinks):.2f}–{max(sinks):.2f}, under the {MIN_SINK_SPAN:g} a trend needs"
    return ""


def _in_calibration_domain(r: dict) -> bool:
    """Whether a model lies where the frozen curves were calibrated: a causal model with a one-key sink set (the
    domain the frozen predictor v2 states; an encoder's signatures average every row, and its sink set has two keys)."""
    return bool(r.get("model_info", {}).get("causal")) and len(r.get("sink", [])) == 1


def _conflation_units(record: dict) -> list[Unit]:
    """Per model, over seed 0's adjacent-layer transitions (the unit here): the share where H falls while H(π) does not,
    among transitions where the sink mass rises, against the same share where it falls; Fisher's exact test (two-sided,
    :data:`LEVEL`) decides the side."""
    from scipy.stats import fisher_exact

    units = []
    for name, r in _measured(record).items():
        layers = next((s["layers"] for s in r.get("per_seed", []) if s.get("layers")), None)
        if not layers or len(layers["entropy"]) < 3:
            continue
        dh, dc, dm = (np.diff(np.asarray(layers[k], float)) for k in ("entropy", "content_entropy", "sink_mass"))
        conflated, up, down = (dh < 0) & (dc >= 0), dm > 0, dm < 0
        a, b, c, d = (int(x.sum()) for x in (conflated & up, ~conflated & up, conflated & down, ~conflated & down))
        if not (a + b) or not (c + d):
            units.append(Unit(name, 0.0, 0.0, side=0))
            continue
        share_up, share_down = a / (a + b), c / (c + d)
        p = float(fisher_exact([[a, b], [c, d]])[1])
        side = (1 if share_up > share_down else -1) if p < LEVEL else 0
        units.append(Unit(f"{name} ({a} of {a + b} rising, {c} of {c + d} falling)", share_up, share_up, side=side))
    return units


def _deviation_units(record: dict) -> list[Unit]:
    """Each in-domain model's and classical metric's distance from the frozen curve (points), t interval over seeds."""
    units = []
    for name, r in _measured(record).items():
        predicted = (r.get("predictor", {}).get("v1") or {}).get("predicted") or {}
        if not _in_calibration_domain(r) or not predicted:
            continue
        units += [seed_interval(f"{name} {m}", [100 * abs(rate - predicted[m]) for rate in _per_seed(r, "reversal", m, "rate")])
                  for m in CLASSICAL if m in predicted]
    return [Unit(u.name, max(0.0, u.low), u.high, u.side, u.resampled) for u in units]  # a distance is never below 0


def _deviation_premise(record: dict) -> str:
    outside = [n for n, r in _measured(record).items() if not _in_calibration_domain(r)]
    inside = len(_measured(record)) - len(outside)
    return "" if inside else f"none of our models lies in the curves' domain (causal, one sink key): {', '.join(outside)}"


def _deviation_scope(record: dict) -> str:
    models = _measured(record)
    inside = [n for n, r in models.items() if _in_calibration_domain(r)]
    outside = [n for n in models if n not in inside]
    return (f"{len(inside)} models in the curves' domain (causal, one sink key: {', '.join(inside)}), 3 seeds each"
            + (f"; {', '.join(outside)} lie outside it and are left out" if outside else ""))


def _predictor_counts(outcomes) -> Unit:
    """The share of confirmations among the decided models (confirmations and failures), with its exact
    (Clopper–Pearson) interval."""
    from scipy.stats import binomtest

    confirmed, failed = outcomes.count("confirmation"), outcomes.count("failure")
    if confirmed + failed == 0:
        return Unit("decided models", 0.0, 1.0, side=0)
    ci = binomtest(confirmed, confirmed + failed).proportion_ci(CONFIDENCE, method="exact")
    return Unit(f"{confirmed} of {confirmed + failed} decided", float(ci.low), float(ci.high))


MIN_DECIDED = 10
"""The fewest decided models (confirmations and failures) whose confirmation share has a 95 % interval narrower than
about ±0.3 (5 of 10: 0.19 to 0.81); below it a record of outcomes is a count that no interval can place."""


def _predictor_premise(record: dict) -> str:
    outcomes = [r["predictor"]["v1"]["outcome"] for r in _measured(record).values()]
    decided = sum(o in ("confirmation", "failure") for o in outcomes)
    if decided >= MIN_DECIDED:
        return ""
    unit = _predictor_counts(outcomes)
    return f"{decided} decided models cannot place a confirmation share (95 % interval {unit.low:.2f}–{unit.high:.2f}; {MIN_DECIDED} needed)"


def _paper_predictor(paper: dict) -> list[Unit]:
    counts = paper["abstract"]["predictor"]
    return [_predictor_counts(["confirmation"] * counts["confirmation"] + ["failure"] * counts["failure"])]


def _paper_predictor_range(paper: dict) -> tuple:
    counts = paper["abstract"]["predictor"]
    share = counts["confirmation"] / (counts["confirmation"] + counts["failure"])
    return share, share


def _ari_units(record: dict) -> list[Unit]:
    return [seed_interval(f"{name} {m}", _per_seed(r, "taxonomy_ari", m)) for name, r in _measured(record).items()
            for m in CLASSICAL if any(v is not None for v in _per_seed(r, "taxonomy_ari", m))]


def _seed_units(path, name_suffix: str = "") -> Callable[[dict], list[Unit]]:
    def units(record):
        seeds = {name: _per_seed(r, *path) for name, r in _measured(record).items()}
        return [seed_interval(name + name_suffix, vals) for name, vals in seeds.items() if any(v is not None for v in vals)]
    return units


def _range_of(values) -> tuple:
    values = list(values)
    return min(values), max(values)


def _clustering_cross_units(record: dict) -> list[Unit]:
    units = []
    for name, r in record.get("clustering", {}).items():
        samples = (r.get("table9_samples") or {}).get("per_sample") or []
        medians = [float(np.median([row["js_cross_ari"] for row in s if row.get("js_cross_ari") is not None])) for s in samples]
        medians = [m for m in medians if m == m]
        if medians:
            units.append(seed_interval(name, medians))
    return units


def _with_sep(record: dict) -> dict:
    return {n: r for n, r in record.get("clustering", {}).items() if (r.get("head_sets") or {}).get("sep", {}).get("members")}


def _sep_premise(record: dict) -> str:
    if _with_sep(record):
        return ""
    encoders = [n for n, r in record.get("clustering", {}).items() if r.get("table9")]
    others = len(record.get("clustering", {})) - len(encoders)
    return (f"no [SEP] heads in our {len(encoders)} encoder{'s' if len(encoders) != 1 else ''}"
            + (f"; {others} other models have no [SEP] token" if others else ""))


def _sep_units(record: dict) -> list[Unit]:
    units = []
    for name, r in _with_sep(record).items():
        gaps = []
        for sample in r["table9_samples"]["per_sample"]:
            keep = [row["js_sep_jaccard_keep"] for row in sample if row.get("js_sep_jaccard_keep") is not None]
            drop = [row["js_sep_jaccard_drop"] for row in sample if row.get("js_sep_jaccard_drop") is not None]
            if keep and drop:
                gaps.append(float(np.median(keep) - np.median(drop)))
        if gaps:
            units.append(seed_interval(name, gaps))
    return units


def _endpoints(record: dict) -> dict:
    return (record.get("collapse", {}).get("suite") or {}).get("endpoints") or {}


def _endpoint_units(record: dict) -> list[Unit]:
    units = []
    for name, e in _endpoints(record).items():
        spread = e.get("spread") or {}
        if spread.get("low") is not None:
            units.append(Unit(name, float(spread["low"]), float(spread["high"])))
    return units


def _endpoint_premise(record: dict) -> str:
    ends = _endpoints(record)
    if not ends:
        return "the record holds no pretrained model's fall from its random initialisation"
    grew = [n for n, e in ends.items() if e["reading"]["trained"]["sink_mass"] > e["reading"]["init"]["sink_mass"]]
    return "" if grew else "no model's sink mass grew from its random initialisation to its trained weights"


def _ladder(record: dict) -> list[dict]:
    suite = record.get("collapse", {}).get("suite") or {}
    return [s for s in suite.get("sizes", []) if s.get("kind") == "ladder"]


def _parameters(group: str) -> float | None:
    """A ladder size's parameter count, from its label ('… (0.24 M parameters)')."""
    found = re.search(r"([\d.]+) M parameters", group)
    return float(found.group(1)) * 1e6 if found else None


def _grown_sizes(record: dict) -> list[dict]:
    return [s for s in _ladder(record) if s["final_other_sink"] and all(m > SINK_GREW for m in s["final_other_sink"])]


def _scale_premise(record: dict) -> str:
    """A claim about scale: sizes of one family spanning :data:`MIN_SCALE_SPAN` in parameters, each with a sink."""
    sizes = _ladder(record)
    series = [s for r in record.get("collapse", {}).values() for s in r.get("series", [])]
    if not sizes:
        return "the record holds no ladder of sizes" + (" (only checkpoint series of single models)" if series else "")
    params = [p for p in (_parameters(s["group"]) for s in sizes) if p]
    span = max(params) / min(params) if params else 1.0
    grown = len(_grown_sizes(record))
    if span < MIN_SCALE_SPAN:
        return f"our ladder spans {span:.1f}× in parameters, under the {MIN_SCALE_SPAN:g}× needed; a sink grew at {grown} of {len(sizes)} sizes"
    if grown < len(sizes):
        return f"a sink grew in every seed at only {grown} of the ladder's {len(sizes)} sizes"
    return ""


def _scale_units(record: dict) -> list[Unit]:
    sizes = _grown_sizes(record)
    x = [math.log10(_parameters(s["group"])) for s in sizes for _ in s["shares"]["pooled (shown)"]["values"]]
    y = [v for s in sizes for v in s["shares"]["pooled (shown)"]["values"]]
    return [_slope_unit("share per decade of parameters", x, y)] if len(set(x)) > 2 else []


def _paper_scale_units(paper: dict) -> list[Unit]:
    shares, params = paper["figure5"]["pythia_shares"], paper["figure5"]["pythia_parameters_millions"]
    return [_slope_unit("Pythia, share per decade", [math.log10(params[k] * 1e6) for k in shares], list(shares.values()))]


def _ladder_scope(record: dict) -> str:
    sizes = _ladder(record)
    if not sizes:
        return ""
    params = [p for p in (_parameters(s["group"]) for s in sizes) if p]
    seeds = max(len(s["final_other_sink"]) for s in sizes)
    return (f"a toy ladder of {len(sizes)} sizes ({min(params) / 1e6:.2f}–{max(params) / 1e6:.2f} M parameters), {seeds} seeds each, "
            f"standing in for Pythia 70M–1.4B")


def _endpoint_scope(record: dict) -> str:
    ends = _endpoints(record)
    if not ends:
        return ""
    return (f"{len(ends)} pretrained models ({', '.join(ends)}), each from a random initialisation to its trained weights "
            f"(one fall per model, the range over window and initialisation seeds), standing in for Pythia's checkpoints")


def _pruning(record: dict) -> dict:
    return record.get("pruning", {})


def _wrong_channel_cells(record: dict) -> list[dict]:
    """The JS-with-sink prune cells that are worse than random sets of the same size (Holm-adjusted, :data:`LEVEL`)."""
    return [c for r in _pruning(record).values() for c in r["readings"]["cells"]
            if c["metric"] == "js_keep" and c["p_holm"] < LEVEL and c["direction"] == "worse than random"]


def _blow_up_premise(record: dict) -> str:
    cells = [c for r in _pruning(record).values() for c in r["readings"]["cells"] if c["metric"] == "js_keep"]
    if _wrong_channel_cells(record):
        return ""
    better = sum(c["p_holm"] < LEVEL and c["direction"] == "better than random" for c in cells)
    return f"JS-with-sink pruning is worse than random sets in 0 of {len(cells)} cells ({better} better, the rest indistinguishable)"


def _blow_up_units(record: dict) -> list[Unit]:
    """The wrong-channel cell with the largest lower bound: its perplexity over the unpruned one."""
    units = []
    wrong = _wrong_channel_cells(record)
    for name, r in _pruning(record).items():
        base = next(s["perplexity"] for s in r["scored"] if s["kind"] == "base")
        for c in (c for c in r["readings"]["cells"] if c in wrong):
            _, low, high = log_ratio_interval(c["seed_medians"], base, LEVEL)
            units.append(Unit(f"{name} at {c['sparsity']:.0%}", low, high))
    return [max(units, key=lambda u: u.low)] if units else []


def _paper_blow_up(paper: dict) -> list[Unit]:
    llama = paper["table10"]["models"]["Llama-3.2-1B"]
    mean, sd = llama["rows"][str(PRUNING_SPARSITY)]["js_keep"]
    return [paper_interval("Llama-3.2-1B at 20 %", mean, sd, scale=1 / llama["base"][0])]


def _channel_units(record: dict) -> list[Unit]:
    """Per model: whether JS-with-sink and d_A^⊥ pruning differ, from the contrast with the smallest Holm p, on the
    scale |log(JS perplexity / d_A^⊥ perplexity)|."""
    units = []
    for name, r in _pruning(record).items():
        pairs = [c for c in r["readings"]["contrasts"] if {c["a"], c["b"]} == {"js_keep", "content"}]
        if not pairs:
            continue
        best = min(pairs, key=lambda c: c["p_holm"])
        logs = sorted(abs(math.log(v)) for v in (best["low"], best["high"]))
        low = 0.0 if best["low"] < 1 < best["high"] else logs[0]
        units.append(Unit(name, low, max(logs), side=1 if best["p_holm"] < LEVEL else 0))
    return units


def _paper_channel(paper: dict) -> list[Unit]:
    units = []
    for name, m in paper["table10"]["models"].items():
        row = m["rows"][str(PRUNING_SPARSITY)]
        js, content = paper_interval("js", *row["js_keep"]), paper_interval("content", *row["content"])
        logs = sorted(abs(math.log(a / b)) for a, b in ((js.low, content.high), (js.high, content.low)))
        units.append(Unit(name, logs[0], logs[1]))
    return units


def _channel_detail(record: dict) -> dict:
    pairs = [c for r in _pruning(record).values() for c in r["readings"]["contrasts"] if {c["a"], c["b"]} == {"js_keep", "content"}]
    decided = [c for c in pairs if c["p_holm"] < LEVEL]
    js_better = sum((c["ratio"] < 1) == (c["a"] == "js_keep") for c in decided)
    return {"pairs": len(pairs), "decided": len(decided), "js_better": js_better, "js_worse": len(decided) - js_better}


def _witness_units(record: dict) -> list[Unit]:
    units = []
    for name, r in _measured(record).items():
        w = next((s["witness"] for s in r.get("per_seed", []) if s.get("witness")), None)
        if w is not None:
            found = round(w.get("share_of_triples", 0.0) * r.get("n_triples", 0)) if w.get("triple") else 0
            units.append(Unit(name, found, found))
    return units


def _audit_units(key: str) -> Callable[[dict], list[Unit]]:
    def units(record):
        return [Unit(name, v, v, resampled=False) for name, r in _measured(record).items()
                if (v := next((s.get("audit", {}).get(key) for s in r.get("per_seed", []) if s.get("audit")), None)) is not None]
    return units


def _table6_range(column: str) -> Callable[[dict], tuple]:
    return lambda paper: _range_of(row[column] for row in paper["table6"]["models"].values())


def _table6_units(column: str) -> Callable[[dict], list[Unit]]:
    return lambda paper: [Unit(name, row[column], row[column]) for name, row in paper["table6"]["models"].items()]


def _table8_range(*columns) -> Callable[[dict], tuple]:
    return lambda paper: _range_of(row[c] for row in paper["table8"]["models"].values() for c in columns)


def _table8_units(*columns) -> Callable[[dict], list[Unit]]:
    return lambda paper: [Unit(f"{name} {c}", row[c], row[c]) for name, row in paper["table8"]["models"].items() for c in columns]


def _sink_set_units(record: dict) -> list[Unit]:
    """Each causal model's flip rate between the first key and the first four as its sink set (seed 0, a point); an
    encoder's alternative sink set is another manipulation ([CLS] against [CLS] and [SEP]), so it is left out."""
    return [Unit(f"{name} {m}", v, v, resampled=False) for name, r in _measured(record).items() if r.get("model_info", {}).get("causal")
            for s in r.get("per_seed", [])[:1] if s.get("sink_set") for m in STAKES if (v := s["sink_set"].get(m)) is not None]


def _causal_scope(record: dict) -> str:
    causal = [n for n, r in _measured(record).items() if r.get("model_info", {}).get("causal")]
    return f"{len(causal)} causal models ({', '.join(causal)}), seed 0 (as the paper); the encoders' alternative sink set is another manipulation"


def _arithmetic_units(record: dict) -> list[Unit]:
    return [Unit(f"{name} {m}", v, v, resampled=False) for name, r in _measured(record).items()
            for s in r.get("per_seed", [])[:1] if s.get("arithmetic_reversal") for m in CLASSICAL
            if (v := s["arithmetic_reversal"].get(m, {}).get("rate")) is not None]


def _paper_table7(paper: dict) -> list[Unit]:
    return [Unit(f"{name} {m}", v, v) for name, row in paper["table7"]["models"].items() for m, v in row["arithmetic"].items()]


def _table7_range(paper: dict) -> tuple:
    return _range_of(v for row in paper["table7"]["models"].values() for v in row["arithmetic"].values())


def _paper_lm_sinks(paper: dict) -> list[Unit]:
    """The mean row sink mass of the paper's language models (Table 2; its ViT-B/16, an image model that puts 0.04 on its
    sink, is left out: with it the paper's own numbers would not support its sentence), t interval over models."""
    means = [row["row_sink"] for name, row in paper["table2"]["models"].items() if not name.startswith("ViT")]
    _, low, high = t_interval(means, LEVEL)
    return [Unit(f"mean of its {len(means)} language models", low, high)]


def _sink_units(record: dict) -> list[Unit]:
    """The mean row sink mass over models (each model's mean over its seeds), t interval over models: the models are
    the unit of a claim about trained models."""
    means = [r["summary"]["row_sink_mass"]["mean"] for r in _measured(record).values() if not r.get("model_info", {}).get("vision")]
    if len(means) < 2:
        return [Unit(f"{len(means)} model", means[0], means[0], resampled=False)] if means else []
    _, low, high = t_interval(means, LEVEL)
    return [Unit(f"mean of {len(means)} models", low, high)]


def _theory(record):
    return record.get("theory", {}).get("synthetic")


def _check_table1(record, paper):
    t = _theory(record)
    if t is None:
        return None
    diff = float(t["table1_max_abs_diff_vs_paper"])
    return diff <= TABLE1_TOLERANCE, {"max_abs_diff": diff}


def _check_figure6(record, paper):
    t = _theory(record)
    if t is None:
        return None
    rate, n = float(t["figure6"]["cosine_reversal_rate"]), int(t["figure6"]["positions"])
    low, high = binomial_interval(rate, n, LEVEL)
    ref = paper["figure6"]["cosine_reversal_pct"] / 100
    return low <= ref <= high, {"rate": rate, "low": low, "high": high, "positions": n, "paper": ref}


def _check_figure2(record, paper):
    t = _theory(record)
    if t is None or "figure2" not in t:
        return None
    ref = paper["figure2"]

    def changes(panel):
        h, c = panel["entropy"], panel["concentration"]
        return {"entropy": h[-1] / h[0] - 1, "concentration": c[-1] / c[0] - 1}

    ours = {k: changes(t["figure2"][k]) for k in ("a", "b")}
    theirs = {k: changes(ref[k]) for k in ("a", "b")}
    worst = max(abs(ours[k][q] - theirs[k][q]) / (max(1.0, abs(theirs[k][q])) if q == "concentration" else 1.0)
                for k in ours for q in ours[k])
    return worst <= FIGURE2_TOLERANCE, {"ours": ours, "paper": theirs, "worst": worst}


def _check_curves(record, paper):
    cal = record.get("calibration", {}).get("synthetic")
    if cal is None:
        return None
    grid = cal["grid"]
    curves = cal["curves"][str(float(min(grid["alphas"])))]
    parts = {m: spearman_permutation(grid["sink_masses"], curves[m]) for m in CLASSICAL}
    passed = all(rho > 0 and p < LEVEL for rho, p, _ in parts.values())
    return passed, {m: {"rho": rho, "p": p} for m, (rho, p, _) in parts.items()} | {"points": len(grid["sink_masses"])}


def _all_seeds(record, *path):
    return [v for r in _measured(record).values() for v in _per_seed(r, *path) if v is not None]


def _check_content_none(record, paper):
    if not _measured(record):
        return None
    reversed_, compared = sum(_all_seeds(record, "reversal", "content", "reversed")), sum(_all_seeds(record, "reversal", "content", "compared"))
    return reversed_ == 0, {"reversed": reversed_, "compared": compared}


def _check_lemma1(record, paper):
    if not _measured(record):
        return None
    worst = max(r["summary"]["lemma1_max_relative_residual"] for r in _measured(record).values())
    return worst <= EXACT, {"residual": worst, "models": len(_measured(record))}


def _check_entropy_identity(record, paper):
    t = _theory(record)
    if t is None or "entropy_identity_max_residual" not in t:
        return None
    worst = float(t["entropy_identity_max_residual"])
    return worst <= EXACT, {"residual": worst}


def _check_hellinger(record, paper):
    if not _measured(record):
        return None
    pairs = list(zip(_all_seeds(record, "reversal", "hellinger", "reversed"), _all_seeds(record, "reversal", "fisher_rao", "reversed")))
    return bool(pairs) and all(a == b for a, b in pairs), {"pairs": len(pairs), "equal": sum(a == b for a, b in pairs)}


def _check_eps(record, paper):
    if not _measured(record):
        return None
    models = _measured(record)
    same = [bool(r["summary"]["eps_bit_identical"]) for r in models.values()]
    return all(same), {"identical": sum(same), "models": len(same)}


def _check_table4(record, paper):
    t = _theory(record)
    if t is None or "table4_agrees_with_paper" not in t:
        return None
    cells = sum(len(row) for row in t["table4"].values())
    return bool(t["table4_agrees_with_paper"]), {"cells": cells}


def _check_temperature_content(record, paper):
    seeds = _all_seeds(record, "temperature", "content")
    if not seeds:
        return None
    flips, retention = max(s["flip_max"] for s in seeds), min(s["retention_min"] for s in seeds)
    return flips == 0 and retention == 1, {"flip_max": flips, "retention_min": retention, "seeds": len(seeds)}


def _check_taxonomy_content(record, paper):
    aris = _all_seeds(record, "taxonomy_ari", "content")
    aris += [row["content_cross_ari"] for r in record.get("clustering", {}).values() for row in r.get("table9", [])
             if row.get("content_cross_ari") is not None]
    if not aris:
        return None
    return all(a == 1 for a in aris), {"aris": len(aris), "lowest": min(aris)}


CHECKS = (
    Check("table1", "All three classical verdicts reverse", "Table 1 caption", "1", "theory", _check_table1,
          "largest absolute difference from the paper's printed values, at most half its last digit", TABLE1_TOLERANCE),
    Check("figure6", "The reversal region is not thin", "Figure 6 caption", "1", "theory", _check_figure6,
          "Wilson interval over the sampled positions contains the paper's share", LEVEL, scope="20,000 sampled positions of the simplex"),
    Check("figure2", "Entropy conflates sink strength with content spread", "Figure 2 caption", "1", "theory", _check_figure2,
          f"relative changes of entropy and concentration within {FIGURE2_TOLERANCE:g} of the paper's, both panels", FIGURE2_TOLERANCE),
    Check("table4", "the content distance is characterized by invariances the transformer itself possesses", "Abstract", "1",
          "theory", _check_table4, "every cell of the invariance matrix, tested on random rows, equals the paper's"),
    Check("entropy_identity", "entropy splits by an exact identity", "Abstract", "1", "theory", _check_entropy_identity,
          f"largest residual of the identity, at most {EXACT:g}", EXACT),
    Check("curves_rise", "Monte Carlo closer-head disagreement rates between sink conventions for cosine, JS, and Euclidean "
          "distance, computed before any pretrained model was run", "Figure 3 caption", "2", "calibration", _check_curves,
          "each curve rises with sink mass: Spearman ρ over the grid, exact permutation p", LEVEL, scope="synthetic heads of the calibration grid (our own Monte Carlo curves)"),
    Check("lemma1", "the Aitchison distance splits orthogonally into a sink term and a content term", "Abstract", "3",
          "measurement", _check_lemma1, f"largest relative residual of the split on measured signatures, at most {EXACT:g}", EXACT, scope=ON_MODELS),
    Check("content_none", "its rate is zero by construction", "Table 2 caption", "3", "measurement", _check_content_none,
          "exact: no triple of any model or seed reverses", 0.0, scope=ON_MODELS),
    Check("hellinger_fr", "Fisher–Rao is identical since both are strictly monotone in the Bhattacharyya coefficient",
          "Table 2 caption", "3", "measurement", _check_hellinger, "exact: the same reversed count on every model and seed", 0.0, scope=ON_MODELS),
    Check("eps_sweep", "bit-identical across the \\varepsilon sweep", "Table 2 caption", "3", "measurement", _check_eps,
          "exact: every verdict the same bits at every ε, every model", 0.0, scope=ON_MODELS),
    Check("taxonomy_content", "with ARI =1 verified in code", "Table 5 caption", "3.2", "measurement", _check_taxonomy_content,
          "exact: every d_A^⊥ taxonomy's between-convention ARI is 1", 0.0, scope=ON_MODELS),
    Check("temperature_content", "values are exactly 0 and 1 on every model, verified to the bit", "Table 8 caption", "3.2",
          "measurement", _check_temperature_content, "exact: d_A^⊥ flips 0 verdicts and keeps the whole prune set at every temperature", 0.0, scope=ON_MODELS),
)
"""The checks of the mathematics, in the scorecard's order."""


CLAIMS = (
    Claim("sink_premise", "in trained models most of that probability lands on a single sink token, usually the first", "Abstract",
          "3", "measurement", _sink_units, _paper_lm_sinks, lambda paper: (0.5, math.inf), 0.5,
          "the mean row sink mass over models (t interval over models) against one half",
          _chapter_scope("measurement", stand_in="the paper's four language models (its ViT-B/16 puts 0.04 on its sink)")),
    Claim("reversal_range", "17--47% of verdicts about which of two heads is more similar flip with the convention", "Abstract",
          "3", "measurement", _classical_units, _paper_table2_units,
          lambda paper: tuple(v / 100 for v in paper["table2"]["reversal_range_pct"]), 0.0,
          "each model's and classical metric's flip rate (t interval over seeds) against the paper's range",
          _chapter_scope("measurement", stand_in="standing in for the paper's ten models")),
    Claim("rates_rise", "Rates rise with signature sink mass", "Table 2 caption", "3", "measurement",
          lambda record: [_slope_unit("slope over models", [r["summary"]["signature_sink_mass"]["mean"] for r in _measured(record).values()],
                                      [_mean_classical(r) for r in _measured(record).values()])],
          lambda paper: [_slope_unit("slope over Table 2's five models", [row["sig_sink"] for row in paper["table2"]["models"].values()],
                                     [np.mean([row[m][0] / 100 for m in CLASSICAL]) for row in paper["table2"]["models"].values()])],
          lambda paper: (0.0, math.inf), 0.0, "least-squares slope of the mean classical rate on signature sink mass, t interval over models",
          _chapter_scope("measurement"), premise=_rates_premise),
    Claim("collapse_disagreement", "H reports deepening collapse that the content channel does not show", "Figure 4 caption", "3.1",
          "measurement", _conflation_units, None, lambda paper: (0.0, math.inf), 0.0,
          "per model, where the sink rises against where it falls: the share of layer transitions with H falling and H(π) not "
          "(seed 0, transitions as units), Fisher's exact test",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0's layers)"),
          no_paper_numbers="Figure 4 is a plot, and Table 2 prints only the overall share of transitions where H and H(π) disagree"),
    Claim("deviation", "mean absolute deviation from the solid curves is 4.8 points (max 13", "Figure 3 caption", "3", "measurement",
          _deviation_units, lambda paper: [Unit("mean", p := paper["figure3"]["mean_abs_deviation_points"], p),
                                           Unit("max", q := paper["figure3"]["max_deviation_points"], q)],
          lambda paper: (0.0, paper["figure3"]["max_deviation_points"]), None,
          "each in-domain model's and classical metric's distance from the frozen α = 0.1 curve (t interval over seeds), against the paper's largest",
          _deviation_scope, premise=_deviation_premise),
    Claim("predictor", "one confirmation, one abstention, one failure", "Abstract", "3", "measurement",
          lambda record: [_predictor_counts([r["predictor"]["v1"]["outcome"] for r in _measured(record).values()])],
          _paper_predictor, _paper_predictor_range, 0.0,
          "share of confirmations among the models the frozen rule decides, exact binomial interval",
          lambda record: _models_scope(_measured(record)) + "; outcomes: " + ", ".join(
              f"{n} {r['predictor']['v1']['outcome']}" for n, r in _measured(record).items()), premise=_predictor_premise),
    Claim("witness", "A measured Llama-3.2-1B head triple realizing Theorem 1", "Figure 7 caption", "3.3", "measurement",
          _witness_units, lambda paper: [Unit(paper["figure7"]["model"], paper["figure7"]["triples_shown"], paper["figure7"]["triples_shown"])],
          lambda paper: (1.0, math.inf), 0.0, "head triples of seed 0 where cosine, JS and Euclidean all reverse and d_A^⊥ does not, counted",
          _chapter_scope("measurement", unit="seeds (witnesses from seed 0)"), level=None),
    Claim("taxonomy", "Measured taxonomy stability across sink conventions", "Table 5 caption", "3.2", "measurement", _ari_units,
          lambda paper: [Unit(f"{n} {m}", v, v) for n, row in paper["table5"]["models"].items() for m, v in row.items()],
          lambda paper: _range_of(v for row in paper["table5"]["models"].values() for v in row.values()), 1.0,
          "each model's and classical metric's between-convention ARI (seed 0), against Table 5's range and 1",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0)"), direction=-1),
    Claim("aggregation", "Aggregation robustness", "Table 7 caption", "3.2", "measurement", _arithmetic_units, _paper_table7, _table7_range, 0.0,
          "each model's and classical metric's flip rate on arithmetic-mean signatures (seed 0, as the paper), against Table 7's range",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0)")),
    Claim("small_parts", "carried by coordinate pairs with smaller entry below 10^{-6}", "Table 6 caption", "3.2", "measurement",
          _audit_units("share_below_small_part"), _table6_units("share_below_1e-6"), _table6_range("share_below_1e-6"), None,
          "each model's share of squared d_A^⊥ from pairs with an entry below 1e-6 (seed 0, as the paper), against Table 6's range",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0)")),
    Claim("js_content_rho", "Spearman correlation of pairwise distances", "Table 6 caption", "3.2", "measurement",
          _audit_units("spearman"), _table6_units("spearman"), _table6_range("spearman"), 0.0,
          "each model's Spearman ρ between dropped-row JS and d_A^⊥ over head pairs (seed 0, as the paper), against Table 6's range",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0)")),
    Claim("temperature", "worst-case dropped-JS verdict flip rate", "Table 8 caption", "3.2", "measurement",
          _seed_units(("temperature", "js", "flip_max")), _table8_units("temp_flip_max"), _table8_range("temp_flip_max"), 0.0,
          "each model's largest JS′ flip rate over four temperatures (seed 0, as the paper), against Table 8's range",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0)")),
    Claim("retention", "prune-set retention", "Table 8 caption", "3.2", "measurement",
          _seed_units(("temperature", "js", "retention_min")), _table8_units("retention_min"), _table8_range("retention_min"), 1.0,
          "each model's smallest top-20 % prune-set retention under JS′ over four temperatures (seed 0), against Table 8's range and 1",
          _chapter_scope("measurement", unit="seeds (this reading on seed 0)"), direction=-1),
    Claim("sink_set", "closer-head verdict flip rate between the first-token and first-four-token sink definitions", "Table 8 caption",
          "3.2", "measurement", _sink_set_units, _table8_units("sinkset_js", "sinkset_content"), _table8_range("sinkset_js", "sinkset_content"),
          0.0, "each causal model's flip rate between the first key and the first four as sink set, JS′ and d_A^⊥ (seed 0), against Table 8's range",
          _causal_scope),
    Claim("js_cross_ari", "Cross = between-convention ARI", "Table 9 caption", "5", "clustering", _clustering_cross_units,
          lambda paper: [Unit(f"K {row['K']}", row["js_cross"], row["js_cross"]) for row in paper["table9"]["rows"]],
          lambda paper: _range_of(row["js_cross"] for row in paper["table9"]["rows"]), 1.0,
          "each encoder's JS clustering ARI between conventions (median over K, t interval over window samples), against Table 9's range and 1",
          lambda record: f"{len(_clustering_cross_units(record))} sentence encoders with clustering samples, standing in for BERT-base",
          premise=_sep_premise, direction=-1),
    Claim("clustering", "the most prominent structure in a standard BERT head-clustering pipeline is an artifact of it", "Abstract", "5",
          "clustering", _sep_units, lambda paper: [Unit(f"K {row['K']}", d := row["js_sep_keep"] - row["js_sep_drop"], d) for row in paper["table9"]["rows"]],
          lambda paper: (0.0, math.inf), 0.0, "[SEP]-head Jaccard kept minus dropped (median over K, t interval over window samples)",
          _chapter_scope("clustering"), premise=_sep_premise),
    Claim("collapse_share", "most measured entropy collapse during training is the sink growing, not attention sharpening", "Abstract",
          "4", "collapse", _endpoint_units, lambda paper: [Unit(n, v, v) for n, v in paper["figure5"]["pythia_shares"].items()],
          lambda paper: _range_of(paper["figure5"]["pythia_shares"].values()), 0.0,
          "each pretrained model's sink share of its entropy fall from a random initialisation (range over 5 window and initialisation "
          "seeds), against the paper's 30–95 % (its own 70M share is 30 %, so 'most' is read as that range)",
          _endpoint_scope, premise=_endpoint_premise),
    Claim("share_scale", "30% of the drop at 70M parameters, 95% at 1B", "Abstract", "4", "collapse", _scale_units, _paper_scale_units,
          lambda paper: (0.0, math.inf), 0.0, "least-squares slope of the share on log parameters, t interval over runs",
          _ladder_scope, premise=_scale_premise),
    Claim("training_rise", "(a) reversal tracks sink mass, which strengthens with scale within each family", "Figure 5 caption", "4",
          "collapse", lambda record: [], None, lambda paper: (0.0, math.inf), 0.0,
          "rise of the reversal rate and sink mass with size within one family", _ladder_scope, premise=_scale_premise,
          no_paper_numbers="Figure 5a is a plot: the paper prints no numbers for it"),
    Claim("blow_up", "pruning heads with the wrong channel can inflate perplexity more than a hundredfold", "Abstract", "6", "pruning",
          _blow_up_units, _paper_blow_up, lambda paper: (paper["abstract"]["blow_up_fold"], math.inf), 1.0,
          "the worst wrong-channel cell's perplexity over the unpruned one (t interval of the log over seeds), against 100×",
          _chapter_scope("pruning"), premise=_blow_up_premise),
    Claim("channel", "The separation matters in practice", "Abstract", "6", "pruning", _channel_units, _paper_channel,
          lambda paper: (0.0, math.inf), 0.0,
          "per model, whether JS-with-sink and d_A^⊥ pruning differ: hierarchical-bootstrap contrasts over seeds, Holm-adjusted",
          _chapter_scope("pruning"), detail=_channel_detail),
)
"""The claims about models, in the scorecard's order."""

ROWS = {row.key: row for row in (*CHECKS, *CLAIMS)}
"""Every row of the scorecard, by key, checks first."""

RULES = {key: (lambda record, paper, _row=row: judge_claim(_row, record, paper)) for key, row in ROWS.items()}
"""Every row's rule, ``RULES[key](record, paper) -> Verdict``, in the scorecard's order."""

CHAPTER_CLAIMS = {
    "theory": ("table1", "figure6", "figure2"),
    "calibration": ("curves_rise",),
    "measurement": ("reversal_range", "sink_premise", "rates_rise", "deviation", "predictor"),
    "measurement-audits": ("small_parts", "taxonomy", "temperature"),
    "clustering": ("clustering", "js_cross_ari"),
    "collapse": ("collapse_share", "share_scale", "training_rise"),
    "pruning": ("blow_up", "channel"),
}
"""The claims each chapter answers, first the one its page opens with."""


def judge(record: dict, paper: dict, claims=None) -> list[Verdict]:
    """Every row's verdict (or those named in ``claims``), in :data:`ROWS` order."""
    return [RULES[key](record, paper) for key in (claims or ROWS)]


def judge_paper(claim: Claim, paper: dict, units: list[Unit] | None = None) -> str:
    """The verdict a claim's rule gives the paper's own numbers (or ``units`` made from them)."""
    return judge_units(units if units is not None else claim.paper_units(paper), claim, paper)[0]


def chapter_verdicts(chapter: str, results: dict, paper: dict) -> list[Verdict]:
    """The verdicts a chapter's page opens with, on that chapter's own results (``{name: results}``): the book's models
    or a reader's own."""
    record = {chapter: results}
    if chapter.startswith("measurement"):
        record["measurement"] = results
    return judge(record, paper, CHAPTER_CLAIMS.get(chapter, ()))


def within_run_trend(record: dict) -> dict:
    """Across training (not a claim of the paper: its Figure 5a is about scale): each checkpoint series' Spearman ρ of
    the JS flip rate with signature sink mass (:func:`run_correlations`), and an exact two-sided sign test over runs,
    with the smallest p that many runs could reach."""
    from scipy.stats import binomtest

    series = [s for r in record.get("collapse", {}).values() for s in r.get("series", [])]
    rhos = run_correlations(series)
    up = sum(r > 0 for _, r in rhos)
    smallest = 2 * 0.5 ** len(rhos) if rhos else 1.0
    p = float(binomtest(up, len(rhos), 0.5).pvalue) if rhos else 1.0
    verdict = UNDECIDED if smallest >= LEVEL or p >= LEVEL else REPRODUCED if up > len(rhos) / 2 else REVERSED
    return {"runs": len(rhos), "up": up, "p": p, "smallest_p": smallest, "rhos": dict(rhos), "verdict": verdict}


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
