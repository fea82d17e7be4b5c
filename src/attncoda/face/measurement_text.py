"""The measurement chapter's tables and sentences, from typed results (no computation decides here).

``results`` is a ``{label: Measurement}`` dict (:mod:`attncoda.studies.measurement_results`), each with its predictor
verdicts filled in (:func:`attncoda.studies.predictor.evaluate_measured`); ``paper`` is ``data/paper/reference.json``.
Functions return table rows (lists of dicts) or sentences.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..studies.reversal import TABLE2_METRICS
from .report import pct, plural
OUTCOMES = ("confirmation", "abstention", "failure")


def table2_rows(results: dict, paper: dict) -> list[dict]:
    """Ours as Table 2: sink masses, reversal rates (mean ± sd over seeds), and the paper's row for a model it also has."""
    rows = []
    for name, r in results.items():
        s = r.summary
        row = {"model": name, "heads": r.layers * r.heads, "sink (row/sig.)": f"{s.row_sink_mass.mean:.2f}/{s.signature_sink_mass.mean:.2f}",
               "cosine": pct(s.reversal["cosine"]), "JS": pct(s.reversal["js"]), "Euclid.": pct(s.reversal["euclidean"]),
               "Hell./FR": pct(s.reversal["hellinger"]), "d_A^⊥": pct(s.reversal["content"]), "collapse disagr.": pct(s.collapse_disagreement)}
        paper_row = paper["table2"]["models"].get(name)
        if paper_row:  # the same model in the paper: its row beside ours
            row["paper: cos / JS / Euclid. / Hell."] = " / ".join(str(paper_row[m][0]) for m in TABLE2_METRICS)
        rows.append(row)
    return rows


def paper_table2_rows(paper: dict) -> list[dict]:
    """The paper's Table 2 rows as printed (mean ± sd over its seeds)."""
    both = lambda v: f"{v[0]} ± {v[1]}"  # noqa: E731
    return [{"model": m, "sink (row/sig.)": f"{v['row_sink']:.2f}/{v['sig_sink']:.2f}", "cosine": both(v["cosine"]), "JS": both(v["js"]),
             "Euclid.": both(v["euclidean"]), "Hell./FR": both(v["hellinger"]), "collapse disagr.": both(v["collapse_disagreement"])}
            for m, v in paper["table2"]["models"].items()]


def content_sentence(results: dict) -> str:
    """How many verdicts the content distance reversed, over every seed of every model (it must be none)."""
    reversed_ = sum(e.reversal["content"].reversed for r in results.values() for e in r.per_seed)
    compared = sum(e.reversal["content"].compared for r in results.values() for e in r.per_seed)
    return (f"The content distance reversed {reversed_} of the {compared} verdicts it was compared on"
            + (", as it must: it is computed by one code path, from the same logarithms, under both conventions, so the two verdicts cannot differ."
               if reversed_ == 0 else ". That is a bug: the content distance is computed by one code path under both conventions and must never reverse."))


def lemma1_sentence(results: dict) -> str:
    """Lemma 1's largest relative residual over the models' own signatures."""
    worst = max(r.summary.lemma1_max_relative_residual for r in results.values())
    return ("Lemma 1 itself is checked separately on each model's own signatures: over sampled pairs of heads the squared Aitchison distance "
            f"equals the sum of its within-sink, sink and content parts to a relative error of at most {worst:.1e}.")


def hf_sentence(results: dict) -> str:
    """Whether Hellinger and Fisher–Rao reversed the same triples everywhere (they share a column only if so)."""
    same = all(e.reversal["hellinger"].reversed == e.reversal["fisher_rao"].reversed for r in results.values() for e in r.per_seed)
    return ("Hellinger and Fisher–Rao reversed exactly the same triples in every seed of every model, so they share a column." if same else
            "Hellinger and Fisher–Rao did NOT reverse the same triples everywhere; see the results files.")


def path_rows(results: dict) -> list[dict]:
    """Reversal rates on log-path and probability-path signatures (mean over seeds), and their largest difference."""
    rows = []
    for name, r in results.items():
        s = r.summary
        row = {"model": name, "sig. sink (log / prob.)": f"{s.signature_sink_mass.mean:.3f} / {s.probability_path.signature_sink_mass.mean:.3f}"}
        for m in TABLE2_METRICS:
            row[f"{m}: log / prob. (%)"] = f"{100 * s.reversal[m].mean:.2f} / {100 * s.probability_path.reversal[m].mean:.2f}"
        row["largest |difference| (points)"] = max(abs(100 * (s.reversal[m].mean - s.probability_path.reversal[m].mean)) for m in TABLE2_METRICS)
        rows.append(row)
    return rows


