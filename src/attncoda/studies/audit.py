"""``attncoda audit``: is my convention safe for this model? One page from a model's signatures, no notebook.

It reports where the sink actually is (the key positions that take the most attention), the row and
signature sink mass, the keep-vs-drop reversal rate of the reader's metric with its uncertainty, the
frozen v2 predictor's prediction and whether the model lies in its domain, the layer-wise collapse
disagreement, the ε-sweep status, and a recommendation computed from those numbers.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, replace

import numpy as np

from ..base.protocol import DEFAULT_EPS, N_TRIPLES
from ..base.terminal import visible
from ..math.metrics import get_metric
from ..math.verdicts import convention_verdicts, reversal_from_verdicts, sample_triples
from .profiles import collapse_disagreement, layer_profile
from .reversal import eps_sweep, signature_sink_mass, verdict_table

def t_95(df: int, level: float = 0.95) -> float:
    """The two-sided ``level`` quantile of Student's t with ``df`` degrees of freedom (scipy's; 95 % unless given).

    Examples
    --------
    >>> round(t_95(2), 3), round(t_95(30), 3), round(t_95(2, 0.975), 3)
    (4.303, 2.042, 6.205)
    """
    from scipy.stats import t

    return float(t.ppf((1 + level) / 2, df))


NAMED_SINKS = ("first", "bos", "first4", "cls", "cls_sep", "learned")
UNKNOWN_SINK = "unknown sink set {text!r}; use first, bos, first4, cls, cls_sep, learned or key indices such as 0,1,2,3"
MIN_TRIPLES = 100
"""Fewest head triples per seed the audit accepts: with fewer, one seed's 95 % interval is wider than ±10 points."""
MAX_TRIPLES = 10_000_000
"""Most head triples per seed the audit samples (each verdict of a triple takes a few bytes per convention: ten
million take about a gigabyte; the default is 50,000)."""
SMALL_RATE = 0.075
"""A reversal rate whose interval lies below this is small: the frozen predictor's tolerance (7.5 points); the
audit reads the tolerance from the predictor it loads and falls back to this value without one."""
ADVICE = ("matters", "small", "undecided", "undefined")
"""The rule the recommendation follows: the interval lies above the threshold, below it, straddles it, or the rate is undefined."""


def check_sink(text: str | None, length: int) -> None:
    """What can be checked of ``--sink`` before any model runs: a named set, or distinct key indices in ``0..length-1``
    (a ValueError in one line otherwise; the named sets that depend on the model are checked by :func:`parse_sink`).

    Examples
    --------
    >>> check_sink("0,1,2,3", 128)
    >>> check_sink("0..126", 128)
    Traceback (most recent call last):
    ValueError: unknown sink set '0..126'; use first, bos, first4, cls, cls_sep, learned or key indices such as 0,1,2,3
    """
    if text is None or text in NAMED_SINKS:
        return
    sink_keys(text, length)


def sink_keys(text: str, length: int) -> tuple[int, ...]:
    """Key indices given as ``"0,1,2,3"``: distinct, each in ``0..length-1`` (a ValueError in one line otherwise).

    Examples
    --------
    >>> sink_keys("0,3", 128)
    (0, 3)
    """
    try:
        keys = tuple(int(t) for t in text.split(","))
    except ValueError:
        raise ValueError(UNKNOWN_SINK.format(text=text)) from None
    if any(not 0 <= k < length for k in keys):
        raise ValueError(f"sink keys {text} must lie in 0..{length - 1} (the window has {length} keys)")
    if len(set(keys)) != len(keys):
        raise ValueError(f"sink keys {text} repeat a key; name each key once")
    if len(keys) >= length:
        raise ValueError(f"sink keys {text} cover all {length} keys of the window, which leaves no content to compare; name fewer keys")
    return keys


