"""The pruning chapter's tables and sentences, from typed sweep results and their readings (no computation decides here).

Every function takes ``results``, a ``{model: PruningResult}`` dict (:mod:`attncoda.studies.pruning_sweep`), and returns
table rows (lists of dicts) or sentences; :mod:`attncoda.studies.pruning_readings` makes every call about what differs.
"""

from __future__ import annotations

import numpy as np

from ..studies import pruning_readings as pr
from ..studies.pruning import SELECTION_NAMES, TABLE10_METRICS
from ..studies.pruning_sweep import STABLE_SHARE
from .report import sink_words


def ppl(x: float) -> str:
    """A perplexity to three significant figures, at least one decimal below 100 (``12.3``, ``274``, ``8,789``)."""
    return f"{x:.1f}" if x < 100 else f"{x:,.0f}"


def seeds_text(values) -> str:
    return ", ".join(ppl(v) for v in values)


def p_text(p: float) -> str:
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def glue_protocol(params: dict, names: list[str]) -> None:
    """Hand the protocol box its values: the models ``names``, the chapter's parameters ``params``
    (:func:`~attncoda.face.results.run_parameters`) and the readings' level and bootstrap draws."""
    from .report import glue

    glue("model_list", ", ".join(names))
    glue("n_seeds", str(len(params["seeds"])))
    glue("tie_draws", params["tie_draws"])
    glue("random_sets", params["random_sets"])
    glue("n_windows", params["n_windows"])
    glue("calibration_windows", params["calibration_windows"])
    glue("L", params["length"])
    glue("level", f"{pr.LEVEL:g}")
    glue("boot", f"{pr.BOOTSTRAP_DRAWS:,}")
    glue("ci", f"{100 * (1 - pr.LEVEL):.0f}")


def table10_rows(results: dict) -> list[dict]:
    """Ours, as the paper prints Table 10: base (bootstrap interval) and each Table 10 metric's geometric mean over its
    sets (every seed and tie-break draw), with the range of those sets."""
    rows = []
    for name, r in results.items():
        lo, hi = pr.base_interval(r.base)
        for sp in r.sparsities:
            row = {"model": name, "sparsity (%)": round(100 * sp), f"base [{100 * (1 - pr.LEVEL):.0f} % CI]": f"{ppl(r.base.perplexity)} [{ppl(lo)}, {ppl(hi)}]"}
            for m in (m for m in TABLE10_METRICS if m in r.metrics_at(sp)):
                values = [s.perplexity for s in r.metric_sets(m, sp)]
                row[SELECTION_NAMES[m]] = f"{ppl(pr.geometric_mean(values))} [{ppl(min(values))}, {ppl(max(values))}]"
            rows.append(row)
    return rows


def paper_table10_rows(paper: dict) -> list[dict]:
    """The paper's Table 10 with its columns named as this chapter names them (its JS keeps the sink)."""
    rows = []
    for model, v in paper["table10"]["models"].items():
        for sp, per in v["rows"].items():
            rows.append({"model": model, "sparsity (%)": round(100 * float(sp)), "base": f"{v['base'][0]} ± {v['base'][1]}",
                         **{SELECTION_NAMES[k]: f"{x[0]} ± {x[1]}" for k, x in per.items()}})
    return rows


def random_rows(cells: list) -> list[dict]:
    """Each metric placed among the random prune sets: each seed's geometric median over its tie-break draws, the random
    sets, the rank test's p, the smallest p its design can give, the Holm-adjusted p and the reading."""
    return [{"model": c.model, "sparsity (%)": round(100 * c.sparsity), "metric": SELECTION_NAMES[c.metric],
             "per-seed medians": seeds_text(c.seed_medians),
             "random: median [min, max] (n)": f"{ppl(c.random_median)} [{ppl(c.random_min)}, {ppl(c.random_max)}] ({c.random_n})",
             "p": p_text(c.p), "smallest possible p": p_text(c.smallest_p), "Holm p": p_text(c.p_holm), "reading": c.reading} for c in cells]


