"""Build the website: run every chapter with papermill, then render the executed copies with Jupyter Book."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from .chapters import CHAPTERS, ChapterError, stage_dir
from ..base.paths import build_dir, repo_root, slug


def stage_sources() -> Path:
    """Copy the book's configuration and prose pages into the stage (the notebooks are written there by runs)."""
    root, stage = repo_root(), stage_dir()
    stage.mkdir(parents=True, exist_ok=True)
    for name in ("_config.yml", "_toc.yml"):
        shutil.copy2(root / name, stage / name)
    if (stage / "book").exists():
        shutil.rmtree(stage / "book")
    shutil.copytree(root / "book", stage / "book")
    methods = stage / "book" / "methods.md"
    if methods.exists():
        methods.write_text(fill_constants(methods.read_text()))
    return stage


CONSTANT = re.compile(r"⟨([A-Za-z_][\w.]*)(?::(%|range))?⟩")
"""A constant named in a prose page: ``⟨NAME⟩`` (of :mod:`attncoda.base.protocol`) or ``⟨module.path.NAME⟩`` (of the
package), with an optional format: ``:%`` (a share as a percentage) or ``:range`` (a sequence's first and last)."""


def constant_text(name: str, form: str | None = None) -> str:
    """The value of the constant ``name`` as a page shows it (see :data:`CONSTANT`); a ChapterError names a constant
    that does not exist.

    Examples
    --------
    >>> constant_text("DEFAULT_EPS"), constant_text("SEEDS"), constant_text("SPARSITIES", "%"), constant_text("N_TRIPLES")
    ('1e-06', '0, 1, 2', '10 %, 20 %, 30 %', '50,000')
    """
    import importlib

    module, _, attribute = ("base.protocol." + name if "." not in name else name).rpartition(".")
    try:
        owner = importlib.import_module(f"attncoda.{module}")
    except ImportError:
        owner, _, cls = module.rpartition(".")
        owner = getattr(importlib.import_module(f"attncoda.{owner}"), cls, None)
    if owner is None or not hasattr(owner, attribute):
        raise ChapterError(f"the methods page names a constant {name!r} that the package does not have; fix book/methods.md")
    value = getattr(owner, attribute)

    def one(x) -> str:
        if form == "%":
            return f"{100 * x:g} %"
        if isinstance(x, int) and not isinstance(x, bool):
            return f"{x:,}"
        return f"{x:g}" if isinstance(x, float) else str(x)

    if isinstance(value, (tuple, list)):
        return f"{one(value[0])} to {one(value[-1])}" if form == "range" else ", ".join(one(x) for x in value)
    return one(value)


def fill_constants(text: str) -> str:
    """A prose page with each :data:`CONSTANT` marker replaced by the constant's value."""
    return CONSTANT.sub(lambda m: constant_text(m.group(1), m.group(2)), text)


COLAB_BRANCH = "colab"
"""The repository branch the publishing workflow pushes ``_build/colab`` to; the Colab buttons open notebooks there."""


LATEST = "latest"
"""The folder of the colab branch that holds the newest build's copies (the README's badge opens it)."""


