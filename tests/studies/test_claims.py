"""The scorecard's rules: one comparison for every row, the paper's own numbers passing every rule about models, each
premise refusing what our evidence cannot test, every quote found in the paper, and the rules on the committed record."""

import copy
import json
import math
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from attncoda.studies import claims as sc
from attncoda.studies import claim_readings as read
from attncoda.studies.claims import Unit

ROOT = Path(__file__).parents[2]
PAPER = json.loads((ROOT / "data" / "paper" / "reference.json").read_text())
PAPER_TEXT = ROOT.parent / "shared" / "paper" / "001_c586afe96264a772.txt"
R, D, V, U, N = sc.REPRODUCED, sc.DIFFERS, sc.REVERSED, sc.UNDECIDED, sc.NOT_TESTABLE
WITH_PAPER_NUMBERS = [c for c in sc.CLAIMS if c.paper_units is not None]


def verdict(key, record):
    return sc.RULES[key](record, PAPER).verdict


def test_every_row_says_not_testable_without_its_chapter():
    for key, rule in sc.RULES.items():
        v = rule({}, PAPER)
        assert v.verdict == N and v.claim == key and "no" in v.why, key


def test_a_verdict_is_one_of_the_five_words():
    with pytest.raises(ValueError, match="a verdict is one of"):
        sc.Verdict("table1", "confirmed")


def test_the_card_has_two_groups_and_at_least_26_rows():
    assert len(sc.ROWS) >= 26 and list(sc.ROWS) == [*(c.key for c in sc.CHECKS), *(c.key for c in sc.CLAIMS)]
    assert {r.group for r in sc.CHECKS} == {sc.MATH} and {r.group for r in sc.CLAIMS} == {sc.MODELS}
    assert all(key in sc.ROWS for keys in sc.CHAPTER_CLAIMS.values() for key in keys)


# --- One comparison ---------------------------------------------------------------------------------------------------

def test_unit_verdict_covers_its_branches_in_both_directions():
    assert [sc.unit_verdict(Unit("u", *x), 0.0, (0.3, 0.95)) for x in ((0.2, 0.5), (0.03, 0.24), (-0.4, -0.1), (-0.01, 0.11))] == [R, D, V, U]
    # the paper's side below the null (an ARI below 1, a share below one half)
    assert [sc.unit_verdict(Unit("u", *x), 1.0, (-0.1, 0.1), -1) for x in ((0.0, 0.05), (0.5, 0.6), (1.1, 1.2), (0.9, 1.1))] == [R, D, V, U]
    # a test's side overrides the interval's
    assert sc.unit_verdict(Unit("u", 0.2, 0.5, side=0), 0.0, (0.3, 0.95)) == U
    # a claim of size only has no other side
    assert sc.unit_verdict(Unit("u", -5.0, -4.0), None, (0.0, 13.0)) == D


def test_combine_covers_its_branches():
    assert sc.combine([R, R]) == R and sc.combine([R, V, D]) == V and sc.combine([R, D]) == D and sc.combine([R, U]) == U
    assert sc.combine([]) == N


@given(st.floats(-10, 10), st.floats(0, 5), st.floats(-10, 10), st.floats(0, 5))
def test_overlap_is_symmetric(a, wa, b, wb):
    assert sc.overlaps(a, a + wa, b, b + wb) == sc.overlaps(b, b + wb, a, a + wa)


# --- The paper passes its own rules -----------------------------------------------------------------------------------

def mirrored(units, null):
    """The paper's units on the other side of the claim's null."""
    return [Unit(u.name, 2 * null - u.high, 2 * null - u.low, None if u.side is None else -u.side) for u in units]


def moved_off(units, claim):
    """The paper's units moved off its stated range, on the paper's side of the null, keeping their widths."""
    low, high = claim.paper_range(PAPER)
    gap = (high - low) + 0.1 * max(1.0, abs(high))
    if claim.direction > 0:
        return [Unit(u.name, high + gap, high + gap + (u.high - u.low)) for u in units]
    return [Unit(u.name, low - gap - (u.high - u.low), low - gap) for u in units]


@pytest.mark.parametrize("claim", WITH_PAPER_NUMBERS, ids=lambda c: c.key)
def test_the_papers_own_numbers_pass_every_rule_about_models(claim):
    assert sc.judge_paper(claim, PAPER) == R, "a rule the paper's numbers cannot pass tests a claim the paper did not make"