def short_reading(reading: str) -> str:
    """A reading without its "than / from random" tail (for a column already about random sets)."""
    return reading.replace(" from random", "").replace(" than random", "")


def table11_rows(results: dict, cells: list) -> list[dict]:
    """Ours, as the paper prints Table 11 (the focus sparsity): total d_A, JS′ (geometric mean over their sets, with the
    reading against random) and the random sets."""
    rows = []
    for name, r in results.items():
        by = {c.metric: c for c in cells if c.model == name and c.sparsity == r.focus}
        draws = [s.perplexity for s in r.randoms(r.focus)]
        rows.append({"model": name, **{SELECTION_NAMES[m]: f"{ppl(by[m].geometric_mean)}: {short_reading(by[m].reading)}" for m in ("aitchison", "js") if m in by},
                     f"random ({len(draws)} sets): median [min, max]": f"{ppl(float(np.median(draws)))} [{ppl(min(draws))}, {ppl(max(draws))}]",
                     "first two random sets": " / ".join(ppl(d) for d in draws[:2])})
    return rows


def paper_table11_rows(paper: dict) -> list[dict]:
    return [{"model": m, SELECTION_NAMES["aitchison"]: f"{v['aitchison'][0]} ± {v['aitchison'][1]}", SELECTION_NAMES["js"]: f"{v['js'][0]} ± {v['js'][1]}",
             "random A / B": f"{v['random'][0]} / {v['random'][1]}"} for m, v in paper["table11"]["models"].items()]


def contrast_rows(contrasts: list) -> list[dict]:
    """Metric against metric: ratio of geometric-mean perplexities with its hierarchical-bootstrap interval, each seed's
    own ratio, the Holm-adjusted p and the reading."""
    return [{"model": c.model, "sparsity (%)": round(100 * c.sparsity), "a / b": f"{SELECTION_NAMES[c.a]} / {SELECTION_NAMES[c.b]}",
             f"ratio [{100 * (1 - pr.LEVEL):.0f} % CI]": f"{c.ratio:.2f} [{c.low:.2f}, {c.high:.2f}]",
             "per seed": ", ".join(f"{x:.2f}" for x in c.seed_ratios), "Holm p": p_text(c.p_holm), "reading": c.reading} for c in contrasts]


def overlap_rows(results: dict) -> list[dict]:
    """At the focus sparsity: shared heads between metrics, across seeds and across tie-break draws."""
    rows = []
    for name, r in results.items():
        o = pr.set_overlaps(r, r.focus)
        row = {"model": name}
        for pair in o["between"]:
            row[f"{SELECTION_NAMES[pair['a']]} ∩ {SELECTION_NAMES[pair['b']]}"] = pair["share"]
        rows.append({**row, **{f"{SELECTION_NAMES[m]}: across seeds": v for m, v in o["across_seeds"].items()},
                     **{f"{SELECTION_NAMES[m]}: across tie-break draws": v for m, v in o["across_draws"].items()}})
    return rows


def reading_sentence(cells: list) -> str:
    """Which metrics the rank test separates from random, as a Markdown list with one item per model; the rest are
    counted as indistinguishable (or undecided, where the design cannot reach the level)."""
    items = []
    for name in dict.fromkeys(c.model for c in cells):
        mine = [c for c in cells if c.model == name]
        decided = [f"{SELECTION_NAMES[c.metric]} at {100 * c.sparsity:.0f} % {c.reading} (Holm p = {p_text(c.p_holm)})" for c in mine if c.reading.endswith("than random")]
        counts = {reading: sum(c.reading == reading for c in mine) for reading in ("indistinguishable from random", pr.UNDECIDED)}
        rest = [f"{n} {'cell' if n == 1 else 'cells'} {reading}" for reading, n in counts.items() if n]
        items.append(f"- {name}: " + "; ".join(decided + rest) + ".")
    return "\n".join(items)


