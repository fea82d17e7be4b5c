"""The intervals and Holm's step-down come from scipy and statsmodels; the hand-written formulas they replaced stay
here, as oracles, for every input a property test draws."""

import math

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import norm, t

from attncoda.studies import audit, significance
from attncoda.studies.pruning_readings import holm


def wilson_by_hand(successes, trials, z):
    p = successes / trials
    centre = (p + z * z / (2 * trials)) / (1 + z * z / trials)
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / (1 + z * z / trials)
    return max(0.0, centre - half), min(1.0, centre + half)


def t_by_hand(values, level):
    x = np.asarray(values, float)
    half = float(t.ppf(1 - level / 2, len(x) - 1) * x.std(ddof=1) / math.sqrt(len(x)))
    return float(x.mean()) - half, float(x.mean()) + half


def holm_by_hand(pvalues):
    p = np.asarray(pvalues, float)
    adjusted, running = np.empty_like(p), 0.0
    for rank, i in enumerate(np.argsort(p, kind="stable")):
        running = max(running, min(1.0, (len(p) - rank) * p[i]))
        adjusted[i] = running
    return [round(float(x), 15) for x in adjusted]


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 100_000), st.floats(0, 1), st.sampled_from([1.645, 1.96, 2.576]))
def test_wilson_is_the_hand_formula(trials, share, z):
    successes = round(share * trials)
    ours = audit.wilson(successes, trials, z)
    assert np.allclose(ours, wilson_by_hand(successes, trials, z), rtol=1e-9, atol=1e-12)
    low, high = significance.binomial_interval(successes / trials, trials, 2 * norm.sf(z))
    assert np.allclose((max(0.0, low), min(1.0, high)), wilson_by_hand(successes, trials, z), rtol=1e-9, atol=1e-12)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=12), st.sampled_from([0.01, 0.05, 0.1]))
def test_the_t_interval_is_the_hand_formula(values, level):
    _, low, high = significance.t_interval(values, level)
    assert np.allclose((low, high), t_by_hand(values, level), rtol=1e-9, atol=1e-9)
    clipped = audit.t_interval(np.clip(np.abs(values) / 1e3, 0, 1), 1 - level)
    by_hand = t_by_hand(np.clip(np.abs(values) / 1e3, 0, 1), level)
    assert np.allclose(clipped, (max(0.0, by_hand[0]), min(1.0, by_hand[1])), rtol=1e-9, atol=1e-12)


@pytest.mark.slow  # statsmodels' multipletests costs 40 ms a call: make test runs it, make check leaves it
@settings(max_examples=150, deadline=None)
@given(st.lists(st.floats(0, 1), min_size=1, max_size=30))
def test_holm_is_the_hand_step_down(pvalues):
    assert holm(pvalues) == holm_by_hand(pvalues)