def parse_sink(text: str | None, sig) -> tuple[str, tuple[int, ...]]:
    """A sink set named on the command line: ``first``, ``bos``, ``cls_sep``, ``first4``, ``cls``, ``learned`` or key indices
    ``0,1,2,3``, resolved against a model's signatures (or their meta alone, before the forward pass), as part indices:
    with a learned sink (part 0), key ``j`` is part ``j + 1`` and every set holds the learned sink too.

    ``None`` is the model's default. ``bos`` is key 0, and only when the tokenizer prepended a BOS token.
    """
    from ..engine.signatures import sink_positions, virtual_parts

    meta = getattr(sig, "meta", sig)
    virtual = virtual_parts(meta.default_sink)  # a learned sink is part 0, and key j is part j + 1
    if text is None:
        return meta.default_sink, tuple(meta.sink_sets[meta.default_sink])
    if text == "bos":
        if not meta.layout.bos_prepended:
            raise ValueError("this model's tokenizer prepends no BOS token, so there is no BOS sink; use --sink first (key 0 is an ordinary token)")
        return "bos", (*range(virtual), virtual)
    if text == "cls" and meta.causal:
        raise ValueError("a causal model's windows open with no [CLS] token, so there is no [CLS] sink; use --sink first "
                         "(key 0, whatever token it holds)")
    if text in meta.sink_sets:
        return text, tuple(meta.sink_sets[text])
    if text in ("first", "first4", "cls", "cls_sep", "learned"):
        return text, sink_positions(text, meta.length, meta.layout.prefix_tokens, meta.layout.suffix_tokens, virtual)
    return "keys " + text, (*range(virtual), *(virtual + k for k in sink_keys(text, meta.length)))


def wilson(successes: int, trials: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a proportion (:func:`attncoda.studies.significance.wilson_z`: statsmodels').

    Examples
    --------
    >>> [round(x, 3) for x in wilson(50, 100)]
    [0.404, 0.596]
    """
    from .significance import wilson_z

    return wilson_z(successes, trials, z)


def sink_location(sig, top: int = 5) -> list[dict]:
    """The key positions with the largest mean attention in the signatures' rows (arithmetic-mean signatures, averaged
    over heads): the fallback when no attention map over every row is at hand (patterns a reader passes)."""
    mean = sig.heads("arithmetic").mean(axis=0)
    order = np.argsort(mean)[::-1][:top]
    return [{"key": int(k), "mean_attention": float(mean[k])} for k in order]


@dataclass(frozen=True)
class ReversalReading:
    """The audited metric's keep-vs-drop reversal rate: mean over seeds, its interval (95 % unless a staged audit split
    its level) and how it was made."""

    rate: float
    interval: tuple
    interval_kind: str
    per_seed: list
    compared: int
    level: float = 0.95
    estimate: str = ""  # set when the rate comes from fewer windows than the sample: a staged audit's early look


@dataclass(frozen=True)
class Prediction:
    """The frozen predictor's expectation for the audited metric, or its abstention with the reasons."""

    version: int
    predicted: float
    abstain: bool
    reasons: list
    deviation_points: float
    within_tolerance: bool


