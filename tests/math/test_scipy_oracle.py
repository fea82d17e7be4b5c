"""The row metrics held against scipy's own: cosine, Euclidean and Jensen–Shannon on random compositions, zeros
included (scipy.spatial.distance is the oracle; its JS distance is the square root of the divergence, in base e)."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial import distance

from attncoda.math.metrics import cosine, euclidean, jensen_shannon


@st.composite
def pairs(draw):
    size = draw(st.integers(2, 40))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    concentration = draw(st.sampled_from([0.05, 0.5, 1.0, 10.0]))
    p, q = rng.dirichlet(np.full(size, concentration), size=2)
    if draw(st.booleans()):  # exact zeros in one row, where JS's 0 ln 0 = 0 matters
        p[rng.random(size) < 0.3] = 0.0
        if p.sum() == 0:
            p[0] = 1.0
        p /= p.sum()
    return p, q


@settings(max_examples=200, deadline=None)
@given(pairs())
def test_cosine_euclidean_and_jensen_shannon_agree_with_scipy(pair):
    p, q = pair
    np.testing.assert_allclose(cosine(p, q), 1.0 - distance.cosine(p, q), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(euclidean(p, q), distance.euclidean(p, q), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(jensen_shannon(p, q), distance.jensenshannon(p, q) ** 2, rtol=1e-9, atol=1e-14)