@pytest.mark.parametrize("claim", [c for c in WITH_PAPER_NUMBERS if c.null is not None], ids=lambda c: c.key)
def test_the_papers_numbers_mirrored_about_the_null_are_reversed(claim):
    assert sc.judge_paper(claim, PAPER, mirrored(claim.paper_units(PAPER), claim.null)) == V


@pytest.mark.parametrize("claim", [c for c in WITH_PAPER_NUMBERS if all(math.isfinite(x) for x in c.paper_range(PAPER))],
                         ids=lambda c: c.key)
def test_the_papers_numbers_moved_off_its_range_differ(claim):
    assert sc.judge_paper(claim, PAPER, moved_off(claim.paper_units(PAPER), claim)) == D


def test_a_claim_without_printed_numbers_says_why():
    assert all(claim.no_paper_numbers for claim in sc.CLAIMS if claim.paper_units is None)
    assert len(WITH_PAPER_NUMBERS) >= len(sc.CLAIMS) - 2, "the paper's own numbers judge all but the plots"


# --- Quotes ---------------------------------------------------------------------------------------------------------

def normalized(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not PAPER_TEXT.exists(), reason="the paper's text (shared/paper) is beside the checkout only")
@pytest.mark.parametrize("row", list(sc.ROWS.values()), ids=lambda r: r.key)
def test_every_rows_quote_is_in_the_paper(row):
    assert normalized(row.quote) in normalized(PAPER_TEXT.read_text()), f"{row.key}: {row.quote!r} is not the paper's words"
    assert re.match(r"(Abstract|(Table|Figure) \d+ caption)$", row.place), row.place


# --- Premises -----------------------------------------------------------------------------------------------------------

def model(rates, sink=0.5, seeds=3):
    per_seed = [{"reversal": {m: {"rate": r} for m, r in zip(sc.CLASSICAL, rates)}, "row_sink_mass": sink} for _ in range(seeds)]
    return {"summary": {"reversal": {m: {"mean": r} for m, r in zip(sc.CLASSICAL, rates)}, "signature_sink_mass": {"mean": sink}},
            "per_seed": per_seed, "seeds": list(range(seeds)), "model_info": {"causal": True}}


def measurement(*models):
    return {"measurement": {f"m{i}": m for i, m in enumerate(models)}}


def test_rates_rise_needs_models_whose_sink_masses_span_the_scale():
    narrow = measurement(*(model([r] * 3, sink=s) for r, s in zip((0.1, 0.2, 0.3, 0.4, 0.5), (0.45, 0.5, 0.52, 0.55, 0.6))))
    v = sc.RULES["rates_rise"](narrow, PAPER)
    assert v.verdict == N and "span" in v.why
    rising = measurement(*(model([r] * 3, sink=s) for r, s in zip((0.1, 0.2, 0.3, 0.4, 0.5), (0.1, 0.3, 0.5, 0.7, 0.9))))
    falling = measurement(*(model([r] * 3, sink=s) for r, s in zip((0.5, 0.4, 0.3, 0.2, 0.1), (0.1, 0.3, 0.5, 0.7, 0.9))))
    assert verdict("rates_rise", rising) == R and verdict("rates_rise", falling) == V
    assert "at least" in sc.RULES["rates_rise"](measurement(model([0.3] * 3)), PAPER).why


def test_reversal_range_compares_each_model_and_metric():
    assert verdict("reversal_range", measurement(model([0.3, 0.35, 0.4]))) == R
    assert verdict("reversal_range", measurement(model([0.3, 0.35, 0.6]))) == D


def test_sink_premise_takes_the_models_as_its_unit():
    sinks = lambda *m: measurement(*({**model([0.3] * 3), "summary": {"row_sink_mass": {"mean": x}}} for x in m))
    assert verdict("sink_premise", sinks(0.8, 0.75, 0.85)) == R
    assert verdict("sink_premise", sinks(0.3, 0.35, 0.25)) == V
    assert verdict("sink_premise", sinks(0.3, 0.8)) == U


def ladder(*sizes, params=(0.24, 0.25, 0.37)):
    """Sizes as lists of (share, final sink mass) per seed."""
    out = []
    for i, runs in enumerate(sizes):
        out.append({"group": f"size {i + 1} × {i + 1}, width 96 ({params[i]} M parameters)", "kind": "ladder",
                    "final_other_sink": [m for _, m in runs], "shares": {"pooled (shown)": {"values": [s for s, _ in runs]}}})
    return {"collapse": {"suite": {"sizes": out, "series": []}}}


