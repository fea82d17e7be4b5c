"""Every branch of every scorecard rule, on small records built here, and the rules on the committed record."""

import copy
import json
from pathlib import Path

import pytest

from attncoda.studies import scorecard as sc
from attncoda.studies.significance import trend_test

ROOT = Path(__file__).parents[2]
PAPER = json.loads((ROOT / "data" / "paper" / "reference.json").read_text())
R, D, V, U, N = sc.REPRODUCED, sc.DIFFERS, sc.REVERSED, sc.UNDECIDED, sc.NOT_TESTABLE


def verdict(rule, record):
    return rule(record, PAPER).verdict


def test_every_rule_says_not_testable_without_its_chapter():
    for key, rule in sc.RULES.items():
        v = rule({}, PAPER)
        assert v.verdict == N and v.claim == key and "no" in v.why, key


def test_a_verdict_is_one_of_the_five_words():
    with pytest.raises(ValueError, match="a verdict is one of"):
        sc.Verdict("table1", "confirmed")


def test_interval_verdict_and_combine_cover_their_branches():
    assert [sc.interval_verdict(*x, 0.3, 0.95) for x in ((0.2, 0.5), (0.03, 0.24), (-0.4, -0.1), (-0.01, 0.11))] == [R, D, V, U]
    assert sc.combine([R, R]) == R and sc.combine([R, V, D]) == V and sc.combine([R, D]) == D and sc.combine([R, U]) == U
    assert sc.combine([]) == N


def theory(diff=0.0, rate=0.7792, n=20_000):
    return {"theory": {"synthetic": {"table1_max_abs_diff_vs_paper": diff, "figure6": {"cosine_reversal_rate": rate, "positions": n}}}}


def test_table1_reproduced_within_half_a_printed_digit_else_differs():
    assert verdict(sc.table1_witness, theory(0.0)) == R and verdict(sc.table1_witness, theory(4e-5)) == R
    assert verdict(sc.table1_witness, theory(2e-4)) == D


def test_figure6_branches():
    assert verdict(sc.figure6_rate, theory(rate=0.7792)) == R
    assert verdict(sc.figure6_rate, theory(rate=0.70)) == D  # a majority still reverses, another size
    assert verdict(sc.figure6_rate, theory(rate=0.30)) == V  # a majority keeps its verdict: the other way
    assert verdict(sc.figure6_rate, theory(rate=0.5, n=100)) == U  # the interval straddles one half


def calibration(slope=1.0):
    masses = [0.02 + 0.03 * i for i in range(10)]
    curve = [0.2 + slope * 0.01 * i for i in range(10)] if slope else [0.2, 0.3, 0.2, 0.3, 0.2, 0.3, 0.2, 0.3, 0.2, 0.3]
    return {"calibration": {"synthetic": {"grid": {"sink_masses": masses, "alphas": [0.1, 1.0]},
                                          "curves": {"0.1": {m: curve for m in sc.CLASSICAL}}}}}


def test_curves_rise_branches():
    assert verdict(sc.curves_rise, calibration(1.0)) == R
    assert verdict(sc.curves_rise, calibration(-1.0)) == V
    assert verdict(sc.curves_rise, calibration(0)) == U


def model(rates, sink=0.5, content=0, sd=0.005, v1=("confirmation", 5.0, 9.0), taxonomy=None, temperature=(0.0, 0.05)):
    reversal = {m: {"mean": r, "sd": sd} for m, r in zip(sc.CLASSICAL, rates)}
    reversal["content"] = {"mean": content / 1000, "sd": 0.0}
    seed = {"reversal": {"content": {"reversed": content, "compared": 1000}},
            "taxonomy_ari": taxonomy if taxonomy is not None else {"cosine": 0.0, "js": 0.05, "euclidean": -0.05, "content": 1.0},
            "temperature": {"content": {"flip_max": temperature[0]}, "js": {"flip_max": temperature[1]}}}
    return {"summary": {"reversal": reversal, "signature_sink_mass": {"mean": sink}}, "per_seed": [seed],
            "predictor": {"v1": {"outcome": v1[0], "mean_abs_deviation_points": v1[1], "max_abs_deviation_points": v1[2]}}}


