"""A second book build reuses every chapter whose notebook, package source and inputs are unchanged."""

import subprocess
from pathlib import Path

import pytest

from attncoda.face import book


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setenv("ATTNCODA_RESULTS", str(tmp_path / "results"))
    ran = []

    def fake_run(key, model=None, profile="full", output=None, parameters=None, record=False, **_):
        from attncoda.base.paths import repo_root
        from attncoda.face.chapters import CHAPTERS, stage_dir

        ran.append(key)
        assert record == (profile == "full"), "only the full book writes the record"
        (stage_dir() / "notebooks").mkdir(parents=True, exist_ok=True)
        (stage_dir() / "notebooks" / f"{CHAPTERS[key].notebook}.ipynb").write_text("{}")
        # a relative results_dir is relative to the kernel's folder, notebooks/, as in a real run (not to pytest's)
        folder = repo_root() / "notebooks" / ((parameters or {}).get("results_dir") or tmp_path / "results")
        (folder / key).mkdir(parents=True, exist_ok=True)
        (folder / key / "x.json").write_text("{}")

    monkeypatch.setattr(book, "run_chapter", fake_run)
    monkeypatch.setattr(book, "_jupyter_book", lambda: "true")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout="", stderr=""))
    return ran


def test_unchanged_chapters_are_reused_and_a_change_reruns_them(fake_build, monkeypatch):
    book.build_book(profile="small")
    first = list(fake_build)
    assert "theory" in first and "reproducibility" in first
    fake_build.clear()
    book.build_book(profile="small")
    assert fake_build == ["reproducibility"], "only the page that summarizes every chapter's results reruns"
    fake_build.clear()
    book.build_book(profile="full")
    assert "theory" in fake_build, "another profile is another key"
    fake_build.clear()
    monkeypatch.setattr("attncoda.base.provenance.source_sha256", lambda *a: "changed")
    book.build_book(profile="full")
    assert set(fake_build) == set(first), "a change in the package source reruns every chapter"
    fake_build.clear()
    book.build_book(profile="full", reuse=False)
    assert set(fake_build) == set(first)
