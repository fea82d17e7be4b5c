"""The patches in pending/ wait for a record rebuild (pending/README.md): each must still apply to the tree as it is, and
the README must list each one, so that the session that rebuilds the record can land them."""

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PATCHES = sorted((ROOT / "pending").glob("*.patch"))


@pytest.mark.parametrize("patch", PATCHES, ids=lambda p: p.name)
def test_each_pending_patch_still_applies(patch):
    done = subprocess.run(["git", "apply", "--check", str(patch)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, f"{patch.name} no longer applies: rebase it onto main ({done.stderr.strip()})"


def test_the_readme_lists_every_pending_patch():
    listed = set(re.findall(r"`([\w.-]+\.patch)`", (ROOT / "pending" / "README.md").read_text()))
    assert listed == {p.name for p in PATCHES}


def test_the_pending_patches_apply_one_after_another_in_the_readmes_order(tmp_path):
    """Applied in a scratch index (the work tree untouched), in the order pending/README.md lists them."""
    import os

    order = re.findall(r"^\| `([\w.-]+\.patch)`", (ROOT / "pending" / "README.md").read_text(), re.M)
    env = {**os.environ, "GIT_INDEX_FILE": str(tmp_path / "index")}
    subprocess.run(["git", "read-tree", "HEAD"], cwd=ROOT, env=env, check=True)
    for name in order:
        done = subprocess.run(["git", "apply", "--cached", str(ROOT / "pending" / name)], cwd=ROOT, env=env, capture_output=True, text=True)
        assert done.returncode == 0, f"{name} does not apply after the ones before it: {done.stderr.strip()}"
