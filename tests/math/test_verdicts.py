import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import attncoda as ac
from attncoda.math.verdicts import closer_verdicts, reversal_from_verdicts


def test_triples_are_distinct_and_cover_all_heads():
    t = ac.sample_triples(5, 20_000, 0)
    assert t.shape == (20_000, 3)
    assert np.all((t[:, 0] != t[:, 1]) & (t[:, 0] != t[:, 2]) & (t[:, 1] != t[:, 2]))
    counts = np.bincount(t.ravel(), minlength=5) / t.size
    assert np.allclose(counts, 0.2, atol=0.01)
    # every ordered triple of distinct heads appears about equally often (5·4·3 = 60 of them)
    codes = t[:, 0] * 25 + t[:, 1] * 5 + t[:, 2]
    freq = np.unique(codes, return_counts=True)[1]
    assert len(freq) == 60 and freq.min() > 0.7 * 20_000 / 60


def test_same_seed_same_bits():
    rows = ac.closure(np.random.default_rng(1).random((12, 9)))
    a = ac.reversal_rates(rows, seed=3, n_triples=2000)
    b = ac.reversal_rates(rows, seed=3, n_triples=2000)
    assert a == b


def test_ties_are_excluded_and_counted():
    keep = np.array([1, -1, 0, 1, -1], dtype=np.int8)
    drop = np.array([-1, -1, 1, 0, 1], dtype=np.int8)
    rev = reversal_from_verdicts("x", keep, drop)
    assert (rev.reversed, rev.compared, rev.ties) == (2, 3, 2)
    assert rev.rate == pytest.approx(2 / 3)


def test_verdict_direction_for_similarities_and_distances():
    dist = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.0], [2.0, 1.0, 0.0]])
    triples = np.array([[0, 1, 2], [0, 2, 1]])
    assert list(closer_verdicts(dist, triples, larger_is_closer=False)) == [1, -1]
    assert list(closer_verdicts(dist, triples, larger_is_closer=True)) == [-1, 1]


def test_pairwise_matches_direct_calls(rng):
    rows = ac.closure(rng.random((7, 11)))
    for name in ("cosine", "js", "hellinger", "content"):
        m = ac.get_metric(name)
        for conv in ("keep", "drop"):
            mat = ac.pairwise(name, rows, conv)
            assert mat[2, 5] == pytest.approx(float(m(rows[2], rows[5], conv)), rel=1e-12, abs=1e-15)


def test_hellinger_and_fisher_rao_verdicts_coincide(rng):
    rows = ac.closure(rng.dirichlet(np.full(20, 0.2), 40) + 1e-12)
    rates = ac.reversal_rates(rows, ("hellinger", "fisher_rao"), n_triples=5000, seed=0)
    assert rates["hellinger"].reversed == rates["fisher_rao"].reversed


@pytest.mark.parametrize("name", ["cosine", "euclidean", "hellinger", "fisher_rao", "aitchison", "content", "js"])
@pytest.mark.parametrize("convention", ["keep", "drop"])
def test_gram_pairwise_agrees_with_broadcast(rng, name, convention):
    rows = ac.closure(rng.dirichlet(np.full(30, 0.3), 25) + 1e-9)
    rows[:, 0] += rng.uniform(0, 3, 25)
    rows = ac.closure(rows)
    a = ac.pairwise(name, rows, convention, (0, 1), method="broadcast")
    b = ac.pairwise(name, rows, convention, (0, 1), method="gram")
    off = ~np.eye(len(rows), dtype=bool)  # a head is never compared with itself
    np.testing.assert_allclose(b[off], a[off], rtol=1e-10, atol=1e-12)


def test_gram_content_distance_is_identical_under_both_conventions(rng):
    rows = ac.closure(rng.random((20, 16)))
    assert np.array_equal(ac.pairwise("content", rows, "keep", method="gram"), ac.pairwise("content", rows, "drop", method="gram"))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(3, 40), st.integers(0, 2**32 - 1), st.sampled_from(["keep", "drop"]))
def test_js_pairwise_computes_each_pair_once_with_the_bits_of_computing_both(heads, keys, seed, convention):
    """Jensen–Shannon is bitwise symmetric once both rows are seen the same way, so pairwise's upper triangle, mirrored,
    is the matrix computed pair by pair in both orders (exact zeros included)."""
    from attncoda.math.metrics import get_metric, view
    from attncoda.math.verdicts import BITWISE_SYMMETRIC, pairwise

    rng = np.random.default_rng(seed)
    rows = rng.dirichlet(np.full(keys, 0.4), size=heads)
    rows[rng.random(rows.shape) < 0.1] = 0.0
    rows[:, 0] += 0.5
    rows[:, 1] += 0.01  # some content in every row: dropping the sink must leave something to re-close
    rows /= rows.sum(axis=1, keepdims=True)
    js = get_metric("js")
    seen = view(rows, convention, (0,))
    both = np.array([[js.function(seen[i], seen[j]) for j in range(heads)] for i in range(heads)])
    assert "js" in BITWISE_SYMMETRIC and np.array_equal(both, both.T)
    assert np.array_equal(pairwise("js", rows, convention, (0,), method="gram"), both)
