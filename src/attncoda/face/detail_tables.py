"""The audits chapter's Tables 5-8 (the first seed's detail readings) and their sentences, from typed results.

``results`` is a ``{label: Measurement}`` dict (:mod:`attncoda.studies.measurement_results`); each table reads
``r.first``, the seed that carries the details. ``paper`` is ``data/paper/reference.json``. Functions return table
rows (lists of dicts) or sentences; no computation decides here.
"""

from __future__ import annotations

from ..studies.clustering import TABLE5_LABELS as TABLE5_COLUMNS
from ..studies.reversal import CLASSICAL
from .report import sink_words

PAPER_TABLE6_COLUMNS = {"hellinger": "Hell. rev.", "fisher_rao": "FR rev.", "share_below_1e-6": "share < 1e-6", "spearman": "ρ",
                        "nn_agreement": "NN agr.", "cross_ari": "cross-ARI"}
PAPER_TABLE8_COLUMNS = {"temp_flip_max": "JS′ flip (max over τ)", "retention_min": "JS′ retention (min)", "sinkset_js": "sink-set flips JS′",
                        "sinkset_content": "sink-set flips d_A^⊥"}


def _renamed(row: dict, names: dict) -> dict:
    return {names.get(k, k): v for k, v in row.items()}


def table7_rows(results: dict) -> list[dict]:
    """Reversal rates with arithmetic and with Aitchison (geometric-mean) signatures, per classical metric."""
    return [{"model": name, **{f"arith. {m}": r.first.arithmetic_reversal[m].rate for m in CLASSICAL},
             **{f"Aitch. {m}": r.first.reversal[m].rate for m in CLASSICAL}} for name, r in results.items()]


def aitchison_higher(rows: list[dict]) -> int:
    """How many (model, metric) cells reverse more often with Aitchison signatures than with arithmetic ones."""
    return sum(row[f"Aitch. {m}"] > row[f"arith. {m}"] for row in rows for m in CLASSICAL)


def paper_table7_rows(paper: dict) -> list[dict]:
    return [{"model": m, **{f"arith. {k}": v for k, v in d["arithmetic"].items()}, **{f"Aitch. {k}": v for k, v in d["aitchison"].items()}}
            for m, d in paper["table7"]["models"].items()]


def table5_rows(results: dict) -> list[dict]:
    """Between-convention ARI of each metric's taxonomy (mean over K), seed 0."""
    return [{"model": name, **_renamed(r.first.taxonomy_ari, TABLE5_COLUMNS)} for name, r in results.items()]


def paper_table5_rows(paper: dict) -> list[dict]:
    return [{"model": m, **_renamed(v, TABLE5_COLUMNS)} for m, v in paper["table5"]["models"].items()]


def classical_span(rows: list[dict], columns=tuple(TABLE5_COLUMNS[m] for m in CLASSICAL)) -> tuple[float, float]:
    """Lowest and highest value of ``columns`` over ``rows``."""
    values = [row[c] for row in rows for c in columns]
    return float(min(values)), float(max(values))


def content_is_exact(rows: list[dict]) -> str:
    return "1 on every model" if all(row[TABLE5_COLUMNS["content"]] == 1.0 for row in rows) else "NOT 1 on every model"


def table6_rows(results: dict) -> list[dict]:
    """The content audit: Hellinger and Fisher–Rao reversal, shares of small parts on both paths, and how the content
    distance ranks against JS′ (Spearman ρ, nearest-neighbour agreement, cross-convention ARI)."""
    rows = []
    for name, r in results.items():
        e, a = r.first, r.first.audit
        rows.append({"model": name, "Hell. rev.": e.reversal["hellinger"].rate, "FR rev.": e.reversal["fisher_rao"].rate,
                     "share < small (log path)": a.share_below_small_part, "share < small (prob. path)": a.share_below_small_part_probability_path,
                     "ρ": a.spearman, "NN agr.": a.nn_agreement, "cross-ARI": a.cross_ari})
    return rows


def _span(values, digits: int) -> str:
    low, high = min(values), max(values)
    return f"{low:.{digits}f}" if f"{low:.{digits}f}" == f"{high:.{digits}f}" else f"{low:.{digits}f} to {high:.{digits}f}"