def _decided(contrasts: list) -> list:
    return [c for c in contrasts if c.reading.endswith("prunes better")]


def _no_contrast(contrasts: list) -> str:
    """The sentence when no pair differs (lower case: the caller capitalizes where it starts one)."""
    undecided = sum(c.reading == pr.UNDECIDED for c in contrasts)
    return (f"no pair of metrics differs at any sparsity on any model ({len(contrasts)} comparisons, Holm-adjusted)"
            + (f"; {undecided} of them cannot reach the level with this few samples." if undecided else "."))


def _others(contrasts: list, decided: list) -> str:
    """What the pairs that do not differ read: indistinguishable, or unable to reach the level (a test that cannot
    reach it decides nothing, so those are not called indistinguishable)."""
    others = len(contrasts) - len(decided)
    undecided = sum(c.reading == pr.UNDECIDED for c in contrasts)
    return ("Every other pair is indistinguishable." if not undecided else
            f"The other {others} cannot reach the level with this few samples." if undecided == others else
            f"Of the other {others}, {undecided} cannot reach the level with this few samples and the rest are indistinguishable.")


def _contrast_frame(contrasts: list, decided: list, body: str) -> str:
    """``N of M metric pairs differ …: body.`` and what the other pairs read (:func:`_others`)."""
    return f"{len(decided)} of {len(contrasts)} metric pairs differ after Holm's adjustment: {body}. {_others(contrasts, decided)}"


def contrast_sentence(contrasts: list) -> str:
    """Every pair that differs after Holm's adjustment, with its ratio, interval and adjusted p: a count, then a Markdown
    list with one item per pair, then what the other pairs read."""
    decided = _decided(contrasts)
    if not decided:
        sentence = _no_contrast(contrasts)
        return sentence[:1].upper() + sentence[1:]
    others = _others(contrasts, decided)
    items = [f"- {c.model} at {100 * c.sparsity:.0f} %: {c.reading} than {SELECTION_NAMES[c.b if c.ratio < 1 else c.a]} "
             f"(ratio {c.ratio:.2f} [{c.low:.2f}, {c.high:.2f}], Holm p = {p_text(c.p_holm)})." for c in decided]
    return f"{len(decided)} of {len(contrasts)} metric pairs differ after Holm's adjustment. {others}\n\n" + "\n".join(items)


def contrast_answer(contrasts: list) -> str:
    """The page's answer in one clause: how many metric pairs differ after Holm's adjustment, and which metric prunes
    better in them, counted per model (the pairs themselves are listed by :func:`contrast_sentence`, further down)."""
    decided = _decided(contrasts)
    if not decided:
        return _no_contrast(contrasts)
    by_winner: dict[str, dict[str, int]] = {}
    for c in decided:
        models = by_winner.setdefault(c.reading.removesuffix(" prunes better"), {})
        models[c.model] = models.get(c.model, 0) + 1
    return _contrast_frame(contrasts, decided, "; ".join(
        f"{winner} prunes better in {sum(models.values())} (" + ", ".join(f"{n} on {model}" for model, n in models.items()) + ")"
        for winner, models in by_winner.items()))


def blow_up_sentence(results: dict, paper: dict) -> str:
    """The kept-row JS's largest geometric-mean blow-up over the base here, beside the paper's Llama-3.2-1B figure."""
    worst = max(((name, sp, pr.geometric_mean([s.perplexity for s in r.metric_sets("js_keep", sp)]) / r.base.perplexity)
                 for name, r in results.items() for sp in r.sparsities), key=lambda x: x[2])
    llama = paper["table10"]["models"]["Llama-3.2-1B"]
    js = llama["rows"]["0.2"]["js_keep"][0]
    return (f"The paper's \"wrong channel\" is Llama-3.2-1B at 20 %: JS with the sink kept gives {js:,.1f} against a base of {llama['base'][0]} "
            f"({js / llama['base'][0]:.0f}×, the paper's numbers). Here the largest such blow-up, as a geometric mean over all its sets, is "
            f"{worst[2]:.1f}× on {worst[0]} at {100 * worst[1]:.0f} %: {'over' if worst[2] > 100 else 'far under'} a hundredfold.\n\n"
            + largest_sets_sentence(results))


