"""The theory chapter's readings: the witness reverses the classical metrics and not the content distance, the paper's
Table 1 is matched to its printed decimals, and the region and entropy panels are what the page says."""

import json
from pathlib import Path

import numpy as np
import pytest

from attncoda.face import theory_text as text
from attncoda.math import synthetic
from attncoda.studies import theory

PAPER = json.loads((Path(__file__).parents[2] / "data" / "paper" / "reference.json").read_text())


@pytest.fixture(scope="module")
def table1():
    return theory.table1(*synthetic.witness())


def test_the_witness_reverses_every_classical_metric_and_never_the_content_distance(table1):
    assert all(theory.reverses(table1, m) for m in ("cosine", "js", "euclidean"))
    assert not theory.reverses(table1, "content") and not theory.reverses(table1, "aitchison")
    rows = text.table1_rows(table1)
    assert [r["verdict"] for r in rows] == ["reversal", "reversal", "reversal", "stable", "stable"]
    assert text.table1_values(table1)["t1_n_reversals"] == 3


def test_table1_matches_the_paper_to_its_printed_decimals(table1):
    worst, agree = theory.paper_table1_difference(table1, PAPER["table1"])
    assert worst <= 1e-4 and set(agree) == {"cosine", "js", "euclidean", "aitchison"} and all(agree.values())
    wrong = json.loads(json.dumps(PAPER["table1"]))
    wrong["js"]["closer_keep"] = "q" if wrong["js"]["closer_keep"] == "r" else "r"
    with pytest.raises(RuntimeError, match="differ from the paper's Table 1 for js"):
        theory.paper_table1_difference(table1, wrong)


def test_dropping_the_sink_moves_p_and_r_apart_for_js_and_euclidean_but_not_for_d_a(table1):
    assert [row["dominance holds"] for row in text.dominance_rows(table1)] == ["✗", "✗", "✓"]
    values = text.dominance_values(table1)
    assert values["dom_js_ratio"] == pytest.approx(values["dom_js_drop"] / values["dom_js_keep"]) and values["dom_js_ratio"] > 1


def test_the_reversal_region_counts_only_positions_without_a_tie():
    region = theory.reversal_region(np.random.default_rng(0), 2000, min_part=PAPER["figure6"]["min_part"])
    assert len(region.positions) == 2000 and region.reversed.shape == (2000,)
    assert 0 < region.rate < 1 and region.ties >= 0
    assert region.rate == pytest.approx(region.reversed.sum() / (2000 - region.ties))
    assert region.to_json() == {"cosine_reversal_rate": region.rate, "positions": 2000, "ties": region.ties}


def test_entropy_panels_keep_the_split_exact_and_report_first_and_last_layers():
    specs = theory.entropy_panel_specs(layers=4)
    panels = theory.entropy_panels(np.random.default_rng(1), specs, rows_per_layer=200)
    assert panels.identity_residual < 1e-12
    values = text.panel_values(panels, PAPER["figure2"])
    a = next(iter(panels.panels.values()))
    assert values["f2_layers"] == 4 and values["f2a_sink_mass_first"] == float(a["sink_mass"][0])
    assert 1 <= values["f2b_entropy_peak_layer"] <= 4
    assert set(panels.to_json()) == {"a", "b"} and len(panels.to_json()["a"]["entropy"]) == 4
    assert text.panel_spec_values(specs)["spec_layers"] == 4


def test_table4_rows_and_agreement():
    from attncoda.studies.invariance import invariance_matrix

    checks = invariance_matrix(seed=3, n=50)
    rows = text.table4_rows(checks)
    assert [r["subject"] for r in rows] == list(checks)
    assert theory.table4_agrees(checks, PAPER["table4"]) == all(checks[s][k].holds == PAPER["table4"][s][k] for s in checks for k in checks[s])
    assert theory.table4_json(checks)[rows[0]["subject"]]["perm"]["holds"] is checks[rows[0]["subject"]]["perm"].holds
    assert [r["subject"] for r in text.paper_table4_rows(PAPER["table4"])] == [s for s in PAPER["table4"] if s != "note"]
