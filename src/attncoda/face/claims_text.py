"""The scorecard's words: each row's quote from the paper with its place, the paper's numbers and ours, the scope, and
a chapter's opening on the same rules. Verdicts come from :mod:`attncoda.studies.claims`; nothing here decides anything.

A claim's number is printed by one function, :func:`claim_number`: the scorecard's row (:func:`ours_text`), the
chapter's opening (:func:`opening_sentence`) and a chapter body that states the same reading (:func:`claim_numbers`)
all call it."""

from __future__ import annotations

import math

from ..studies import claims as sc
from ..studies.claims import Verdict

FORMATS = {
    "sink_premise": "share", "reversal_range": "pct", "rates_rise": "slope", "collapse_disagreement": "pct", "deviation": "points",
    "predictor": "share", "witness": "count", "taxonomy": "ari", "aggregation": "pct", "small_parts": "share",
    "js_content_rho": "ari", "temperature": "pct", "retention": "share", "sink_set": "pct", "js_cross_ari": "ari",
    "clustering": "ari", "collapse_share": "share", "share_scale": "share",
    "training_rise": "share", "blow_up": "fold", "channel": "log",
}
"""How each claim's scale is printed."""

ONLINE = {
    "clustering": "attncoda run clustering --model google-bert/bert-base-uncased",
    "share_scale": "attncoda run collapse --model EleutherAI/pythia-70m",
    "training_rise": "attncoda run measurement --model EleutherAI/pythia-70m",
    "rates_rise": "attncoda run measurement --preset paper",
    "blow_up": "attncoda run pruning --model meta-llama/Llama-3.2-1B",
}
"""The command that tests a claim where the Hub is reachable, for the claims the offline models cannot test."""

GROUP_TITLES = {sc.MATH: "Checks of the mathematics", sc.MODELS: "Claims about models"}


def pct(x: float, digits: int = 1) -> str:
    """A share as a percentage.

    >>> pct(0.7792), pct(0.35, 0)
    ('77.9 %', '35 %')
    """
    return f"{100 * x:.{digits}f} %"


def number(claim: str, x: float) -> str:
    """A value on a claim's scale, as the pages print it.

    >>> number("reversal_range", 0.4956), number("blow_up", 10.43), number("witness", 10736.0)
    ('49.6 %', '10.4×', '10,736')
    """
    kind = FORMATS.get(claim, "ari")
    if not math.isfinite(x):
        return "∞" if x > 0 else "−∞"
    return {"pct": lambda: pct(x), "share": lambda: f"{x:.2f}", "slope": lambda: f"{x:.2f}", "points": lambda: f"{x:.1f} points",
            "count": lambda: f"{x:,.0f}", "ari": lambda: f"{x:.2f}", "fold": lambda: f"{x:.1f}×",
            "log": lambda: f"{math.exp(x):.2f}×"}[kind]()


def span(claim: str, low: float, high: float) -> str:
    """An interval or a range on a claim's scale; a point where both ends agree to the printed digits."""
    a, b = number(claim, low), number(claim, high)
    return a if a == b else f"{a} to {b}"


def quote_text(row) -> str:
    """A row's quote as the page shows it: the paper's words, with its TeX written out (ε, %, –, ⁻⁶)."""
    text = row.quote
    for tex, plain in (("\\varepsilon", "ε"), ("\\%", "%"), ("--", "–"), ("10^{-6}", "10⁻⁶")):
        text = text.replace(tex, plain)
    return text


def claim_text(key: str) -> str:
    """The claim as the card shows it: “the paper's words” (place)."""
    row = sc.ROWS[key]
    return f"“{quote_text(row)}” ({row.place})"


def _paper_check(key: str, paper: dict) -> str:
    t1, f6, f2 = paper["table1"], paper["figure6"], paper["figure2"]
    return {
        "table1": (f"cosine {t1['cosine']['keep'][0]:.4f} / {t1['cosine']['keep'][1]:.4f} kept, "
                   f"{t1['cosine']['drop'][0]:.4f} / {t1['cosine']['drop'][1]:.4f} dropped, and so on (4 decimals)"),
        "figure6": f"{f6['cosine_reversal_pct']} % of {f6['positions']:,} positions",
        "figure2": (f"(a) entropy {f2['a']['entropy'][0]} → {f2['a']['entropy'][1]} nats, concentration {f2['a']['concentration'][0]} → "
                    f"{f2['a']['concentration'][1]}; (b) entropy {f2['b']['entropy'][0]} → {f2['b']['entropy'][1]}, concentration "
                    f"{f2['b']['concentration'][0]} → {f2['b']['concentration'][1]}"),
        "table4": "the invariance matrix of its Table 4",
        "entropy_identity": "exact",
        "curves_rise": "curves that rise with sink mass",
        "lemma1": "exact",
        "content_none": "0 %",
        "hellinger_fr": "identical verdicts",
        "eps_sweep": "bit-identical",
        "taxonomy_content": "ARI 1",
        "temperature_content": "flip 0, retention 1",
    }[key]