DECIDERS = {"tie-break": "the tie-break draw decides it, more than the metric",
            "seed": "the text sample (seed) decides it, more than the tie-break",
            "metric": "every set of the cell lies within 2× of the others: the metric's choice itself"}


def largest_sets_sentence(results: dict, top: int = pr.TOP_BLOW_UPS) -> str:
    """The ``top`` cells whose worst single prune set has the largest perplexity over the base, with what decides it
    (:class:`~attncoda.studies.pruning_readings.BlowUp`), as a Markdown list: two sentences per cell."""
    items = [f"- {b.model}, {SELECTION_NAMES[b.metric]} at {100 * b.sparsity:.0f} %: {ppl(b.worst)} (seed {b.worst_seed}, draw {b.worst_draw}), "
             f"{b.worst / b.base:,.0f}× the unpruned {ppl(b.base)}; the cell's lowest set gives {ppl(b.low)}. Two draws of one seed "
             f"differ up to {b.draws_spread:,.1f}× and the seed medians {b.seeds_spread:,.1f}×, so {DECIDERS[b.decided_by]}."
             for b in pr.blow_ups(results.values(), top)]
    return ("The largest single prune sets:\n\n" + "\n".join(items)) if items else ""


def window_rows(studies: dict) -> list[dict]:
    """The window study per model and window count; ``studies`` is ``{model: window_study(result)}``
    (:func:`~attncoda.studies.pruning_readings.window_study`, computed once by the chapter)."""
    return [{"model": name, "windows": w.windows, "Spearman ρ with all windows": w.rho, f"order flips (pairs > {100 * STABLE_SHARE:.0f} % apart)": f"{100 * w.flips:.0f} % of {w.pairs}",
             "largest change of a log ratio": w.largest_change} for name, study in studies.items() for w in study]


def window_sentence(results: dict, studies: dict) -> str:
    """What the window study says at the sweep's own window count."""
    parts = []
    for name, r in results.items():
        mine = next(w for w in studies[name] if w.windows == r.heldout["windows"])
        parts.append(f"{name} ρ = {mine.rho:.3f}, {100 * mine.flips:.0f} % of {mine.pairs} pairs flipped")
    windows = next(iter(results.values())).heldout
    return (f"On {windows['windows']} windows instead of {windows['calibration_windows']}, the study's sets rank as follows against all windows: "
            + "; ".join(parts) + ".")


def precision_rows(checks: list) -> list[dict]:
    return [{"model": c.model, "set": label, "bf16": ppl(b), "float32": ppl(f), "relative difference": f"{abs(b / f - 1):.1e}"}
            for c in checks for label, b, f in c.pairs]


def precision_sentence(checks: list, contrasts: list) -> str:
    worst = max(checks, key=lambda c: c.max_relative)
    swaps = [(c.model, *s) for c in checks for s in c.swaps]
    if not swaps:
        return (f"bf16 and float32 differ by at most {100 * worst.max_relative:.2f} % in perplexity ({worst.model}); the checked metrics come "
                "in the same order under both on every model.")
    listed = "; ".join(f"on {m}, {a} and {b} ({100 * gap:.2f} % apart in bf16)" for m, a, b, gap in swaps)
    decided = [abs(c.ratio - 1) for c in contrasts if c.reading.endswith("prunes better")]
    margin = (f" Every pair of metrics this page calls different is at least {100 * min(decided):.0f} % apart, far beyond that." if decided and
              min(decided) > 4 * worst.max_relative else "")
    return (f"bf16 and float32 differ by at most {100 * worst.max_relative:.2f} % in perplexity ({worst.model}). Checked sets swap order "
            f"between the dtypes where they lie closer than that: {listed}.{margin}")