def write_colab_notebooks(stage: Path) -> Path | None:
    """Write each chapter's Colab copy, with the Colab cell pinned to this commit inserted
    (:func:`~attncoda.face.colab.with_colab_cell`), to ``_build/colab/<commit>/notebooks/``: the page's executed
    notebook, its Markdown in plain CommonMark (:func:`~attncoda.face.colab_copy.colab_copy`), so that Colab shows the
    page's numbers and figures before anything runs (the source notebook where the page holds no run). Insert
    the same cell into the staged executed copies (each page's download), and point the staged book's Colab buttons at
    them (branch :data:`COLAB_BRANCH`, folder ``<commit>``). The same copies go to ``_build/colab/latest/``: a stable
    address for the newest build (the README's Colab badge), replaced by each build.

    Only from a clean tree (the pinned commit must hold the code that ran); otherwise nothing is written and the buttons
    open the notebooks on ``main``, as committed (without the cell: a build of uncommitted changes has no commit Colab
    could install).
    """
    import re

    import nbformat

    from ..base.provenance import code_version
    from .colab import repository_url, with_colab_cell
    from .colab_copy import book_address, colab_copy, glue_store

    version = code_version()
    commit = version.get("git_commit") if version.get("clean") else None
    if commit is None:
        print("the package or notebooks have uncommitted changes: the Colab buttons open the notebooks on main", flush=True)
        return None
    folder = build_dir() / "colab" / commit / "notebooks"
    folder.mkdir(parents=True, exist_ok=True)
    url = repository_url()
    for chapter in CHAPTERS.values():
        staged = stage / "notebooks" / f"{chapter.notebook}.ipynb"  # the page's download: the same commit as its button
        source = repo_root() / "notebooks" / f"{chapter.notebook}.ipynb"
        executed = nbformat.read(str(staged), as_version=4) if staged.exists() else None
        if executed is not None and glue_store(executed):  # Colab's copy: the run that built the page, in plain CommonMark
            colab = colab_copy(executed, book_address(url))
        else:
            colab = nbformat.read(str(source), as_version=4) if source.exists() else None
        if colab is not None:
            nbformat.write(with_colab_cell(colab, url, commit), str(folder / f"{chapter.notebook}.ipynb"))
        if executed is not None:
            nbformat.write(with_colab_cell(executed, url, commit), str(staged))
    latest = build_dir() / "colab" / LATEST
    shutil.rmtree(latest, ignore_errors=True)
    shutil.copytree(folder.parent, latest)
    config = stage / "_config.yml"
    text = re.sub(r"^(  branch:).*$", rf"\1 {COLAB_BRANCH}", config.read_text(), count=1, flags=re.M)
    config.write_text(re.sub(r'^(  path_to_book:).*$', rf'\1 "{commit}"', text, count=1, flags=re.M))
    return folder


def footer_text(version: dict) -> str:
    """The line under every page: the package version and, from a clean tree, the commit the pages were built from,
    and where the citation lives (``CITATION.cff``).

    >>> footer_text({"attncoda": "0.1.0", "git_commit": "0123456789abcdef", "clean": True})
    'attncoda 0.1.0, commit 0123456789ab. Cite it with CITATION.cff in the repository.'
    >>> footer_text({"attncoda": "0.1.0", "git_commit": "0123456789abcdef", "clean": False})
    'attncoda 0.1.0, built from uncommitted changes. Cite it with CITATION.cff in the repository.'
    >>> footer_text({"attncoda": "0.1.0"})  # an install with no git checkout
    'attncoda 0.1.0, commit unknown. Cite it with CITATION.cff in the repository.'
    >>> footer_text({"attncoda": "0.1.0", "git_commit": "0123456789abcdef", "clean": True, "git_describe": "v0.1.0"})
    'attncoda 0.1.0, tag v0.1.0, commit 0123456789ab. Cite it with CITATION.cff in the repository.'
    >>> footer_text({"attncoda": "0.1.0", "git_commit": "0123456789abcdef", "clean": True, "git_describe": "v0.1.0-3-g0123456789ab"})
    'attncoda 0.1.0, 3 commits after tag v0.1.0, commit 0123456789ab. Cite it with CITATION.cff in the repository.'
    """
    import re

    commit = version.get("git_commit")
    built = f"commit {commit[:12]}" if commit and version.get("clean") else "built from uncommitted changes" if commit else "commit unknown"
    described = re.fullmatch(r"(v\d[^\s]*?)(?:-(\d+)-g[0-9a-f]+)?", version.get("git_describe") or "")
    if described and commit:
        tag, since = described.groups()
        built = (f"{since} commit{'s' if since != '1' else ''} after tag {tag}, " if since else f"tag {tag}, ") + built
    return f"attncoda {version.get('attncoda') or 'unknown'}, {built}. Cite it with CITATION.cff in the repository."


def write_footer(stage: Path) -> None:
    """Put :func:`footer_text` in the staged ``_config.yml`` (``html.extra_footer``), so every page names the version
    and commit its numbers come from."""
    import json

    from ..base.provenance import code_version

    config = stage / "_config.yml"
    line = f"  extra_footer: {json.dumps('<p>' + footer_text(code_version()) + '</p>')}\n"
    config.write_text(config.read_text().replace("html:\n", "html:\n" + line, 1))


def _jupyter_book() -> str:
    beside = Path(sys.executable).with_name("jupyter-book")
    found = str(beside) if beside.exists() else shutil.which("jupyter-book")
    if not found:
        raise ChapterError("jupyter-book is not installed; run `make book` (it installs everything into .venv)")
    return found