def path_sentence(results: dict) -> str:
    """How far the probability path's signatures move from the log path's, apart and where float32 underflowed."""
    runs = [(name, e.seed, e.probability_path.max_log_difference, e.eps_sweep.exact_zeros) for name, r in results.items() for e in r.per_seed]
    clean = [d for _, _, d, z in runs if z == 0]
    zero = [(n, sd, d, z) for n, sd, d, z in runs if z > 0]
    text = (f"On the {len(clean)} model-seed runs whose rows held no exact zero, no signature part differs between the paths by more than a factor "
            f"exp({max(clean):.1e}): averaging many windows' logarithms leaves little of the float32 rounding in the signatures." if clean else "")
    if zero:
        text += (" Where float32 did underflow to an exact zero, the probability path puts ln ε in place of the true logarithm and the signature part moves: "
                 + "; ".join(f"{n} seed {sd}: {plural(z, 'zero')}, a factor exp({d:.2g})" for n, sd, d, z in zero) + ".")
    return text


def deviation_rows(deviations: list[dict]) -> list[dict]:
    """:func:`attncoda.studies.predictor.curve_deviations` with the page's column names."""
    return [{"model": d["model"], "metric": d["metric"], "sink": d["sink"], "rate": d["rate"], "curve α=0.1": d["curve"],
             "deviation (points)": d["deviation"]} for d in deviations]


def deviation_summary(deviations: list[dict]) -> tuple[float, float]:
    """Mean and largest absolute deviation from the curve, in points."""
    a = np.abs([d["deviation"] for d in deviations])
    return float(a.mean()), float(a.max())


def deviation_by_metric(deviations: list[dict]) -> str:
    """Each metric's mean deviation and its range over models, metrics in alphabetical order."""
    parts = []
    for m in sorted({d["metric"] for d in deviations}):
        v = [d["deviation"] for d in deviations if d["metric"] == m]
        parts.append(f"{m}: {np.mean(v):+.1f} on average ({min(v):+.1f} to {max(v):+.1f})")
    return "; ".join(parts)


def curve_points(results: dict) -> dict:
    """Each model's signature sink mass and mean classical reversal rates, for the figure over the calibration curves."""
    return {name: {"sink_mass": r.summary.signature_sink_mass.mean, "rates": {m: r.summary.reversal[m].mean for m in TABLE2_METRICS}}
            for name, r in results.items()}


def outcome_rows(results: dict, spec: dict, curves: dict | None = None) -> list[dict]:
    """Predictor ``spec``'s verdict on each model: deviation per metric, mean |deviation|, outcome and why; with the
    frozen ``curves``, also each seed's own outcome beside it, and "borderline" where the seeds disagree (the outcome
    itself is the frozen rule's, on the seed means)."""
    from ..studies.predictor import borderline, per_seed_outcomes

    rows = []
    for name, r in results.items():
        ev = r.predictor[f"v{spec['version']}"]
        row = {"model": name, "signature sink": f"{r.summary.signature_sink_mass.mean:.2f}",
               **{f"{m} dev.": f"{ev['deviation_points'][m]:+.1f}" for m in spec["metrics"]},
               "mean |dev.|": f"{ev['mean_abs_deviation_points']:.1f}", "outcome": ev["outcome"]}
        if curves is not None:
            seeds = per_seed_outcomes(curves, spec, r)
            row["each seed"] = ", ".join(seeds)
            row["outcome"] += " (borderline)" if borderline(seeds) else ""
        rows.append({**row, "why": ev["why"]})
    return rows


def borderline_sentence(results: dict, spec: dict, curves: dict) -> str:
    """Which models' outcome under predictor ``spec`` the seeds do not agree on, from each seed's own outcome."""
    from ..studies.predictor import borderline, per_seed_outcomes

    split = {name: per_seed_outcomes(curves, spec, r) for name, r in results.items()}
    split = {name: seeds for name, seeds in split.items() if borderline(seeds)}
    if not split:
        return f"Seed by seed, v{spec['version']} gives every model the outcome of its seed means."
    told = "; ".join(f"{name}: {', '.join(seeds)}" for name, seeds in split.items())
    return (f"Seed by seed, v{spec['version']} does not agree with itself on {plural(len(split), 'model')} ({told}): "
            f"{'its' if len(split) == 1 else 'their'} outcome on the seed means is borderline, and another draw of text could turn it.")


def outcome_counts(results: dict, version: int) -> Counter:
    """How many models each outcome of predictor ``version`` got."""
    return Counter(r.predictor[f"v{version}"]["outcome"] for r in results.values())


