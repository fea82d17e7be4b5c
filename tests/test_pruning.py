"""The pruning study's selection rules (the sweep itself runs in the chapter's notebook test)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncoda.studies import pruning


def _random_distances(rng, n):
    x = rng.normal(size=(n, 3))
    return np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(1, 5), st.integers(2, 6), st.sampled_from([0.1, 0.2, 0.3, 0.5]))
def test_keep_one_never_empties_a_layer_nor_prunes_both_heads_of_a_nearest_pair(seed, layers, heads, sparsity):
    dist = _random_distances(np.random.default_rng(seed), layers * heads)
    chosen = pruning.keep_one_selection(dist, layers, heads, sparsity)
    assert len(chosen) <= pruning.target_count(sparsity, layers * heads) and chosen == sorted(set(chosen))
    assert all(np.bincount(np.asarray(chosen, int) // heads, minlength=layers) < heads)
    from attncoda.studies.redundancy import nearest_in_layer

    values, nearest = nearest_in_layer(dist, layers, heads)
    pruned, earlier = set(chosen), set()
    order = np.argsort(values, kind="stable")
    for h in order:  # a head is pruned only if its nearest head was not pruned before it
        if h in pruned:
            assert nearest[h] not in earlier
            earlier.add(int(h))


def test_target_count_rounds_and_refuses_a_sparsity_outside_zero_one():
    assert pruning.target_count(0.2, 144) == 29 and pruning.target_count(0.1, 30) == 3
    with pytest.raises(ValueError, match="strictly between 0 and 1"):
        pruning.target_count(1.0, 10)


def test_random_selection_keeps_a_head_in_every_layer_and_is_reproducible():
    a = pruning.random_selection(np.random.default_rng(3), 4, 3, 8)
    assert a == pruning.random_selection(np.random.default_rng(3), 4, 3, 8) and len(a) == 8
    assert all(np.bincount(np.asarray(a) // 3, minlength=4) < 3)
    with pytest.raises(ValueError, match="keep one in each"):
        pruning.random_selection(np.random.default_rng(0), 2, 2, 3)


def test_overlap_and_percentile():
    assert pruning.overlap([1, 2, 3, 4], [2, 4, 9]) == 0.5 and pruning.overlap([], [1]) == 1.0
    assert pruning.percentile_in(5.0, [10, 20]) == 0.0 and pruning.percentile_in(25.0, [10, 20]) == 100.0


def test_the_selection_metrics_prune_by_the_channel_they_name():
    """d_A^⊥ ignores the sink: changing only the sink parts of the signatures leaves its prune set alone."""
    rng = np.random.default_rng(0)
    rows = rng.dirichlet(np.ones(12), size=12)
    moved = rows.copy()
    moved[:, 0] *= rng.uniform(0.2, 5.0, size=12)
    moved /= moved.sum(axis=1, keepdims=True)
    same = pruning.prune_set(rows, 3, 4, "content", 0.25, (0,))
    assert pruning.prune_set(moved, 3, 4, "content", 0.25, (0,)) == same
    assert set(pruning.SELECTION_METRICS) == {"js", "content", "aitchison"}