GLUE_MIME = "application/papermill.record/"
"""The MIME prefix of a glued value's output: the page shows it where the prose names it, never under its cell."""


def shows_output(cell) -> bool:
    """Whether a code cell's outputs put anything on the page: not when the cell is tagged ``remove-output`` or every
    output is a glued value (``application/papermill.record/*``) or empty."""
    if "remove-output" in cell.get("metadata", {}).get("tags", []):
        return False
    for output in cell.get("outputs", []):
        if output.get("output_type") == "stream" and output.get("text"):
            return True
        if any(not mime.startswith(GLUE_MIME) for mime in output.get("data", {})) or output.get("output_type") == "error":
            return True
    return False


def fold_silent_cells(notebook: Path) -> int:
    """In an executed notebook of the stage, a ``hide-input`` code cell that shows no output becomes ``remove-input``:
    the page would otherwise show a "Show code cell source" bar over nothing (the code stays in the downloadable and
    Colab notebooks). Returns how many cells changed; a second call changes none."""
    import nbformat

    nb = nbformat.read(str(notebook), as_version=4)
    folded = 0
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        if cell.cell_type == "code" and "hide-input" in tags and not shows_output(cell):
            cell.metadata["tags"] = ["remove-input" if t == "hide-input" else t for t in tags]
            folded += 1
    if folded:
        nbformat.write(nb, str(notebook))
    return folded


INPUTS = ("data/calibration/curves.json", "data/predictor/frozen.json", "data/predictor/v2.json", "data/paper/reference.json")
"""Committed inputs a chapter reads; a change to any of them reruns every chapter."""


def chapter_key(chapter, model: str | None, profile: str, parameters: dict | None = None) -> str:
    """What an executed chapter depends on: its notebook, model, profile and parameters, the source of every package
    module the notebook can run (:func:`~attncoda.base.provenance.reachable_modules` of its imports) and the committed
    inputs.

    An executed copy whose key is unchanged (and whose results files exist) is reused instead of rerun.
    """
    from ..base.provenance import closure_sha256, notebook_imports

    root = repo_root()
    notebook = root / "notebooks" / f"{chapter.notebook}.ipynb"
    h = hashlib.sha256()
    h.update(notebook.read_bytes())
    source = closure_sha256(notebook_imports(notebook))
    h.update(json.dumps({"model": model, "profile": profile, "parameters": parameters or {}, "source": source}, sort_keys=True).encode())
    for name in INPUTS:
        path = root / name
        h.update(path.read_bytes() if path.exists() else b"-")
    return h.hexdigest()


def book_results(profile: str, preset: str | None, load: dict | None = None) -> Path | None:
    """Where a book build's chapters write their numbers: None for the book's record (the full profile, no preset, models
    loaded as the record loads them), else a folder of that build's own under ``_build/runs``."""
    if profile == "full" and not preset and not load:
        return None
    name = f"book-{profile}" + (f"-{preset}" if preset else "") + "".join(f"-{value}" for _, value in sorted((load or {}).items()))
    return build_dir() / "runs" / slug(name) / "results"


def book_parameters(profile: str, preset: str | None, load: dict | None = None, chapter=None) -> dict:
    """The parameters a book build passes a chapter: none for the record, else its own ``results_dir`` (relative to
    the kernel's folder, notebooks/, so the page's injected parameters name no path of this machine); a model chapter
    also gets ``load`` (``load_dtype``, ``device_map``: ``attncoda book --dtype --device-map``)."""
    own_results = book_results(profile, preset, load)
    given = {"results_dir": os.path.relpath(own_results, repo_root() / "notebooks")} if own_results else {}
    return {**given, **(load or {})} if chapter is None or chapter.per_model else given


def book_runs(profile: str = "full", preset: str | None = None, load: dict | None = None, cache_only: bool = False) -> dict:
    """Every chapter's run as a book build makes it (:class:`~attncoda.face.chapter_run.ChapterRun`, prepared: checked,
    with where it writes), by chapter key: the record at the full profile without a preset or load options, else
    :func:`book_results`; with ``preset``, the measurement pages measure that preset's models."""
    from .chapter_run import ChapterRun

    stage = stage_dir()
    return {c.key: ChapterRun.prepare(c.key, model=f"preset:{preset}" if preset and c.key.startswith("measurement") else None,
                                      parameters=book_parameters(profile, preset, load, c), output=stage / "notebooks" / f"{c.notebook}.ipynb",
                                      profile=profile, record=book_results(profile, preset, load) is None, stage=True, cache_only=cache_only)
            for c in CHAPTERS.values()}


