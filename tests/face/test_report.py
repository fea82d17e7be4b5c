"""The page helpers that turn numbers into sentences and tables: permutation p-values, the paper's digits, headers."""

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st
from scipy.stats import spearmanr

from attncoda.face.report import fold_index_name, paper_styler, spearman_permutation, spearman_sentence


@settings(max_examples=25)
@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
@given(st.integers(5, 6).flatmap(lambda n: st.tuples(st.lists(st.floats(-5, 5), min_size=n, max_size=n),
                                                      st.permutations(range(n)))))
def test_the_exact_permutation_p_counts_every_ordering(data):
    """p is the share of all n! orderings of y whose |ρ| reaches the observed |ρ| (ties in x included)."""
    x, y = data
    rho, p, how = spearman_permutation(x, list(y))
    if np.ptp(x) == 0:
        return  # ρ undefined for a constant x
    observed = abs(spearmanr(x, y).statistic)
    every = [abs(spearmanr(x, order).statistic) for order in itertools.permutations(y)]
    assert how == "exact permutation"
    assert np.isclose(rho, spearmanr(x, y).statistic)
    assert np.isclose(p, np.mean([r >= observed - 1e-12 for r in every]))


def test_five_models_read_with_the_exact_p_not_the_t_approximation():
    """The measurement chapter's case: 5 points at ρ = 0.7 give p = 0.19 by the t approximation, 0.233 exactly, and the
    sentence says which p it is."""
    x, y = [1, 2, 3, 4, 5], [1, 2, 5, 3, 4]
    assert round(spearmanr(x, y).pvalue, 2) == 0.19
    sentence = spearman_sentence(x, y, "sink mass", "the reversal rate")
    assert "two-sided exact permutation p = 0.23" in sentence and "not evidence" in sentence
    rerun = spearman_permutation(list(range(12)), [3, 1, 4, 11, 5, 9, 2, 6, 0, 8, 7, 10])
    assert rerun == spearman_permutation(list(range(12)), [3, 1, 4, 11, 5, 9, 2, 6, 0, 8, 7, 10]) and rerun[2] == "permutation"


def test_the_paper_s_numbers_keep_the_paper_s_digits():
    frame = pd.DataFrame({"ρ": [0.957, 0.98], "rate": [0.35, 0.3], "share": [0.046, None]}, index=["a", "b"])
    html = paper_styler(frame).to_html()
    for shown in ("0.957", "0.980", "0.35", "0.30", "0.046", "—"):
        assert f">{shown}<" in html, shown
    assert ">0.350<" not in html


def test_an_index_name_sits_in_the_header_corner():
    frame = pd.DataFrame({"rate": [0.5, 0.25]}, index=pd.Index(["gpt2", "bert"], name="model"))
    assert fold_index_name(frame).to_html().count("<tr") == 3 and frame.index.name == "model"
    two_levels = frame.set_index(pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")], names=["alpha", "metric"]))
    assert fold_index_name(two_levels) is two_levels  # two names need their row
