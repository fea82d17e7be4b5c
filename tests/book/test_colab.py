"""Colab, as far as it can be tested here: every chapter's first cell takes its Colab branch in a fresh virtual
environment that starts with what Colab ships (Python, a kernel, torch), installs the package from a clone at the
pinned commit, and the chapter then runs on a local model folder with the Hub unreachable."""

import re
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attncoda.face.chapters import CHAPTERS
from attncoda.face.colab import colab_model, with_colab_cell

ROOT = Path(__file__).parents[2]


def _colab_cell(nb):
    cells = [c for c in nb.cells if "colab" in c.metadata.get("tags", [])]
    assert len(cells) == 1
    return cells[0]


def test_chapters_are_committed_without_the_colab_cell_and_the_build_inserts_it_first():
    for chapter in CHAPTERS.values():
        nb = nbformat.read(ROOT / "notebooks" / f"{chapter.notebook}.ipynb", as_version=4)
        assert not [c for c in nb.cells if "colab" in c.metadata.get("tags", [])], f"{chapter.notebook}: the build inserts the Colab cell"
        pinned = with_colab_cell(nb, "https://example.org/r", "0123abc")
        cell = _colab_cell(pinned)
        assert pinned.cells.index(cell) == 1 and pinned.cells[0].cell_type == "markdown" and "remove-cell" in cell.metadata["tags"]
        assert 'COMMIT = "0123abc"' in cell.source and 'REPOSITORY = "https://example.org/r"' in cell.source
        nbformat.validate(pinned)
        if chapter.per_model:
            assert chapter.colab_model, f"say which model chapter {chapter.key} measures in Colab"
            assert f'open_chapter("{chapter.key}", globals())' in "".join(c.source for c in nb.cells), "its opening swaps in the Colab model"


def test_a_quote_cannot_reach_the_colab_cell_s_code():
    with pytest.raises(ValueError, match="quotes"):
        with_colab_cell(nbformat.v4.new_notebook(), 'https://x"; import os; os.system("rm -rf /")', "abc")


