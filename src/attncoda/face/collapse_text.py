"""The collapse chapter's tables and sentences, each computed from its typed results
(:class:`attncoda.studies.collapse_suite.Series`, :class:`~attncoda.studies.collapse_suite.Endpoint`, the search's
trials), so a rerun on another model rewrites them."""

from __future__ import annotations

from ..studies.collapse_suite import SINK_GROWTH
from ..studies.claims import LEVEL

import numpy as np

from .report import bound, fixed, fmt

PYTHIA_TOKENS_PER_STEP = 1024 * 2048
"""Pythia's batch: 1,024 sequences of 2,048 tokens per step (Biderman et al., 2023)."""
PYTHIA_STEPS = 143_000
PYTHIA_SMALLEST = 70e6
"""Parameters of the smallest Pythia model the paper measures (Pythia-70M)."""
TASK_NAMES = {"text": "natural text", "backcopy": "the random-table Backcopy", "character-backcopy": "Guo et al.'s character Backcopy"}
START_NAMES = {"from_peak": "peak", "from_step0": "step 0", "none": "none"}


def _span(values, digits: int = 2) -> str:
    """The range of ``values`` as ``lo–hi`` (one number when they agree to ``digits``), so two ranges can stand in one
    sentence ("from 4.18–4.20 to 1.72–1.73")."""
    values = [v for v in values if v is not None and v == v]
    if not values:
        return "—"
    lo, hi = fixed(np.min(values), digits), fixed(np.max(values), digits)
    return lo if lo == hi else f"{lo}–{hi}"


# --------------------------------------------------------------------------- the search


def trial_rows(trials: list[dict]) -> list[dict]:
    """One table row per configuration the search tried, in the order tried."""
    rows = []
    for t in trials:
        run, a, b = t["run"], t["step0"], t["final"]
        rows.append({"configuration": t["label"], "what changed": t["why"], "parameters (M)": f"{t['parameters'] / 1e6:.2f}",
                     "steps": f"{run['steps']:,}", "sink mass, step 0 → final": f"{a['sink_mass']:.3f} → {b['sink_mass']:.3f}",
                     "trigger / other rows, final": (f"{b['trigger_sink_mass']:.3f} / {b['other_sink_mass']:.3f}" if "trigger_sink_mass" in b else "—"),
                     "sink heads, final": fmt(b.get("sink_heads")),
                     "training (min)": f"{training_minutes(t):.1f}", "above the target": above_target(t)})
    return rows


def training_minutes(trial: dict) -> float:
    """Minutes of training a trial took, every seed it was trained with included."""
    return sum(s["training_seconds"] for s in trial.get("seeds") or [trial]) / 60


def above_target(trial: dict) -> str:
    """Whether a trial's non-trigger sink passed the target: yes or no for one seed; for several, in how many, with each
    seed's final non-trigger sink mass."""
    seeds = trial.get("seeds")
    if not seeds:
        return "yes" if trial["grown"] else "no"
    finals = ", ".join(f"{s['final'].get('other_sink_mass', s['final']['sink_mass']):.2f}" for s in seeds)
    return f"in {sum(s['grown'] for s in seeds)} of {len(seeds)} seeds ({finals})"


def search_sentence(search: dict) -> str:
    """What the search found: how many configurations grew a sink past the target (in their first seed, and in every seed
    for those trained with several), and the range it reached on text and on the task. The configurations compared in
    one seed are not ranked."""
    trials, target = search["trials"], search["target"]
    grown = [t for t in trials if t["grown"]]
    several = [t for t in trials if t.get("seeds")]
    minutes = sum(training_minutes(t) for t in trials)
    extra = sorted({len(t["seeds"]) - 1 for t in several})
    seeds = f" ({len(several)} of them with {' or '.join(map(str, extra))} more seeds as well)" if several else ", one seed each"
    out = f"The search trained {len(trials)} configurations{seeds}, in {minutes:.0f} min of training in all. "
    out += (f"{len(grown)} of them grew the final sink mass (on the non-trigger rows, for a Backcopy task) above the target of {target} in their first seed ({', '.join(t['label'] for t in grown)}). " if grown
            else f"None of them grew the final sink mass (on the non-trigger rows, for a Backcopy task) above the target of {target}. ")
    for t in several:
        out += f"{t['label']} did so {above_target(t)}. "
    for task, name in TASK_NAMES.items():
        finals = [t["final"].get("other_sink_mass", t["final"]["sink_mass"]) for t in trials if t["run"]["task"] == task]
        if finals:
            where = "on its non-trigger rows " if task != "text" else ""
            out += f"On {name} the final sink mass {where}lay between {min(finals):.3f} and {max(finals):.3f}. "
    return out + "A configuration trained with one seed shows what its change did once, not a ranking."


