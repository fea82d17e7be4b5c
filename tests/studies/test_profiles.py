"""Figure 4's layer profile and the collapse disagreement."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from attncoda.studies import profiles


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0, 5), min_size=2, max_size=12))
def test_h_moving_with_its_content_entropy_never_disagrees(values):
    assert profiles.collapse_disagreement(values, [2 * v + 1 for v in values]) == 0.0


def test_opposite_moves_disagree_and_flat_ones_do_not():
    assert profiles.collapse_disagreement([1, 2, 3], [3, 2, 1]) == 1.0
    assert profiles.collapse_disagreement([1, 1, 1], [3, 2, 1]) == 0.0


def test_the_layer_profile_reads_each_statistic_per_layer():
    class Sig:
        def layer_means(self, k):
            return np.arange(3.0) + len(k)

    out = profiles.layer_profile(Sig())
    assert set(out) == set(profiles.PROFILE_STATISTICS) and out["entropy"] == [7.0, 8.0, 9.0]