@dataclass(frozen=True)
class AuditReport:
    """Everything ``attncoda audit`` reports on one model; :meth:`to_json` is its ``--format json`` output."""

    model: str
    architecture: str
    causal: bool
    heads: int
    length: int
    windows_per_seed: int
    seeds: list
    signature_kind: str
    metric: str
    metric_label: str
    sink: dict  # {"name", "keys"}
    bos_prepended: bool
    top_keys: list  # [{"key", "mean_attention"}], most attention first
    row_sink_mass: float
    signature_sink_mass: float
    reversal: ReversalReading
    prediction: Prediction | None
    collapse_disagreement: float
    eps_sweep: dict  # {"bit_identical", "exact_zeros"}
    recommendation: str = ""
    advice: str = ""  # which of ADVICE the recommendation follows
    threshold: float = SMALL_RATE  # the rate the interval is held against
    ci: dict | None = None  # with --fail-above: the rate, whether it failed, and the rule that fired
    stages: list | None = None  # a staged audit's looks: windows, level, margin, interval and advice of each
    stopped: str | None = None  # why a staged audit stopped where it did
    top_tokens: list | None = None  # [{"id", "token", "mean_attention", "occurrences"}], from every row
    recent_mass: float | None = None  # mean weight a row puts on its most recent keys
    where_from: str = "the signatures' last rows (by key position only)"
    prediction_note: str | None = None  # why no prediction was made, when the predictor could not be read
    length_note: str | None = None  # at L other than the calibration's: whether the predictor's domain covers it
    too_few: str | None = None  # why the sample cannot decide: fewer distinct head triples than an interval needs
    copies: list | None = None  # --patterns files whose content repeats another's, counted once: [{"file", "copy_of"}]
    learned_sink_mass: float | None = None  # a model with a learned sink: the mean mass of that part in every row

    def to_json(self) -> dict:
        out = asdict(self)
        out["reversal"]["interval"] = list(self.reversal.interval)
        return out

    @classmethod
    def from_json(cls, data: dict) -> AuditReport:
        """The report from :meth:`to_json`'s object, or from ``--format json``'s (whose ``schema`` names its version)."""
        data = {k: v for k, v in data.items() if k != "schema"}
        fields = {**data, "reversal": ReversalReading(**{**data["reversal"], "interval": tuple(data["reversal"]["interval"])}),
                  "prediction": Prediction(**data["prediction"]) if data.get("prediction") else None}
        return cls(**fields)


