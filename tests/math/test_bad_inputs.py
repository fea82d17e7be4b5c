"""D26: the public API refuses bad indices, counts and seeds in one line instead of an IndexError, a TypeError, a
ZeroDivisionError, silent ties or a silently coerced index."""

import numpy as np
import pytest

import attncoda as ac
from attncoda.math.verdicts import reversal_rate

ROWS = np.random.default_rng(0).dirichlet(np.ones(6), 8)


@pytest.mark.parametrize("triples, said", [
    ([[0, 1, 99]], "must index heads 0..7"),
    ([[0, 1, -1]], "must index heads 0..7"),
    ([[0.0, 1.0, 2.0]], "whole head indices"),
    ([[0, 0, 1]], "three distinct heads"),
    (np.zeros((0, 3), dtype=int), "non-empty"),
    ([0, 1, 2], r"\(n, 3\) array"),
])
def test_bad_triples_are_refused(triples, said):
    with pytest.raises(ValueError, match=said):
        reversal_rate(ROWS, "js", triples=np.asarray(triples))


@pytest.mark.parametrize("kwargs, said", [({"n_triples": 2.5}, "positive whole number"), ({"n_triples": 0}, "positive whole number"),
                                          ({"seed": "a"}, "seed must be a whole number")])
def test_bad_counts_and_seeds_are_refused(kwargs, said):
    with pytest.raises(ValueError, match=said):
        reversal_rate(ROWS, "js", **kwargs)


@pytest.mark.parametrize("sink", [(0.5,), "0", True, (True,)])
def test_a_sink_that_is_not_an_index_is_refused(sink):
    p, q = ROWS[0], ROWS[1]
    with pytest.raises(ValueError, match="sink"):
        ac.decompose(p, q, sink=sink)