def measurement(*models):
    return {"measurement": {f"m{i}": m for i, m in enumerate(models)}}


def test_reversal_range_branches():
    assert verdict(sc.reversal_range, measurement(model([0.3, 0.35, 0.4]))) == R
    assert verdict(sc.reversal_range, measurement(model([0.3, 0.35, 0.6]))) == D
    assert verdict(sc.reversal_range, measurement(model([0.0, 0.0, 0.0]))) == V  # the convention would not matter
    assert verdict(sc.reversal_range, measurement(model([0.0, 0.3, 0.6]), model([0.0, 0.2, 0.3]))) == V


def test_rates_rise_branches():
    rising = measurement(*(model([r, r, r], sink=s) for r, s in zip((0.1, 0.2, 0.3, 0.4, 0.5), (0.1, 0.3, 0.5, 0.7, 0.9))))
    falling = measurement(*(model([r, r, r], sink=s) for r, s in zip((0.5, 0.4, 0.3, 0.2, 0.1), (0.1, 0.3, 0.5, 0.7, 0.9))))
    mixed = measurement(*(model([r, r, r], sink=s) for r, s in zip((0.3, 0.1, 0.5, 0.2, 0.4), (0.1, 0.3, 0.5, 0.7, 0.9))))
    assert verdict(sc.rates_rise_with_sink, rising) == R and verdict(sc.rates_rise_with_sink, falling) == V
    assert verdict(sc.rates_rise_with_sink, mixed) == U
    few = sc.rates_rise_with_sink(measurement(model([0.3] * 3), model([0.4] * 3)), PAPER)
    assert few.verdict == U and few.why == "fewer than 5 models"


def test_content_flips_none_is_exact():
    assert verdict(sc.content_flips_none, measurement(model([0.3] * 3))) == R
    assert verdict(sc.content_flips_none, measurement(model([0.3] * 3), model([0.3] * 3, content=1))) == D


def test_deviation_branches():
    near = measurement(*(model([0.3] * 3, v1=("confirmation", d, 8.0)) for d in (4.0, 4.5, 5.0)))
    far = measurement(*(model([0.3] * 3, v1=("failure", d, 25.0)) for d in (15.0, 16.0, 17.0)))
    wide = measurement(*(model([0.3] * 3, v1=("failure", d, 25.0)) for d in (2.0, 16.0)))
    assert verdict(sc.calibration_deviation, near) == R and verdict(sc.calibration_deviation, far) == D
    assert verdict(sc.calibration_deviation, wide) == U
    none = measurement(model([0.3] * 3, v1=("abstention", None, None)))
    assert sc.calibration_deviation(none, PAPER).why == "no model was placed on the curves"


def test_predictor_record_branches():
    outcomes = lambda *o: measurement(*(model([0.3] * 3, v1=(x, 5.0, 8.0)) for x in o))
    assert verdict(sc.predictor_record, outcomes("confirmation", "failure", "abstention")) == R
    assert verdict(sc.predictor_record, outcomes("confirmation", "confirmation")) == D
    assert verdict(sc.predictor_record, outcomes("failure", "abstention")) == D
    assert verdict(sc.predictor_record, outcomes("abstention")) == U


def test_taxonomy_branches():
    near_zero = {"cosine": 0.0, "js": 0.05, "euclidean": -0.05, "content": 1.0}
    assert verdict(sc.taxonomy_stability, measurement(model([0.3] * 3, taxonomy=near_zero))) == R
    assert verdict(sc.taxonomy_stability, measurement(model([0.3] * 3, taxonomy={**near_zero, "js": 0.6}))) == D
    assert verdict(sc.taxonomy_stability, measurement(model([0.3] * 3, taxonomy={**near_zero, "js": 1.0}))) == V
    assert verdict(sc.taxonomy_stability, measurement(model([0.3] * 3, taxonomy={**near_zero, "content": 0.9}))) == V
    assert verdict(sc.taxonomy_stability, measurement(model([0.3] * 3, taxonomy={}))) == N


