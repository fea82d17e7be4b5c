"""The paper's claims, judged on the record: each row quotes the paper with its place, names what it reads
(:mod:`attncoda.studies.claim_readings`) and is judged by one rule (:mod:`attncoda.studies.claim_rule`). The scorecard
shows every row; each chapter opens with the rows it answers. The words are :mod:`attncoda.face.claims_text`.

Every claim about models also states the paper's own numbers as units, and a test holds that the rule passes them
(*reproduced*), reverses them when they are mirrored about the claim's null, and says *differs* when they are moved
off the paper's range on the same side. A rule whose chapter is missing from the record (a reader who ran one
chapter) says *not testable here*, so the same rules judge a reader's own run with the rows that run can touch.
"""

from __future__ import annotations

import math

import numpy as np

from ..math.metrics import CLASSICAL
from . import claim_readings as read
from .claim_readings import (EXACT, FIGURE2_TOLERANCE, MIN_DECIDED, MIN_MODELS, MIN_SCALE_SPAN, MIN_SINK_SPAN, ON_MODELS,  # noqa: F401
                             SINK_GREW, TABLE1_TOLERANCE)  # the premises' and checks' constants, as the methods page names them
from .claim_rule import (CONFIDENCE, DIFFERS, LEVEL, MATH, MODELS, NOT_TESTABLE, REPRODUCED, REVERSED, UNDECIDED, VERDICTS,  # noqa: F401
                         Check, Claim, Unit, Verdict, combine, judge_claim, judge_paper, judge_units, overlaps, side_of,
                         unit_verdict)  # the rule's words and functions, read through this module by the pages and tests

CHECKS = (
    Check("table1", "All three classical verdicts reverse", "Table 1 caption", "1", "theory", read.check_table1,
          "largest absolute difference from the paper's printed values, at most half its last digit", TABLE1_TOLERANCE),
    Check("figure6", "The reversal region is not thin", "Figure 6 caption", "1", "theory", read.check_figure6,
          "Wilson interval over the sampled positions contains the paper's share", LEVEL, scope="20,000 sampled positions of the simplex"),
    Check("figure2", "Entropy conflates sink strength with content spread", "Figure 2 caption", "1", "theory", read.check_figure2,
          f"relative changes of entropy and concentration within {FIGURE2_TOLERANCE:g} of the paper's, both panels", FIGURE2_TOLERANCE),
    Check("table4", "the content distance is characterized by invariances the transformer itself possesses", "Abstract", "1",
          "theory", read.check_table4, "every cell of the invariance matrix, tested on random rows, equals the paper's"),
    Check("entropy_identity", "entropy splits by an exact identity", "Abstract", "1", "theory", read.check_entropy_identity,
          f"largest residual of the identity, at most {EXACT:g}", EXACT),
    Check("curves_rise", "Monte Carlo closer-head disagreement rates between sink conventions for cosine, JS, and Euclidean "
          "distance, computed before any pretrained model was run", "Figure 3 caption", "2", "calibration", read.check_curves,
          "each curve rises with sink mass: Spearman ρ over the grid, exact permutation p", LEVEL, scope="synthetic heads of the calibration grid (our own Monte Carlo curves)"),
    Check("lemma1", "the Aitchison distance splits orthogonally into a sink term and a content term", "Abstract", "3",
          "measurement", read.check_lemma1, f"largest relative residual of the split on measured signatures, at most {EXACT:g}", EXACT, scope=ON_MODELS),
    Check("content_none", "its rate is zero by construction", "Table 2 caption", "3", "measurement", read.check_content_none,
          "exact: no triple of any model or seed reverses", 0.0, scope=ON_MODELS),
    Check("hellinger_fr", "Fisher–Rao is identical since both are strictly monotone in the Bhattacharyya coefficient",
          "Table 2 caption", "3", "measurement", read.check_hellinger, "exact: the same reversed count on every model and seed", 0.0, scope=ON_MODELS),
    Check("eps_sweep", "bit-identical across the \\varepsilon sweep", "Table 2 caption", "3", "measurement", read.check_eps,
          "exact: every verdict the same bits at every ε, every model", 0.0, scope=ON_MODELS),
    Check("taxonomy_content", "with ARI =1 verified in code", "Table 5 caption", "3.2", "measurement", read.check_taxonomy_content,
          "exact: every d_A^⊥ taxonomy's between-convention ARI is 1", 0.0, scope=ON_MODELS),
    Check("temperature_content", "values are exactly 0 and 1 on every model, verified to the bit", "Table 8 caption", "3.2",
          "measurement", read.check_temperature_content, "exact: d_A^⊥ flips 0 verdicts and keeps the whole prune set at every temperature", 0.0, scope=ON_MODELS),
)
"""The checks of the mathematics, in the scorecard's order."""