# --------------------------------------------------------------------------- trajectories and shares


def groups(series) -> dict[str, dict[str, list[dict]]]:
    """``{panel: {run label: points}}`` for :func:`attncoda.face.figures.collapse.collapse_trajectories`: a trained run's
    monitor log (what :mod:`attncoda.monitor` wrote while it trained), or a given series' walked points."""
    out: dict[str, dict[str, list[dict]]] = {}
    for s in series:
        label = f"seed {s.training['seed']}" if s.training else s.name
        out.setdefault(s.group, {})[label] = s.monitor or s.points
    return out


def monitor_origin(series) -> str:
    """Where the figure's trained runs come from, in one sentence: the monitor during training, or (for runs trained
    before it watched them) their saved checkpoints replayed."""
    logs = [s.monitor for s in series if s.monitor]
    if not logs:
        return "The lines are the walked checkpoints' means."
    replayed = sum(any(r.get("origin") == "saved checkpoints" for r in log) for log in logs)
    if not replayed:
        return f"The lines are the logs that attncoda.monitor wrote while the {len(logs)} runs trained."
    return (f"The lines are attncoda.monitor's logs; {replayed} of the {len(logs)} runs were trained before the monitor watched them, "
            "so their logs replay the saved checkpoints.")


def short(name: str) -> str:
    """A run's name without the architecture prefix, for narrow tables."""
    return name.removeprefix("neox-").removeprefix("gpt2-")


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
    """What the task runs' trigger rows and other rows did, apart: two sentences per kind of run, each with the fall of H
    on those rows and the share of it that the sink carries (no comparison is worded: the table beside it has both)."""
    parts = []
    for kind in dict.fromkeys(s.kind for s in series if s.rows):
        runs = [s for s in series if s.kind == kind and s.rows]
        trig, other = ([r.rows[k] for r in runs] for k in ("trigger", "other"))
        if not any(x["share"] is not None and x["share"] == x["share"] for x in trig + other):
            continue
        fall = lambda rows: _span([x["start"]["entropy"] - x["end"]["entropy"] for x in rows])  # noqa: E731
        parts.append(f"{kind.capitalize()}, trigger rows (where the task needs attention): H fell by {fall(trig)} nats, and the sink carries "
                     f"{_span([x['share'] for x in trig])} of that fall.")
        parts.append(f"{kind.capitalize()}, the other rows: the sink mass went {_span([x['start']['sink_mass'] for x in other], 3)} → "
                     f"{_span([x['end']['sink_mass'] for x in other], 3)}, H fell by {fall(other)} nats, and the sink carries "
                     f"{_span([x['share'] for x in other])} of that fall.")
    return " ".join(parts)


def kind_summary(series) -> dict[str, dict]:
    """Per kind of series: the sink mass over all rows at the end and the shares shown, over its runs."""
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
        parts.append(f"{kind} ({k['runs']} runs): final sink mass over all rows {_span(k['final_sink'])}, share {_span(k['shares'])}")
    peaks = [s for s in series if s.shares.get("peak")]
    rejected = [s for s in peaks if not s.shares["peak"]["used"]]
    used = [s for s in peaks if s.shares["peak"]["used"] and "from_peak" in s.shares and "from_step0" in s.shares]
    text = "Per kind of run: " + "; ".join(parts) + "."
    never = [s for s in rejected if s.shares["peak"]["rise"] <= 0]
    small = [s for s in rejected if s.shares["peak"]["rise"] > 0]
    if never:
        text += (f" In {len(never)} of {len(peaks)} runs H never rose above its step-0 value (the largest change after step 0 is "
                 f"{min(s.shares['peak']['rise'] for s in never):.1e} to {max(s.shares['peak']['rise'] for s in never):.1e} nats), "
                 "so their share is measured from step 0.")
    if small:
        text += (f" In {len(small)} of {len(peaks)} runs H rose after step 0 by less than its spread across window samples: that is "
                 "noise, not a peak, so their share is measured from step 0.")
    if used:
        rises = [s.shares["peak"]["rise"] for s in used]
        spreads = [s.shares["peak"]["spread"] for s in used if s.shares["peak"]["spread"] is not None]
        text += (f" In {len(used)} runs H did rise after step 0, by {min(rises):.1e} to {max(rises):.1e} nats"
                 + (f", more than its spread across window samples ({min(spreads):.1e} to {max(spreads):.1e} nats)" if spreads else "") + "; ")
        pairs = [(s.shares["from_peak"]["share"], s.shares["from_step0"]["share"]) for s in used]
        defined = [(a, b) for a, b in pairs if a == a and b == b]
        if not defined:
            text += "H never fell below its peak or its start in any of them, so neither share is defined."
        elif all(f"{a:.2f}" == f"{b:.2f}" for a, b in defined):
            text += (f"where both shares are defined ({len(defined)} of {len(pairs)} runs), the share from that peak and from step 0 agree to two decimals.")
        else:
            text += "their shares from that peak and from step 0 differ (see the table)."
    return text


