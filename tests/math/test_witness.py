"""The paper's Table 1: every distance to 4 decimals and the direction of every verdict."""

import json
from pathlib import Path

import numpy as np
import pytest

import attncoda as ac
from attncoda.math.synthetic import reversal_region, simplex_positions

REFERENCE = json.loads((Path(__file__).parents[2] / "data" / "paper" / "reference.json").read_text())["table1"]


@pytest.mark.parametrize("metric", ["cosine", "js", "euclidean", "aitchison"])
@pytest.mark.parametrize("convention", ["keep", "drop"])
def test_table1_distances_to_four_decimals(witness, metric, convention):
    p, q, r = witness
    m = ac.get_metric(metric)
    got = [round(float(m(p, x, convention)), 4) for x in (q, r)]
    assert got == pytest.approx(REFERENCE[metric][convention], abs=1e-12)


@pytest.mark.parametrize("metric", ["cosine", "js", "euclidean", "aitchison"])
def test_table1_verdicts(witness, metric):
    p, q, r = witness
    m = ac.get_metric(metric)
    for convention in ("keep", "drop"):
        d_q, d_r = float(m(p, q, convention)), float(m(p, r, convention))
        q_closer = d_q > d_r if m.larger_is_closer else d_q < d_r
        assert ("q" if q_closer else "r") == REFERENCE[metric][f"closer_{convention}"]


def test_all_three_classical_verdicts_reverse_and_content_is_stable(witness):
    p, q, r = witness
    rows = np.stack([p, q, r])
    triple = np.array([[0, 1, 2]])
    for name in ("cosine", "js", "euclidean"):
        assert ac.reversal_rate(rows, name, triples=triple).reversed == 1
    assert ac.reversal_rate(rows, "content", triples=triple).reversed == 0
    assert ac.content_distance(p, r) == pytest.approx(1.9605, abs=5e-5)
    assert ac.content_distance(p, q) < 1e-12


def test_js_and_euclidean_violate_subcompositional_dominance_on_the_witness(witness):
    p, _, r = witness
    pd, rd = ac.drop_sink(p), ac.drop_sink(r)
    assert ac.jensen_shannon(pd, rd) > ac.jensen_shannon(p, r)
    assert ac.euclidean(pd, rd) > ac.euclidean(p, r)
    assert ac.aitchison(pd, rd) <= ac.aitchison(p, r) + 1e-12


def test_figure6_reversal_region_rate():
    """Paper: 77.9 % of 20,000 Dirichlet(1,1,1) positions (Monte Carlo, within 1 point)."""
    positions = simplex_positions(np.random.default_rng(0), 20_000, 0.004)
    assert positions.shape == (20_000, 3) and positions.min() > 0.004
    region = reversal_region(positions, "cosine")
    compared = (region["keep"] != 0) & (region["drop"] != 0)
    rate = region["reversed"].sum() / compared.sum()
    assert abs(100 * rate - 77.9) < 1.0