def test_a_claim_about_scale_needs_ten_times_the_parameters_each_with_a_sink():
    grown = [(0.1, 0.9), (0.12, 0.9), (0.11, 0.9)], [(0.3, 0.9), (0.32, 0.9), (0.31, 0.9)], [(0.6, 0.9), (0.62, 0.9), (0.61, 0.9)]
    v = sc.RULES["share_scale"](ladder(*grown), PAPER)
    assert v.verdict == N and "1.5×" in v.why
    assert verdict("share_scale", ladder(*grown, params=(1, 10, 100))) == R
    assert verdict("share_scale", ladder(*grown[::-1], params=(1, 10, 100))) == V
    no_sink = ladder(grown[0], [(0.3, 0.1)] * 3, grown[2], params=(1, 10, 100))
    assert "only 2 of" in sc.RULES["share_scale"](no_sink, PAPER).why


def test_a_reading_of_one_seed_can_agree_but_cannot_differ():
    point = lambda v: Unit("seed 0", v, v, resampled=False)
    assert sc.unit_verdict(point(0.5), 0.0, (0.3, 0.95)) == R
    assert sc.unit_verdict(point(0.1), 0.0, (0.3, 0.95)) == U and sc.unit_verdict(point(-0.1), 0.0, (0.3, 0.95)) == U
    assert sc.unit_verdict(Unit("t", 0.1, 0.2), 0.0, (0.3, 0.95)) == D, "a resampled interval can"


def test_the_predictor_record_needs_enough_decided_models():
    outcomes = lambda *o: measurement(*({**model([0.3] * 3), "predictor": {"v1": {"outcome": x}}} for x in o))
    v = sc.RULES["predictor"](outcomes("confirmation", "failure", "abstention"), PAPER)
    assert v.verdict == N and "2 decided models" in v.why
    assert verdict("predictor", outcomes(*["confirmation"] * 5 + ["failure"] * 5)) == R
    assert verdict("predictor", outcomes(*["confirmation"] + ["failure"] * 10)) == D  # one of eleven: the paper's way, less often


def test_the_deviation_counts_models_inside_the_curves_domain():
    def placed(causal, sink, rates, predicted):
        m = model(rates)
        m["model_info"]["causal"], m["sink"] = causal, sink
        m["per_seed"] = [{"reversal": {k: {"rate": r + e} for k, r in zip(sc.CLASSICAL, rates)}} for e in (-0.002, 0.0, 0.002)]
        return {**m, "predictor": {"v1": {"predicted": dict(zip(sc.CLASSICAL, predicted))}}}
    near = placed(True, [0], [0.30, 0.30, 0.30], [0.28, 0.27, 0.29])
    encoder = placed(False, [0, 127], [0.50, 0.50, 0.50], [0.28, 0.27, 0.29])
    v = sc.RULES["deviation"](measurement(near, encoder), PAPER)
    assert v.verdict == R and len(v.ours["units"]) == 3, "the encoder is left out"
    assert verdict("deviation", measurement(placed(True, [0], [0.5] * 3, [0.28] * 3))) == D
    assert verdict("deviation", measurement(encoder)) == N


def test_the_conflation_claim_compares_rising_and_falling_sink_transitions():
    def layered(sink, entropy, content):
        m = model([0.3] * 3)
        m["per_seed"][0]["layers"] = {"sink_mass": sink, "entropy": entropy, "content_entropy": content}
        return m
    n = 24
    sink = [0.1 * (i % 2) + 0.01 * i for i in range(n)]  # alternately rising and falling
    entropy = [3.0 - 0.1 * i if i % 2 else 3.0 - 0.1 * i + 0.05 for i in range(n)]
    content = [3.0 + 0.01 * i for i in range(n)]
    rising = sc.RULES["collapse_disagreement"](measurement(layered(sink, entropy, content)), PAPER)
    assert rising.verdict in (R, U) and rising.ours["units"]


def pruning(js_vs_random=("better than random", 0.5), contrast=(0.7, 0.01), base=20.0):
    cells = [{"metric": "js_keep", "sparsity": 0.2, "seed_medians": [2500.0, 2600.0, 2700.0], "direction": js_vs_random[0],
              "p_holm": js_vs_random[1]}]
    ratio, p = contrast
    contrasts = [{"a": "js_keep", "b": "content", "sparsity": 0.2, "ratio": ratio, "low": ratio * 0.9, "high": ratio * 1.1, "p_holm": p}]
    return {"pruning": {"m": {"scored": [{"kind": "base", "perplexity": base}], "readings": {"cells": cells, "contrasts": contrasts}}}}


