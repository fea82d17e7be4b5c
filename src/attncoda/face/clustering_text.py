"""The clustering chapter's tables and sentences, from typed results (no computation decides here).

``results`` is a ``{model: EncoderClustering}`` dict and ``table5`` a ``{model: Table5Entry}`` dict
(:mod:`attncoda.studies.clustering`); ``paper`` is ``data/paper/reference.json``. Functions return table rows (lists
of dicts) or sentences.
"""

from __future__ import annotations

from ..studies.clustering import SampleSpread, range_coverage
from .detail_tables import classical_span, paper_table5_rows  # noqa: F401  (Table 5 is read the same way by both chapters)
from .report import plural

HEAD_SETS = ("sep", "cls", "sink")
PAPER_TABLE9_COLUMNS = {"js_cross": "JS cross", "js_sep_keep": "JS SEP Jac. (keep)", "js_sep_drop": "JS SEP Jac. (drop)",
                        "cosine_cross": "cos cross", "content_cross": "d_A^⊥ cross", "content_sep": "d_A^⊥ SEP Jac."}


def spread_cell(s: SampleSpread) -> str:
    """``median [min, max]`` over the samples, or ``—`` when the number is undefined in every sample."""
    return "—" if not s.finite else f"{s.median:.2f} [{s.low:.2f}, {s.high:.2f}]"


def set_size_rows(results: dict) -> list[dict]:
    """How many heads each set holds, and the per-head attention to [SEP] and [CLS], per model (first sample)."""
    rows = []
    for name, r in results.items():
        z = r.set_sizes()
        rows.append({"model": name, "heads": z["heads"], "[SEP] heads": z["sep"], "[CLS] heads": z["cls"], "sink heads": z["sink"],
                     "largest [SEP] mass": z["largest_sep_mass"], "mean [SEP] mass": z["mean_sep_mass"], "mean [CLS] mass": z["mean_cls_mass"]})
    return rows


def sets_sentence(results: dict) -> str:
    """Each model's head-set sizes in words."""
    parts = []
    for name, r in results.items():
        z = r.set_sizes()
        parts.append(f"{name} has {plural(z['sep'], '[SEP] head')} (largest per-head mean attention to [SEP]: {z['largest_sep_mass']:.2f}), "
                     f"{plural(z['cls'], '[CLS] head')} and {plural(z['sink'], 'sink head')} of {z['heads']}")
    return "; ".join(parts) + "."


def sep_verdict(results: dict) -> str:
    """Whether the [SEP]-head family of Clark et al. exists in these models."""
    with_sep = [name for name, r in results.items() if r.has_sep_heads]
    if with_sep:
        return "So the [SEP]-head family Clark et al. describe is present in: " + ", ".join(with_sep) + "."
    return ("None of these models has a single [SEP] head at the paper's threshold: the family Clark et al. describe in BERT-base "
            "is not there to find. Its Jaccard is undefined below, and the same analysis runs on the structure that does exist "
            "(the [CLS]- and sink-head sets).")


def table9_rows(result) -> list[dict]:
    """Ours for one model, a row per K: each number as median [min, max] over the window samples."""
    rows = []
    for k, per in result.spread.items():
        js, content = per["jaccard"]["js"], per["jaccard"]["content"]
        rows.append({"K": k, "JS cross": spread_cell(per["cross_ari"]["js"]),
                     **{f"JS {s} Jac. (keep)": spread_cell(js[s]["keep"]) for s in HEAD_SETS},
                     **{f"JS {s} Jac. (drop)": spread_cell(js[s]["drop"]) for s in HEAD_SETS},
                     "cos cross": spread_cell(per["cross_ari"]["cosine"]), "Euclid. cross": spread_cell(per["cross_ari"]["euclidean"]),
                     "d_A^⊥ cross": spread_cell(per["cross_ari"]["content"]), **{f"d_A^⊥ {s} Jac.": spread_cell(content[s]["keep"]) for s in HEAD_SETS}})
    return rows


def paper_table9_rows(paper: dict) -> list[dict]:
    """The paper's Table 9 with this chapter's column names."""
    return [{("K" if k == "K" else PAPER_TABLE9_COLUMNS[k]): v for k, v in row.items()} for row in paper["table9"]["rows"]]


def paper_js(paper: dict) -> dict[int, float]:
    """The paper's JS between-convention ARI at each K."""
    return {r["K"]: r["js_cross"] for r in paper["table9"]["rows"]}


def _places(spread: dict[int, SampleSpread], paper_values: dict[int, float]) -> str:
    """Where the paper's value at each K lies against our range, Ks with the same place grouped."""
    places = {k: spread[k].place(v) for k, v in paper_values.items() if k in spread}
    if len(set(places.values())) == 1:
        return f"the paper's values on BERT-base lie {next(iter(places.values()))} our range at every K"
    grouped: dict[str, list] = {}
    for k, place in places.items():
        grouped.setdefault(place, []).append(str(k))
    return "the paper's values on BERT-base lie " + " and ".join(f"{place} our range at K = {', '.join(ks)}" for place, ks in grouped.items())


