"""A second book build reuses every chapter whose notebook, package source and inputs are unchanged."""

import subprocess

import pytest

from attncoda.face import book
from attncoda.face.chapter_run import ChapterRun


@pytest.fixture
def fake_build(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setenv("ATTNCODA_RESULTS", str(tmp_path / "results"))
    ran = []

    def fake_execute(run, progress=True):
        from attncoda.base.paths import repo_root
        from attncoda.face.chapters import CHAPTERS, stage_dir

        key, parameters = run.chapter.key, run.injected
        ran.append(key)
        assert run.record == (run.profile == "full"), "only the full book writes the record"
        assert run.target == stage_dir() / "notebooks" / f"{CHAPTERS[key].notebook}.ipynb"
        (stage_dir() / "notebooks").mkdir(parents=True, exist_ok=True)
        (stage_dir() / "notebooks" / f"{CHAPTERS[key].notebook}.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
        # a relative results_dir is relative to the kernel's folder, notebooks/, as in a real run (not to pytest's)
        folder = repo_root() / "notebooks" / ((parameters or {}).get("results_dir") or tmp_path / "results")
        (folder / key).mkdir(parents=True, exist_ok=True)
        (folder / key / "x.json").write_text("{}")

    monkeypatch.setattr(ChapterRun, "execute", fake_execute)
    # which offline models are installed is not this test's concern (test_trust covers the refusal): make test installs
    # only minilm-l6, and a full-profile build would otherwise refuse to write a record without the others
    monkeypatch.setattr("attncoda.face.chapters.note_missing_models", lambda *a, **k: None)
    monkeypatch.setattr(book, "_jupyter_book", lambda: "true")
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: subprocess.CompletedProcess(a, 0, stdout="", stderr=""))
    return ran


def test_unchanged_chapters_are_reused_and_a_change_reruns_them(fake_build, monkeypatch):
    book.build_book(profile="small")
    first = list(fake_build)
    assert "theory" in first and "reproducibility" in first
    fake_build.clear()
    book.build_book(profile="small")
    assert fake_build == ["scorecard", "reproducibility"], "only the pages that summarize every chapter's results rerun"
    fake_build.clear()
    book.build_book(profile="full")
    assert "theory" in fake_build, "another profile is another key"
    fake_build.clear()
    from attncoda.base import provenance

    hash_modules = provenance.modules_sha256
    monkeypatch.setattr(provenance, "modules_sha256",
                        lambda modules, *a: hash_modules(modules, *a) + ("+changed" if "attncoda.engine.perplexity" in modules else ""))
    book.build_book(profile="full")
    assert set(fake_build) == {"scorecard", "pruning", "reproducibility"}, "a change in a module only pruning can run reruns pruning only"
    fake_build.clear()
    monkeypatch.setattr(provenance, "modules_sha256", lambda *a: "changed")
    book.build_book(profile="full")
    assert set(fake_build) == set(first), "a change in a module every chapter runs reruns every chapter"
    fake_build.clear()
    book.build_book(profile="full", reuse=False)
    assert set(fake_build) == set(first)


def test_silent_cells_lose_their_source_bar(tmp_path):
    """A hide-input cell whose outputs are only glued values (or removed) shows no "Show code cell source" bar over
    nothing: it becomes remove-input; a cell with a table, a figure or printed text keeps its bar. Folding twice changes
    nothing more."""
    import nbformat

    from attncoda.face.book import fold_silent_cells

    glued = nbformat.v4.new_output("display_data", data={"application/papermill.record/text/plain": "0.5"})
    table = nbformat.v4.new_output("display_data", data={"text/html": "<table></table>", "text/plain": "t"})
    printed = nbformat.v4.new_output("stream", name="stdout", text="took 3 s\n")
    cells = [(["hide-input"], [glued]), (["hide-input"], []), (["hide-input", "remove-output"], [table]),
             (["hide-input"], [glued, table]), (["hide-input"], [printed]), (["remove-cell"], [])]
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", metadata={"tags": t}, outputs=o) for t, o in cells])
    path = tmp_path / "page.ipynb"
    nbformat.write(nb, str(path))
    assert fold_silent_cells(path) == 3
    tags = [c.metadata["tags"] for c in nbformat.read(str(path), as_version=4).cells]
    assert tags == [["remove-input"], ["remove-input"], ["remove-input", "remove-output"], ["hide-input"], ["hide-input"], ["remove-cell"]]
    assert fold_silent_cells(path) == 0
