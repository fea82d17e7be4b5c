"""Table 5's taxonomy: dissimilarities, clusters and the agreement of two partitions."""

import numpy as np
import pytest

from attncoda.studies import taxonomy


def test_a_dissimilarity_is_symmetric_with_a_zero_diagonal():
    m = np.array([[1.0, 0.8], [0.6, 1.0]])
    d = taxonomy.as_dissimilarity("cosine", m)
    assert np.array_equal(d, d.T) and np.all(np.diag(d) == 0) and d[0, 1] == pytest.approx(0.3)  # (1 − 0.8 + 1 − 0.6) / 2
    assert taxonomy.as_dissimilarity("js", np.array([[0.0, 0.2], [0.2, 0.0]]))[0, 1] == 0.2


def test_two_well_separated_groups_are_found_and_agree_with_themselves():
    rng = np.random.default_rng(0)
    x = np.concatenate([rng.normal(0, 0.1, (6, 2)), rng.normal(5, 0.1, (6, 2))])
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    labels = taxonomy.clusters(d, 2)
    assert len(set(labels[:6])) == 1 and len(set(labels[6:])) == 1 and labels[0] != labels[6]
    assert taxonomy.partition_agreement(d, d, ks=(2, 3)) == 1.0


def test_the_content_distance_gives_one_taxonomy_under_both_conventions():
    rows = np.random.default_rng(1).dirichlet(np.ones(8), size=20)
    out = taxonomy.taxonomy_stability(rows, (0,), 1e-6, ks=(2, 3), metrics=("content", "js"))
    assert out["content"] == 1.0 and -1 <= out["js"] <= 1
