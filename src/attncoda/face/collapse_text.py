"""The collapse chapter's tables and sentences, each computed from its typed results
(:class:`attncoda.studies.collapse_suite.Series`, :class:`~attncoda.studies.collapse_suite.Endpoint`, the search's
trials), so a rerun on another model rewrites them."""

from __future__ import annotations

import numpy as np

from .report import fmt

PYTHIA_TOKENS_PER_STEP = 1024 * 2048
"""Pythia's batch: 1,024 sequences of 2,048 tokens per step (Biderman et al., 2023)."""
PYTHIA_STEPS = 143_000
PYTHIA_SMALLEST = 70e6
"""Parameters of the smallest Pythia model the paper measures (Pythia-70M)."""
SINK_GROWTH = 0.05
"""A run's sink "grew" when its mean row sink mass rose by at least this much from step 0 to the end."""
START_NAMES = {"from_peak": "peak", "from_step0": "step 0", "none": "none"}


def _span(values, digits: int = 2) -> str:
    values = [v for v in values if v is not None and v == v]
    if not values:
        return "—"
    lo, hi = f"{float(np.min(values)):.{digits}f}", f"{float(np.max(values)):.{digits}f}"
    return lo if lo == hi else f"{lo} to {hi}"


# --------------------------------------------------------------------------- the search


def trial_rows(trials: list[dict]) -> list[dict]:
    """One table row per configuration the search tried, in the order tried."""
    rows = []
    for t in trials:
        run, a, b = t["run"], t["step0"], t["final"]
        rows.append({"configuration": t["label"], "what changed": t["why"], "parameters (M)": f"{t['parameters'] / 1e6:.2f}",
                     "steps": f"{run['steps']:,}", "sink mass, step 0 → final": f"{a['sink_mass']:.3f} → {b['sink_mass']:.3f}",
                     "trigger / other rows, final": (f"{b['trigger_sink_mass']:.3f} / {b['other_sink_mass']:.3f}" if "trigger_sink_mass" in b else "—"),
                     "training (min)": f"{t['training_seconds'] / 60:.1f}", "above the target": "yes" if t["grown"] else "no"})
    return rows


def search_sentence(search: dict) -> str:
    """What the search found: how many configurations grew a sink past the target, and the range it reached on text and
    on the task. Each configuration was trained with one seed, so the sentence ranks none of them."""
    trials, target = search["trials"], search["target"]
    grown = [t for t in trials if t["grown"]]
    minutes = sum(t["training_seconds"] for t in trials) / 60
    out = f"The search trained {len(trials)} configurations, one seed each, in {minutes:.0f} min of training in all. "
    out += (f"{len(grown)} of them grew the mean row sink mass above the target of {target} ({', '.join(t['label'] for t in grown)}). " if grown
            else f"None of them grew the mean row sink mass above the target of {target}. ")
    for task, name in (("text", "natural text"), ("backcopy", "Bigram-Backcopy")):
        finals = [t["final"]["sink_mass"] for t in trials if t["run"]["task"] == task]
        if finals:
            out += f"On {name} it ended between {min(finals):.3f} and {max(finals):.3f}. "
    return out + "One seed each cannot rank configurations whose final values lie this close together."


# --------------------------------------------------------------------------- trajectories and shares


def groups(series) -> dict[str, dict[str, list[dict]]]:
    """``{panel: {run label: points}}`` for :func:`attncoda.face.figures.collapse.collapse_trajectories`."""
    out: dict[str, dict[str, list[dict]]] = {}
    for s in series:
        label = f"seed {s.training['seed']}" if s.training else s.name
        out.setdefault(s.group, {})[label] = s.points
    return out


def short(name: str) -> str:
    """A run's name without the architecture prefix, for narrow tables."""
    return name.removeprefix("neox-")