def paper_text(v: Verdict, paper: dict | None = None) -> str:
    """The paper's numbers for a row: a check's printed values, or the range of a claim's units (from the same numbers
    its rule passes)."""
    from .results import paper_reference

    paper = paper or paper_reference()
    row = sc.ROWS[v.claim]
    if isinstance(row, sc.Check):
        return _paper_check(v.claim, paper)
    if row.paper_units is None:
        return row.no_paper_numbers
    units = row.paper_units(paper)
    if v.claim == "predictor":
        c = paper["abstract"]["predictor"]
        return f"{c['confirmation']} confirmation, {c['abstention']} abstention, {c['failure']} failure"
    stated = row.paper_range(paper)
    said = span(v.claim, *stated) if all(math.isfinite(x) for x in stated) else ""
    shown = _units_span(v.claim, [(u.name, u.low, u.high) for u in units])
    return shown + (f"; stated {said}" if said and said not in shown else "")


def _units_span(claim: str, units) -> str:
    """The range of a claim's units: one or two units by name, more as their lowest and highest ends and their count."""
    if len(units) <= 2:
        return "; ".join(f"{u[0]}: {span(claim, u[1], u[2])}" for u in units)
    return f"{span(claim, min(u[1] for u in units), max(u[2] for u in units))} over {len(units)} readings"


def claim_number(v: Verdict) -> str:
    """A claim's number as every page prints it: the range of its units, or a check's reading. The card, the chapter's
    opening and the chapter's body all call this one function."""
    if v.verdict == sc.NOT_TESTABLE:
        return v.why or "not in this record"
    if "units" in v.ours:
        return _units_span(v.claim, v.ours["units"])
    return _check_ours(v)


def ours_text(v: Verdict) -> str:
    """Our numbers for a row of the card: :func:`claim_number`, then the units off the paper's range and what else the
    row shows."""
    text = ("not tested: " if v.verdict == sc.NOT_TESTABLE else "") + claim_number(v)
    units = v.ours.get("units", [])
    off = [f"{name} {span(v.claim, lo, hi)} ({word})" for name, lo, hi, word in units if word != sc.REPRODUCED]
    if off and len(units) > 1:
        text += "; not reproduced: " + ", ".join(off[:4]) + (f" and {len(off) - 4} more" if len(off) > 4 else "")
    if v.claim == "channel" and v.verdict != sc.NOT_TESTABLE:
        d = channel_detail(v)
        text += f"; JS prunes better in {d['js_better']} and worse in {d['js_worse']} of {d['pairs']} cells"
    return text


def channel_detail(v: Verdict) -> dict:
    """The pruning contrasts behind the channel claim: pairs, decided, and which way."""
    return v.ours.get("detail") or {}


CHECK_WORDS = {
    "table1": lambda o: f"the same values (largest difference {o['max_abs_diff']:.1g})",
    "figure6": lambda o: f"{pct(o['rate'])} [{pct(o['low'])}, {pct(o['high'])}]",
    "figure2": lambda o: (f"(a) entropy {pct(o['ours']['a']['entropy'], 0)}, concentration {pct(o['ours']['a']['concentration'])}; "
                          f"(b) entropy {pct(o['ours']['b']['entropy'], 0)}, concentration ×{1 + o['ours']['b']['concentration']:.1f}"),
    "curves_rise": lambda o: "ρ " + ", ".join(f"{m} {o[m]['rho']:.2f}" for m in sc.CLASSICAL) + f" over {o['points']} grid points",
    "lemma1": lambda o: f"largest residual {o['residual']:.1e}",
    "entropy_identity": lambda o: f"largest residual {o['residual']:.1e}",
    "content_none": lambda o: f"{o['reversed']} of {o['compared']:,} triples",
    "hellinger_fr": lambda o: f"equal in {o['equal']} of {o['pairs']} model-seeds",
    "eps_sweep": lambda o: f"bit-identical on {o['identical']} of {o['models']} models",
    "table4": lambda o: f"all {o['cells']} cells as the paper's",
    "taxonomy_content": lambda o: f"{o['aris']} ARIs, the lowest {o['lowest']:g}",
    "temperature_content": lambda o: f"flip {o['flip_max']:g}, retention {o['retention_min']:g} on {o['seeds']} model-seeds",
}
"""Each check's reading in words, from the numbers its rule returns."""


