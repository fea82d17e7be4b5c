"""Committed results were produced by the committed package code, from a clean tree, and name no machine path."""

import json
import re
from pathlib import Path

import pytest

from attncoda.base.provenance import code_version, source_sha256

ROOT = Path(__file__).parents[2]
RESULTS = sorted((ROOT / "data" / "results").glob("*/*.json"))
MACHINE_PATH = re.compile(r'"(?:/(?:home|root|tmp|work|Users|var|opt|private|mnt)/|[A-Za-z]:\\\\)')


def test_there_are_committed_results():
    assert RESULTS, "data/results is empty: run make book and commit its results"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_results_come_from_the_committed_code(path):
    code = json.loads(path.read_text())["provenance"]["code"]
    assert code.get("source_sha256") == source_sha256(), (
        f"{path.relative_to(ROOT)} was produced by package code other than the committed code; regenerate it (make book), don't patch it"
    )
    assert code.get("clean") is True, f"{path.relative_to(ROOT)} was produced from a tree with uncommitted changes in src/ or notebooks/"
    assert re.fullmatch(r"[0-9a-f]{40}", code.get("git_commit", "")), "results name the commit that produced them"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_results_hold_no_machine_path(path):
    found = MACHINE_PATH.search(path.read_text())
    assert not found, f"{path.relative_to(ROOT)} holds a path of the machine that made it: {path.read_text()[found.start():found.start() + 60]}"


def test_source_hash_ignores_where_the_package_lives(tmp_path):
    import shutil

    from attncoda.base.provenance import PACKAGE_DIR

    copy = tmp_path / "elsewhere" / "attncoda"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert source_sha256(copy) == source_sha256()
    (copy / "math" / "coda.py").write_text((copy / "math" / "coda.py").read_text() + "\n# a change\n")
    assert source_sha256(copy) != source_sha256()


def test_code_version_names_commit_hash_and_cleanliness():
    info = code_version()
    assert info["source_sha256"] == source_sha256()
    if "git_commit" in info:
        assert isinstance(info["clean"], bool)