def share_rows(series) -> list[dict]:
    """One table row per series: its sink growth, the peak test (rise against window spread), the share shown and the
    share from step 0."""
    rows = []
    for s in series:
        peak = s.shares.get("peak")
        start, value = s.shown
        a, b = s.sink_growth
        rows.append({"run": short(s.name), "sink mass, step 0 → final": f"{a:.3f} → {b:.3f}",
                     "H peak at step": f"{peak['step']} ({'real' if peak['used'] else 'noise'})" if peak else "—",
                     "rise / window spread (nats)": (f"{peak['rise']:.1e} / {peak['spread']:.1e}" if peak and peak["spread"] is not None
                                                     else (f"{peak['rise']:.1e} / —" if peak else "—")),
                     "share shown (from)": f"{fmt(value)} ({START_NAMES[start]})",
                     "share from step 0": fmt(s.shares.get("from_step0", {}).get("share"))})
    return rows


def row_share_rows(series) -> list[dict]:
    """For task runs: the share on trigger rows and on the other rows, with their sink masses."""
    rows = []
    for s in series:
        if not s.rows:
            continue
        for kind, r in s.rows.items():
            rows.append({"run": short(s.name), "rows": f"{kind} ({r['rows']:,})",
                         "sink mass, step 0 → final": f"{r['start']['sink_mass']:.3f} → {r['end']['sink_mass']:.3f}",
                         "H, step 0 → final": f"{r['start']['entropy']:.2f} → {r['end']['entropy']:.2f}",
                         "H(π), step 0 → final": f"{r['start']['content_entropy']:.2f} → {r['end']['content_entropy']:.2f}",
                         "share": fmt(r["share"])})
    return rows


def rows_sentence(series) -> str:
    """What the task runs' trigger and other rows did: where the share of each kind of row comes from."""
    parts = []
    for kind in dict.fromkeys(s.kind for s in series if s.rows):
        runs = [s for s in series if s.kind == kind and s.rows]
        trig, other = ([r.rows[k] for r in runs] for k in ("trigger", "other"))
        if not any(x["share"] is not None and x["share"] == x["share"] for x in trig + other):
            continue
        parts.append(f"{kind}: on trigger rows, where the task needs attention, H went {_span([x['start']['entropy'] for x in trig])} → "
                     f"{_span([x['end']['entropy'] for x in trig])} with a share of {_span([x['share'] for x in trig])}; on the other rows the sink "
                     f"mass went {_span([x['start']['sink_mass'] for x in other], 3)} → {_span([x['end']['sink_mass'] for x in other], 3)} and the share of "
                     f"their much smaller fall of H ({_span([x['start']['entropy'] - x['end']['entropy'] for x in other])} nats) is "
                     f"{_span([x['share'] for x in other])}")
    return ("Split by row: " + "; ".join(parts) + ".") if parts else ""


def kind_summary(series) -> dict[str, dict]:
    """Per kind of series: the sink mass at the end and the shares shown, over its runs."""
    out: dict[str, dict] = {}
    for s in series:
        k = out.setdefault(s.kind, {"final_sink": [], "shares": [], "runs": 0})
        k["final_sink"].append(s.sink_growth[1])
        k["shares"].append(s.shown[1])
        k["runs"] += 1
    return out


def trajectory_sentence(series) -> str:
    """How the sink mass and the shares moved, per kind of series."""
    parts = []
    for kind, k in kind_summary(series).items():
        parts.append(f"{kind} ({k['runs']} runs): final sink mass {_span(k['final_sink'])}, share {_span(k['shares'])}")
    peaks = [s for s in series if s.shares.get("peak")]
    rejected = [s for s in peaks if not s.shares["peak"]["used"]]
    used = [s for s in peaks if s.shares["peak"]["used"] and "from_peak" in s.shares and "from_step0" in s.shares]
    text = "Per kind of run: " + "; ".join(parts) + "."
    if rejected:
        text += (f" In {len(rejected)} of {len(peaks)} runs the highest H after step 0 rose above step 0 by less than the spread of H "
                 "across window samples, so it is noise, not a peak: their share is shown from step 0.")
    if used:
        rises = [s.shares["peak"]["rise"] for s in used]
        spreads = [s.shares["peak"]["spread"] for s in used if s.shares["peak"]["spread"] is not None]
        same = all(f"{s.shares['from_peak']['share']:.2f}" == f"{s.shares['from_step0']['share']:.2f}" for s in used)
        text += (f" In {len(used)} runs H did rise after step 0, by {min(rises):.1e} to {max(rises):.1e} nats"
                 + (f", more than its spread across window samples ({min(spreads):.1e} to {max(spreads):.1e} nats): a real rise, if a tiny one"
                    if spreads else "") + "; "
                 + ("their shares from that peak and from step 0 agree to two decimals." if same else "their shares from that peak and from step 0 differ (see the table)."))
    return text