def test_a_wrong_channel_must_differ_from_random_sets_before_its_blow_up_is_judged():
    v = sc.RULES["blow_up"](pruning(), PAPER)
    assert v.verdict == N and "0 of 1 cells" in v.why
    assert verdict("blow_up", pruning(("worse than random", 0.01))) == R


def test_the_channel_claim_holds_in_either_direction():
    assert verdict("channel", pruning(contrast=(0.7, 0.01))) == R and verdict("channel", pruning(contrast=(1.4, 0.01))) == R
    assert verdict("channel", pruning(contrast=(0.95, 0.4))) == U


def test_the_channel_unit_is_the_cell_at_the_paper_s_sparsity():
    """Like the paper's units: the contrast at PRUNING_SPARSITY decides and gives the interval, whatever the other
    sparsities show and in whatever order the contrasts come (a larger separation elsewhere is not picked)."""
    record = pruning()
    at = {"a": "js_keep", "b": "content", "sparsity": read.PRUNING_SPARSITY, "ratio": 0.91, "low": 0.67, "high": 1.3, "p_holm": 1.0}
    far = {"a": "js_keep", "b": "content", "sparsity": 0.3, "ratio": 0.33, "low": 0.2, "high": 0.54, "p_holm": 0.0072}
    for contrasts in ([at, far], [far, at]):
        record["pruning"]["m"]["readings"]["contrasts"] = contrasts
        (unit,) = read.channel_units(record)
        assert (unit.side, unit.low, round(unit.high, 6)) == (0, 0.0, round(math.log(1 / 0.67), 6))
    record["pruning"]["m"]["readings"]["contrasts"] = [{**at, "p_holm": 0.01, "low": 0.42, "high": 0.85}, far]
    (unit,) = read.channel_units(record)
    assert unit.side == 1 and round(unit.low, 6) == round(-math.log(0.85), 6)


def test_clustering_needs_sep_heads():
    record = {"clustering": {"bert": {"head_sets": {"sep": {"members": []}}, "table9": [{"K": 4, "js_cross_ari": 0.05}]}}}
    assert verdict("clustering", record) == N and verdict("js_cross_ari", record) == N
    samples = [[{"K": 4, "js_sep_jaccard_keep": 0.9, "js_sep_jaccard_drop": 0.5 + 0.01 * i}] for i in range(10)]
    record["clustering"]["bert"] |= {"head_sets": {"sep": {"members": [[0, 1]]}}, "table9_samples": {"per_sample": samples}}
    assert verdict("clustering", record) == R


# --- The record ---------------------------------------------------------------------------------------------------------

def committed_record():
    from attncoda.face.results import read_record

    return read_record(ROOT / "data" / "results")


def test_the_committed_record_gets_a_verdict_for_every_row():
    verdicts = sc.judge(committed_record(), PAPER)
    assert [v.claim for v in verdicts] == list(sc.RULES)
    by = {v.claim: v for v in verdicts}
    assert all(by[c.key].verdict == R for c in sc.CHECKS), "correct code passes every check of the mathematics"
    # what the offline models cannot test, with the reason
    for key in ("rates_rise", "share_scale", "training_rise", "clustering", "js_cross_ari", "blow_up", "predictor"):
        assert by[key].verdict == N and by[key].why, key
    assert all(by[c.key].scope for c in sc.CLAIMS), "every claim about models states its scope"


def test_a_chapter_is_judged_on_its_own_results_only():
    record = committed_record()
    verdicts = sc.chapter_verdicts("pruning", record["pruning"], PAPER)
    assert [v.claim for v in verdicts] == list(sc.CHAPTER_CLAIMS["pruning"])
    one = {"smollm2-135m": copy.deepcopy(record["pruning"]["smollm2-135m"])}
    channel = sc.chapter_verdicts("pruning", one, PAPER)[1]
    assert [u[0] for u in channel.ours["units"]] == [f"smollm2-135m at {read.PRUNING_SPARSITY:.0%}"]


def test_the_within_run_trend_is_a_sign_test_over_runs():
    series = [{"name": f"r{i}", "points": [{"heads": 3, "signature_sink_mass": x, "reversal": {"js": x * s}} for x in (0.1, 0.2, 0.3, 0.4, 0.5)]}
              for i, s in enumerate((1, 1, 1, 1, 1, 1))]
    trend = sc.within_run_trend({"collapse": {"suite": {"series": series}}})
    assert trend["runs"] == 6 and trend["up"] == 6 and trend["verdict"] == R
    assert sc.within_run_trend({"collapse": {"suite": {"series": series[:3]}}})["verdict"] == U  # 3 runs cannot reach 5 %
