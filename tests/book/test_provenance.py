"""Committed results were produced by the committed package code, from a clean tree, and name no machine path.

A result is current while the package modules its stamp names keep their source: a change elsewhere leaves it current."""

import json
import re
from pathlib import Path

import pytest

from attncoda.base.provenance import code_version, imported_names, is_current, module_file, modules_sha256, notebook_imports, reachable_modules, source_sha256
from attncoda.face.chapters import CHAPTERS

ROOT = Path(__file__).parents[2]
RESULTS = sorted((ROOT / "data" / "results").glob("*/*.json"))
MACHINE_PATH = re.compile(r'"(?:/(?:home|root|tmp|work|Users|var|opt|private|mnt)/|[A-Za-z]:\\\\)')


def test_there_are_committed_results():
    assert RESULTS, "data/results is empty: run make book and commit its results"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_results_come_from_the_committed_code(path):
    code = json.loads(path.read_text())["provenance"]["code"]
    assert is_current(code), (
        f"{path.relative_to(ROOT)} was produced by package modules that have changed since; regenerate it "
        f"(attncoda run {json.loads(path.read_text())['chapter']} --record, or make book), don't patch it"
    )
    assert code.get("clean") is True, f"{path.relative_to(ROOT)} was produced from a tree with uncommitted changes in src/ or notebooks/"
    assert re.fullmatch(r"[0-9a-f]{40}", code.get("git_commit", "")), "results name the commit that produced them"


@pytest.mark.parametrize("path", RESULTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_results_name_every_module_their_notebook_imports(path):
    record = json.loads(path.read_text())
    notebook = ROOT / "notebooks" / f"{next(c for c in CHAPTERS.values() if c.key == record['chapter']).notebook}.ipynb"
    imported = {name for name in notebook_imports(notebook) if module_file(name)}
    missing = imported - set(record["provenance"]["code"]["modules"])
    assert not missing, f"{path.relative_to(ROOT)}'s stamp leaves out modules its notebook imports: {sorted(missing)}"


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


def test_code_version_names_the_modules_this_process_imported_and_all_they_can_run():
    """A number read from the cache was computed by code this process may never have imported: the module that reads
    the entry computes it on a miss, so the closure of the imported modules names that code too."""
    import attncoda.engine.signatures  # noqa: F401  (reads and computes signatures; the capture is imported only on a miss)

    info = code_version()
    assert "attncoda.base.provenance" in info["modules"] and "attncoda.face.chapters" in info["modules"]
    assert {"attncoda.engine.signatures", "attncoda.engine.capture", "attncoda.engine.score_capture"} <= set(info["modules"])
    assert info["modules"] == sorted(info["modules"])
    assert info["modules_sha256"] == modules_sha256(info["modules"])


def _package_copy(tmp_path):
    import shutil

    from attncoda.base.provenance import PACKAGE_DIR

    copy = tmp_path / "attncoda"
    shutil.copytree(PACKAGE_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    return copy


def test_a_stamp_goes_stale_only_when_a_module_it_names_changes(tmp_path):
    copy = _package_copy(tmp_path)
    code = {"modules": ["attncoda", "attncoda.math", "attncoda.math.coda"]}
    code["modules_sha256"] = modules_sha256(code["modules"], copy)
    assert is_current(code, copy)
    (copy / "face" / "cli.py").write_text((copy / "face" / "cli.py").read_text() + "\n# elsewhere\n")
    assert is_current(code, copy), "a change to a module the result did not import leaves it current"
    (copy / "base" / "provenance.py").write_text((copy / "base" / "provenance.py").read_text() + "\n# the stamp's own code\n")
    assert is_current(code, copy), "the stamping module computes no number"
    coda = (copy / "math" / "coda.py").read_text()
    (copy / "math" / "coda.py").write_text(coda + "\n# a change\n")
    assert not is_current(code, copy)
    (copy / "math" / "coda.py").unlink()
    assert not is_current(code, copy), "a module that no longer exists makes the result stale"
    assert not is_current({}, copy), "a result without a module stamp is never current"


def test_reachable_modules_follow_relative_imports_inside_functions_and_the_packages_above():
    source = "from ..math import coda\ndef f():\n    from .redundancy import nearest_in_layer\n    import attncoda.engine.perplexity\n"
    assert imported_names(source, "attncoda.studies.x") >= {"attncoda.math", "attncoda.math.coda", "attncoda.studies.redundancy",
                                                           "attncoda.studies.redundancy.nearest_in_layer", "attncoda.engine.perplexity"}
    reached = reachable_modules(["attncoda.studies.pruning"])
    assert {"attncoda", "attncoda.studies", "attncoda.studies.pruning", "attncoda.studies.redundancy", "attncoda.math.coda",
            "attncoda.base.protocol"} <= set(reached)
    assert "attncoda.engine.perplexity" not in reached, "pruning's readings are math: they import no model code"


def test_the_version_tag_is_named_with_the_commits_since_it(tmp_path):
    """``git_describe``: nothing without a version tag, the tag on its commit, and how far a later commit is past it."""
    import subprocess

    from attncoda.base.provenance import version_tag

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True)

    git("init", "-q")
    (tmp_path / "a").write_text("1")
    git("add", "a")
    git("commit", "-qm", "one")
    git("tag", "not-a-version")
    assert version_tag(tmp_path) is None
    git("tag", "-a", "v0.1.0", "-m", "the first")
    assert version_tag(tmp_path) == "v0.1.0"
    (tmp_path / "a").write_text("2")
    git("commit", "-qam", "two")
    assert re.fullmatch(r"v0\.1\.0-1-g[0-9a-f]{12}", version_tag(tmp_path))