CLAIMS = (
    Claim("sink_premise", "in trained models most of that probability lands on a single sink token, usually the first", "Abstract",
          "3", "measurement", read.sink_units, read.paper_lm_sinks, lambda paper: (0.5, math.inf), 0.5,
          "the mean row sink mass over models (t interval over models) against one half",
          read.chapter_scope("measurement", stand_in="the paper's four language models (its ViT-B/16 puts 0.04 on its sink)")),
    Claim("reversal_range", "17--47% of verdicts about which of two heads is more similar flip with the convention", "Abstract",
          "3", "measurement", read.classical_units, read.paper_table2_units,
          lambda paper: tuple(v / 100 for v in paper["table2"]["reversal_range_pct"]), 0.0,
          "each model's and classical metric's flip rate (t interval over seeds) against the paper's range",
          read.chapter_scope("measurement", stand_in="standing in for the paper's ten models")),
    Claim("rates_rise", "Rates rise with signature sink mass", "Table 2 caption", "3", "measurement",
          lambda record: [read.slope_unit("slope over models", [r["summary"]["signature_sink_mass"]["mean"] for r in read.measured(record).values()],
                                      [read.mean_classical(r) for r in read.measured(record).values()])],
          lambda paper: [read.slope_unit("slope over Table 2's five models", [row["sig_sink"] for row in paper["table2"]["models"].values()],
                                     [np.mean([row[m][0] / 100 for m in CLASSICAL]) for row in paper["table2"]["models"].values()])],
          lambda paper: (0.0, math.inf), 0.0, "least-squares slope of the mean classical rate on signature sink mass, t interval over models",
          read.chapter_scope("measurement"), premise=read.rates_premise),
    Claim("collapse_disagreement", "H reports deepening collapse that the content channel does not show", "Figure 4 caption", "3.1",
          "measurement", read.conflation_units, None, lambda paper: (0.0, math.inf), 0.0,
          "per model, where the sink rises against where it falls: the share of layer transitions with H falling and H(π) not "
          "(seed 0, transitions as units), Fisher's exact test",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0's layers)"),
          no_paper_numbers="Figure 4 is a plot, and Table 2 prints only the overall share of transitions where H and H(π) disagree"),
    Claim("deviation", "mean absolute deviation from the solid curves is 4.8 points", "Figure 3 caption", "3", "measurement",
          read.deviation_units, lambda paper: [Unit("mean", p := paper["figure3"]["mean_abs_deviation_points"], p),
                                           Unit("max", q := paper["figure3"]["max_deviation_points"], q)],
          lambda paper: (0.0, paper["figure3"]["max_deviation_points"]), None,
          "each in-domain model's and classical metric's distance from the frozen α = 0.1 curve (t interval over seeds), against the paper's largest",
          read.deviation_scope, premise=read.deviation_premise),
    Claim("predictor", "one confirmation, one abstention, one failure", "Abstract", "3", "measurement",
          lambda record: [read.predictor_counts([r["predictor"]["v1"]["outcome"] for r in read.measured(record).values()])],
          read.paper_predictor, read.paper_predictor_range, 0.0,
          "share of confirmations among the models the frozen rule decides, exact binomial interval",
          lambda record: read.models_scope(read.measured(record)) + "; outcomes: " + ", ".join(
              f"{n} {r['predictor']['v1']['outcome']}" for n, r in read.measured(record).items()), premise=read.predictor_premise),
    Claim("witness", "A measured Llama-3.2-1B head triple realizing Theorem 1", "Figure 7 caption", "3.3", "measurement",
          read.witness_units, lambda paper: [Unit(paper["figure7"]["model"], paper["figure7"]["triples_shown"], paper["figure7"]["triples_shown"])],
          lambda paper: (1.0, math.inf), 0.0, "head triples of seed 0 where cosine, JS and Euclidean all reverse and d_A^⊥ does not, counted",
          read.chapter_scope("measurement", unit="seeds (witnesses from seed 0)"), level=None),
    Claim("taxonomy", "Measured taxonomy stability across sink conventions", "Table 5 caption", "3.2", "measurement", read.ari_units,
          lambda paper: [Unit(f"{n} {m}", v, v) for n, row in paper["table5"]["models"].items() for m, v in row.items()],
          lambda paper: read.range_of(v for row in paper["table5"]["models"].values() for v in row.values()), 1.0,
          "each model's and classical metric's between-convention ARI (seed 0), against Table 5's range and 1",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0)"), direction=-1, level=None),
    Claim("aggregation", "Aggregation robustness", "Table 7 caption", "3.2", "measurement", read.arithmetic_units, read.paper_table7, read.table7_range, 0.0,
          "each model's and classical metric's flip rate on arithmetic-mean signatures (seed 0, as the paper), against Table 7's range",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0)"), level=None),
    Claim("small_parts", "carried by coordinate pairs with smaller entry below 10^{-6}", "Table 6 caption", "3.2", "measurement",
          read.audit_units("share_below_small_part"), read.table6_units("share_below_1e-6"), read.table6_range("share_below_1e-6"), None,
          "each model's share of squared d_A^⊥ from pairs with an entry below 1e-6 (seed 0, as the paper), against Table 6's range",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0)"), level=None),
    Claim("js_content_rho", "Spearman correlation of pairwise distances", "Table 6 caption", "3.2", "measurement",
          read.audit_units("spearman"), read.table6_units("spearman"), read.table6_range("spearman"), 0.0,
          "each model's Spearman ρ between dropped-row JS and d_A^⊥ over head pairs (seed 0, as the paper), against Table 6's range",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0)"), level=None),
    Claim("temperature", "worst-case dropped-JS verdict flip rate", "Table 8 caption", "3.2", "measurement",
          read.seed_units(("temperature", "js", "flip_max")), read.table8_units("temp_flip_max"), read.table8_range("temp_flip_max"), 0.0,
          "each model's largest JS′ flip rate over four temperatures (seed 0, as the paper), against Table 8's range",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0)"), level=None),
    Claim("retention", "prune-set retention", "Table 8 caption", "3.2", "measurement",
          read.seed_units(("temperature", "js", "retention_min")), read.table8_units("retention_min"), read.table8_range("retention_min"), 1.0,
          "each model's smallest top-20 % prune-set retention under JS′ over four temperatures (seed 0), against Table 8's range and 1",
          read.chapter_scope("measurement", unit="seeds (this reading on seed 0)"), direction=-1, level=None),
    Claim("sink_set", "closer-head verdict flip rate between the first-token and first-four-token sink definitions", "Table 8 caption",
          "3.2", "measurement", read.sink_set_units, read.table8_units("sinkset_js", "sinkset_content"), read.table8_range("sinkset_js", "sinkset_content"),
          0.0, "each causal model's flip rate between the first key and the first four as sink set, JS′ and d_A^⊥ (seed 0), against Table 8's range",
          read.causal_scope, level=None),
    Claim("js_cross_ari", "Cross = between-convention ARI", "Table 9 caption", "5", "clustering", read.clustering_cross_units,
          lambda paper: [Unit(f"K {row['K']}", row["js_cross"], row["js_cross"]) for row in paper["table9"]["rows"]],
          lambda paper: read.range_of(row["js_cross"] for row in paper["table9"]["rows"]), 1.0,
          "each encoder's JS clustering ARI between conventions (median over K, t interval over window samples), against Table 9's range and 1",
          lambda record: f"{len(read.clustering_cross_units(record))} sentence encoders with clustering samples, standing in for BERT-base",
          premise=read.sep_premise, direction=-1),
    Claim("clustering", "the most prominent structure in a standard BERT head-clustering pipeline is an artifact of it", "Abstract", "5",
          "clustering", read.sep_units, lambda paper: [Unit(f"K {row['K']}", d := row["js_sep_keep"] - row["js_sep_drop"], d) for row in paper["table9"]["rows"]],
          lambda paper: (0.0, math.inf), 0.0, "[SEP]-head Jaccard kept minus dropped (median over K, t interval over window samples)",
          read.chapter_scope("clustering"), premise=read.sep_premise),
    Claim("collapse_share", "most measured entropy collapse during training is the sink growing, not attention sharpening", "Abstract",
          "4", "collapse", read.endpoint_units, lambda paper: [Unit(n, v, v) for n, v in paper["figure5"]["pythia_shares"].items()],
          lambda paper: read.range_of(paper["figure5"]["pythia_shares"].values()), 0.0,
          "each pretrained model's sink share of its entropy fall from a random initialisation (range over 5 window and initialisation "
          "seeds), against the paper's 30–95 % (its own 70M share is 30 %, so 'most' is read as that range)",
          read.endpoint_scope, premise=read.endpoint_premise),
    Claim("share_scale", "30% of the drop at 70M parameters, 95% at 1B", "Abstract", "4", "collapse", read.scale_units, read.paper_scale_units,
          lambda paper: (0.0, math.inf), 0.0, "least-squares slope of the share on log parameters, t interval over runs",
          read.ladder_scope, premise=read.scale_premise),
    Claim("training_rise", "(a) reversal tracks sink mass, which strengthens with scale within each family", "Figure 5 caption", "4",
          "collapse", lambda record: [], None, lambda paper: (0.0, math.inf), 0.0,
          "rise of the reversal rate and sink mass with size within one family", read.ladder_scope, premise=read.scale_premise,
          no_paper_numbers="Figure 5a is a plot: the paper prints no numbers for it"),
    Claim("blow_up", "pruning heads with the wrong channel can inflate perplexity more than a hundredfold", "Abstract", "6", "pruning",
          read.blow_up_units, read.paper_blow_up, lambda paper: (paper["abstract"]["blow_up_fold"], math.inf), 1.0,
          "the worst wrong-channel cell's perplexity over the unpruned one (t interval of the log over seeds), against 100×",
          read.chapter_scope("pruning"), premise=read.blow_up_premise),
    Claim("channel", "The separation matters in practice", "Abstract", "6", "pruning", read.channel_units, read.paper_channel,
          lambda paper: (0.0, math.inf), 0.0,
          "per model, whether JS-with-sink and d_A^⊥ pruning differ: hierarchical-bootstrap contrasts over seeds, Holm-adjusted",
          read.chapter_scope("pruning"), detail=read.channel_detail),
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