def contrast_sentence(series) -> str:
    """The decomposition on the search's winner against its control, trained on the same data."""
    k = kind_summary(series)
    if "search winner" not in k or "control" not in k:
        return ""
    grown, control = k["search winner"], k["control"]
    text = f"The search's winner ends with a mean sink mass of {_span(grown['final_sink'])} and shares of {_span(grown['shares'])}; "
    controls = [s for s in series if s.kind == "control"]
    if all(s.shown[1] != s.shown[1] for s in controls):
        h = [(s.points[0]["entropy"], s.points[-1]["entropy"]) for s in controls]
        return text + (f"under its control, trained on the same data, the sink mass ends at {_span(control['final_sink'])} and mean H did not fall "
                       f"({'; '.join(f'{a:.3f} → {b:.3f}' for a, b in h)}), so there is no collapse to share out.")
    return text + f"its control, trained on the same data (final sink mass {_span(control['final_sink'])}), has shares of {_span(control['shares'])}."


# --------------------------------------------------------------------------- endpoints


def endpoint_rows(ends) -> list[dict]:
    """One table row per endpoint: the seed-0 means and the share resampled over window and initialization seeds."""
    rows = []
    for name, e in ends.items():
        r, sp = e.reading, e.spread
        layer = [x for x in r["layer_shares"] if x == x]
        rows.append({"model": name, "H init → trained": f"{r['init']['entropy']:.2f} → {r['trained']['entropy']:.2f}",
                     "H(π) init → trained": f"{r['init']['content_entropy']:.2f} → {r['trained']['content_entropy']:.2f}",
                     "sink mass init → trained": f"{r['init']['sink_mass']:.3f} → {r['trained']['sink_mass']:.3f}",
                     "share: median [range]": f"{fmt(sp['median'], 3)} [{fmt(sp['low'], 3)}, {fmt(sp['high'], 3)}]",
                     "per-layer shares": f"{min(layer):.2f} to {max(layer):.2f}" if layer else "—"})
    return rows


def term_rows(ends) -> list[dict]:
    """For the endpoints whose sink set has more than one key: the part of the fall in H each entropy term carries."""
    rows = []
    for name, e in ends.items():
        if e.terms:
            f = e.terms["fractions"]
            rows.append({"model": name, "sink keys": ", ".join(map(str, e.terms["trained"]["sink"])), "h(s)": fmt(f["binary"]),
                         "s·H(sink parts)": fmt(f["within_sink"]), "(1 − s)·H(π)": fmt(f["content"])})
    return rows


def endpoint_sentence(ends, paper_lo: float, paper_hi: float) -> str:
    """Each endpoint's resampled share against the paper's range: inside, below, above or straddling it."""
    if not ends:
        return "No endpoint was measured on this run."
    verdicts = {"inside": [], "below": [], "above": [], "straddles": []}
    for name, e in ends.items():
        lo, hi = e.spread["low"], e.spread["high"]
        if hi < paper_lo:
            verdicts["below"].append(name)
        elif lo > paper_hi:
            verdicts["above"].append(name)
        elif paper_lo <= lo and hi <= paper_hi:
            verdicts["inside"].append(name)
        else:
            verdicts["straddles"].append(name)
    n = len(next(iter(ends.values())).spread["samples"])
    words = {"inside": "inside it", "below": "below it", "above": "above it", "straddles": "straddling its edge"}
    parts = [f"{', '.join(v)}: {words[k]}" for k, v in verdicts.items() if v]
    text = (f"Over {n} resamples each (window seeds, and initialization seeds), the endpoint shares set against the paper's range "
            f"{paper_lo:.2f} to {paper_hi:.2f}: " + "; ".join(parts) + ".")
    multi = {name: e.terms["fractions"] for name, e in ends.items() if e.terms}
    if multi:
        text += (" For the models whose sink set has two keys, the spread of mass between [CLS] and [SEP] changes H by "
                 + ", ".join(f"{fmt(f['within_sink'])} of the fall on {name}" for name, f in multi.items())
                 + "; the share shown counts it with the sink, as the identity H = h(s) + s·H(sink parts) + (1 − s)·H(π) allows.")
    return text