def test_temperature_branches():
    assert verdict(sc.temperature_invariance, measurement(model([0.3] * 3, temperature=(0.0, 0.05)))) == R
    assert verdict(sc.temperature_invariance, measurement(model([0.3] * 3, temperature=(0.01, 0.05)))) == D
    assert verdict(sc.temperature_invariance, measurement(model([0.3] * 3, temperature=(0.0, 0.0)))) == D


def ladder(*sizes):
    """Sizes as lists of (share, final sink mass) per seed."""
    out = []
    for i, runs in enumerate(sizes):
        shares = [s for s, _ in runs]
        from attncoda.studies.significance import t_interval

        mean, low, high = t_interval(shares)
        out.append({"group": f"size {i + 1} × {i + 1}, width 96", "kind": "ladder", "final_other_sink": [m for _, m in runs],
                    "shares": {"pooled (shown)": {"values": shares, "mean": mean, "low": low, "high": high}}})
    return {"collapse": {"suite": {"sizes": out, "series": []}}}


def test_collapse_share_branches():
    inside = [(0.40, 0.9), (0.45, 0.9), (0.50, 0.9)]
    small = [(0.10, 0.9), (0.12, 0.9), (0.14, 0.9)]
    negative = [(-0.10, 0.1), (-0.12, 0.1), (-0.14, 0.1)]
    straddle = [(-0.05, 0.1), (0.05, 0.1), (0.10, 0.1)]
    assert verdict(sc.collapse_share, ladder(inside)) == R
    assert verdict(sc.collapse_share, ladder(inside, small)) == D
    assert verdict(sc.collapse_share, ladder(inside, negative)) == V
    assert verdict(sc.collapse_share, ladder(inside, straddle)) == U


def test_collapse_share_of_a_checkpoint_series_is_a_point():
    series = lambda share: {"collapse": {"pythia": {"series": [{"name": "pythia", "shares": {"from_step0": {"share": share}}}]}}}
    assert verdict(sc.collapse_share, series(0.5)) == R
    assert verdict(sc.collapse_share, series(0.1)) == U  # one run, no resample: no size can be claimed


def test_share_scale_branches_and_the_sink_growth_note():
    rising = ladder([(0.1, 0.9), (0.12, 0.9), (0.11, 0.9)], [(0.3, 0.9), (0.32, 0.9), (0.31, 0.9)], [(0.6, 0.9), (0.62, 0.9), (0.61, 0.9)])
    v = sc.share_rises_with_scale(rising, PAPER)
    assert v.verdict == R and v.why == ""
    falling = ladder([(0.35, 0.9), (0.30, 0.9), (0.41, 0.9)], [(0.16, 0.3), (0.16, 0.3), (0.08, 0.2)], [(0.03, 0.05), (0.07, 0.1), (0.06, 0.1)])
    v = sc.share_rises_with_scale(falling, PAPER)
    assert v.verdict == V and v.why == "not every size grew a sink" and v.ours["grew"] == [3, 0, 0]
    flat = ladder([(0.3, 0.9), (0.1, 0.9), (0.2, 0.9)], [(0.2, 0.9), (0.3, 0.9), (0.1, 0.9)])
    assert verdict(sc.share_rises_with_scale, flat) == U


def clustering(sep_members, gaps=()):
    samples = [[{"K": 4, "js_sep_jaccard_keep": 0.5 + g, "js_sep_jaccard_drop": 0.5}] for g in gaps]
    return {"clustering": {"bert": {"head_sets": {"sep": {"members": sep_members}}, "table9": [{"K": 4, "js_cross_ari": 0.05}],
                                    "table9_samples": {"per_sample": samples}}}}