def alive(series) -> bool:
    """Whether a run learned: its training loss fell by more than 10 % from its first recorded stretch to its last."""
    losses = [p.get("train_loss") for p in series.points if p.get("train_loss") is not None]
    return len(losses) >= 2 and losses[-1] < 0.9 * losses[0]


def contrast_sentence(series) -> str:
    """The decomposition on the ladder against the control, which learns its task but has no reason to grow a sink;
    the control's training loss and H show that it did learn."""
    ladder, controls = [s for s in series if s.kind == "ladder"], [s for s in series if s.kind == "control"]
    if not ladder or not controls:
        return ""
    end = lambda s: s.points[-1].get("other_sink_mass", s.points[-1]["sink_mass"])  # noqa: E731
    text = (f"Across the ladder's {len(ladder)} runs the non-trigger sink mass ends at {_span([end(s) for s in ladder])} and the pooled share "
            f"is {_span([s.shown[1] for s in ladder])}. ")
    losses = [(s.points[1]["train_loss"], s.points[-1]["train_loss"]) for s in controls if len(s.points) > 1 and s.points[-1].get("train_loss") is not None]
    text += (f"The control (the random-table Backcopy on the same block and optimiser, {len(controls)} runs) "
             + (f"learned its task: its training loss fell from {_span([a for a, _ in losses])} to {_span([b for _, b in losses])} nats "
                if losses and all(alive(s) for s in controls) else "did not clearly learn its task (its training loss fell by less than 10 %), so it controls little: ")
             + f"and mean H went {_span([s.points[0]['entropy'] for s in controls])} → {_span([s.points[-1]['entropy'] for s in controls])}, while its "
             f"non-trigger sink mass ended at {_span([end(s) for s in controls], 3)}; its pooled share is {_span([s.shown[1] for s in controls])}.")
    return text


def size_rows(sizes) -> list[dict]:
    """One row per group of task runs (:class:`~attncoda.studies.collapse_suite.SizeShares`): final non-trigger sink mass and
    share of sink heads per seed, and each share's mean over seeds with its 95 % t interval."""
    rows = []
    for z in sizes:
        row = {"runs": z.group, "seeds": len(z.seeds), "non-trigger sink mass, final (per seed)": ", ".join(f"{v:.2f}" for v in z.final_other_sink),
               "sink heads (per seed)": ", ".join(f"{v:.2f}" for v in z.final_sink_heads)}
        for name, v in z.shares.items():
            row[f"share, {name}: mean [95 % CI]"] = f"{fmt(v['mean'])} [{bound(v['low'])}, {bound(v['high'])}]"
        rows.append(row)
    return rows


def ladder_sentence(sizes, pythia: dict[str, float], target: float) -> str:
    """Which sizes grew a sink in every seed (non-trigger mass above ``target``), and their shares beside the paper's."""
    ladder = [z for z in sizes if z.kind == "ladder"]
    if not ladder:
        return ""
    grew = [z for z in ladder if z.grew]
    text = (f"{len(grew)} of the ladder's {len(ladder)} sizes grew a sink in every seed (final non-trigger sink mass above {target})"
            + (f": {', '.join(z.group for z in grew)}. " if grew else ". "))
    parts = [f"{z.group}: {fmt(z.shares['pooled (shown)']['mean'])} [{bound(z.shares['pooled (shown)']['low'])}, {bound(z.shares['pooled (shown)']['high'])}]"
             for z in ladder]
    return (text + "Pooled shares, mean over seeds [95 % t interval]: " + "; ".join(parts) + ". The paper's shares on Pythia's checkpoints, "
            f"for comparison: {', '.join(f'{k} {v:.0%}' for k, v in pythia.items())} (other models, trained on text, the paper's numbers).")


