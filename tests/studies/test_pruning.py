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


def test_overlap():
    assert pruning.overlap([1, 2, 3, 4], [2, 4, 9]) == 0.5 and pruning.overlap([], [1]) == 1.0


def test_the_selection_metrics_prune_by_the_channel_they_name():
    """d_A^⊥ ignores the sink: changing only the sink parts of the signatures leaves its prune set alone."""
    rng = np.random.default_rng(0)
    rows = rng.dirichlet(np.ones(12), size=12)
    moved = rows.copy()
    moved[:, 0] *= rng.uniform(0.2, 5.0, size=12)
    moved /= moved.sum(axis=1, keepdims=True)
    same = pruning.prune_set(rows, 3, 4, "content", 0.25, (0,))
    assert pruning.prune_set(moved, 3, 4, "content", 0.25, (0,)) == same
    assert set(pruning.SELECTION_METRICS) == {"js_keep", "js", "content", "aitchison"}
    assert pruning.SELECTION_METRICS["js_keep"] == ("js", "keep") and pruning.SELECTION_METRICS["js"] == ("js", "drop")


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(sorted(pruning.SELECTION_METRICS)))
def test_every_selection_distance_matrix_is_exactly_symmetric(seed, metric):
    rows = np.random.default_rng(seed).dirichlet(np.full(9, 0.3), size=8)
    d = pruning.selection_distances(rows, metric, (0,))
    assert np.array_equal(d, d.T), "d[i, j] and d[j, i] must be the same bits, or rounding breaks keep-one ties"


def _layered(seed, layers=3, heads=5, keys=10):
    return np.random.default_rng(seed).dirichlet(np.full(keys, 0.5), size=layers * heads)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(sorted(pruning.SELECTION_METRICS)), st.sampled_from([0.2, 0.3, 0.5]))
def test_permuting_heads_within_layers_moves_the_prune_set_with_them(seed, metric, sparsity):
    """The same signatures with their head order permuted within each layer give the same prune set (mapped through
    the permutation), when ties are broken by the same heads' ranks: the stated tie-break is the only order dependence."""
    layers, heads = 3, 5
    rows = _layered(seed, layers, heads)
    rng = np.random.default_rng(seed + 1)
    perm = np.concatenate([layer * heads + rng.permutation(heads) for layer in range(layers)])  # new index i holds old head perm[i]
    ranks = np.arange(layers * heads)
    before = pruning.prune_set(rows, layers, heads, metric, sparsity, (0,), tie_break=ranks)
    after = pruning.prune_set(rows[perm], layers, heads, metric, sparsity, (0,), tie_break=ranks[perm])
    assert sorted(int(perm[i]) for i in after) == before


def test_mutual_nearest_heads_tie_and_the_tie_break_decides_which_is_pruned():
    d = np.array([[0, 1, 5], [1, 0, 5], [5, 5, 0]], float)  # one layer: heads 0 and 1 are each other's nearest
    assert pruning.tied_heads(d, 1, 3) == 2
    assert pruning.keep_one_selection(d, 1, 3, 0.34) == [0]
    assert pruning.keep_one_selection(d, 1, 3, 0.34, tie_break="last") == [1]
    with pytest.raises(ValueError, match="tie_break"):
        pruning.keep_one_selection(d, 1, 3, 0.34, tie_break="middle")