def audit(sigs, metric: str = "js", sink: str | None = None, n_triples: int = N_TRIPLES, curves=None, spec=None, maps=None,
          level: float = 0.95, margin: float = 0.0) -> AuditReport:
    """The audit of one model from its signatures (one per seed): how often ``metric``'s closer-head verdicts flip
    between keeping and dropping the sink, with an interval, the frozen predictor's expectation and a recommendation.

    Parameters
    ----------
    sigs : list of Signatures
        One model's signatures, one per seed (:func:`attncoda.engine.signatures.signature_sets`, or
        :func:`attncoda.engine.patterns.signatures_from_patterns` for patterns you already hold).
    metric : str
        The metric audited: ``cosine``, ``js``, ``euclidean``, ``hellinger``, ``fisher_rao``, ``aitchison`` or ``content``.
    sink : str, optional
        The sink set: a named set of the signatures (``first``, ``first4``, ``cls_sep``, ``cls``) or key indices
        such as ``"0,1"``; default: the model's own.
    n_triples : int
        Head triples drawn per seed.
    curves, spec : dict, optional
        The frozen predictor (:func:`attncoda.studies.predictor.load_all`); without them no prediction is made.
    maps : list of dict, optional
        Where attention goes on each seed's windows, for the chosen sink keys
        (:func:`attncoda.engine.attention_map.attention_maps`): key positions and tokens over every row, the recent keys,
        and the chosen sink's row statistics. Without them the top keys come from the signatures' last rows.
    level : float
        The interval's confidence (0.95; a staged audit splits its level over its looks).
    margin : float
        How far the interval must clear the threshold before the advice takes a side (a staged audit's early look
        adds the bias bound of its smaller sample, :mod:`attncoda.studies.audit_stages`).

    Returns
    -------
    AuditReport
        The report: the model's facts, the sink set and where attention mass lands, the reversal rate with its
        interval (``reversal``), the prediction, the ε check and ``recommendation`` (one sentence); ``to_json()``
        gives ``--format json``'s output.
    """
    from . import predictor

    m = get_metric(metric)
    first = sigs[0]
    sink_name, keys = parse_sink(sink, first)
    per_seed = []
    for sig in sigs:
        rows = sig.heads()
        triples = sample_triples(len(rows), n_triples, sig.meta.seed)
        v = convention_verdicts(m, rows, triples, keys, DEFAULT_EPS, method="gram")
        rev = reversal_from_verdicts(m.name, v["keep"], v["drop"])
        distinct = len(np.unique(triples, axis=0))
        tables = {e: verdict_table(sig.heads("aitchison", e), (m.name,), triples, keys, e) for e in sig.meta.eps_values}
        profile = layer_profile(sig)
        row_sink = sig.row_mean("sink_mass")
        if maps is not None and tuple(keys) != tuple(sig.sink()):  # another sink set: its own row statistics, from every row
            chosen = maps[len(per_seed)]["chosen_sink"]
            profile, row_sink = chosen["layers"], chosen["row_sink_mass"]
        per_seed.append({"seed": sig.meta.seed, "reversal": rev.as_dict(), "distinct_triples": distinct, "drawn_triples": len(triples), "signature_sink_mass": signature_sink_mass(rows, keys),
                         "row_sink_mass": row_sink, "eps_sweep": eps_sweep(tables, sig.zeros, DEFAULT_EPS),
                         "collapse_disagreement": collapse_disagreement(profile["entropy"], profile["content_entropy"])})
    check_defined(first.meta.model, per_seed)
    rates = [s["reversal"]["rate"] for s in per_seed]
    mean = float(np.mean(rates))
    if len(rates) > 1:
        interval = t_interval(rates, level)
        interval_kind = f"{100 * level:g} % t-interval over {len(rates)} seeds (text and triples resampled, clipped to 0-100 %)"
    else:
        from scipy.stats import norm

        reversed_, compared = distinct_counts(per_seed[0])
        interval = wilson(reversed_, compared, float(norm.ppf((1 + level) / 2)))
        interval_kind = (f"{100 * level:g} % Wilson interval over the sampled triples of one seed (text not resampled: rerun with more seeds "
                         "for the full uncertainty)")
        if per_seed[0]["distinct_triples"] < per_seed[0]["drawn_triples"]:
            interval_kind += f"; each of the {per_seed[0]['distinct_triples']:,} distinct triples drawn counted once"
    s_sig = float(np.mean([s["signature_sink_mass"] for s in per_seed]))
    facts = {"causal": bool(first.meta.causal), "sink_size": len(keys), "length": int(first.meta.length)}  # tokens, as model_facts reads them
    prediction = None
    if curves is not None and spec is not None and m.name in spec["metrics"]:
        pred = predictor.predict(curves, spec, s_sig, facts)
        prediction = Prediction(spec["version"], pred["predicted"][m.name], pred["abstain"], pred["reasons"], 100 * (mean - pred["predicted"][m.name]),
                                abs(100 * (mean - pred["predicted"][m.name])) <= spec["tolerance_points"])
    report = AuditReport(
        model=first.meta.model, architecture=first.meta.model_info["architecture"], causal=facts["causal"],
        heads=int(np.prod(first.shape[:2])), length=int(first.meta.length), windows_per_seed=first.meta.n, seeds=[s["seed"] for s in per_seed],
        signature_kind=first.default_kind, metric=m.name, metric_label=m.label, sink=_sink_field(sink_name, keys, first.meta),
        bos_prepended=bool(first.meta.layout.bos_prepended), top_keys=maps[0]["positions"] if maps else sink_location(first),
        row_sink_mass=float(np.mean([s["row_sink_mass"] for s in per_seed])), signature_sink_mass=s_sig,
        reversal=ReversalReading(mean, tuple(interval), interval_kind, rates, int(sum(s["reversal"]["compared"] for s in per_seed)), level),
        prediction=prediction, length_note=predictor.length_note(spec, facts["length"]) if spec is not None else None,
        collapse_disagreement=float(np.mean([s["collapse_disagreement"] for s in per_seed])) if first.shape[0] > 1 else float("nan"),
        eps_sweep={"bit_identical": all(s["eps_sweep"]["all_identical"] for s in per_seed),
                   "exact_zeros": int(sum(s["eps_sweep"]["exact_zeros"] for s in per_seed))},
    )
    threshold = spec["tolerance_points"] / 100 if spec is not None else SMALL_RATE
    report = replace(report, threshold=threshold, advice=advice_rule(report.reversal, threshold, margin))
    possible = len(rows) * (len(rows) - 1) * (len(rows) - 2)
    if possible < MIN_TRIPLES and report.advice != "undefined":
        report = replace(report, advice="undecided", too_few=(f"the model has {len(rows)} heads, so only {possible} distinct head triples, fewer "
                                                              f"than the {MIN_TRIPLES} an interval needs; drawing them again adds no evidence"))
    if maps:
        learned = [m["learned_sink_mass"] for m in maps if "learned_sink_mass" in m]
        report = replace(report, top_tokens=maps[0]["tokens"], recent_mass=float(np.mean([m["recent_mass"] for m in maps])),
                         learned_sink_mass=float(np.mean(learned)) if learned else None,
                         where_from="every row of every layer and head, seed " + str(first.meta.seed) + f"'s windows; keys within {maps[0]['recent_keys']} "
                         "positions of the query set apart")
    return replace(report, recommendation=recommend(report))


