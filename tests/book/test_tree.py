"""The tree holds sources, not binaries: every clone (Colab's included) downloads each tracked byte."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).parents[2]
LARGEST = 1 << 20
"""No tracked file outside data/ is larger than this (1 MiB)."""


def tracked_files() -> list[str]:
    done = subprocess.run(["git", "ls-files", "-z"], capture_output=True, text=True, cwd=ROOT)
    if done.returncode != 0:
        import pytest

        pytest.skip("not a git checkout")
    return [name for name in done.stdout.split("\0") if name]


def test_no_tracked_file_over_1_mib_outside_data():
    large = [f"{name} ({(ROOT / name).stat().st_size:,} bytes)" for name in tracked_files()
             if not name.startswith("data/") and (ROOT / name).is_file() and (ROOT / name).stat().st_size > LARGEST]
    assert not large, f"tracked files over 1 MiB outside data/ (a build output or a download?): {large}"


def test_no_wheel_is_tracked_and_wheels_are_ignored():
    assert not [name for name in tracked_files() if name.endswith(".whl")]
    assert "*.whl" in (ROOT / ".gitignore").read_text().split()