# --------------------------------------------------------------------------- against the paper


def paper_comparison(series, pythia: dict[str, float]) -> str:
    """Our series' shares beside the paper's Pythia shares, with what our models' scale and sink growth allow."""
    paper_lo, paper_hi = min(pythia.values()), max(pythia.values())
    text = f"The paper's shares on Pythia's checkpoints run from {paper_lo:.2f} to {paper_hi:.2f} ({', '.join(f'{k} {v:.2f}' for k, v in pythia.items())}). "
    trained = [s for s in series if s.training]
    if not trained:
        shares = [s.shown[1] for s in series]
        return text + f"The series walked here gives {_span(shares)}."
    params = [s.training["parameters"] for s in trained]
    tokens = [s.training["steps"] * s.training["batch"] * s.training["length"] for s in trained]
    text += (f"Our runs have {min(params) / 1e6:.2f} to {max(params) / 1e6:.2f} M parameters, at least {PYTHIA_SMALLEST / max(params):.0f}× fewer "
             f"than Pythia-70M, and saw at most {max(tokens):,} tokens, {PYTHIA_STEPS * PYTHIA_TOKENS_PER_STEP / max(tokens):,.0f}× fewer than a Pythia run. ")
    for kind, k in kind_summary(trained).items():
        grew = sum(1 for s in trained if s.kind == kind and s.sink_growth[1] - s.sink_growth[0] >= SINK_GROWTH)
        text += f"{kind.capitalize()}: the sink grew by {SINK_GROWTH} or more in {grew} of {k['runs']} runs, share {_span(k['shares'])}. "
    grew = [s for s in trained if s.sink_growth[1] - s.sink_growth[0] >= SINK_GROWTH]
    if grew:
        text += ("The runs whose sink grew test the mechanism (how much of a collapse a sink growing on a constant first token carries), "
                 "not the paper's numbers, which belong to models trained on billions of tokens of text.")
    else:
        text += ("No run here grew a sink, so none can confirm or refute the paper's shares: in every run the fall of H is carried by the "
                 "content distribution (shares near 0), and the paper's question needs checkpoints in which a sink does grow.")
    return text.strip()


# --------------------------------------------------------------------------- training, predictor, Figure 5a


def training_sentence(series, budget_minutes: int) -> str:
    """How long each kind of trained run took, against the chapter's budget (per kind)."""
    trained = [s for s in series if s.training]
    if not trained:
        return "This run walks the checkpoints given on the command line; nothing was trained."
    parts = []
    for kind in dict.fromkeys(s.kind for s in trained):
        runs = [s for s in trained if s.kind == kind]
        minutes = sum(s.training["training_seconds"] for s in runs) / 60
        parts.append(f"the {kind}'s {len(runs)} runs in {minutes:.1f} min")
    sink = sum(s.training["training_seconds"] for s in trained if s.kind in ("search winner", "control")) / 60
    text = "Training took " + ", ".join(parts) + " (as recorded when they were trained, on the machine that trained them)"
    if any(s.kind in ("search winner", "control") for s in trained):
        text += f"; the search's winner with its control took {sink:.1f} min, {'within' if sink <= budget_minutes else 'over'} the budget of {budget_minutes} min"
    return text + (". Checkpoints are cached by their whole configuration, so later builds reuse them (retrain = True trains again; a rerun "
                   "with the same seed gives the same bits).")


