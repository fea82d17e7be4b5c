"""Within-layer redundancy and Table 8's stakes."""

import numpy as np

from attncoda.math.verdicts import sample_triples
from attncoda.studies import redundancy


def test_nearest_in_layer_looks_only_inside_each_layer():
    rng = np.random.default_rng(1)
    d = rng.uniform(1, 2, size=(6, 6))
    d = (d + d.T) / 2
    d[0, 5] = d[5, 0] = 0.01  # heads 0 and 5 are close, but in different layers (3 heads each)
    values, nearest = redundancy.nearest_in_layer(d, 2, 3)
    assert all(n // 3 == i // 3 and n != i for i, n in enumerate(nearest))
    assert values[0] > 0.01


def test_most_redundant_takes_the_smallest_share_with_ties_in_index_order():
    assert redundancy.most_redundant(np.array([3.0, 1.0, 1.0, 2.0, 5.0]), share=0.4) == {1, 2}
    assert redundancy.most_redundant(np.array([1.0, 1.0, 1.0]), share=0.1) == {0}


def test_the_content_distance_is_immune_to_a_changed_sink_set_only_when_the_sink_is_unchanged():
    """Table 8's sink-set flips: with the same set twice, no verdict flips, for either metric."""
    rng = np.random.default_rng(2)
    rows = rng.dirichlet(np.ones(10), size=16)
    triples = sample_triples(16, 300, 0)
    same = redundancy.sink_set_stakes(rows, triples, (0,), (0,), 1e-6)
    assert same == {"js": 0.0, "content": 0.0}


def test_temperature_stakes_leave_d_a_perp_verdicts_alone():
    """Tempering scales clr(π) by 1/τ, so every d_A^⊥ distance scales alike: no verdict flips and the prune set stays."""
    rng = np.random.default_rng(3)
    rows = rng.dirichlet(np.ones(10), size=12)
    out = redundancy.temperature_stakes(rows, 3, 4, sample_triples(12, 200, 0), (0,))
    assert out["content"]["flip_max"] == 0.0 and out["content"]["retention_min"] == 1.0
    assert len(out["js"]["flip_rates"]) == len(out["js"]["temperatures"])