def cost_sentence(results: dict) -> str:
    """Evaluations per model and what they cost when nothing is cached (each evaluation's own time, read from its cache entry)."""
    parts = []
    total = 0.0
    for name, r in results.items():
        every = [s for s in r.scored + r.checks]
        unique = {(tuple(s.heads), s.dtype): s.seconds for s in every}
        seconds = sum(unique.values())
        total += seconds
        parts.append(f"{name}: {len(unique)} distinct evaluations (median {np.median(list(unique.values())):.1f} s), {seconds / 60:.0f} min")
    return "; ".join(parts) + f"; {total / 60:.0f} min in all when nothing is cached"


def paper_order_sentence(paper: dict) -> str:
    """Which Table 10 metric gives the paper's lowest perplexity, per model and sparsity (the paper's numbers: mean over
    three seeds, no test against random)."""
    parts = []
    for model, v in paper["table10"]["models"].items():
        best = {}
        for sp, per in v["rows"].items():
            best.setdefault(SELECTION_NAMES[min(per, key=lambda k: per[k][0])], []).append(f"{100 * float(sp):.0f}")
        parts.append(f"{model}: " + "; ".join(f"{m} at {', '.join(sps)} %" for m, sps in best.items()))
    return "In the paper's Table 10 the lowest perplexity comes from " + "; on ".join(parts) + "."


def stakes_rows(results: dict) -> list[dict]:
    """Table 8's stakes for the prune set (first seed): retention under temperature and overlap across sink definitions."""
    rows = []
    for name, r in results.items():
        s = r.stakes
        rows.append({"model": name, "JS′ retention over τ (min)": s["js"]["retention_min"], "d_A^⊥ retention over τ (min)": s["content"]["retention_min"],
                     f"JS′ overlap, default sink vs {sink_words(s['alternative_sink'])}": s["js"]["sink_set_overlap"],
                     f"d_A^⊥ overlap, default sink vs {sink_words(s['alternative_sink'])}": s["content"]["sink_set_overlap"]})
    return rows


def stakes_sentence(results: dict) -> str:
    exact = all(r.stakes["content"]["retention_min"] == 1.0 for r in results.values())
    lowest = min(r.stakes["js"]["retention_min"] for r in results.values())
    return (("The content distance keeps exactly the same prune set under every temperature on every model" if exact else
             "The content distance's prune set moved under some temperature: a bug (it scales by 1/τ)")
            + f"; JS′ keeps as little as {lowest:.2f} of it. " + sink_set_sentence(results))


def sink_set_sentence(results: dict) -> str:
    """Whether redefining the sink (the default set against the alternative, e.g. ``first4``) changes each metric's
    prune set, model by model, from the overlaps: an overlap of exactly 1 is the same set."""
    labels = {"js": "JS′", "content": "d_A^⊥"}
    parts = []
    for metric, label in labels.items():
        unchanged = [name for name, r in results.items() if r.stakes[metric]["sink_set_overlap"] == 1.0]
        changed = {name: r.stakes[metric]["sink_set_overlap"] for name, r in results.items() if name not in unchanged}
        if not changed:
            parts.append(f"{label}'s prune set is the same under either sink definition on every model")
        else:
            moved = ", ".join(f"{name} {overlap:.2f}" for name, overlap in changed.items())
            parts.append(f"{label}'s prune set changes with the sink definition (overlap {moved})"
                         + (f" but not on {', '.join(unchanged)}" if unchanged else ""))
    alternative = sorted({sink_words(r.stakes["alternative_sink"]) for r in results.values()})
    return f"Redefining the sink (the default against the {', '.join(alternative)}): " + "; ".join(parts) + "."
