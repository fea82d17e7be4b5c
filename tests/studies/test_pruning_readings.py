"""The pruning chapter's readings: the seed as the unit, Holm, the hierarchical bootstrap, the window study, and the sweep on a tiny model."""

import json
import math

import numpy as np
import pytest

from attncoda.studies import pruning_readings as pr
from attncoda.studies import pruning_sweep
from attncoda.studies.pruning_sweep import PruningResult
from pruning_fixtures import fake_sweep as _result
from tiny_models import save_tiny


@pytest.fixture(scope="module")
def tiny_llama(tmp_path_factory):
    return save_tiny("llama", tmp_path_factory.mktemp("tiny") / "llama")


def test_geometric_mean_is_the_log_scale_mean():
    assert pr.geometric_mean([1024, 1578, 8789]) == pytest.approx((1024 * 1578 * 8789) ** (1 / 3))
    assert pr.geometric_mean([1024, 1578, 8789]) < np.mean([1024, 1578, 8789]) / 1.5


def test_rank_test_is_exact_and_one_sided():
    low, high = pr.rank_test([1, 2, 3], list(range(10, 30)))
    assert low == pytest.approx(1 / math.comb(23, 3)) and high == 1.0
    assert pr.smallest_rank_p(3, 20) == pytest.approx(2 * low), "the smallest two-sided p: every value on one side"


@pytest.mark.slow  # 23 s: statsmodels' multipletests costs 40 ms a call; make test runs it, make check leaves it
def test_holm_adjusts_step_down_and_stays_monotone():
    assert pr.holm([0.01, 0.04, 0.03]) == [0.03, 0.06, 0.06]
    assert pr.holm([0.5]) == [0.5] and pr.holm([0.6, 0.6]) == [1.0, 1.0]
    rng = np.random.default_rng(1)
    for _ in range(50):
        p = rng.uniform(0, 0.2, 7)
        adjusted = np.array(pr.holm(p))
        assert np.all(adjusted >= p - 1e-15) and np.all(adjusted <= 1)
        order = np.argsort(p)
        assert np.all(np.diff(adjusted[order]) >= -1e-15), "adjusted p-values keep the order of the raw ones"


def test_a_reading_is_refused_where_the_test_cannot_reach_its_level():
    """A design whose smallest attainable p cannot pass Holm's strictest threshold gives no direction, whatever its p."""
    assert not pr.reachable(pr.smallest_rank_p(1, 10), 1)  # one seed against 10 random sets: p >= 0.18
    assert not pr.reachable(pr.smallest_rank_p(3, 10), 36)  # 2 / C(13, 3) = 0.007 against 0.05 / 36
    assert pr.reachable(pr.smallest_rank_p(3, 40), 36)
    _, readings = pr.holm_readings([0.0001, 0.0001], [0.2, 0.0001], ["better", "better"])
    assert readings == [pr.UNDECIDED, "better"]
    small = _result(shift=0.5, seeds=(0,), randoms=6)
    assert {c.reading for c in pr.metric_cells(small)} == {pr.UNDECIDED}, "one seed against 6 random sets decides nothing"


def test_the_unit_against_random_is_the_seed():
    cells = {c.metric: c for c in pr.metric_cells(_result(shift=0.5))}
    content = cells["content"]
    assert content.reading == "better than random" and cells["aitchison"].reading == "worse than random"
    assert content.random_n == 40 and len(content.seed_medians) == 3, "three seeds, not 3 × 4 sets, enter the test"
    assert content.smallest_p == pytest.approx(2 / math.comb(43, 3)) and content.p_holm == pytest.approx(2 * content.p)
    assert content.geometric_mean == pytest.approx(pr.geometric_mean([s.perplexity for s in _result(shift=0.5).metric_sets("content", 0.2)]))
    assert all(lo <= m <= hi for m, (lo, hi) in zip(content.seed_medians, content.seed_ranges))


def test_one_holm_family_spans_every_model_of_a_run():
    one = pr.metric_cells(_result(shift=0.5))
    two = pr.metric_cells([_result(shift=0.5), _result(shift=0.5, model="other")])
    assert len(two) == 2 * len(one) and two[0].p == one[0].p and two[0].p_holm == pytest.approx(2 * one[0].p_holm)


def test_a_clear_difference_is_read_and_a_null_one_is_not():
    clear = pr.contrasts(_result(shift=0.5))[0]
    assert (clear.a, clear.b) == ("content", "aitchison") and clear.ratio < 1 and clear.high < 1 and clear.seeds_agree
    assert clear.reading == "d_A^⊥ (content) prunes better" and clear.p_holm == pytest.approx(2 / (pr.BOOTSTRAP_DRAWS + 1))
    null = pr.contrasts(_result(shift=0.0, noise=0.05))[0]
    assert null.reading == "indistinguishable" and null.low < 1 < null.high


