"""closure, clr and zero replacement agree with scikit-bio, an independent implementation."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

import attncoda as ac

composition = pytest.importorskip("skbio.stats.composition")


@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(2, 30)), elements=st.floats(1e-8, 1e3)))
def test_closure_and_clr_match_skbio(x):
    assert np.allclose(ac.closure(x), composition.closure(x), rtol=1e-12, atol=0)
    assert np.allclose(ac.clr(x), composition.clr(x), rtol=1e-10, atol=1e-12)


@given(st.integers(3, 30), st.integers(0, 2**32 - 1), st.sampled_from([1e-5, 1e-6, 1e-7]))
def test_zero_replacement_matches_skbio_multi_replace(d, seed, eps):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.01, 1.0, (4, d))
    x[rng.random((4, d)) < 0.3] = 0.0
    x[:, 0] = np.maximum(x[:, 0], 0.5)
    x = ac.closure(x)
    assert np.allclose(ac.replace_zeros(x, eps), composition.multi_replace(x, delta=eps), rtol=1e-12, atol=0)