def t_interval(rates, level: float = 0.95) -> tuple[float, float]:
    """The ``level`` t-interval of the mean of per-seed ``rates``, clipped to 0-1.

    >>> [round(x, 4) for x in t_interval([0.1, 0.2, 0.3])]
    [0.0, 0.4484]
    """
    from . import significance

    _, low, high = significance.t_interval(rates, 1 - level)
    return max(0.0, low), min(1.0, high)


def distinct_counts(seed: dict) -> tuple[int, int]:
    """A seed's reversed and compared triples, counted over its distinct triples: a triple drawn twice is one piece of
    evidence, not two (a model with few heads has few triples to draw).

    >>> distinct_counts({"reversal": {"reversed": 5000, "compared": 50000}, "distinct_triples": 6, "drawn_triples": 50000})
    (1, 6)
    """
    reversed_, compared = seed["reversal"]["reversed"], seed["reversal"]["compared"]
    if seed["distinct_triples"] >= seed["drawn_triples"]:
        return reversed_, compared
    trials = max(1, round(compared * seed["distinct_triples"] / seed["drawn_triples"]))
    return round(reversed_ / compared * trials) if compared else 0, trials


def fail_above_rule(interval, bound: float) -> dict:
    """``--fail-above``'s gate for other people's CI: it fails when the interval lies above ``bound`` (its lower end is
    above it), and when the interval is not a defined pair of numbers, since an undefined rate decides nothing.

    >>> fail_above_rule((0.06, 0.09), 0.05)["failed"], fail_above_rule((0.01, 0.09), 0.05)["failed"]
    (True, False)
    >>> fail_above_rule((float("nan"), float("nan")), 0.05)["rule"]
    'the interval is undefined, so the rate cannot be shown to stay at or below 0.05'
    """
    low, high = interval
    if not (math.isfinite(low) and math.isfinite(high)):
        return {"fail_above": bound, "failed": True, "rule": f"the interval is undefined, so the rate cannot be shown to stay at or below {bound}"}
    failed = low > bound
    return {"fail_above": bound, "failed": failed, "rule": f"the interval's lower bound {low:.4f} {'>' if failed else '<='} {bound}"}


