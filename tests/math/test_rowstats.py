"""The score kernel's arithmetic: its branch-free ``exp`` against libm's, and the rows it must refuse to average."""

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from numba import njit

from attncoda.math.rowstats import _exp_nonpositive, row_statistics_from_scores


@njit
def _exp_all(y):
    out = np.empty_like(y)
    for i in range(y.size):
        out[i] = _exp_nonpositive(y[i])
    return out


def test_exp_matches_libm_to_two_ulps_over_the_normal_range():
    y = -np.concatenate([np.linspace(0, 50, 200_001), np.geomspace(1e-300, 700, 100_000), [0.0, 1e-17, 0.5 * math.log(2)]])
    got, want = _exp_all(y), np.exp(y)
    assert np.all(np.abs(got - want) <= 2 * np.spacing(want))


@settings(max_examples=200, deadline=None)
@given(y=st.floats(-746.0, 0.0))
def test_exp_matches_libm_into_the_subnormals(y):
    """Below exp(−708) the result is subnormal; the two-step scaling rounds it once, as libm does (to one unit)."""
    got, want = float(_exp_all(np.array([y]))[0]), math.exp(y)
    assert abs(got - want) <= max(2 * np.spacing(want), np.spacing(0.0))


def test_a_row_with_a_nan_score_is_nan_throughout():
    z = np.zeros((1, 4, 4), dtype=np.float32)
    z[0, 2, 1] = np.nan
    stats, lse = row_statistics_from_scores(z, (0,), causal=False)
    assert np.isnan(lse[0, 2]) and all(np.isnan(v[0, 2]) for v in stats.values())
    assert np.isfinite(lse[0, [0, 1, 3]]).all() and np.isfinite(stats["entropy"][0, [0, 1, 3]]).all()


def test_a_row_whose_every_key_is_hidden_is_nan_not_an_error():
    z = np.zeros((1, 3, 3), dtype=np.float32)
    z[0, 1] = -np.inf
    stats, lse = row_statistics_from_scores(z, (0,), causal=False)
    assert np.isnan(lse[0, 1]) and np.isnan(stats["sink_mass"][0, 1])
    np.testing.assert_allclose(stats["entropy"][0, [0, 2]], math.log(3), rtol=1e-15)