def measured_points(directory=None) -> dict[str, dict]:
    """The measurement chapter's mean signature sink mass and JS reversal rate of each default model it has results for."""
    from ..engine.registry import REGISTRY
    from .results import read_results

    out = {}
    for name in REGISTRY:
        try:
            summary = read_results("measurement", name, directory)["results"]["summary"]
        except FileNotFoundError:
            continue
        out[name] = {"signature_sink_mass": summary["signature_sink_mass"]["mean"], "js": summary["reversal"]["js"]["mean"]}
    return out


def predictor_sentence(outcomes: list[dict], spec: dict) -> str:
    """How many confirmations, failures and abstentions the predictor gave, and its deviation where it did not abstain."""
    from collections import Counter

    from .report import plural

    if not outcomes:
        return "No checkpoint here has three heads or more, so the predictor has no reversal rate to predict."
    counts = Counter(o["outcome"] for o in outcomes)
    inside = [o["mean |dev.| (points)"] for o in outcomes if o["outcome"] != "abstention"]
    text = (f"Over {len(outcomes)} checkpoints the predictor gave {plural(counts.get('confirmation', 0), 'confirmation')}, "
            f"{plural(counts.get('failure', 0), 'failure')} and {plural(counts.get('abstention', 0), 'abstention')}. ")
    if inside:
        return text + f"Where it did not abstain, the mean absolute deviation was {np.mean(inside):.1f} points (tolerance {spec['tolerance_points']})."
    return text + "It abstained on every checkpoint, so these checkpoints do not test it."


def frozen_order(frozen, chapter_added) -> str:
    """Whether the predictor was committed before this chapter's checkpoints existed, from the two ``(hash, date)`` first commits."""
    if frozen and chapter_added and frozen != chapter_added:
        return (f"It was committed in {frozen[0]} ({frozen[1]}); this chapter's notebook first appeared in {chapter_added[0]} ({chapter_added[1]}), "
                "and the suite's code with it, so the predictor was frozen before any of these checkpoints existed.")
    return "The order of the predictor's freezing and this chapter's first run is in the project's git history (this copy's history is too shallow to show it)."


def glue_protocol(options, steps: int, suite_seeds, endpoint_models) -> None:
    """Hand the protocol box its values: windows, seeds, the suite's sizes and schedule, the search's winner and its control,
    the target sink mass and the endpoints."""
    from ..base import protocol
    from ..engine import checkpoints, training
    from ..studies.sink_search import GROWN, SUITE_TRIALS
    from .report import glue

    sink_trial, control_trial = SUITE_TRIALS["search winner"], SUITE_TRIALS["control"]
    values = {
        "N": options.n, "L": options.length, "seed": options.seed, "first_row": protocol.COLLAPSE_FIRST_ROW, "n_triples": f"{options.n_triples:,}",
        "revisions": ", ".join(checkpoints.PYTHIA_REVISIONS), "suite_seeds": ", ".join(map(str, suite_seeds)), "steps": f"{steps:,}",
        "sizes": "; ".join(f"{k}: width {h}, {l} layers × {a} heads" for k, (h, l, a) in training.SUITE_SIZES.items()),
        "schedule": ", ".join(map(str, training.log_spaced_steps(steps))),
        "sink_trial": f"{sink_trial.label} ({sink_trial.why})", "control_trial": f"{control_trial.label} ({control_trial.why})", "target": GROWN,
        "endpoint_list": ", ".join(endpoint_models) if endpoint_models else 'none (endpoints = "")',
    }
    for name, value in values.items():
        glue(name, value)


def no_triples_note(series) -> str:
    """Which runs have fewer than 3 heads, so no head triple and no reversal rate (absent from Figure 5a and the predictor's test)."""
    few = [s.name for s in series if s.points and s.points[0]["heads"] < 3]
    if not few:
        return ""
    return (f"{', '.join(few)} {'has' if len(few) == 1 else 'have'} fewer than three heads, so no head triple exists: "
            "their checkpoints have no reversal rate, and are absent from this figure and from the predictor's test below.")