def check_defined(model: str, per_seed: list[dict]) -> None:
    """Refuse to report a rate that is not a number (ValueError in one line): a seed on which no head triple could be
    compared (every triple ties under keep or drop, as when every head attends alike) has no reversal rate, and a mean
    over it, or an interval clipped around it, would look like an answer.

    >>> check_defined("m", [{"seed": 0, "reversal": {"compared": 10, "rate": 0.2}}])
    >>> check_defined("m", [{"seed": 0, "reversal": {"compared": 0, "rate": float("nan")}}])
    Traceback (most recent call last):
    ...
    ValueError: m: no head triple could be compared on seed 0 (every triple ties under keep or drop, as when every head attends alike: untrained or zeroed weights, or one-hot rows that put all weight on one key), so its reversal rate is undefined; audit a trained model, or patterns whose rows spread their weight
    """
    empty = [s["seed"] for s in per_seed if not s["reversal"]["compared"] or not math.isfinite(s["reversal"]["rate"])]
    if empty:
        raise ValueError(f"{model}: no head triple could be compared on seed{'s' if len(empty) > 1 else ''} {', '.join(map(str, empty))} "
                         "(every triple ties under keep or drop, as when every head attends alike: untrained or zeroed weights, or one-hot "
                         "rows that put all weight on one key), so its reversal rate is undefined; audit a trained model, or patterns whose "
                         "rows spread their weight")


def advice_rule(reading: ReversalReading, threshold: float, margin: float = 0.0) -> str:
    """Which advice a reading supports: ``matters`` (its interval lies above ``threshold``, by more than ``margin``),
    ``small`` (below it, by more than ``margin``), ``undecided`` (neither) or ``undefined`` (no rate: no triple could
    be compared).

    Examples
    --------
    >>> r = lambda lo, hi: ReversalReading((lo + hi) / 2, (lo, hi), "", [], 100)
    >>> [advice_rule(r(0.1, 0.2), 0.075), advice_rule(r(0.0, 0.05), 0.075), advice_rule(r(0.05, 0.1), 0.075)]
    ['matters', 'small', 'undecided']
    >>> advice_rule(ReversalReading(float("nan"), (float("nan"), float("nan")), "", [], 0), 0.075)
    'undefined'
    """
    lo, hi = reading.interval
    if not (reading.rate == reading.rate and lo == lo and hi == hi):
        return "undefined"
    if lo - margin > threshold:
        return "matters"
    if hi + margin < threshold:
        return "small"
    return "undecided"


def recommend(r: AuditReport) -> str:
    """A plain recommendation that follows the report's own numbers (:func:`advice_rule`): it never advises from an
    undefined rate, and never says the two conventions answer the same question (they do not: one asks about all of
    the attention, the other about the attention left after the sink)."""
    lo, hi = r.reversal.interval
    metric, rate, cut = r.metric_label, 100 * r.reversal.rate, 100 * r.threshold
    interval = (f"{r.reversal.estimate}, " if r.reversal.estimate else "") + f"{100 * r.reversal.level:g} % interval {100 * lo:.1f}-{100 * hi:.1f} %"
    top = r.top_keys[0] if r.top_keys else None  # windows of a few keys: none lies far enough from its queries to rank
    sink_keys = set(r.sink["keys"])
    where = ("" if top is None or top["key"] in sink_keys else
             f" Note: the key that takes the most attention is key {top['key']} ({top['mean_attention']:.2f} of it), which is not in your sink set {sorted(sink_keys)}; check the sink definition first.")
    questions = ("For a question about how heads divide attention among content tokens, use the content distance d_A^perp, which gives "
                 "the same answer under both; for a question about how much attention the sink takes, compare sink masses directly.")
    if r.too_few:
        return (f"This sample cannot decide whether the convention matters here: {r.too_few}. Audit the model's full set of layers and heads, "
                f"and state which convention you use.{where}")
    if r.advice == "undefined":
        return ("No advice: no sampled triple could be compared (every verdict tied, or the sink set leaves no content to compare), so the "
                f"reversal rate is undefined. Check --sink, or sample more triples.{where}")
    if r.advice == "matters":
        return (f"The convention matters here: {rate:.1f} % of {metric} closer-head verdicts flip between keeping and dropping the sink "
                f"({interval}, above {cut:.1f} %). State which convention you use. {questions}{where}")
    if r.advice == "small":
        return (f"Few {metric} verdicts flip between keeping and dropping the sink on this model ({rate:.1f} %, {interval}, below {cut:.1f} %), "
                f"but the two conventions still ask different questions: state which one you use. {questions}{where}")
    more = ("Save patterns from more text samples and pass each file" if r.architecture == "patterns" else
            "Rerun with more seeds (e.g. --seeds 0 1 2 3 4)")
    return (f"This sample cannot tell whether the convention matters here: {rate:.1f} % of {metric} verdicts flip, and the {interval} straddles "
            f"{cut:.1f} %. {more} or more triples before relying on either convention; state which one you use.{where}")