def outcomes_text(counts: Counter) -> str:
    """``2 confirmations, 1 abstention and 0 failures``."""
    return ", ".join(plural(counts.get(k, 0), k) for k in OUTCOMES[:2]) + f" and {plural(counts.get('failure', 0), 'failure')}"


def outcomes_list(counts: Counter) -> str:
    """``2 confirmations, 1 abstention, 0 failures``."""
    return ", ".join(plural(counts.get(k, 0), k) for k in OUTCOMES)


def rise_points(results: dict) -> tuple[list[float], list[float]]:
    """Each model's signature sink mass and its mean classical reversal rate (a fraction)."""
    sinks = [r.summary.signature_sink_mass.mean for r in results.values()]
    rates = [float(np.mean([r.summary.reversal[m].mean for m in TABLE2_METRICS])) for r in results.values()]
    return sinks, rates


def sweep_rows(results: dict) -> list[dict]:
    """The ε sweep per model and seed: exact zeros met, whether verdicts were bit-identical, the most that changed."""
    return [{"model": name, "seed": e.seed, "exact zeros met": e.eps_sweep.exact_zeros, "bit-identical": e.eps_sweep.all_identical,
             **{f"max differing verdicts, {m}": v for m, v in e.eps_sweep.max_differing_verdicts.items()}}
            for name, r in results.items() for e in r.per_seed]


def sweep_sentence(results: dict) -> str:
    """What the ε sweep changed, and why."""
    runs = [e.eps_sweep for r in results.values() for e in r.per_seed]
    identical, zeros = sum(bool(s.all_identical) for s in runs), sum(s.exact_zeros for s in runs)
    if identical == len(runs):
        text = f"On the probability path, verdicts were bit-identical across the sweep in all {len(runs)} model-seed runs."
    else:
        text = (f"On the probability path, verdicts were bit-identical across the sweep in {identical} of {len(runs)} model-seed runs; "
                "the table gives the largest number of verdicts that changed.")
    if zeros == 0:
        return text + " The signatures' rows held no exact zero, so ε replaced nothing, as the protocol predicts."
    return text + (f" The signatures' rows held {plural(zeros, 'exact zero')} in all (float32 underflow), the only parts ε touches; "
                   + ("changing ε moved those parts but no verdict." if identical == len(runs) else "where verdicts moved, those zeros moved them."))


def differences_sentence(results: dict, paper: dict, deviations: list[dict]) -> str:
    """Plain statements comparing our measurement with the paper's, each from the numbers above."""
    sinks, _ = rise_points(results)
    notes = []
    paper_lm = [v["sig_sink"] for v in paper["table2"]["models"].values() if v["sig_sink"] > 0.5]
    notes.append(f"Our signature sink masses ({min(sinks):.2f}–{max(sinks):.2f}) are "
                 + ("lower than" if max(sinks) < min(paper_lm) else "comparable to") + f" those of the paper's language models ({min(paper_lm):.2f}–{max(paper_lm):.2f}).")
    ours, theirs = deviation_summary(deviations)[0], paper["figure3"]["mean_abs_deviation_points"]
    notes.append(f"The models sit {ours:.1f} points from the α = 0.1 curve on average; the paper reports {theirs:.1f} on its own models "
                 "(different models and no interval on either, so no direction is read into the two).")
    notes.append(sweep_sentence(results))
    counts = outcome_counts(results, 1)
    notes.append(f"Predictor v1 gave {plural(counts.get('confirmation', 0), 'confirmation')}, {plural(counts.get('abstention', 0), 'abstention')} and "
                 f"{plural(counts.get('failure', 0), 'failure')}; the paper reports {paper['predictor']['outcomes']}.")
    encoders = [name for name, r in results.items() if not r.causal]
    if encoders:
        failed = [name for name in encoders if results[name].predictor["v1"]["outcome"] == "failure"]
        notes.append(f"Encoders ({', '.join(encoders)}) are not among the paper's printed rows and lie outside the calibration's domain (a two-key sink set, "
                     f"signatures over every row); v1 failed on {len(failed)} of them, and v2 abstains on them by its stated domain.")
    return " ".join(notes)


def witness_triples(results: dict) -> dict[str, dict]:
    """Each model's measured witness triple (first seed) with its sink set, for the figure; models without one are left out."""
    from dataclasses import asdict

    return {name: {**asdict(r.first.witness), "sink": r.sink} for name, r in results.items() if r.first.witness}


