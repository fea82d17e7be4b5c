"""Hypothesis strategies: random compositions of random length, with sink sets of size 1 and more."""

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attncoda import closure


@st.composite
def positive_rows(draw, n_rows=1, min_parts=3, max_parts=40, spread=2.0):
    """Rows with every part >= e^(-2·spread)/D, so tempering by tau >= 0.5 stays above eps = 1e-6."""
    d = draw(st.integers(min_parts, max_parts))
    logits = draw(arrays(np.float64, (n_rows, d), elements=st.floats(-spread, spread, allow_nan=False)))
    return closure(np.exp(logits))


@st.composite
def rows_with_sink(draw, n_rows=2, min_parts=3, max_parts=40):
    rows = draw(positive_rows(n_rows, min_parts, max_parts))
    d = rows.shape[1]
    sink = draw(st.one_of(st.just((0,)), st.lists(st.integers(0, d - 1), min_size=1, max_size=min(4, d - 1), unique=True).map(tuple)))
    return rows, sink


@st.composite
def sparse_rows(draw, n_rows=2, min_parts=3, max_parts=40):
    """Compositions that may contain exact zeros and tiny parts (but every row has a positive part)."""
    d = draw(st.integers(min_parts, max_parts))
    raw = draw(arrays(np.float64, (n_rows, d), elements=st.one_of(st.just(0.0), st.floats(1e-12, 1.0))))
    raw[:, 0] += 1e-3
    return closure(raw)
