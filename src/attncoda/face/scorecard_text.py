"""The scorecard's words: each claim in our words, the paper's number and ours as the page shows them, and the opening
of each chapter. Verdicts come from :mod:`attncoda.studies.scorecard`; nothing here decides anything."""

from __future__ import annotations

import math

from ..studies import scorecard as sc
from ..studies.scorecard import Verdict

CLAIMS = {
    "table1": "Three hand-written rows reverse the verdicts of cosine, JS and Euclidean distance (Table 1)",
    "figure6": "Cosine's verdict reverses on most of the simplex (Figure 6)",
    "curves_rise": "On synthetic heads, flip rates rise with sink mass (Figure 3's curves)",
    "reversal_range": "17–47 % of closer-head verdicts flip with the convention",
    "rates_rise": "Across real models, flip rates rise with sink mass",
    "content_none": "The content distance d_A^⊥ flips no verdict",
    "taxonomy": "Head taxonomies change with the convention, but not under d_A^⊥ (Table 5)",
    "clustering": "BERT's [SEP]-head family is an artifact of keeping the sink (Table 9)",
    "collapse_share": "Most of the entropy fall in training is the sink (30–95 %)",
    "share_scale": "The sink's share of the fall rises with model scale",
    "training_rise": "Across training, flip rates rise with sink mass (Figure 5a)",
    "blow_up": "Pruning by the wrong channel inflates perplexity more than 100×",
    "js_worse": "Pruning by JS is worse than pruning by d_A^⊥",
    "predictor": "The frozen predictor's record: one confirmation, one abstention, one failure",
    "deviation": "Real models sit within a few points of the frozen curves (Figure 3)",
    "temperature": "One temperature changes no d_A^⊥ verdict, but some JS′ ones (Table 8)",
}
"""Each claim, in our words."""

CHAPTERS = {"table1": "1", "figure6": "1", "curves_rise": "2", "reversal_range": "3", "rates_rise": "3", "content_none": "3",
            "taxonomy": "3.2", "clustering": "5", "collapse_share": "4", "share_scale": "4", "training_rise": "4", "blow_up": "6", "js_worse": "6",
            "predictor": "3", "deviation": "3", "temperature": "3.2"}
"""The chapter that shows each claim's numbers."""

ONLINE = {
    "clustering": "attncoda run clustering --model google-bert/bert-base-uncased",
    "share_scale": "attncoda run collapse --model EleutherAI/pythia-160m",
}
"""The one command that tests a claim where the Hub is reachable, for the claims the offline models cannot test."""

RERUN = {"theory": "attncoda run theory", "calibration": "attncoda run calibration", "measurement": "attncoda run measurement",
         "collapse": "attncoda run collapse", "clustering": "attncoda run clustering", "pruning": "attncoda run pruning"}


def pct(x: float, digits: int = 1) -> str:
    """A share as a percentage.

    >>> pct(0.7792), pct(0.35, 0)
    ('77.9 %', '35 %')
    """
    return f"{100 * x:.{digits}f} %"


def _span(low: float, high: float, digits: int = 1) -> str:
    return f"{pct(low, digits)} to {pct(high, digits)}"


PAPER = {
    "table1": "its printed distances (4 decimals)",
    "figure6": "77.9 % of 20,000 positions",
    "curves_rise": "rising curves",
    "reversal_range": "17 % to 47 % (ten models)",
    "rates_rise": "rising with sink mass (ten models)",
    "content_none": "0 %",
    "taxonomy": "ARI -0.09 to 0.07; d_A^⊥ 1",
    "clustering": "[SEP] Jaccard 0.87–0.92 kept, 0.46–0.49 dropped",
    "collapse_share": "30 % to 95 % (Pythia)",
    "share_scale": "30, 53, 70, 95, 79 % (Pythia 70M to 1.4B)",
    "training_rise": "rising (Pythia checkpoints)",
    "blow_up": "137× (Llama-3.2-1B at 20 %: 2,094 against 15.3)",
    "js_worse": "Llama-3.2-1B at 20 %: JS 2,094, d_A^⊥ 63.6; GPT-2 the other way (74.5 against 104.7)",
    "predictor": "1 confirmation, 1 abstention, 1 failure",
    "deviation": "4.8 points mean, 13 max",
    "temperature": "d_A^⊥ 0; JS′ 1.7 % to 6.6 %",
}
"""The paper's number for each claim, as the scorecard shows it (``tests/face/test_scorecard_text.py`` holds each to
``data/paper/reference.json``)."""


def paper_text(v: Verdict) -> str:
    """The paper's number for a claim, as the scorecard shows it."""
    return PAPER[v.claim]