def book_plan(profile: str = "full", preset: str | None = None, load: dict | None = None) -> list:
    """Every cache lookup a book build's chapters make (:func:`book_runs`' plans, :mod:`attncoda.face.plans`), each once."""
    from .precompute import union

    return union(r.plan() for r in book_runs(profile, preset, load).values())


def build_book(profile: str = "full", run: bool = True, strict: bool = True, preset: str | None = None, reuse: bool = True,
               jobs: int = 1, scheduler: str | None = None, load: dict | None = None, cache_only: bool = False) -> Path:
    """Run every chapter (unless ``run`` is False), then build ``_build/html``; returns its path.

    At the full profile without a preset the chapters write the book's record (``data/results``); a small or
    preset build writes to :func:`book_results` instead. A chapter whose :func:`chapter_key` matches its last
    executed copy is not rerun (``reuse=False`` reruns everything). With ``preset``, the measurement chapter
    measures that preset's models instead of the defaults. With ``jobs`` > 1 worker processes or a Dask ``scheduler``,
    the chapters' plans are computed in parallel first (:mod:`attncoda.face.precompute`). ``load`` (``load_dtype``,
    ``device_map``) loads the models otherwise, into a folder of the build's own; ``cache_only`` lets no chapter compute
    (each cache lookup must find its result). Prints each chapter's time and the total.
    """
    from ..base.paths import results_dir

    started = time.perf_counter()
    stage = stage_sources()
    client = None
    if run and scheduler:
        from .precompute import connect

        client = connect(scheduler)  # a wrong address is one line before any chapter is planned
    runs = book_runs(profile, preset, load, cache_only) if run else {}
    if run and (jobs > 1 or scheduler):
        from .precompute import run_all, union

        done = run_all(union(r.plan() for r in runs.values()), workers=jobs, scheduler=scheduler, client=client)
        print(f"precomputed {done['lookups']} cache lookups in {done['seconds']:.0f} s ({'Dask at ' + scheduler if scheduler else f'{jobs} processes'})",
              flush=True)
    own_results = book_results(profile, preset, load)
    for chapter in CHAPTERS.values():
        executed = stage / "notebooks" / f"{chapter.notebook}.ipynb"
        if run:
            prepared = runs[chapter.key]
            key = chapter_key(chapter, prepared.injected.get("model"), profile, book_parameters(profile, preset, load, chapter))
            stamp = executed.with_suffix(".key")
            has_results = any((Path(own_results or results_dir()) / chapter.key).glob("*.json"))
            summary_page = not chapter.writes_results  # it reads every other chapter's results: always rerun (seconds)
            if reuse and not summary_page and executed.exists() and has_results and stamp.exists() and stamp.read_text() == key:
                print(f"chapter {chapter.key}: unchanged (notebook, parameters, package source, inputs), its executed copy is reused", flush=True)
                continue
            t0 = time.perf_counter()
            print(f"chapter {chapter.key}: running {chapter.notebook}", flush=True)
            stamp.unlink(missing_ok=True)
            prepared.execute()
            stamp.write_text(key)
            print(f"chapter {chapter.key}: done in {time.perf_counter() - t0:.0f} s", flush=True)
        elif not executed.exists():
            raise ChapterError(f"{executed} has not been executed yet; run without --no-run")
    for chapter in CHAPTERS.values():
        fold_silent_cells(stage / "notebooks" / f"{chapter.notebook}.ipynb")
    write_colab_notebooks(stage)
    write_footer(stage)
    command = [_jupyter_book(), "build", str(stage), "--path-output", str(build_dir().parent), "--builder", "html"]
    if strict:
        command += ["--warningiserror", "--keep-going"]
    done = subprocess.run(command)
    if done.returncode != 0:
        raise ChapterError(f"jupyter-book build failed (exit {done.returncode}); its messages are above")
    print(f"book built in {time.perf_counter() - started:.0f} s", flush=True)
    return build_dir().parent / "_build" / "html"