def test_clustering_branches():
    assert verdict(sc.clustering_artifact, clustering([])) == N
    assert verdict(sc.clustering_artifact, clustering([[0, 1]], [0.4] * 10)) == R
    assert verdict(sc.clustering_artifact, clustering([[0, 1]], [-0.4] * 10)) == V
    assert verdict(sc.clustering_artifact, clustering([[0, 1]], [0.4, -0.4] * 5)) == U


def pruning(js_medians, base=20.0, contrasts=()):
    cells = [{"metric": "js_keep", "sparsity": 0.2, "seed_medians": js_medians, "geometric_mean": float(sum(js_medians) / len(js_medians))}]
    return {"pruning": {"m": {"scored": [{"kind": "base", "perplexity": base}],
                              "readings": {"cells": cells, "contrasts": [{"a": a, "b": b, "ratio": r, "p_holm": p} for a, b, r, p in contrasts]}}}}


def test_blow_up_branches():
    assert verdict(sc.pruning_blow_up, pruning([2500.0, 2600.0, 2700.0])) == R
    assert verdict(sc.pruning_blow_up, pruning([200.0, 210.0, 220.0])) == D
    assert verdict(sc.pruning_blow_up, pruning([10.0, 11.0, 12.0])) == V  # pruning would lower perplexity
    assert verdict(sc.pruning_blow_up, pruning([30.0, 3000.0, 30.0])) == U


def test_js_worse_branches():
    better, worse = ("js_keep", "content", 0.7, 0.01), ("js_keep", "content", 1.5, 0.01)
    flipped_order_better = ("content", "js_keep", 1.4, 0.01)  # content's perplexity 1.4× JS's: JS prunes better
    unclear = ("js_keep", "content", 0.9, 0.4)
    assert verdict(sc.js_worse_than_content, pruning([30.0] * 3, contrasts=[better, flipped_order_better])) == V
    assert verdict(sc.js_worse_than_content, pruning([30.0] * 3, contrasts=[worse])) == R
    assert verdict(sc.js_worse_than_content, pruning([30.0] * 3, contrasts=[better, worse])) == U
    assert verdict(sc.js_worse_than_content, pruning([30.0] * 3, contrasts=[unclear])) == U
    other = ("js_keep", "aitchison", 0.5, 0.001)
    assert sc.js_worse_than_content(pruning([30.0] * 3, contrasts=[other]), PAPER).ours["pairs"] == 0


def test_trend_test_is_exact_and_symmetric():
    groups = [[0.35, 0.30, 0.41], [0.16, 0.16, 0.08], [0.03, 0.07, 0.06]]
    shift, p, how = trend_test(groups)
    assert how == "exact permutation" and p == pytest.approx(2 / 1680) and shift < 0
    assert trend_test(groups[::-1])[:2] == (-shift, p)


def committed_record():
    from attncoda.face.results import read_record

    return read_record(ROOT / "data" / "results")


def test_the_committed_record_gets_a_verdict_for_every_claim():
    verdicts = sc.judge(committed_record(), PAPER)
    assert [v.claim for v in verdicts] == list(sc.RULES) and len(verdicts) >= 14
    by = {v.claim: v.verdict for v in verdicts}
    # what the issue that asked for the scorecard found by recomputing the record: pruning and scaling go the other way
    assert by["js_worse"] == V and by["share_scale"] == V and by["blow_up"] == D and by["clustering"] == N


def test_a_chapter_is_judged_on_its_own_results_only():
    record = committed_record()
    verdicts = sc.chapter_verdicts("pruning", record["pruning"], PAPER)
    assert [v.claim for v in verdicts] == list(sc.CHAPTER_CLAIMS["pruning"])
    one = {"smollm2-135m": copy.deepcopy(record["pruning"]["smollm2-135m"])}
    assert sc.chapter_verdicts("pruning", one, PAPER)[0].ours["models"] == 1