def ours_text(v: Verdict) -> str:
    """Our number for a claim, as the scorecard shows it."""
    o = v.ours
    if v.verdict == sc.NOT_TESTABLE and not o:
        return "not in this record"
    if v.claim == "table1":
        return f"the same values (largest difference {o['max_abs_diff']:.1g})"
    if v.claim == "figure6":
        return f"{pct(o['rate'])} [{pct(o['low'])}, {pct(o['high'])}]"
    if v.claim == "curves_rise":
        return "ρ " + ", ".join(f"{m} {o[m]['rho']:.2f}" for m in sc.CLASSICAL)
    if v.claim == "reversal_range":
        return f"{_span(o['low'], o['high'])} ({o['models']} models)"
    if v.claim == "rates_rise":
        return f"ρ = {o['rho']:.2f}, p = {o['p']:.2f} ({o['models']} models)" if "rho" in o else f"{o['models']} models"
    if v.claim == "content_none":
        return f"{o['reversed']} of {o['compared']:,} triples"
    if v.claim == "taxonomy":
        return f"ARI {o['low']:.2f} to {o['high']:.2f}; d_A^⊥ {'1' if o['content_one'] else 'not 1'}"
    if v.claim == "clustering":
        if not o.get("with_sep"):
            return f"no [SEP] heads in {o['models']} encoders"
        return f"kept above dropped in {o['wins']} of {o['wins'] + o['losses']} samples"
    if v.claim == "collapse_share":
        return "; ".join(f"{_short(g)}: {s['mean']:.2f} [{s['low']:.2f}, {s['high']:.2f}]" if s["low"] != s["high"] else f"{g}: {s['mean']:.2f}"
                         for g, s in o.items())
    if v.claim == "share_scale":
        means = " → ".join(f"{m:.2f}" for m in o["means"])
        grew = ", ".join(str(g) for g in o["grew"])
        return f"{means} from the smallest size up; a sink grew in {grew} of {max(o['seeds'])} seeds"
    if v.claim == "training_rise":
        return f"ρ positive in {o['up']} of {o['runs']} runs, sign test p = {o['p']:.2f}" if o.get("runs") else "no run with five checkpoints"
    if v.claim == "blow_up":
        return f"{o['ratio']:.1f}× [{o['low']:.1f}, {o['high']:.1f}] ({o['model']} at {pct(o['sparsity'], 0)})"
    if v.claim == "js_worse":
        return (f"JS prunes better in {o['js_better']} and worse in {o['js_worse']} of {o['pairs']} pairs with d_A^⊥ "
                f"({o['pairs'] - o['decided']} not decided)")
    if v.claim == "predictor":
        return f"{o['confirmation']} confirmations, {o['abstention']} abstention{'s' if o['abstention'] != 1 else ''}, {o['failure']} failures"
    if v.claim == "deviation":
        return f"{o['mean']:.1f} points mean [{o['low']:.1f}, {o['high']:.1f}], {o['max']:.0f} max"
    if v.claim == "temperature":
        return f"d_A^⊥ {o['content']:g}; JS′ {_span(o['js_low'], o['js_high'])}"
    raise KeyError(v.claim)


def _short(group: str) -> str:
    """A ladder size's label, shortened for a table cell ('size 1 × 1, width 128 (…)' → '1 × 1')."""
    return group.removeprefix("size ").split(",")[0]


def method_text(v: Verdict) -> str:
    """The test behind a verdict, with its level."""
    if v.level is None or v.verdict == sc.NOT_TESTABLE and not v.test:
        return v.test or "—"
    if v.level in (0, 0.0):
        return v.test
    if v.level == sc.LEVEL:
        return f"{v.test}; {pct(sc.INTERVAL, 0)}" if "interval" in v.test else f"{v.test}; level {v.level:g}"
    return v.test


def verdict_text(v: Verdict) -> str:
    """The verdict word, with the reason or the command where the claim is not testable here."""
    if v.verdict != sc.NOT_TESTABLE:
        return v.verdict + (f" ({v.why})" if v.why else "")
    command = ONLINE.get(v.claim)
    return f"{v.verdict}: {v.why}" + (f"; online: `{command}`" if command else "")


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
    """The scorecard's table: one row per claim; a verdict that was different on another CPU's record says so."""
    other_cpu = other_cpu or {}
    return [{"claim": CLAIMS[v.claim], "chapter": CHAPTERS[v.claim], "the paper": paper_text(v),
             "ours": ours_text(v), "test": method_text(v),
             "verdict": verdict_text(v) + (f"; {other_cpu[v.claim]} on another CPU" if v.claim in other_cpu else "")} for v in verdicts]


def counts_sentence(verdicts: list[Verdict]) -> str:
    """How many claims got each verdict, in one sentence.

    >>> counts_sentence([Verdict("table1", "reproduced"), Verdict("js_worse", "reversed"), Verdict("figure6", "reproduced")])
    'Of 3 claims: 2 reproduced, 1 reversed.'
    """
    parts = [f"{sum(v.verdict == word for v in verdicts)} {word}" for word in sc.VERDICTS if any(v.verdict == word for v in verdicts)]
    return f"Of {len(verdicts)} claims: {', '.join(parts)}."


