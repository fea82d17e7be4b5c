import json

import pytest

from attncoda.studies import calibration, predictor


def _curves():
    grid = calibration.CalibrationGrid(sink_masses=(0.02, 0.5, 0.98), n_heads=20, n_triples=500, replicates=1)
    curves = calibration.compute_curves(grid)
    return {**curves, "sha256": calibration.content_hash(curves)}


def test_outcomes(tmp_path):
    curves = _curves()
    spec = predictor.freeze(curves["sha256"], tmp_path / "frozen.json")
    assert predictor.load_spec(tmp_path / "frozen.json") == spec
    s = 0.5
    exact = {m: calibration.curve_at(curves, m, s) for m in spec["metrics"]}
    gap = predictor.predict(curves, spec, s)["regime_gap_points"]
    result = predictor.evaluate(curves, spec, s, exact)
    assert result["mean_abs_deviation_points"] == pytest.approx(0.0)
    assert result["outcome"] == ("confirmation" if gap <= spec["tolerance_points"] else "abstention")
    far = {m: v + 0.2 for m, v in exact.items()}
    assert predictor.evaluate(curves, spec, s, far)["outcome"] in ("failure", "abstention")
    assert predictor.evaluate(curves, spec, 0.99, exact)["outcome"] == "abstention"


def test_tampering_is_detected(tmp_path):
    curves = _curves()
    path = tmp_path / "frozen.json"
    predictor.freeze(curves["sha256"], path)
    data = json.loads(path.read_text())
    data["tolerance_points"] = 20
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="modified"):
        predictor.load_spec(path)
    with pytest.raises(ValueError, match="not the ones"):
        predictor.predict({**curves, "sha256": "0" * 64}, predictor.SPEC | {"curves_sha256": curves["sha256"]}, 0.5)


def test_committed_predictor_is_bound_to_the_committed_curves():
    curves, spec = predictor.load_all()
    assert spec["curves_sha256"] == curves["sha256"]
    assert {k: v for k, v in spec.items() if k not in ("sha256", "curves_sha256")} == predictor.SPEC


def test_v2_is_frozen_bound_to_the_curves_and_states_its_domain():
    curves, spec = predictor.load_all(version=2)
    assert spec["curves_sha256"] == curves["sha256"]
    assert {k: v for k, v in spec.items() if k not in ("sha256", "curves_sha256")} == predictor.V2
    inside = {"causal": True, "sink_size": 1, "length": 128}
    assert not predictor.domain_reasons(spec, inside)
    encoder = {"causal": False, "sink_size": 2, "length": 128}
    result = predictor.evaluate(curves, spec, 0.5, {m: 0.3 for m in spec["metrics"]}, encoder)
    assert result["outcome"] == "abstention" and len(result["reasons"]) == 2
    assert predictor.explain(result, spec).startswith("abstained: not a causal model")


def test_smoothing_keeps_a_flat_curve_and_damps_noise():
    import numpy as np

    assert np.allclose(predictor.smoothed(np.full(9, 0.3), 5), 0.3)
    noisy = np.array([0.0, 1.0] * 5)
    assert np.ptp(predictor.smoothed(noisy, 5)[2:-2]) < np.ptp(noisy)


def test_an_audit_at_another_length_is_told_whether_the_predictor_covers_it():
    """The curves were computed for rows of 127 content parts: L = 512 lies outside v2's domain (the predictor abstains
    and says why), L = 100 inside it, and L = 128 needs no note."""
    curves, spec = predictor.load_all(version=2)
    long = predictor.predict(curves, spec, 0.5, {"causal": True, "sink_size": 1, "length": 512})
    assert long["abstain"] and any("512 keys, outside the calibrated 96-160" in r and "127 content parts" in r for r in long["reasons"])
    assert "lies outside" in predictor.length_note(spec, 512)
    assert "lies inside" in predictor.length_note(spec, 100) and not predictor.domain_reasons(spec, {"causal": True, "sink_size": 1, "length": 100})
    assert predictor.length_note(spec, 128) is None