def strict_json(report: dict) -> dict:
    """The report for strict JSON parsers: every undefined number (NaN, ±inf) written as ``null``, and the fields that
    hold one named under ``"undefined"`` with the reason, so a reader's program can tell a missing value from a zero.

    >>> strict_json({"rate": 0.1, "layers": [float("nan"), 0.2]})
    {'rate': 0.1, 'layers': [None, 0.2], 'undefined': {'fields': ['layers[0]'], 'reason': 'not a number on this input (for example a statistic over rows the windows do not have); written as null'}}
    """
    paths = []

    def walk(value, path):
        if isinstance(value, float) and not math.isfinite(value):
            paths.append(path)
            return None
        if isinstance(value, dict):
            return {k: walk(v, f"{path}.{k}" if path else k) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v, f"{path}[{i}]") for i, v in enumerate(value)]
        return value

    cleaned = walk(report, "")
    if paths:
        cleaned["undefined"] = {"fields": paths, "reason": "not a number on this input (for example a statistic over rows the windows do not "
                                                             "have); written as null"}
    return cleaned


def _sink_field(name: str, parts, meta) -> dict:
    """The report's sink set: its name and its keys as token positions; on a model with a learned sink, ``learned``
    says that the set holds that part too (part indices are the keys shifted by one)."""
    from ..engine.signatures import virtual_parts

    virtual = virtual_parts(meta.default_sink)
    keys = [int(k) - virtual for k in parts if k >= virtual]
    return {"name": name, "keys": keys, **({"learned": True} if virtual else {})}


def _sink_line(r: AuditReport) -> str:
    """The sink set and, for a model with a learned sink, that each row holds it as part 0 before the window's keys."""
    if r.sink["name"] == "learned":
        return ("learned: the model's learned sink logit, part 0 of each row (a row holds it and the keys it sees, and sums to 1 "
                "with it; key j is part j + 1)")
    learned = " and the model's learned sink (part 0)" if r.sink.get("learned") else ""
    return (f"{r.sink['name']}: keys {r.sink['keys']}" + learned + ("" if not r.causal or r.architecture == "patterns" else
            " (a BOS token is prepended)" if r.bos_prepended else " (no BOS token: key 0 is an ordinary token)"))


def _sample_line(r: AuditReport) -> str:
    """What the report was made from: windows per seed of a model's text, or the windows of saved pattern files."""
    if r.architecture == "patterns":
        files = f"in each of {len(r.seeds)} saved files" if len(r.seeds) > 1 else "in 1 saved file"
        copies = "; ".join(f"{visible(c['file'])} is a copy of {visible(c['copy_of'])}" for c in r.copies or [])
        return (f"{r.windows_per_seed} windows of {r.length} keys {files}; {r.signature_kind}-path signatures"
                + (f" ({copies}: the same content, counted once)" if copies else ""))
    return f"{r.windows_per_seed} windows of {r.length} tokens per seed, seeds {r.seeds}; {r.signature_kind}-path signatures"


