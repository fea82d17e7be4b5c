import json

import numpy as np
import pytest

from attncoda.studies import calibration

SMALL = calibration.CalibrationGrid(sink_masses=(0.1, 0.5, 0.9), n_heads=20, n_triples=1000, replicates=1)


def test_curves_are_deterministic_and_content_is_zero():
    a, b = calibration.compute_curves(SMALL), calibration.compute_curves(SMALL)
    assert calibration.content_hash(a) == calibration.content_hash(b)
    for alpha in a["curves"]:
        assert a["curves"][alpha]["content"] == [0.0, 0.0, 0.0]
        for metric in ("cosine", "js", "euclidean", "hellinger"):
            assert all(0 <= x <= 1 for x in a["curves"][alpha][metric])


def test_reversal_grows_with_sink_mass_for_peaked_content():
    grid = calibration.CalibrationGrid(sink_masses=(0.05, 0.95), alphas=(0.1,), n_heads=60, n_triples=5000, replicates=1)
    curves = calibration.compute_curves(grid)["curves"]["0.1"]
    for metric in ("js", "euclidean", "hellinger"):
        assert curves[metric][1] > curves[metric][0] + 0.1


def test_frozen_file_round_trip_and_tamper_detection(tmp_path):
    curves = calibration.compute_curves(SMALL)
    path = tmp_path / "curves.json"
    digest = calibration.save_curves(curves, path)
    assert calibration.load_curves(path)["sha256"] == digest
    data = json.loads(path.read_text())
    data["curves"]["0.1"]["cosine"][0] += 0.01
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="does not match its recorded sha256"):
        calibration.load_curves(path)


def test_freeze_or_verify_never_overwrites_with_another_grid(tmp_path):
    path = tmp_path / "curves.json"
    curves = calibration.compute_curves(SMALL)
    assert calibration.freeze_or_verify(curves, path)["status"] == "other-grid"
    assert not path.exists()
    calibration.save_curves(curves, path)
    assert calibration.freeze_or_verify(curves, path)["status"] == "identical"
    other = calibration.compute_curves(calibration.CalibrationGrid(sink_masses=(0.1, 0.5, 0.9), n_heads=20, n_triples=1000, replicates=1, seed=1))
    assert calibration.freeze_or_verify(other, path)["status"] == "other-grid"


def test_committed_frozen_curves_match_their_hash_and_the_default_grid():
    path = calibration.frozen_path()
    if not path.exists():
        pytest.skip("no frozen curves committed yet")
    frozen = calibration.load_curves(path)
    assert frozen["grid"] == calibration.CalibrationGrid().as_dict()
    assert max(max(frozen["curves"][a]["content"]) for a in frozen["curves"]) == 0.0


def test_curve_interpolation():
    curves = {"grid": {"sink_masses": [0.1, 0.5]}, "curves": {"0.1": {"cosine": [0.2, 0.4]}}}
    assert calibration.curve_at(curves, "cosine", 0.3) == pytest.approx(0.3)
    assert np.isnan(calibration.curve_at(curves, "cosine", 0.9))


def test_the_chapter_s_grid_checks_and_text_on_the_frozen_curves():
    import json

    import numpy as np
    import pytest

    from attncoda.face import calibration_text as text
    from attncoda.studies import calibration

    grid = calibration.grid_for(5, 12, 40, 1, 0)
    assert grid.sink_masses == (0.02, 0.26, 0.5, 0.74, 0.98) and grid.n_heads == 12
    curves = calibration.load_curves(calibration.frozen_path())
    assert calibration.content_max_rate(curves) == 0.0
    broken = json.loads(json.dumps(curves))
    broken["curves"]["0.1"]["content"][3] = 0.01
    with pytest.raises(RuntimeError, match="Lemma 1 violated"):
        calibration.content_max_rate(broken)
    rows = text.curve_rows(curves, 0.5)
    assert len(rows) == 10 and rows[0]["at lowest s"] == curves["curves"]["0.1"]["cosine"][0]
    values = text.curve_values(curves, 0.5)
    assert values["cal_js_high"] == 100 * curves["curves"]["0.1"]["js"][-1] and values["cal_rho_text"].count("/") == 3
    assert set(text.FREEZE_STATUS) == {"frozen", "identical", "different", "other-grid"}
    assert text.grid_values(grid)["grid_points"] == 5
    hf = calibration.hellinger_fisher_rao_check(grid, np.random.default_rng(0), 0.8)
    assert len(hf) == 4 and all(r["verdicts that differ"] == 0 for r in hf)
