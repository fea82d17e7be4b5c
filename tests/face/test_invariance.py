"""Table 4 computed by numeric checks agrees with the paper's matrix."""

from attncoda.studies.invariance import invariance_matrix
from attncoda.face.results import paper_reference


def test_invariance_matrix_matches_paper():
    paper = paper_reference()["table4"]
    ours = invariance_matrix(seed=7, n=500)
    for subject, row in ours.items():
        for prop, check in row.items():
            assert check.holds == paper[subject][prop], (subject, prop, check)