def test_the_hierarchical_bootstrap_carries_the_seed_variance():
    """Seeds that disagree widen the interval: a window-only bootstrap would not see them."""
    from dataclasses import replace

    r = _result(shift=0.1)
    wide = [replace(s, window_nll=(np.asarray(s.window_nll) + (3.0 if s.seed == 1 else -1.0)).tolist())
            if s.kind == "metric" and s.metric == "content" else s for s in r.scored]
    narrow, spread = pr.contrast(r, "content", "aitchison", 0.2), pr.contrast(replace(r, scored=wide), "content", "aitchison", 0.2)
    assert math.log(spread.high / spread.low) > 10 * math.log(narrow.high / narrow.low)


def test_base_interval_brackets_the_perplexity():
    r = _result(shift=0.1)
    lo, hi = pr.base_interval(r.base)
    assert lo < r.base.perplexity < hi


def test_set_overlaps_name_shared_heads():
    out = pr.set_overlaps(_result(shift=0.1), 0.2)
    assert out["between"] == [{"a": "content", "b": "aitchison", "share": 0.5}]  # each seed's sets share the seed's head
    assert out["across_seeds"]["content"] == 0.0 and out["across_draws"]["content"] == 0.5


def test_blow_ups_name_what_decides_them():
    from dataclasses import replace

    r = _result(shift=0.1)
    boosted = [replace(s, perplexity=s.perplexity * 50) if s.kind == "metric" and s.metric == "aitchison" and s.seed == 1 and s.draw == 2 else s
               for s in r.scored]
    worst = pr.blow_ups(replace(r, scored=boosted), 1)[0]
    assert (worst.metric, worst.worst_seed, worst.worst_draw, worst.decided_by) == ("aitchison", 1, 2, "tie-break")
    assert worst.draws_spread == pytest.approx(50, rel=0.1)


def test_the_window_study_compares_prefixes_with_all_windows():
    rows = pr.window_study(_result(shift=0.5), counts=(4, 12))
    assert [w.windows for w in rows] == [4, 12, 24], "the study's counts and the sweep's own windows"
    assert all(-1 <= w.rho <= 1 and 0 <= w.flips <= 1 for w in rows) and rows[-1].rho > 0.9


def test_the_sweep_on_a_tiny_model_scores_every_planned_set_and_round_trips(tiny_llama, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    options = dict(seeds=(0, 1), sparsities=(0.2, 0.3), tie_draws=2, random_sets=3, n_windows=3, calibration_windows=5, length=24, signature_n=6)
    r = pruning_sweep.sweep(str(tiny_llama), **options)
    assert r.metrics == ["js_keep", "content", "aitchison", "js"] and r.metrics_at(0.3) == ["js_keep", "content", "aitchison"]
    assert len(r.randoms(0.2)) == len(r.randoms(0.3)) == 3 and r.tie_draws == 2
    assert len([s for s in r.scored if s.kind == "metric"]) == 2 * 2 * (3 * 2 + 1)  # seeds × draws × (Table 10 metrics × sparsities + JS′)
    assert all(s.perplexity and len(s.window_nll) == 3 for s in r.scored + r.checks)
    assert len(r.calibration) == 1 + 4 + 3 and all(len(s.window_nll) == 5 for s in r.calibration)
    base_study = r.calibration[0]
    assert base_study.window_nll[:3] == pytest.approx(r.base.window_nll, rel=1e-6), "the sweep's windows are the study's first windows"
    assert {s.dtype for s in r.scored} == {"bfloat16"} and {s.dtype for s in r.checks} == {"float32"} and len(r.checks) == 1 + 4
    assert PruningResult.from_json(json.loads(json.dumps(r.to_json()))) == r
    check = pr.precision_check(r)
    assert check.max_relative < 0.05 and len(check.pairs) == 1 + 4
    again = pruning_sweep.sweep(str(tiny_llama), **options)
    assert [s.perplexity for s in again.scored] == [s.perplexity for s in r.scored], "a rerun reads the same bits back"
    with pytest.raises(ValueError, match="focus sparsity"):
        pruning_sweep.sweep(str(tiny_llama), sparsities=(0.1,), n_windows=4, length=24, signature_n=6)
    with pytest.raises(ValueError, match="calibration_windows"):
        pruning_sweep.sweep(str(tiny_llama), n_windows=8, calibration_windows=4, length=24, signature_n=6)


def test_the_precision_check_names_sets_that_swap_order_between_dtypes():
    from dataclasses import replace

    r = _result(shift=0.5)
    first = [s for s in r.scored if s.kind == "base" or (s.kind == "metric" and s.seed == 0 and s.draw == 0)]
    flipped = {"content": 1.5, "aitchison": 0.5}  # float32 turns the bf16 order around
    checks = [replace(s, dtype="float32", perplexity=s.perplexity * flipped.get(s.metric, 1.0)) for s in first]
    check = pr.precision_check(replace(r, checks=checks))
    assert not check.same_order and len(check.swaps) == 1 and check.max_relative == pytest.approx(1.0)  # |bf16 / float32 − 1| of the halved set
    assert check.pairs[0][0] == "base" and set(check.swaps[0][:2]) == {"d_A^⊥ (content)", "total d_A"}  # sets named by their metric
    same = pr.precision_check(replace(r, checks=[replace(s, dtype="float32") for s in first]))
    assert same.same_order and same.max_relative == 0.0