def answer_sentence(sizes, series, pythia: dict[str, float]) -> str:
    """The chapter's numbers in detail, as a Markdown list: each size's pooled share of the fall of H carried by the sink,
    mean over seeds [95 % t interval], with how many seeds grew a sink, the control's, and the paper's range last (a
    series of someone's own checkpoints, which has no sizes, gives its own share and sink mass)."""
    from ..studies.sink_search import GROWN

    paper = f"- The paper: {min(pythia.values()):.0%} to {max(pythia.values()):.0%} on Pythia's checkpoints (other models, trained on text)."
    if not sizes:
        start = {"from_peak": "from its peak", "from_step0": "from the first checkpoint", "none": "undefined: H did not fall"}
        runs = [f"- {s.name}: {fmt(s.shown[1])} ({start[s.shown[0]]}; mean sink mass {fixed(s.sink_growth[0], 3)} → {fixed(s.sink_growth[1], 3)})."
                for s in series]
        return "\n".join(runs + [paper]) if runs else ""

    def share(z) -> str:
        pooled = z.shares["pooled (shown)"]
        return f"{fmt(pooled['mean'])} [{bound(pooled['low'])}, {bound(pooled['high'])}]"

    items = []
    for z in sizes:
        label = z.group.split(",")[0].removeprefix("size ")
        finals = f"final non-trigger sink mass {_span(z.final_other_sink)}"
        if z.kind == "control":
            items.append(f"- The control, which has no reason to grow a sink: {share(z)} ({finals}).")
        else:
            grown = sum(v > GROWN for v in z.final_other_sink)
            where = ("a sink grew in every seed" if z.grew else f"no seed grew one past {GROWN}" if grown == 0
                     else f"a sink grew in {grown} of {len(z.final_other_sink)} seeds")
            items.append(f"- {label}: {share(z)}; {where} ({finals}).")
    head = f"The share of the fall of H that the sink carries, mean over seeds [{100 * (1 - LEVEL):g} % t interval]:\n\n"
    return head + "\n".join(items + [paper])


def figure5a_sentence(series) -> str:
    """The rank correlation of the JS reversal rate with signature sink mass within each run, and a sign test over the
    runs (:func:`~attncoda.studies.claims.within_run_trend`). This is a question across training; the paper's
    Figure 5a is about scale within a family, which the scorecard judges on its own row."""
    from ..studies import claims as scorecard

    record = {"collapse": {"runs": {"series": [{"name": s.name, "points": s.points} for s in series]}}}
    o = scorecard.within_run_trend(record)
    if not o.get("runs"):
        return "No run has five checkpoints with a reversal rate, so nothing is said about how the reversal rate moves with sink mass."
    text = ("Within each run with a head triple, over its checkpoints, Spearman ρ of the JS reversal rate with signature sink mass: "
            + ", ".join(f"{short(n)} {r:.2f}" for n, r in o["rhos"].items()) + ". Checkpoints of one run are not independent samples, so each ρ "
            "describes its run and is not tested; the runs are independent. ")
    if o["smallest_p"] >= scorecard.LEVEL:
        return text + f"With {o['runs']} runs a sign test cannot reach the 5 % level (its smallest p is {o['smallest_p']:.2f}), so no direction is claimed."
    reading = {scorecard.REPRODUCED: "the reversal rate rises with sink mass within runs", scorecard.REVERSED: "the reversal rate falls with sink mass within runs",
               scorecard.UNDECIDED: "the runs do not agree on a direction"}[o["verdict"]]
    return text + f"ρ is positive in {o['up']} of {o['runs']} runs (exact two-sided sign test p = {o['p']:.3f}): {reading}."


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
                 + ". The share shown counts it with the sink, as the identity H = h(s) + s·H(sink parts) + (1 − s)·H(π) allows.")
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
    for kind in dict.fromkeys(s.kind for s in trained):
        runs = [s for s in trained if s.kind == kind]
        shares = [s.shown[1] for s in runs if s.shown[1] == s.shown[1]]
        grew = sum(1 for s in runs if s.sink_growth[1] - s.sink_growth[0] >= SINK_GROWTH)
        carried = ("" if not shares else " (the sink carries most of the fall of H)" if min(shares) > 0.5
                   else " (the content carries most of the fall of H)" if max(shares) < 0.5 else " (the sink carries most of it in some runs, the content in others)")
        text += f"{kind.capitalize()}: the pooled sink mass grew by {SINK_GROWTH} or more in {grew} of {len(runs)} runs, share {_span(shares)}{carried}. "
    ladder = [s for s in trained if s.kind == "ladder"]
    if ladder:
        from ..studies.sink_search import GROWN

        by_size: dict[str, list] = {}
        for run in ladder:
            by_size.setdefault(run.group, []).append(run.points[-1].get("other_sink_mass", run.points[-1]["sink_mass"]) > GROWN)
        grown = [g for g, flags in by_size.items() if all(flags)]
        text += (f"A sink grew in every seed at {len(grown)} of the ladder's {len(by_size)} sizes. So the ladder asks how much of the fall a "
                 "growing sink carries; it cannot test whether that share rises with scale. ")
        text += "The paper's numbers belong to models trained on billions of tokens of text."
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
    sink = sum(s.training["training_seconds"] for s in trained if s.kind in ("ladder", "control")) / 60
    text = "Training took " + ", ".join(parts) + " (as recorded when they were trained, on the machine that trained them)"
    if any(s.kind in ("ladder", "control") for s in trained):
        text += f"; the ladder with its control took {sink:.1f} min, {'within' if sink <= budget_minutes else 'over'} the budget of {budget_minutes} min"
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