def _check_ours(v: Verdict) -> str:
    return CHECK_WORDS[v.claim](v.ours)


def method_text(v: Verdict) -> str:
    """The test behind a verdict, with its level or confidence."""
    if not v.test:
        return "—"
    if v.level == sc.LEVEL:
        return f"{v.test}; {pct(sc.CONFIDENCE, 0)} confidence" if "interval" in v.test else f"{v.test}; level {v.level:g}"
    return v.test


def verdict_text(v: Verdict) -> str:
    """The verdict word, with the command where the claim is not testable here."""
    command = ONLINE.get(v.claim)
    if v.verdict == sc.NOT_TESTABLE and command:
        return f"{v.verdict}; online: `{command}`"
    return v.verdict


def other_cpu_verdicts(path=None) -> dict[str, str]:
    """The claims whose verdict differs on the record built on another CPU (``data/verify/cross_cpu.json``, written by
    :mod:`attncoda.face.cross_machine`), with that other verdict: the earlier record's, against this one's."""
    import json

    from ..base.paths import data_dir

    path = path or data_dir() / "verify" / "cross_cpu.json"
    if not path.exists():
        return {}
    verdicts = json.loads(path.read_text()).get("verdicts", {})
    return {k: v["before"] for k, v in verdicts.items() if v["before"] != v["after"]}


def rows(verdicts: list[Verdict], other_cpu: dict | None = None) -> list[dict]:
    """The scorecard's rows, one per claim: verdict, the paper's words, the paper's numbers, ours, scope, test, chapter;
    a verdict that was different on another CPU's record says so."""
    other_cpu = other_cpu or {}
    out = []
    for v in verdicts:
        row = sc.ROWS[v.claim]
        out.append({"verdict": verdict_text(v) + (f"; {other_cpu[v.claim]} on another CPU" if v.claim in other_cpu else ""),
                    "claim": claim_text(v.claim), "group": row.group, "the paper": paper_text(v), "ours": ours_text(v),
                    "scope": v.scope or "—",
                    "test": method_text(v), "chapter": row.chapter})
    return out


def counts_sentence(verdicts: list[Verdict]) -> str:
    """How many claims about models got each verdict, and whether every check holds.

    >>> counts_sentence([Verdict("table1", "reproduced"), Verdict("blow_up", "not testable here"), Verdict("channel", "reproduced")])
    'Of 2 claims about models: 1 reproduced, 1 not testable here. All 1 checks of the mathematics hold.'
    """
    models = [v for v in verdicts if sc.ROWS[v.claim].group == sc.MODELS]
    checks = [v for v in verdicts if sc.ROWS[v.claim].group == sc.MATH]
    parts = [f"{sum(v.verdict == word for v in models)} {word}" for word in sc.VERDICTS if any(v.verdict == word for v in models)]
    held = sum(v.verdict == sc.REPRODUCED for v in checks)
    checked = f"All {len(checks)} checks of the mathematics hold." if held == len(checks) else f"{held} of {len(checks)} checks of the mathematics hold."
    return f"Of {len(models)} claims about models: {', '.join(parts)}. {checked}"


def _label(key: str, most: int = 8) -> str:
    """A claim's short name for a list: its quote, cut to ``most`` words."""
    words = quote_text(sc.ROWS[key]).split()
    return " ".join(words[:most]) + ("…" if len(words) > most else "")


def opening_sentence(v: Verdict) -> str:
    """One sentence of a chapter's opening: the verdict word first, the paper's claim (its place), then ours."""
    head = f"**{v.verdict.capitalize()}:** the paper's {sc.ROWS[v.claim].place}, “{_label(v.claim, 6 if v.verdict == sc.NOT_TESTABLE else 8)}”"
    if v.verdict == sc.NOT_TESTABLE:
        command = ONLINE.get(v.claim)
        return f"{head}; here, {claim_number(v)}" + (f" (online: `{command}`)." if command else ".")
    return f"{head}; ours: {claim_number(v)}."