def test_a_clean_build_pins_the_colab_copies_and_each_page_s_download(tmp_path, monkeypatch):
    """From a clean tree the Colab copies and the staged executed notebooks (what a page offers for download) name the
    commit the pages were built from, not "main", and the book's Colab buttons point at that commit's folder."""
    import shutil

    from attncoda.base import provenance
    from attncoda.face.book import write_colab_notebooks

    monkeypatch.setenv("ATTNCODA_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setattr(provenance, "code_version", lambda *a: {"git_commit": "0123abc", "clean": True})
    stage = tmp_path / "stage"
    (stage / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", stage / "_config.yml")
    shutil.copy(ROOT / "notebooks" / "01_theory_witness.ipynb", stage / "notebooks" / "01_theory_witness.ipynb")
    folder = write_colab_notebooks(stage)
    for path in (folder / "01_theory_witness.ipynb", stage / "notebooks" / "01_theory_witness.ipynb"):
        assert 'COMMIT = "0123abc"' in _colab_cell(nbformat.read(path, as_version=4)).source, path
    assert len(list(folder.glob("*.ipynb"))) == len(CHAPTERS)
    assert 'path_to_book: "0123abc"' in (stage / "_config.yml").read_text()
    latest = tmp_path / "out" / "_build" / "colab" / "latest" / "notebooks"
    assert sorted(p.name for p in latest.glob("*.ipynb")) == sorted(p.name for p in folder.glob("*.ipynb")), "the badge's stable copies"
    assert (latest / "01_theory_witness.ipynb").read_bytes() == (folder / "01_theory_witness.ipynb").read_bytes()


def test_the_readme_s_colab_badge_opens_the_newest_build_s_copy():
    """The badge points at the colab branch's latest/ folder of the repository _config.yml names, at a chapter that exists."""
    import re

    import yaml

    from attncoda.face.book import LATEST
    from attncoda.face.book import COLAB_BRANCH

    url = yaml.safe_load((ROOT / "_config.yml").read_text())["repository"]["url"].rstrip("/").removeprefix("https://github.com/")
    found = re.search(r"\(https://colab\.research\.google\.com/github/([^)]+)\)", (ROOT / "README.md").read_text())
    assert found, "the README has a Colab badge"
    assert found.group(1).startswith(f"{url}/blob/{COLAB_BRANCH}/{LATEST}/notebooks/")
    assert (ROOT / "notebooks" / found.group(1).rsplit("/", 1)[1]).exists()


def test_an_executed_page_gives_colab_a_plain_copy_with_its_numbers(tmp_path, monkeypatch):
    """Where the staged page holds its run, Colab's copy is that run in plain CommonMark (no MyST left, the glued values
    in place), while the page's download keeps its MyST for the book."""
    import shutil

    from executed_notebook import executed

    from attncoda.base import provenance
    from attncoda.face.book import write_colab_notebooks
    from attncoda.face.colab_copy import MYST_LEFT

    monkeypatch.setenv("ATTNCODA_OUTPUT", str(tmp_path / "out"))
    monkeypatch.setattr(provenance, "code_version", lambda *a: {"git_commit": "0123abc", "clean": True})
    stage = tmp_path / "stage"
    (stage / "notebooks").mkdir(parents=True)
    shutil.copy(ROOT / "_config.yml", stage / "_config.yml")
    nbformat.write(executed(), str(stage / "notebooks" / "01_theory_witness.ipynb"))
    folder = write_colab_notebooks(stage)
    copy = nbformat.read(folder / "01_theory_witness.ipynb", as_version=4)
    text = "".join(c.source for c in copy.cells if c.cell_type == "markdown")
    assert not MYST_LEFT.search(text) and "On our 5 models, 26.1 % flip" in text
    assert 'COMMIT = "0123abc"' in _colab_cell(copy).source
    assert "{glue:text}" in nbformat.read(stage / "notebooks" / "01_theory_witness.ipynb", as_version=4).cells[0].source


def test_the_colab_model_replaces_only_the_offline_default(monkeypatch):
    monkeypatch.delenv("ATTNCODA_COLAB", raising=False)
    assert colab_model("measurement", "defaults") == "defaults"
    monkeypatch.setenv("ATTNCODA_COLAB", "1")
    assert colab_model("measurement", "defaults") == CHAPTERS["measurement"].colab_model
    assert colab_model("measurement", "./mine") == "./mine"


def _run(*command, **kw):
    done = subprocess.run(command, capture_output=True, text=True, **kw)
    assert done.returncode == 0, f"{command}: {done.stderr[-3000:]}"
    return done


@pytest.mark.slow
def test_every_chapter_runs_its_colab_branch_in_a_bare_environment(tmp_path, monkeypatch):
    import papermill
    from tiny_models import save_tiny, save_tiny_series

    # The repository as Colab would clone it: the committed code, at the commit the page was built from.
    clone = tmp_path / "origin"
    _run("git", "clone", "--quiet", str(ROOT), str(clone))
    commit = _run("git", "-C", str(clone), "rev-parse", "HEAD").stdout.strip()
    # What Colab ships: Python, a Jupyter kernel and torch; nothing of this project.
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", str(venv))
    python = venv / "bin" / "python"
    torch_pin = next(line for line in (ROOT / "requirements.lock").read_text().splitlines() if line.startswith("torch=="))
    _run(str(python), "-m", "pip", "install", "--quiet", "ipykernel", torch_pin, timeout=1800)
    assert subprocess.run([str(python), "-c", "import attncoda"], capture_output=True).returncode != 0
    kernels = tmp_path / "kernels"
    _run(str(python), "-m", "ipykernel", "install", "--prefix", str(kernels), "--name", "colab-bare")
    monkeypatch.setenv("JUPYTER_PATH", str(kernels / "share" / "jupyter"))
    monkeypatch.setenv("ATTNCODA_COLAB", "1")
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.delenv("ATTNCODA_HOME", raising=False)
    (tmp_path / "content").mkdir()
    # An install that was interrupted last time: the checkout folder exists, half made, without the marker written last.
    (tmp_path / "content" / "attncoda-src").mkdir()
    (tmp_path / "content" / "attncoda-src" / "half-cloned").write_text("")

    for chapter in CHAPTERS.values():
        nb = with_colab_cell(nbformat.read(ROOT / "notebooks" / f"{chapter.notebook}.ipynb", as_version=4), str(clone), commit)
        pinned = tmp_path / f"{chapter.notebook}.ipynb"
        nbformat.write(nb, str(pinned))
        params = dict(chapter.small)
        if chapter.series:
            params["model"] = ",".join(str(f) for f in save_tiny_series(chapter.test_family, tmp_path / "series"))
            params["endpoints"] = str(save_tiny("llama", tmp_path / "tiny-endpoint"))  # no offline default is installed in Colab
        elif chapter.per_model:
            params["model"] = str(save_tiny(chapter.test_family, tmp_path / f"tiny-{chapter.key}"))
        workdir = tmp_path / "content"
        papermill.execute_notebook(str(pinned), str(tmp_path / f"out-{chapter.key}.ipynb"), parameters=params, kernel_name="colab-bare",
                                   cwd=str(workdir), progress_bar=False)
    installed = _run(str(python), "-c", "import attncoda, pathlib; print(pathlib.Path(attncoda.__file__).resolve())").stdout
    assert "site-packages" in installed, "the Colab branch installs the package (not an editable path into this checkout)"
    checkout = tmp_path / "content" / "attncoda-src"
    assert (checkout / ".attncoda-installed").exists() and not (checkout / "half-cloned").exists(), "an interrupted install is redone"
    for chapter in CHAPTERS.values():
        if chapter.writes_results:
            found = list((checkout / "_build" / "runs" / chapter.key).glob(f"*/results/{chapter.key}/*.json"))
            assert found, f"chapter {chapter.key} wrote no results in a run folder of the Colab checkout"
    assert not _run("git", "-C", str(checkout), "status", "--porcelain", "--", "data").stdout.strip(), "a Colab run leaves the checkout's record untouched"
    # Each run, as the book's Colab copy of it (attncoda.face.colab_copy): plain CommonMark, its figures attached, and
    # the scorecard's sentence with its numbers.
    from attncoda.face.colab_copy import MYST_LEFT, colab_copy

    for chapter in CHAPTERS.values():
        copy = colab_copy(nbformat.read(tmp_path / f"out-{chapter.key}.ipynb", as_version=4), "https://o.github.io/r")
        text = "\n".join(c.source for c in copy.cells if c.cell_type == "markdown")
        assert not MYST_LEFT.search(text), f"{chapter.key}: MyST left in its Colab copy: {MYST_LEFT.search(text).group(0)}"
        source = "".join("".join(c["source"]) for c in nbformat.read(ROOT / "notebooks" / f"{chapter.notebook}.ipynb", as_version=4).cells)
        for figure in re.findall(r"```\{glue:figure\} (\S+)", source):
            assert f"figure {figure}: not in this run" not in text, f"{chapter.key}: figure {figure} not in its copy"
            assert any(f"{figure}.png" in c.get("attachments", {}) for c in copy.cells) or "<table" in text, f"{chapter.key}: {figure}"
        if chapter.key == "scorecard":
            assert re.search(r"Of \d+ claims about models: ", text), "the scorecard's copy shows its counts"


def _git(*args, cwd):
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def test_the_colab_cell_fetches_one_commit_not_the_history(tmp_path):
    """The cell's download (:data:`~attncoda.face.colab.FETCH_ONE_COMMIT`), run as the cell runs it, against a repository
    whose history holds a 2 MB file the commit no longer has: the checkout is that commit's files, a small share of a
    full clone."""
    import os

    from attncoda.face.colab import FETCH_ONE_COMMIT

    source = tmp_path / "source"
    source.mkdir()
    _git("init", "-q", cwd=source)
    _git("config", "user.email", "t@t", cwd=source)
    _git("config", "user.name", "t", cwd=source)
    (source / "wheel.whl").write_bytes(os.urandom(2_000_000))
    _git("add", ".", cwd=source)
    _git("commit", "-qm", "a large file", cwd=source)
    _git("rm", "-q", "wheel.whl", cwd=source)
    (source / "README.md").write_text("the commit\n")
    _git("add", ".", cwd=source)
    _git("commit", "-qm", "the commit", cwd=source)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=source, capture_output=True, text=True, check=True).stdout.strip()
    checkout = tmp_path / "attncoda-src"
    code = "if True:\n" + FETCH_ONE_COMMIT
    exec(code, {"subprocess": subprocess, "os": os, "checkout": str(checkout), "REPOSITORY": str(source), "COMMIT": commit})
    size = lambda folder: sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    full = tmp_path / "full"
    _git("clone", "-q", str(source), str(full), cwd=tmp_path)
    assert (checkout / "README.md").read_text() == "the commit\n" and not (checkout / "wheel.whl").exists()
    assert size(checkout / ".git") < size(full / ".git") / 10, (size(checkout / ".git"), size(full / ".git"))


def test_the_repository_address_is_configured_or_the_github_remote(tmp_path, capsys):
    from attncoda.face import colab

    root = tmp_path / "checkout"
    root.mkdir()
    _git("init", "-q", cwd=root)
    (root / "_config.yml").write_text(f"repository:\n  url: {colab.PLACEHOLDER}\n")
    colab._WARNED = False
    assert colab.repository_url(root) == colab.PLACEHOLDER and "still the placeholder" in capsys.readouterr().err
    assert colab.repository_url(root) == colab.PLACEHOLDER and capsys.readouterr().err == "", "the warning is said once"
    _git("remote", "add", "origin", "git@github.com:someone/attncoda.git", cwd=root)
    assert colab.repository_url(root) == "https://github.com/someone/attncoda"
    (root / "_config.yml").write_text("repository:\n  url: https://github.com/mine/fork/\n")
    assert colab.repository_url(root) == "https://github.com/mine/fork"