def witness_values(results: dict) -> dict:
    """The page's numbers on the witness triples: in how many models one was found, and the share of triples (%)
    on which every classical verdict reverses."""
    found = witness_triples(results)
    missing = [name for name in results if name not in found]
    shares = [100 * w["share_of_triples"] for w in found.values()]
    counted = (f"all {len(results)} of our models" if not missing and len(results) > 1 else f"{len(found)} of our {plural(len(results), 'model')}"
               + (f" (not in {', '.join(missing)})" if missing else ""))
    return {"t_found": counted,
            "t_share_min": min(shares) if shares else 0.0, "t_share_max": max(shares) if shares else 0.0}


def witness_distance_rows(results: dict) -> list[dict]:
    """The flip as numbers: for each model's witness triple ``(p; q, r)``, each classical metric's distance from ``p`` to
    ``q`` and to ``r`` with the sink kept and dropped, and the head it calls closer under each convention (cosine is a
    similarity: larger is closer)."""
    from ..math.metrics import CLASSICAL, get_metric

    out = []
    for name, t in witness_triples(results).items():
        p, q, r = (np.asarray(row, dtype=np.float64) for row in t["rows"])
        sink = tuple(t["sink"])
        for metric in CLASSICAL:
            m = get_metric(metric)
            row = {"model": name, "metric": m.label}
            closer = {}
            for convention in ("keep", "drop"):
                dq, dr = float(m(p, q, convention, sink)), float(m(p, r, convention, sink))
                row[f"{convention}: to q"], row[f"{convention}: to r"] = f"{dq:.4f}", f"{dr:.4f}"
                closer[convention] = "q" if (dq > dr) == m.larger_is_closer else "r"
            row["closer (keep → drop)"] = f"{closer['keep']} → {closer['drop']}"
            out.append(row)
    return out


def share(count: int, total: int) -> str:
    """``count`` of ``total`` in percent with one decimal.

    Examples
    --------
    >>> share(1, 8)
    '12.5 %'
    """
    return f"{100 * count / total:.1f} %" if total else "—"


def layer_answer_rows(results: dict) -> list[dict]:
    """Per model, the counts of :func:`attncoda.studies.profiles.layer_answer` over its seeds' layer profiles, with the
    seed-0 share the figure shades (every move counted, however small)."""
    from ..studies.profiles import collapse_disagreement, layer_answer

    rows = []
    for name, r in results.items():
        a = layer_answer([s.layers for s in r.per_seed])
        first = r.first.layers
        rows.append({"model": name, "transitions": a["transitions"],
                     "opposite directions, seed 0 (any move)": f"{100 * collapse_disagreement(first['entropy'], first['content_entropy']):.1f} %",
                     "opposite directions in every seed": f"{a['opposite']} ({share(a['opposite'], a['transitions'])})",
                     "sink mass rises in every seed": a["sink_rises"],
                     "… and H falls": a["h_falls_with_sink"], "… and H(π) falls": a["content_falls_with_sink"]})
    return rows


def layer_answer_sentence(results: dict, paper: dict) -> str:
    """3.1's answer first: where the sink mass rises from one layer to the next (in every seed), how often ``H`` falls
    and how often ``H(π)`` does, and how often the two move apart in every seed, beside the paper's Table 2 shares."""
    from ..studies.profiles import layer_answer

    answers = [layer_answer([s.layers for s in r.per_seed]) for r in results.values()]
    rises = sum(a["sink_rises"] for a in answers)
    h_falls = sum(a["h_falls_with_sink"] for a in answers)
    content_falls = sum(a["content_falls_with_sink"] for a in answers)
    shares = [a["opposite"] / a["transitions"] for a in answers if a["transitions"]]
    seeds = len(next(iter(results.values())).per_seed)
    printed = [v["collapse_disagreement"][0] for v in paper["table2"]["models"].values()]
    if not rises:
        head = f"On no adjacent-layer transition of our {plural(len(results), 'model')} does the sink mass rise in all {seeds} seeds. "
    else:
        head = (f"Where the sink mass rises from one layer to the next in all {seeds} seeds ({rises} transitions over our "
                f"{plural(len(results), 'model')}), H falls on {h_falls} ({share(h_falls, rises)}) and the content entropy H(π) on "
                f"{content_falls} ({share(content_falls, rises)}). ")
    return (head + f"H and H(π) move in opposite directions in every seed on {100 * min(shares):.1f} % to {100 * max(shares):.1f} % of a "
            f"model's transitions; the paper counts every move of one profile and prints {min(printed):.1f} % to {max(printed):.1f} % "
            f"on its {len(printed)} models in Table 2 (other models, the paper's numbers).")
