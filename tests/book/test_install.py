"""The package installed without its checkout (the README's `pip install "attncoda[models] @ git+…"`) still has the
frozen inputs an audit reads: the calibration curves, the predictors and the staged audit's margins."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _frozen_paths() -> list[Path]:
    from attncoda.studies import audit_stages, calibration, predictor

    return [calibration.frozen_path(), predictor.frozen_path(1), predictor.frozen_path(2),
            *(audit_stages.data_file(name) for name in (audit_stages.BIAS_FILE, audit_stages.SIMULATION_FILE, audit_stages.GATE_FILE))]


def test_outside_a_checkout_the_audit_reads_the_packaged_copies_of_the_checkouts_files(tmp_path, monkeypatch):
    from attncoda.base.paths import PACKAGED_DATA, frozen_dir

    in_checkout = _frozen_paths()
    assert all(p.is_relative_to(ROOT / "data") for p in in_checkout)
    monkeypatch.setenv("ATTNCODA_HOME", str(tmp_path))  # a folder that is no project: as a wheel run from anywhere
    assert frozen_dir() == PACKAGED_DATA
    packaged = _frozen_paths()
    for inside, outside in zip(in_checkout, packaged):
        assert outside.is_relative_to(PACKAGED_DATA) and outside.read_bytes() == inside.read_bytes(), outside


def test_every_packaged_file_is_a_link_into_data_not_a_second_copy():
    from attncoda.base.paths import PACKAGED_DATA

    files = [p for p in PACKAGED_DATA.rglob("*") if not p.is_dir()]
    assert files and all(p.is_symlink() and p.resolve().is_relative_to(ROOT / "data") for p in files), files


@pytest.mark.slow  # builds the wheel (about 10 s)
def test_the_wheel_carries_the_frozen_inputs(tmp_path):
    from attncoda.base.paths import PACKAGED_DATA

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    with zipfile.ZipFile(next(tmp_path.glob("attncoda-*.whl"))) as wheel:
        names = set(wheel.namelist())
        for path in PACKAGED_DATA.rglob("*.json"):
            name = "attncoda/" + path.relative_to(PACKAGED_DATA.parent).as_posix()
            assert name in names and wheel.read(name) == path.read_bytes(), name