def answer_sentence(results: dict, paper: dict) -> str:
    """The chapter's answer, first on the page: per model, the span over K of JS's median between-convention ARI and
    whether any sample gave the same taxonomy under both conventions, the paper's values beside them, and whether the
    [SEP] family exists to be tracked."""
    parts, differs = [], []
    for name, r in results.items():
        js = {k: per["cross_ari"]["js"] for k, per in r.spread.items()}
        medians = [s.median for s in js.values()]
        every = all(v < 1 for s in js.values() for v in s.finite)
        differs.append(every)
        parts.append(f"On {name}, the median ARI between conventions is {min(medians):.2f} to {max(medians):.2f} over K = {', '.join(map(str, js))}, "
                     + ("below 1 (a different taxonomy) in every sample." if every else "and 1 (the same taxonomy) in at least one sample."))
    values = paper_js(paper).values()
    n = min(len(r.samples) for r in results.values())
    lead = ("Keeping or dropping the sink changes the JS head taxonomy of every model here" if all(differs)
            else "Keeping or dropping the sink does not always change the JS head taxonomy")
    text = (f"{lead}, over {n} window samples. " + " ".join(parts)
            + f" The paper reports {min(values):.2f} to {max(values):.2f} on BERT-base (its numbers, one text sample). ")
    content = [v for r in results.values() for per in r.spread.values() for v in per["cross_ari"]["content"].finite]
    text += ("The content distance gives the same taxonomy under both conventions in every sample (ARI 1), as the theory says it must."
             if content and all(v == 1 for v in content) else
             f"The content distance's ARI between conventions is below 1 in {sum(v < 1 for v in content)} of {len(content)} cases: a defect, since the theory says it must be 1.")
    if not any(r.has_sep_heads for r in results.values()):
        text += " No model here has a [SEP] head at the paper's threshold, so the fate of Clark et al.'s [SEP] family cannot be checked on them."
    return text


def ari_sentence(results: dict, paper: dict) -> str:
    """Per model: JS's between-convention ARI at each K over the samples, and where the paper's values fall."""
    parts = []
    for name, r in results.items():
        js = {k: per["cross_ari"]["js"] for k, per in r.spread.items()}
        ranges = ", ".join(f"K = {k}: {s.median:.2f} [{s.low:.2f}, {s.high:.2f}]" for k, s in js.items())
        places = _places(js, paper_js(paper))
        parts.append(f"On {name}, JS's ARI between conventions, median [min, max] over {len(r.samples)} samples, is {ranges}. "
                     f"{places[:1].upper() + places[1:]}.")
    return " ".join(parts)


def _over_k(spreads) -> str:
    """The medians' span over K, ``lo–hi over K``, or ``x at every K`` when both print alike."""
    lo, hi = f"{min(x.median for x in spreads):.2f}", f"{max(x.median for x in spreads):.2f}"
    return f"{lo} at every K" if lo == hi else f"{lo}–{hi} over K"


def jaccard_sentence(results: dict) -> str:
    """Per model and non-empty head set: the range over K of JS's median Jaccard, sink kept and dropped."""
    parts = []
    for name, r in results.items():
        for s in HEAD_SETS:
            keep = [per["jaccard"]["js"][s]["keep"] for per in r.spread.values()]
            drop = [per["jaccard"]["js"][s]["drop"] for per in r.spread.values()]
            if any(x.finite for x in keep):
                parts.append(f"{name}'s {s} heads: JS Jaccard medians {_over_k(keep)} with the sink kept, {_over_k(drop)} with it dropped.")
    return " ".join(parts) if parts else "No head set is non-empty in any sample, so no Jaccard index is defined."


def differences_sentence(results: dict, paper: dict) -> str:
    """Where the paper's JS agreement between conventions falls against ours, K by K (a range pooled over K would hide
    where they part), and which models lack [SEP] heads, so that the paper's central comparison cannot be made there."""
    notes = []
    for name, r in results.items():
        js = {k: per["cross_ari"]["js"] for k, per in r.spread.items()}
        notes.append(f"On {name}, {_places(js, paper_js(paper))}.")
    without_sep = [name for name, r in results.items() if not r.has_sep_heads]
    if without_sep:  # one sentence for all such models, not the same sentence once per model
        notes.append(f"{' and '.join(without_sep)} {'has' if len(without_sep) == 1 else 'have'} no [SEP] heads, so the paper's central comparison "
                     "(the [SEP]-head cluster kept vs dropped) cannot be made there; the sink- and [CLS]-head rows stand in for it.")
    return " ".join(notes)


def range_coverage_sentence(results: dict) -> str:
    """What a least-to-greatest range over n samples says about the next one (for exchangeable samples of a continuous
    value a new one lands inside with probability (n − 1)/(n + 1), :func:`~attncoda.studies.clustering.range_coverage`),
    and how often the samples held out of the ranges did."""
    n = min(len(r.samples) for r in results.values())
    nominal = range_coverage(n)
    sentence = (f"Each range runs from the least to the greatest value over {n} window samples, so a new sample of text lands "
                f"inside it with probability {n - 1}/{n + 1} ({100 * nominal:.1f} %)")
    checks = {name: r.coverage for name, r in results.items() if r.coverage is not None}
    if not checks:
        return sentence + "; no sample was held out to check it."
    held = ", ".join(f"{c.inside} of {c.checked} numbers on {name} ({100 * c.share:.0f} %, {len(results[name].held_out)} samples)"
                     for name, c in checks.items())
    return (sentence + f". Checked on window samples held out of the ranges: {held} landed inside. The numbers of one sample "
            "share its windows, so these shares are a check of the stated chance, not a test of it.")


def table5_rows(table5: dict) -> list[dict]:
    """Ours: each model's between-convention ARI per metric (mean over K)."""
    return [{"model": name, **e.to_json()} for name, e in table5.items()]