SHORT = {
    "table1": "three rows reverse cosine, JS and Euclidean (Table 1, to 4 decimals)",
    "figure6": "cosine reverses on 77.9 % of the simplex",
    "curves_rise": "flip rates rise with sink mass on synthetic heads",
    "reversal_range": "17–47 % of verdicts flip",
    "rates_rise": "flip rates rise with sink mass across ten models",
    "content_none": "d_A^⊥ flips no verdict",
    "taxonomy": "taxonomies across conventions agree at ARI -0.09 to 0.07, d_A^⊥'s at 1",
    "clustering": "BERT's [SEP]-head family is a convention artifact (Jaccard 0.87–0.92 kept, 0.46–0.49 dropped)",
    "collapse_share": "the sink carries 30–95 % of the entropy fall (Pythia)",
    "share_scale": "that share rises with scale (30 % at 70M, 95 % at 1B)",
    "training_rise": "flip rates rise with sink mass across training",
    "blow_up": "wrong-channel pruning inflates perplexity 137× (Llama-3.2-1B, 20 %)",
    "js_worse": "JS prunes worse than d_A^⊥ (Llama-3.2-1B, 20 %: 2,094 against 63.6)",
    "predictor": "one confirmation, one abstention, one failure",
    "deviation": "models sit 4.8 points from the curves on average (13 max)",
    "temperature": "a temperature flips no d_A^⊥ verdict and up to 6.6 % of JS′ ones",
}
"""Each claim as the paper states it, with its number, short enough for a chapter's opening."""


def opening_sentence(v: Verdict) -> str:
    """One sentence of a chapter's opening: the verdict word first, then the paper's claim and number, then ours."""
    head = f"**{v.verdict.capitalize()}:** in the paper, {SHORT[v.claim]}"
    if v.verdict == sc.NOT_TESTABLE:
        command = ONLINE.get(v.claim)
        return f"{head}; here, {v.why}" + (f" (online, `{command}` tests it)." if command else ".")
    return f"{head}; here, {ours_text(v)}."


def opening(verdicts: list[Verdict], limit: int = 3) -> str:
    """A chapter's opening, in Markdown: one line per verdict (at most ``limit``), the verdict word first."""
    from .report import dollar_math

    return "\n\n".join(dollar_math(opening_sentence(v)) for v in verdicts[:limit])


def counts_markdown(verdicts: list[Verdict]) -> str:
    """The scorecard's first sentences: how many claims got each verdict, then the reversed claims by name.

    >>> print(counts_markdown([Verdict("table1", "reproduced"), Verdict("js_worse", "reversed")]))
    **Of 2 claims: 1 reproduced, 1 reversed.** Reversed here: pruning by JS is worse than pruning by $d_A^\\perp$.
    """
    from .report import dollar_math

    text = f"**{counts_sentence(verdicts)}**"
    reversed_ = [CLAIMS[v.claim] for v in verdicts if v.verdict == sc.REVERSED]
    if reversed_:
        names = "; ".join(_lower_first(_untagged(c)) for c in reversed_)
        text += f" Reversed here: {names}."
    return dollar_math(text)


def reversed_markdown(verdicts: list[Verdict]) -> str:
    """A list of the claims whose verdict is reversed or differs: each with the paper's number and ours."""
    from .report import dollar_math

    items = [f"- **{v.verdict.capitalize()}.** {CLAIMS[v.claim]}. The paper: {paper_text(v)}. Ours: {ours_text(v)}."
             for word in (sc.REVERSED, sc.DIFFERS) for v in verdicts if v.verdict == word]
    return dollar_math("\n".join(items)) if items else "No claim is reversed or differs here."


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:2] != text[:2].upper() else text


def _untagged(claim: str) -> str:
    """A claim without its trailing table or figure tag ("(Table 5)")."""
    import re

    return re.sub(r" \((Table|Figure) [^)]*\)$", "", claim)


def chapter_opening(chapter: str, results) -> str:
    """A chapter page's opening on its own results: the scorecard's rules for the claims the chapter answers
    (:data:`~attncoda.studies.scorecard.CHAPTER_CLAIMS`), worded by :func:`opening`. ``results`` is the results files
    the chapter just wrote (paths; what :func:`~attncoda.face.results.write_results` returns), read back as the scorecard
    reads them, or ``{name: numbers}`` for a page that writes other numbers than its rules read."""
    import json
    from pathlib import Path

    from .results import paper_reference

    if not isinstance(results, dict):
        results = {stored["name"]: stored["results"] for stored in (json.loads(Path(p).read_text()) for p in results)}
    return opening(sc.chapter_verdicts(chapter, results, paper_reference()))


def table_markdown(verdicts: list[Verdict], other_cpu: dict | None = None) -> str:
    """The scorecard as a Markdown table (it wraps its cells, which a wide table of text needs): claim, verdict, the
    paper's number, ours, the test and the chapter, one row per claim (:func:`rows`)."""
    from .report import dollar_math, escape

    header = ["claim", "verdict", "the paper", "ours", "test", "chapter"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for row in rows(verdicts, other_cpu):
        cells = [row["claim"], f"**{row['verdict']}**", row["the paper"], row["ours"], row["test"], row["chapter"]]
        lines.append("| " + " | ".join(dollar_math(escape(c)).replace("|", "\\|") for c in cells) + " |")
    return "\n".join(lines)