def schedule_text(recipe) -> str:
    """A run's checkpoint steps in words: how many, and the rule that places them (log-spaced, and every ``every`` steps
    where set), rather than a list of numbers no reader holds.

    >>> from attncoda.engine.training import SuiteRun
    >>> schedule_text(SuiteRun("x", 8, 1, 1, 0, steps=100, every=25))
    '12 steps from 0 to 100: log-spaced (0, 1, 2, 4, 8, 16, …), and every 25 steps'
    """
    steps = recipe.schedule()
    head = ", ".join(map(str, steps[:6]))
    return f"{len(steps)} steps from {steps[0]} to {steps[-1]}: log-spaced ({head}, …)" + (f", and every {recipe.every} steps" if recipe.every else "")


def glue_protocol(params: dict, names: list[str]) -> None:
    """Hand the protocol box its values: from the chapter's parameters ``params``
    (:func:`~attncoda.face.results.run_parameters`) its windows, seeds and the ladder's steps (0: the recipe's own),
    the ladder's recipe, sizes and checkpoints, the control, the target sink mass, and the endpoint models ``names``."""
    from dataclasses import replace

    from ..base import protocol
    from ..engine import checkpoints
    from ..studies import sink_search
    from .report import glue

    recipe = sink_search.trial(sink_search.LADDER_TRIAL).run
    recipe = replace(recipe, steps=params["steps"] or recipe.steps)
    values = {
        "N": params["n"], "L": params["length"], "seed": params["seed"], "first_row": protocol.COLLAPSE_FIRST_ROW, "n_triples": f"{params['n_triples']:,}",
        "revisions": ", ".join(checkpoints.PYTHIA_REVISIONS), "suite_seeds": ", ".join(map(str, params["suite_seeds"])), "steps": f"{recipe.steps:,}",
        "sizes": "; ".join(f"{h}-wide, {l} layer{'s' if l > 1 else ''} × {a} head{'s' if a > 1 else ''}" for h, l, a in sink_search.LADDER.values()),
        "schedule": schedule_text(recipe), "batch": recipe.batch, "task_length": recipe.length, "rate": f"{recipe.learning_rate:g}",
        "rate_schedule": "constant from the first step" if recipe.rates == "constant" else f"warm-up over {recipe.warmup} steps, then cosine decay to a tenth",
        "ladder_trial": sink_search.LADDER_TRIAL, "control_trial": sink_search.CONTROL_TRIAL, "control_size": sink_search.CONTROL_SIZE.replace("x", " × "),
        "target": sink_search.GROWN, "sink_eps": sink_search.SINK_EPS,
        "endpoint_list": ", ".join(names) if names else 'none (endpoints = "")',
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
