"""The pruning chapter's readings: rank test, log-scale means, paired bootstrap, and the sweep on a tiny model."""

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
    assert pr.versus_random(low, high) == "better than random"
    low, high = pr.rank_test([40, 50, 60], list(range(10, 30)))
    assert pr.versus_random(low, high) == "worse than random"
    low, high = pr.rank_test([12, 20, 28], list(range(10, 30)))
    assert pr.versus_random(low, high) == "indistinguishable from random"
    assert pr.versus_random(0.03, 0.97) == "indistinguishable from random", "each side is read at half the two-sided level"


def test_a_clear_difference_is_read_and_a_null_one_is_not():
    clear = pr.contrast(_result(shift=0.5), "content", "aitchison", 0.2)
    assert clear.ratio < 1 and clear.high < 1 and clear.seeds_agree and clear.reading.startswith("d_A^⊥")
    null = pr.contrast(_result(shift=0.0, noise=0.05), "content", "aitchison", 0.2)
    assert null.reading == "indistinguishable" and null.low < 1 < null.high


def test_metric_cells_test_against_the_random_draws():
    cells = {c.metric: c for c in pr.metric_cells(_result(shift=0.5))}
    assert cells["content"].reading == "better than random" and cells["aitchison"].reading == "worse than random"
    assert cells["content"].random_n == 20 and cells["content"].geometric_mean == pytest.approx(pr.geometric_mean(cells["content"].per_seed))
    assert set(cells["content"].tie_breaks) == {"first", "last"}


def test_base_interval_brackets_the_perplexity():
    r = _result(shift=0.1)
    lo, hi = pr.base_interval(r.base)
    assert lo < r.base.perplexity < hi


def test_set_overlaps_name_shared_heads():
    out = pr.set_overlaps(_result(shift=0.1), 0.2)
    assert out["between"] == [{"a": "content", "b": "aitchison", "share": 0.5}]  # each seed's two sets share the seed's head
    assert out["across_seeds"]["content"] == 0.0 and set(out["tie_break"]) == {"content", "aitchison"}


def test_the_sweep_on_a_tiny_model_scores_every_planned_set_and_round_trips(tiny_llama, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    r = pruning_sweep.sweep(str(tiny_llama), seeds=(0, 1), sparsities=(0.2, 0.3), random_draws=3, focus_draws=5, n_windows=4, length=24, signature_n=6)
    metrics = len(r.metrics)
    assert metrics == 4 and len(r.randoms(0.2)) == 5 and len(r.randoms(0.3)) == 3
    assert len([s for s in r.scored if s.kind == "metric"]) == metrics * 2 * (2 + 1)  # first seed under both tie-breaks
    assert all(s.perplexity and len(s.window_nll) == 4 for s in r.scored + r.checks)
    assert {s.dtype for s in r.scored} == {"bfloat16"} and {s.dtype for s in r.checks} == {"float32"} and len(r.checks) == 1 + metrics
    assert PruningResult.from_json(json.loads(json.dumps(r.to_json()))) == r
    check = pr.precision_check(r)
    assert check.max_relative < 0.05 and len(check.pairs) == 1 + metrics
    again = pruning_sweep.sweep(str(tiny_llama), seeds=(0, 1), sparsities=(0.2, 0.3), random_draws=3, focus_draws=5, n_windows=4, length=24, signature_n=6)
    assert [s.perplexity for s in again.scored] == [s.perplexity for s in r.scored], "a rerun reads the same bits back"
    with pytest.raises(ValueError, match="focus sparsity"):
        pruning_sweep.sweep(str(tiny_llama), sparsities=(0.1,), n_windows=4, length=24, signature_n=6)


def test_the_precision_check_names_sets_that_swap_order_between_dtypes():
    from dataclasses import replace

    r = _result(shift=0.5)
    first = [s for s in r.scored if s.kind == "base" or (s.kind == "metric" and s.seed == 0 and s.tie_break == "first")]
    flipped = {"content": 1.5, "aitchison": 0.5}  # float32 turns the bf16 order around
    checks = [replace(s, dtype="float32", perplexity=s.perplexity * flipped.get(s.metric, 1.0)) for s in first]
    check = pr.precision_check(replace(r, checks=checks))
    assert not check.same_order and len(check.swaps) == 1 and check.max_relative == pytest.approx(1.0)  # |bf16 / float32 − 1| of the halved set
    assert check.pairs[0][0] == "base" and set(check.swaps[0][:2]) == {"d_A^⊥ (content)", "total d_A"}  # sets named by their metric
    same = pr.precision_check(replace(r, checks=[replace(s, dtype="float32") for s in first]))
    assert same.same_order and same.max_relative == 0.0
