"""The package installed without its checkout (the README's `pip install "attncoda[models] @ git+…"`) still has the
frozen inputs an audit reads: the calibration curves, the predictors and the staged audit's margins."""

import shutil
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


def test_the_packaged_copies_are_the_checkouts_files():
    from attncoda.base.paths import PACKAGED_DATA

    packaged = sorted(p for p in PACKAGED_DATA.rglob("*") if p.is_file())
    read = sorted(p.relative_to(ROOT / "data") for p in _frozen_paths())
    assert [p.relative_to(PACKAGED_DATA) for p in packaged] == read, "the package carries exactly the files an audit reads"
    for path in packaged:
        inside = path.relative_to(PACKAGED_DATA)
        assert not path.is_symlink() and path.read_bytes() == (ROOT / "data" / inside).read_bytes(), (
            f"src/attncoda/_data/{inside} differs from data/{inside}: cp data/{inside} src/attncoda/_data/{inside}")


def test_outside_a_checkout_the_audit_reads_the_packaged_copies(tmp_path, monkeypatch):
    from attncoda.base.paths import PACKAGED_DATA, frozen_dir
    from attncoda.studies import predictor

    monkeypatch.setenv("ATTNCODA_HOME", str(tmp_path))  # a folder that is no project: as a wheel run from anywhere
    assert frozen_dir() == PACKAGED_DATA
    assert all(p.is_relative_to(PACKAGED_DATA) and p.is_file() for p in _frozen_paths())
    assert predictor.load_spec(version=2)["version"] == 2  # the audit's predictor, read from the package


def test_a_writer_never_writes_the_packaged_copies(tmp_path, monkeypatch):
    """A measurement written outside a checkout (``audit_stages gate``, a first freeze) goes to the project's data,
    not into the installed package."""
    from attncoda.base.paths import PACKAGED_DATA, project_path
    from attncoda.studies import audit_stages, predictor

    monkeypatch.setenv("ATTNCODA_HOME", str(tmp_path))
    packaged = audit_stages.data_file(audit_stages.GATE_FILE)
    assert packaged.is_relative_to(PACKAGED_DATA) and project_path(packaged) == tmp_path / "data" / "audit" / audit_stages.GATE_FILE
    missing = PACKAGED_DATA / "predictor" / "absent.json"
    spec = predictor.freeze("0" * 64, missing, version=2)
    assert spec["version"] == 2 and (tmp_path / "data" / "predictor" / "absent.json").is_file() and not missing.exists()


@pytest.mark.slow  # builds the wheel (about 10 s)
def test_the_wheel_carries_the_frozen_inputs(tmp_path):
    from attncoda.base.paths import PACKAGED_DATA

    source = tmp_path / "source"  # built from a copy, so the build leaves nothing in the checkout
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "src", source / "src", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(source)],
                   check=True, capture_output=True)
    with zipfile.ZipFile(next(tmp_path.glob("attncoda-*.whl"))) as wheel:
        names = set(wheel.namelist())
        for path in PACKAGED_DATA.rglob("*.json"):
            name = "attncoda/" + path.relative_to(PACKAGED_DATA.parent).as_posix()
            assert name in names and wheel.read(name) == path.read_bytes(), name
