"""The head-pair kernels of :mod:`attncoda.math.pairdist`: the vectorized logarithm is the C library's to within two
units in the last place for every non-negative double (zeros, subnormals and 1 included), and the pair sums equal the
metric on every pair whatever the number of heads (the parallel tasks fold the triangle, so odd and even counts differ)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncoda.math.pairdist import _xlogx_sum, pair_distance_sums

UNIT = st.floats(min_value=0.0, max_value=1.0, allow_subnormal=True)


def _ulps(a: float, b: float) -> float:
    return abs(a - b) / max(math.ulp(abs(b)), math.ulp(0.0))


@settings(max_examples=300, deadline=None)
@given(st.lists(UNIT, min_size=1, max_size=40))
def test_sum_of_x_log_x_is_the_c_librarys_to_two_ulps_per_term(values):
    """Each term v·ln v of :func:`_xlogx_sum` (checked one value per row) agrees with ``v * math.log(v)``."""
    x = np.array(values).reshape(-1, 1, 1)
    got = _xlogx_sum(x)[:, 0]
    for v, g in zip(values, got):
        expected = v * math.log(v) if v > 0 else 0.0
        assert _ulps(g, expected) <= 2, (v, g, expected)


def test_extreme_values_of_x_log_x():
    tiny = [0.0, 5e-324, 2.2250738585072014e-308, 2.2250738585072009e-308, 1e-300, 0.5, 1.0 - 2**-53, 1.0]
    got = _xlogx_sum(np.array(tiny).reshape(-1, 1, 1))[:, 0]
    assert got[0] == 0.0 and got[-1] == 0.0
    for v, g in zip(tiny[1:-1], got[1:-1]):
        assert _ulps(g, v * math.log(v)) <= 2


def _js(p, q):
    m = (p + q) / 2
    xlogx = lambda v: np.where(v > 0, v * np.log(np.where(v > 0, v, 1.0)), 0.0).sum(-1)  # noqa: E731
    return 0.5 * (xlogx(p) + xlogx(q)) - xlogx(m)


@pytest.mark.parametrize("heads", [1, 2, 3, 8, 9, 10, 17])
def test_js_pair_sums_for_odd_and_even_head_counts(heads):
    rng = np.random.default_rng(heads)
    rows = rng.dirichlet(np.full(13, 0.2), (5, heads))
    rows[0, 0, :4] = 0.0  # exact zeros
    rows[0, 0] /= rows[0, 0].sum()
    expected = _js(rows[:, :, None, :], rows[:, None, :, :]).sum(axis=0)
    np.fill_diagonal(expected, 0.0)
    got = pair_distance_sums(rows, "js")
    np.testing.assert_allclose(got, np.maximum(expected, 0.0), rtol=1e-12, atol=1e-14)
    assert np.array_equal(got, got.T)


@pytest.mark.parametrize("heads", [1, 7, 8, 9, 17, 26])
def test_grouped_js_sums_are_one_pair_at_a_time_bit_for_bit(heads):
    """The kernel runs eight pairs' sums side by side; each pair's sum keeps its own order, so it equals a pair-by-pair
    loop over the same per-row terms exactly, whatever remainder the last group of a row leaves."""
    from attncoda.math.pairdist import _js_sums, _mean_xlogx, _xlogx_sum

    rng = np.random.default_rng(100 + heads)
    x = np.ascontiguousarray(rng.dirichlet(np.full(11, 0.3), (4, heads)))
    plogp = _xlogx_sum(x)
    got = np.zeros((heads, heads))
    _js_sums(x, plogp, got)
    scratch = [np.empty(11) for _ in range(4)]
    for i in range(heads):
        for j in range(i + 1, heads):
            total = 0.0
            for p in range(x.shape[0]):
                total += 0.5 * (plogp[p, i] + plogp[p, j]) - _mean_xlogx(x[p, i], x[p, j], *scratch)
            assert got[i, j] == total and got[j, i] == total