def opening(verdicts: list[Verdict], limit: int = 3) -> str:
    """A chapter's opening, in Markdown: one line per verdict (at most ``limit``), the verdict word first."""
    from .report import dollar_math, escape

    return "\n\n".join(dollar_math(escape(opening_sentence(v))) for v in verdicts[:limit])


def counts_markdown(verdicts: list[Verdict]) -> str:
    """The scorecard's first sentences: the counts, the claims about models reversed here by name, and how many differ
    (the list under "Where ours goes another way" names them)."""
    from .report import dollar_math, escape

    text = f"**{counts_sentence(verdicts)}**"
    about_models = [v for v in verdicts if sc.ROWS[v.claim].group == sc.MODELS]
    reversed_ = [f"{sc.ROWS[v.claim].place} (“{_label(v.claim, 6)}”)" for v in about_models if v.verdict == sc.REVERSED]
    if reversed_:
        text += " Reversed here: " + "; ".join(reversed_) + "."
    differ = sum(v.verdict == sc.DIFFERS for v in about_models)
    if differ:
        text += f" {differ} more lie in the paper's direction but off its range (they differ); the list below names them."
    return dollar_math(escape(text))


def reversed_markdown(verdicts: list[Verdict]) -> str:
    """A list of the claims whose verdict is reversed (the opposite direction), then those that differ (the paper's
    direction, another size): each with the paper's numbers and ours."""
    from .report import dollar_math, escape

    items = []
    for word, title in ((sc.REVERSED, "the other way"), (sc.DIFFERS, "the paper's direction, off its range")):
        for v in verdicts:
            if v.verdict == word:
                items.append(f"- **{word.capitalize()}** ({title}). {claim_text(v.claim)}. The paper: {paper_text(v)}. Ours: {ours_text(v)}.")
    return dollar_math(escape("\n".join(items), paragraphs=True)) if items else "No claim is reversed or differs here."


def _chapter_results(results) -> dict:
    """A chapter's results as the scorecard reads them: results files (paths, as
    :func:`~attncoda.face.results.write_results` returns them) read back, or ``{name: numbers}`` as given."""
    import json
    from pathlib import Path

    if isinstance(results, dict):
        return results
    return {stored["name"]: stored["results"] for stored in (json.loads(Path(p).read_text()) for p in results)}


def chapter_verdicts(chapter: str, results) -> list[Verdict]:
    """The scorecard's verdicts for the claims a chapter answers, on that chapter's own results."""
    from .results import paper_reference

    return sc.chapter_verdicts(chapter, _chapter_results(results), paper_reference())


def chapter_opening(chapter: str, results) -> str:
    """A chapter page's opening on its own results: the scorecard's rules for the claims the chapter answers
    (:data:`~attncoda.studies.claims.CHAPTER_CLAIMS`), worded by :func:`opening`."""
    return opening(chapter_verdicts(chapter, results))


def claim_numbers(chapter: str, results) -> dict[str, str]:
    """Each claim's number (:func:`claim_number`) on a chapter's own results, for the chapter's body to print: the same
    text its opening and the scorecard print."""
    return {v.claim: claim_number(v) for v in chapter_verdicts(chapter, results)}


COLUMNS = ("verdict", "claim", "the paper", "ours", "scope", "test", "chapter")
"""The card's columns, verdict first: the page shows each row as one block, its cells in this order and labelled by
their column (``book/_static/attncoda.css``)."""


def table_markdown(verdicts: list[Verdict], other_cpu: dict | None = None) -> str:
    """The scorecard in Markdown: one table per group (claims about models, then checks of the mathematics), each a
    ``list-table`` of class ``scorecard``, whose rows the page shows as blocks, the verdict word first."""
    from .report import dollar_math, escape

    out = []
    all_rows = rows(verdicts, other_cpu)
    for group in (sc.MODELS, sc.MATH):
        chosen = [r for r in all_rows if r["group"] == group]
        if not chosen:
            continue
        lines = [f"### {GROUP_TITLES[group]}", "", "```{list-table}", ":header-rows: 1", ":class: scorecard", ""]
        lines.append("* - " + "\n  - ".join(COLUMNS))
        for row in chosen:
            cells = [f"**{row['verdict']}**", *(row[c] for c in COLUMNS[1:])]
            lines.append("* - " + "\n  - ".join(dollar_math(escape(c)) for c in cells))
        lines.append("```")
        out.append("\n".join(lines))
    return "\n\n".join(out)
