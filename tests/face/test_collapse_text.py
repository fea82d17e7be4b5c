"""The collapse chapter's readings, computed from typed results: each sentence says what its numbers support."""

import pytest

from attncoda.base.provenance import first_commit
from attncoda.face import collapse_text
from attncoda.studies import collapse
from attncoda.studies.collapse_suite import Endpoint, Series


def _series(kind, sinks, hs, name=None, seed=0, spread=None):
    points = [{"step": s, "entropy": h, "content_entropy": 3.0, "sink_mass": m, "layers": {k: [0.0] for k in collapse.MEANS}}
              for s, h, m in zip((0, 16, 1000), hs, sinks)]
    training = {"seed": seed, "parameters": 400_000, "training_seconds": 60.0, "steps": 1000, "batch": 16, "length": 64}
    return Series(name or f"{kind}-{seed}", kind, kind, points, collapse.trajectory_shares(points, spread), training)


def test_the_contrast_says_where_the_sink_grew_and_what_share_each_side_got():
    grown = _series("search winner", (0.03, 0.03, 0.6), (4.0, 4.0, 2.0))
    control = _series("control", (0.03, 0.03, 0.04), (4.0, 4.0, 3.9))
    text = collapse_text.contrast_sentence([grown, control])
    assert "winner ends with a mean sink mass of 0.60" in text and "control" in text and f"{grown.shown[1]:.2f}" in text
    assert collapse_text.contrast_sentence([grown]) == ""


def test_a_rejected_peak_is_reported_and_the_share_falls_back_to_step_zero():
    s = _series("text suite", (0.03, 0.03, 0.04), (4.0, 4.0005, 3.5), spread=0.01)
    assert s.shown[0] == "from_step0"
    assert "noise, not a peak" in collapse_text.trajectory_sentence([s])
    assert "noise" in collapse_text.share_rows([s])[0]["H peak at step"]


@pytest.mark.parametrize("low,high,verdict", [(0.1, 0.2, "below it"), (0.35, 0.5, "inside it"), (0.25, 0.4, "straddling its edge")])
def test_an_endpoint_is_placed_against_the_paper_s_range_on_its_interval(low, high, verdict):
    e = Endpoint("m", {"share": (low + high) / 2}, {"median": (low + high) / 2, "low": low, "high": high, "samples": [{}] * 5})
    assert f"m: {verdict}" in collapse_text.endpoint_sentence({"m": e}, 0.30, 0.95)


def test_the_search_sentence_counts_what_grew():
    trials = [{"label": "a", "run": {"task": "text"}, "step0": {"sink_mass": 0.02}, "final": {"sink_mass": 0.03}, "grown": False, "training_seconds": 60},
              {"label": "b", "run": {"task": "backcopy"}, "step0": {"sink_mass": 0.03}, "final": {"sink_mass": 0.7}, "grown": True, "training_seconds": 120}]
    text = collapse_text.search_sentence({"target": 0.3, "trials": trials})
    assert "1 of them grew" in text and "(b)" in text and "On natural text it ended between 0.030 and 0.030" in text
    assert "cannot rank" in text  # one seed per configuration: no ranking is claimed


def test_first_commit_finds_a_committed_file_and_nothing_for_others():
    found = first_commit("data/predictor/v2.json")
    assert found is None or (len(found) == 2 and len(found[1]) == 10)  # a shallow clone may not hold the commit
    assert first_commit("no/such/file") is None


def test_a_control_whose_entropy_did_not_fall_is_said_to_have_no_collapse():
    grown = _series("search winner", (0.03, 0.03, 0.06), (3.47, 3.47, 3.39))
    control = _series("control", (0.036, 0.036, 0.036), (3.473, 3.474, 3.4743))
    text = collapse_text.contrast_sentence([grown, control])
    assert "did not fall" in text and "no collapse to share out" in text


def test_a_real_but_tiny_peak_is_reported_with_its_rise_and_spread():
    s = _series("text suite", (0.02, 0.02, 0.04), (4.0480, 4.0481, 2.5), spread=1e-6)
    text = collapse_text.trajectory_sentence([s])
    assert "a real rise, if a tiny one" in text and "agree to two decimals" in text