def table6_sentence(rows: list[dict], paper: dict) -> str:
    """How the content distance and the dropped-row JS rank heads, ours beside the paper's (both as ranges over the
    models, the paper's at its own two decimals): the rank correlation of all pairwise distances, the share of heads
    whose nearest neighbour is the same under both, and the agreement of their taxonomies; then the small-part
    shares beside the paper's largest."""
    theirs = list(paper["table6"]["models"].values())
    ours = {key: [row[key] for row in rows] for key in ("ρ", "NN agr.", "cross-ARI", "share < small (log path)")}
    share_max, paper_share_max = max(ours["share < small (log path)"]), max(v["share_below_1e-6"] for v in theirs)
    sentence = (f"The last three columns compare the dropped-row JS with d_A^⊥ on the content channel. Over all head pairs "
                f"their distances are rank-correlated (Spearman ρ {_span(ours['ρ'], 3)}; the paper: {_span([v['spearman'] for v in theirs], 3)}). "
                f"But a head's nearest neighbour is the same under both for only {_span(ours['NN agr.'], 2)} of the heads "
                f"(the paper: {_span([v['nn_agreement'] for v in theirs], 2)}). The taxonomies they induce agree only partly "
                f"(cross-ARI {_span(ours['cross-ARI'], 2)}; the paper: {_span([v['cross_ari'] for v in theirs], 2)}). ")
    if share_max > 10 * paper_share_max:
        return sentence + (f"The small-part shares do not match the paper's: up to {share_max:.3f} of squared d_A^⊥ on our models, "
                           f"at most {paper_share_max:.3f} on the paper's. On some of our models most of the content distance "
                           "comes from parts below the threshold; we have not measured the paper's models, so this page "
                           "does not say why the two differ.")
    return sentence + f"Our small-part shares reach {share_max:.3f}; the paper's, at most {paper_share_max:.3f}."


def paper_table6_rows(paper: dict) -> list[dict]:
    return [{"model": m, **_renamed(v, PAPER_TABLE6_COLUMNS)} for m, v in paper["table6"]["models"].items()]


def paper_hf_note(paper: dict) -> str:
    """Whether the paper's Table 6 prints equal Hellinger and Fisher–Rao rates, as the identity requires."""
    models = paper["table6"]["models"]
    unequal = [m for m, v in models.items() if v["hellinger"] != v["fisher_rao"]]
    if not unequal:
        return "The paper's Table 6 prints equal Hellinger and Fisher–Rao rates, as the identity requires."
    return (f"The paper's own Table 6 prints different Hellinger and Fisher–Rao reversal rates for {len(unequal)} of its {len(models)} models "
            f"({', '.join(unequal)}). Both distances are strictly increasing functions of the Bhattacharyya coefficient, so every verdict, "
            "and every rate, must coincide; our columns are equal to the last triple.")


def table8_rows(results: dict) -> list[dict]:
    """What temperature and the sink-set definition do to JS′ and to the content distance."""
    rows = []
    for name, r in results.items():
        t, s = r.first.temperature, r.first.sink_set
        rows.append({"model": name, "JS′ flip (max over τ)": t["js"].flip_max, "JS′ retention (min)": t["js"].retention_min,
                     "d_A^⊥ flip (max)": t["content"].flip_max, "d_A^⊥ retention (min)": t["content"].retention_min,
                     "sink sets compared": f"{sink_words(s.default)} vs {sink_words(s.alternative)}", "sink-set flips JS′": s.js, "sink-set flips d_A^⊥": s.content})
    return rows


def temperature_sentence(rows: list[dict]) -> str:
    exact = all(row["d_A^⊥ flip (max)"] == 0 and row["d_A^⊥ retention (min)"] == 1 for row in rows)
    return "exactly 0 flips and full retention on every model" if exact else "NOT exactly invariant on every model (see the table)"


def sink_set_sentence(rows: list[dict]) -> str:
    both = all(row["sink-set flips JS′"] > 0 and row["sink-set flips d_A^⊥"] > 0 for row in rows)
    return "both JS′ and the content distance change some verdicts on every model" if both else "the flip rates in the last two columns vary by model"


def paper_table8_rows(paper: dict) -> list[dict]:
    return [{"model": m, **_renamed(v, PAPER_TABLE8_COLUMNS)} for m, v in paper["table8"]["models"].items()]
