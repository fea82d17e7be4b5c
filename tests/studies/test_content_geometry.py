"""Table 6: the small-part share of d_A^⊥ and the rival-geometry audit."""

import numpy as np

from attncoda.studies import content_geometry


def test_no_small_part_carries_nothing_and_tiny_parts_carry_most():
    rng = np.random.default_rng(0)
    even = rng.dirichlet(np.full(8, 50.0), size=20)
    assert content_geometry.small_part_share(even, (0,), 1e-6, threshold=1e-6) == 0.0
    tiny = even.copy()
    tiny[:10, 3] = 1e-12
    tiny /= tiny.sum(axis=1, keepdims=True)
    assert content_geometry.small_part_share(tiny, (0,), 1e-6, threshold=1e-6) > 0.5


def test_rival_geometry_reports_three_agreements_in_range():
    rows = np.random.default_rng(1).dirichlet(np.ones(8), size=24)
    out = content_geometry.rival_geometry(rows, (0,), 1e-6, ks=(2, 3))
    assert set(out) == {"spearman", "nn_agreement", "cross_ari"}
    assert -1 <= out["spearman"] <= 1 and 0 <= out["nn_agreement"] <= 1 and -1 <= out["cross_ari"] <= 1