def render(r: AuditReport, fmt: str = "text") -> str:
    """The report as plain text, Markdown or JSON."""
    if fmt == "json":
        from .audit_schema import SCHEMA_ID

        return json.dumps(strict_json({"schema": SCHEMA_ID, **r.to_json()}), indent=1, allow_nan=False)
    if fmt not in ("text", "markdown"):
        raise ValueError(f"unknown format {fmt!r}; use text, markdown or json")
    lo, hi = r.reversal.interval
    top = (", ".join(f"key {t['key']}: {t['mean_attention']:.3f}" for t in r.top_keys) + f" ({r.where_from})" if r.top_keys else
           f"not ranked: in windows of {r.length} keys no key lies far enough from the queries that see it ({r.where_from})")
    if r.top_tokens is None:
        tokens = "not measured (patterns given without their tokens)"
    elif not r.top_tokens:
        tokens = "no token occurs often enough in these windows to rank"
    else:
        tokens = ", ".join(f"{t['token']!r}: {t['mean_attention']:.3f}" for t in r.top_tokens)
    p = r.prediction
    if p is None and r.prediction_note:
        pred = f"no prediction ({r.prediction_note})"
    elif p is None:
        pred = "no prediction (the frozen predictor covers cosine, js, euclidean and hellinger)"
    elif p.abstain:
        pred = f"v{p.version} abstains: " + "; ".join(p.reasons)
    else:
        pred = (f"v{p.version} predicts {100 * p.predicted:.1f} %; observed {100 * r.reversal.rate:.1f} % "
                f"({p.deviation_points:+.1f} points, {'within' if p.within_tolerance else 'outside'} its tolerance)"
                + (f"; {r.length_note}" if r.length_note else ""))
    sweep = ("bit-identical verdicts" if r.eps_sweep["bit_identical"] else "verdicts moved") + f" ({r.eps_sweep['exact_zeros']} exact zeros met)"
    model = visible(r.model)  # a folder's name can hold a newline or a terminal escape
    if fmt == "markdown":
        model = model.replace("|", "\\|")
    lines = [
        ("model", f"{model} ({r.architecture}, {'causal' if r.causal else 'bidirectional'}"
                  + (" as inferred: no row puts weight on a later key" if r.architecture == "patterns" and r.causal else "") + f", {r.heads} heads)"),
        ("sample", _sample_line(r)),
        ("sink set", _sink_line(r)),
        ("where attention goes", (f"the learned sink: {r.learned_sink_mass:.3f}; " if r.learned_sink_mass is not None else "") + top),
        ("by token", tokens + (f"; the most recent keys take {r.recent_mass:.3f} of a row on average" if r.recent_mass is not None else "")),
        ("sink mass", f"rows {r.row_sink_mass:.3f}; signatures {r.signature_sink_mass:.3f}"),
        (f"reversal ({r.metric_label})", (f"{r.reversal.estimate}: " if r.reversal.estimate else "") + f"{100 * r.reversal.rate:.1f} % of closer-head verdicts flip ({100 * r.reversal.level:g} % interval {100 * lo:.1f}-{100 * hi:.1f} %; {r.reversal.interval_kind})"),
        ("frozen predictor", pred),
        ("layer-wise collapse", f"H and H(pi) move in opposite directions on {100 * r.collapse_disagreement:.0f} % of adjacent-layer transitions"
         if math.isfinite(r.collapse_disagreement) else "undefined: a model with one layer has no pair of adjacent layers to compare"),
        ("eps sweep (probability path)", sweep),
        ("advice", f"{r.advice}: " + (r.too_few if r.too_few else f"the interval held against {100 * r.threshold:.1f} %")),
    ]
    if r.stopped:
        lines.append(("stages", r.stopped))
    if r.ci:
        lines.append(("--fail-above", ("FAILED: " if r.ci["failed"] else "passed: ") + r.ci["rule"] + (f" ({r.ci['decided']})" if r.ci.get("decided") else "")))
    if fmt == "markdown":
        body = "\n".join(f"| {k} | {v} |" for k, v in lines)
        return f"## Convention audit: {model}\n\n| | |\n|---|---|\n{body}\n\n**Recommendation.** {r.recommendation}\n"
    width = max(len(k) for k, _ in lines)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in lines) + f"\n\nrecommendation: {r.recommendation}\n"
