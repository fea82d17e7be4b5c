"""The book's chapters, and running one with papermill.

Each chapter is a notebook in ``notebooks/`` with one cell tagged ``parameters``.
``run_chapter`` executes it (atomically: a failed or interrupted run never replaces a
good executed copy) into the book's stage when it records the book, and into a run
folder of its own otherwise, so an ordinary rerun never touches the committed record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from ..base.errors import ChapterError
from ..base.files import remove_stale_twins, staging_prefix
from ..base.paths import build_dir, refuse_protected, repo_root, writable_folder
from .results import RECORD_ENV

KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]
"""The kernel's own log stays out of the terminal: a cell's error reaches the reader as a ChapterError line, and an
interrupted run ends with one line, not the kernel's complaint that its parent went away."""

QUIET = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error", "PYTHONWARNINGS": "ignore:IProgress not found"}
"""No download or loading progress bars and no advisory warnings from the libraries (the kernel's and the terminal's)."""

KERNEL_QUIET = {**QUIET, "TQDM_DISABLE": "1"}
"""The chapter kernel's environment: besides :data:`QUIET`, no tqdm bar at all (e.g. transformers' GGUF conversion), so
no page shows one; the reader follows progress in the terminal (``$ATTNCODA_PROGRESS``)."""


@dataclass(frozen=True)
class Chapter:
    key: str
    notebook: str
    title: str
    per_model: bool = False
    default_model: str = "synthetic"
    small: dict = field(default_factory=dict)
    test_family: str = "llama"  # the tiny architecture the notebook test passes as --model
    series: bool = False  # --model names a checkpoint series (a Hub id or a comma-separated list of folders), not one model
    writes_results: bool = True  # False: the chapter only reads other chapters' results (the reproducibility page)
    colab_model: str | None = None  # what the chapter measures in Colab when model is left at its offline default
    part: str = "Pretrained models"  # the part of the book's table of contents it belongs to
    parent: str | None = None  # the chapter whose section it is (a sub-page in the table of contents)
    jobs: str | None = None  # "module:function" giving the cache lookups the chapter makes for its parameters (parallel builds)

    def job_list(self, params: dict) -> list[tuple]:
        """The chapter's ``(kind, model, seed, options)`` cache lookups for ``params`` (its notebook's parameters)."""
        if not self.jobs:
            return []
        import importlib

        module, function = self.jobs.split(":")
        return getattr(importlib.import_module(module), function)(params)


GPT2 = "openai-community/gpt2"
"""The paper's GPT-2, which the model chapters measure in Colab (BERT-base for clustering, Pythia-70M's checkpoints
for collapse: the smallest series of the paper's Figure 5)."""

CHAPTERS: dict[str, Chapter] = {
    c.key: c
    for c in (
        Chapter(
            "theory",
            "01_theory_witness",
            "Theory witness",
            part="Theory",
            small={"n_positions": 2000, "rows_per_layer": 300, "invariance_samples": 300},
        ),
        Chapter(
            "calibration",
            "02_reversal_calibration",
            "Reversal calibration",
            part="Theory",
            small={"n_grid": 5, "n_heads": 30, "n_triples": 2000, "replicates": 1},
        ),
        Chapter(
            "measurement",
            "03_measurement",
            "The multi-model measurement",
            per_model=True,
            default_model="defaults",
            small={"seeds": [0], "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2},
            colab_model=GPT2,
            jobs="attncoda.studies.measurement:jobs",
        ),
        *(
            Chapter(key, notebook, title, per_model=True, default_model="defaults",
                    small={"seeds": [0], "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2}, colab_model=GPT2, parent="measurement",
                    jobs="attncoda.studies.measurement:jobs")
            for key, notebook, title in (
                ("measurement-layers", "03b_layer_collapse", "Layer-wise collapse (Figure 4)"),
                ("measurement-audits", "03c_audits", "Audits (Tables 5-8)"),
                ("measurement-witness", "03d_witness", "A witness triple (Figure 7)"),
            )
        ),
        Chapter(
            "collapse",
            "04_collapse",
            "Entropy collapse across training",
            per_model=True,
            default_model="suite",
            small={"steps": 4, "suite_seeds": [0, 1], "endpoints": "minilm-l6", "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2},
            test_family="gpt_neox",
            series=True,
            colab_model="EleutherAI/pythia-70m",
            jobs="attncoda.studies.collapse_suite:jobs",
        ),
        Chapter(
            "clustering",
            "05_clustering",
            "Head clustering",
            per_model=True,
            default_model="encoders",
            small={"n": 4, "length": 24, "batch_size": 2, "signature_n": 4, "samples": 2},
            test_family="bert",
            colab_model="google-bert/bert-base-uncased",
            jobs="attncoda.studies.clustering:jobs",
        ),
        Chapter(
            "pruning",
            "06_pruning",
            "Pruning heads",
            per_model=True,
            default_model="causal",
            small={"seeds": [0, 1], "tie_draws": 2, "random_sets": 3, "n_windows": 2, "calibration_windows": 4, "length": 24, "signature_n": 4},
            colab_model=GPT2,
            jobs="attncoda.studies.pruning:jobs",
        ),
        Chapter("reproducibility", "09_reproducibility", "Reproducibility", writes_results=False, part="About this book"),
    )
}


EXTRA_PAGES = {"About this book": ["book/methods", "book/api"]}
"""Pages of the book that are not chapters (no notebook runs for them), by the part they end."""


def toc_from_registry() -> dict:
    """The book's table of contents (``_toc.yml``) as :data:`CHAPTERS` orders and groups it: parts in order of first
    appearance, each chapter with its sections (the chapters naming it as ``parent``)."""
    parts: dict[str, list] = {}
    for c in CHAPTERS.values():
        if c.parent is None:
            sections = [{"file": f"notebooks/{s.notebook}"} for s in CHAPTERS.values() if s.parent == c.key]
            parts.setdefault(c.part, []).append({"file": f"notebooks/{c.notebook}", **({"sections": sections} if sections else {})})
    for part, pages in EXTRA_PAGES.items():
        parts.setdefault(part, []).extend({"file": page} for page in pages)
    return {"format": "jb-book", "root": "book/intro", "parts": [{"caption": p, "chapters": cs} for p, cs in parts.items()]}


def page_number(notebook: str) -> str:
    """The number a chapter's page carries in the book, from its notebook's name: ``03_measurement`` is 3, and a
    section's letter counts from b (``03b_…`` is 3.1, ``03c_…`` 3.2).

    Examples
    --------
    >>> page_number("01_theory_witness"), page_number("03b_layer_collapse"), page_number("03d_witness")
    ('1', '3.1', '3.3')
    """
    prefix = notebook.split("_", 1)[0]
    digits, letter = prefix.rstrip("abcdefghij"), prefix[len(prefix.rstrip("abcdefghij")):]
    return f"{int(digits)}.{ord(letter) - ord('a')}" if letter else str(int(digits))


def find_chapter(name: str) -> Chapter:
    """Look a chapter up by key (``theory``), its page's number in the book (``1``, ``3.1``), its file's number (``01``,
    ``3b``, ``03b``) or its notebook's name: every name the book, the command line and the files give a chapter."""
    wanted = name.removesuffix(".ipynb").lower()
    for c in CHAPTERS.values():
        prefix = c.notebook.split("_", 1)[0]
        if wanted in (c.key, c.notebook, prefix, prefix.lstrip("0"), page_number(c.notebook)):
            return c
    raise ChapterError(f"unknown chapter {name!r}; known: {', '.join(CHAPTERS)}")


def stage_dir() -> Path:
    """Where the book is assembled from (sources plus executed notebooks)."""
    return build_dir() / "stage"


def output_path(chapter: Chapter, output: str | os.PathLike | None, folder: Path, what: str = "--output", record: bool = False,
                stage: bool = False) -> Path:
    """Where the executed notebook goes: ``output`` (a folder gets ``<notebook>.ipynb`` inside it), else ``folder``
    (``what`` names where that folder came from, for the error). Checked before any kernel starts: a ChapterError in one
    line if it lies in the project's sources, record or stage (:func:`~attncoda.base.paths.refuse_protected`; the stage
    only for a ``record`` run or the book's own ``stage``) or cannot be written."""
    what = "--output" if output else what
    target = Path(os.path.abspath(os.path.expanduser(str(output)))) if output else folder / f"{chapter.notebook}.ipynb"
    if target.is_dir() or (output and str(output).endswith(("/", os.sep))):
        target = target / f"{chapter.notebook}.ipynb"
    if target.suffix != ".ipynb":
        raise ChapterError(f"--output {output} must be a notebook path ending in .ipynb, or a folder")
    refuse_protected(target, what, ChapterError, record=record, stage=record or stage)
    writable_folder(target.parent, what, "choose another", ChapterError)
    return target


def _model_from_parameters(chapter: Chapter, model, parameters: dict):
    """``-p model X`` is the same as ``--model X``: one model, a string."""
    if "model" not in parameters:
        return model
    given = parameters.pop("model")
    if model is not None:
        raise ChapterError("pass the model once: --model or -p model, not both")
    if not isinstance(given, str) or not given:
        raise ChapterError(f"chapter {chapter.key!r}: parameter model = {given!r} must be a model name, folder or file (a string)")
    return given


GROUPS = {"defaults": lambda m: True, "encoders": lambda m: True, "causal": lambda m: m.causal}
"""The offline models a chapter's default group measures (the encoders chapter's Table 5 takes every model)."""


def note_missing_models(chapter: Chapter, model: str | None, record: bool) -> None:
    """When a chapter runs on its default group of offline models and some of them are not installed: refuse a recorded
    run (the record holds every model), and say so in one line on the terminal otherwise (the chapter measures the rest)."""
    import sys

    from ..engine.registry import REGISTRY

    group = GROUPS.get(chapter.default_model)
    if group is None or model not in (None, chapter.default_model):
        return
    missing = [m.name for m in REGISTRY.values() if group(m) and not m.installed()]
    if not missing:
        return
    names = ", ".join(missing)
    if record:
        raise ChapterError(f"the book's record of chapter {chapter.key!r} holds every offline model, and {names} "
                           f"{'is' if len(missing) == 1 else 'are'} not installed; run `attncoda models --install` (or make models) first")
    print(f"attncoda: note: {names} {'is' if len(missing) == 1 else 'are'} not installed, so chapter {chapter.key!r} measures the other "
          "offline models only; `attncoda models --install` adds them", file=sys.stderr, flush=True)


def is_book_run(chapter: Chapter, model: str | None, profile: str, parameters: dict) -> bool:
    """Whether a run is the one the book records: the chapter's default model, the full profile, and no parameter
    away from the notebook's default."""
    from .parameters import notebook_parameters

    if profile != "full" or model not in (None, chapter.default_model):
        return False
    defaults = notebook_parameters(repo_root() / "notebooks" / f"{chapter.notebook}.ipynb")
    return all(defaults.get(k) == v for k, v in parameters.items())


PROGRESS_PREFIX = "attncoda-progress-"


def remove_stale_progress_logs() -> int:
    """Remove the progress logs (``attncoda-progress-<pid>-*.log`` in the system's temporary folder) of runs whose
    process is gone (killed before it could remove its own); returns how many."""
    import tempfile

    from ..base.files import process_alive

    removed = 0
    for log in Path(tempfile.gettempdir()).glob(f"{PROGRESS_PREFIX}*.log"):
        pid = log.name[len(PROGRESS_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
            log.unlink(missing_ok=True)
            removed += 1
    return removed


class _ProgressEcho:
    """Echoes the lines a chapter's kernel writes to ``$ATTNCODA_PROGRESS`` to this terminal, prefixed by the chapter."""

    def __init__(self, key: str):
        import tempfile
        import threading

        remove_stale_progress_logs()
        fd, name = tempfile.mkstemp(prefix=f"{PROGRESS_PREFIX}{os.getpid()}-", suffix=".log")
        os.close(fd)
        self.path, self.key = Path(name), key
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._follow, daemon=True)
        self.thread.start()

    def _follow(self) -> None:
        with open(self.path, encoding="utf-8") as f:
            while True:
                line = f.readline()
                if line:
                    print(f"  [{self.key}] {line.rstrip()}", flush=True)
                elif self.done.is_set():
                    return
                else:
                    self.done.wait(0.5)

    def stop(self) -> None:
        self.done.set()
        self.thread.join(timeout=5)
        self.path.unlink(missing_ok=True)


def run_chapter(
    name: str,
    model: str | None = None,
    parameters: dict | None = None,
    output: str | os.PathLike | None = None,
    profile: str = "full",
    progress: bool = True,
    record: bool = False,
    stage: bool = False,
) -> Path:
    """Execute one chapter with papermill and return the executed notebook's path.

    Where its numbers go is decided here, before any kernel starts:

    * ``record=True`` writes the book's record (``data/results``): only at the chapter's default model, the full
      profile and default parameters (:func:`is_book_run`), as ``attncoda book`` and ``attncoda run --record`` do;
    * any other run writes its notebook and ``results/`` to its own :func:`~attncoda.base.paths.run_folder` (or to
      the ``results_dir`` parameter given, which may not lie inside the record).

    ``stage=True`` lets the executed notebook go to the book's stage (``attncoda book`` at another profile or a preset,
    whose numbers go elsewhere). Every parameter, the model and the output path are checked first; each problem is one
    ChapterError line.
    """
    import papermill
    from papermill.exceptions import PapermillExecutionError

    from ..base.paths import results_dir, run_folder
    from ..base.progress import ENV as progress_env

    from ..base.paths import absolute_environment, check_environment_folders

    chapter = find_chapter(name)
    absolute_environment()  # the kernel runs in notebooks/: a relative $ATTNCODA_CACHE would name another folder there
    check_environment_folders(ChapterError)
    if profile not in ("full", "small"):
        raise ChapterError(f"unknown profile {profile!r}; use 'full' or 'small'")
    given = dict(parameters or {})
    model = _model_from_parameters(chapter, model, given)
    params = dict(chapter.small) if profile == "small" else {}
    params.update(given)
    root = repo_root()
    source = root / "notebooks" / f"{chapter.notebook}.ipynb"
    if not source.exists():
        raise ChapterError(f"{source} is missing; run from the project folder or set ATTNCODA_HOME")
    from .parameters import check_parameters

    check_parameters(chapter.key, source, params)  # names and types first: nothing below reads an unchecked value
    if model is not None:
        if not chapter.per_model and model != chapter.default_model:
            raise ChapterError(f"chapter {chapter.key!r} does not take a model (it is {chapter.default_model!r})")
        if model.startswith("preset:"):
            from ..engine.presets import preset

            if not chapter.key.startswith("measurement"):
                raise ChapterError(f"--preset runs the measurement chapter and its sections; chapter {chapter.key!r} takes one model at a time")
            preset(model)  # an unknown preset fails here, in one line
        elif model != chapter.default_model and chapter.series:
            from ..engine.checkpoints import check_reachable, series

            # a bad series fails here, in one line, before a kernel starts
            check_reachable(series(model, params.get("revisions") or None))
        elif model != chapter.default_model:
            from ..engine.models import resolve

            resolve(model)  # a bad name or path fails here, in one line, before a kernel starts
    if chapter.series and params.get("revisions") and model in (None, chapter.default_model):
        raise ChapterError(f"-p revisions walks a Hub model's checkpoints; the default {chapter.default_model!r} has none (pass --model with a Hub id)")
    if chapter.per_model:
        from ..base.paths import writable_cache

        writable_cache()  # a read-only cache fails here, not after the chapter's computation
    record_folder = results_dir()
    given_results = bool(params.get("results_dir")) and chapter.writes_results and not record
    if record:
        if not is_book_run(chapter, model, profile, params):
            raise ChapterError(f"--record writes the book's record ({record_folder}), which holds chapter {chapter.key!r} at its default "
                               "model, the full profile and default parameters only; drop --record (the run gets a folder of its own)")
        folder = stage_dir() / "notebooks"  # no parameter is injected: the page shows the notebook's own defaults
    elif params.get("results_dir") and chapter.writes_results:
        given = root / "notebooks" / params["results_dir"]  # as the kernel sees it (its folder is notebooks/); absolute stays absolute
        folder = refuse_protected(given, "results_dir", ChapterError)
        writable_folder(folder, "results_dir", "pass another results_dir", ChapterError)
    else:
        from .parameters import notebook_parameters

        seeds = {k: v for k, v in notebook_parameters(source).items() if k in ("seed", "seeds")}  # the folder names the seed used
        folder = run_folder(chapter.key, model if model is not None else chapter.default_model, profile, {**seeds, **params})
        # a chapter that only reads results (the reproducibility page) reads the record
        params.setdefault("results_dir", str(folder / "results") if chapter.writes_results else str(record_folder))
    if model is not None:
        params["model"] = model
    if chapter.writes_results and not record:
        writable_folder(root / "notebooks" / params["results_dir"], "results_dir", "pass another results_dir", ChapterError)
    target = output_path(chapter, output, folder, "results_dir" if given_results else "the run folder", record=record, stage=stage)
    if chapter.per_model:
        note_missing_models(chapter, model, record)
    remove_stale_twins(target)  # the half-written copies of runs that were killed (SIGKILL) before they could remove them
    partial = target.with_name(staging_prefix(target) + "part.ipynb")
    kernel_log = target.with_name(staging_prefix(target) + "kernel.log")
    env_before = {k: os.environ.get(k) for k in (*KERNEL_QUIET, "ATTNCODA_HOME", progress_env, RECORD_ENV)}
    os.environ.update(KERNEL_QUIET)
    os.environ["ATTNCODA_HOME"] = str(root)
    if record:
        os.environ[RECORD_ENV] = "1"
    else:
        os.environ.pop(RECORD_ENV, None)  # inherited from nowhere: only a recorded run writes the record
    echo = _ProgressEcho(chapter.key) if progress else None
    if echo:
        os.environ[progress_env] = str(echo.path)
    try:
        papermill.execute_notebook(
            str(source), str(partial), parameters=params, kernel_name="python3", cwd=str(root / "notebooks"), progress_bar=progress,
            extra_arguments=KERNEL_ARGUMENTS, kernel_manager_class=kernel_manager(kernel_log),
        )
    except PapermillExecutionError as err:
        on = f" on model {params['model']!r}" if "model" in params else ""
        kernel_log.unlink(missing_ok=True)
        raise ChapterError(f"chapter {chapter.key!r}{on} failed in cell {err.exec_count}: {err.ename}: {err.evalue} "
                           f"(the last good page is kept; the failed run is in {partial})") from None
    except BaseException:  # interrupted or terminated: nothing half-made stays behind
        partial.unlink(missing_ok=True)
        kernel_log.unlink(missing_ok=True)
        raise
    finally:
        if echo:
            echo.stop()
        for k, v in env_before.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    _forget_machine_paths(partial, root)
    kernel_log.unlink(missing_ok=True)
    os.replace(partial, target)
    return target


def kernel_manager(log: Path):
    """A kernel manager class whose kernel writes its own stderr to ``log`` instead of the terminal: what the kernel
    process itself prints (ipykernel's logging, such as a ZMQ error raised while it shuts down after a failed cell) is
    not the chapter's output, which reaches the page and the terminal through the messaging protocol and
    ``$ATTNCODA_PROGRESS``. The caller removes the log when the run ends."""
    from jupyter_client.manager import AsyncKernelManager

    class QuietKernelManager(AsyncKernelManager):
        async def _async_pre_start_kernel(self, **kw):
            command, kw = await super()._async_pre_start_kernel(**kw)
            self.stderr_sink = open(log, "ab")
            kw["stderr"] = self.stderr_sink
            return command, kw

        async def _async_post_start_kernel(self, **kw):
            await super()._async_post_start_kernel(**kw)
            self.stderr_sink.close()  # the kernel process holds its own descriptor

    return QuietKernelManager


def _forget_machine_paths(notebook: Path, root: Path) -> None:
    """Papermill records the absolute input and output paths in the executed notebook's metadata; the book's copy
    (which readers download) keeps them relative to the project folder."""
    import json

    nb = json.loads(notebook.read_text())
    meta = nb.get("metadata", {}).get("papermill", {})
    for key in ("input_path", "output_path"):
        if meta.get(key):
            path = Path(meta[key])
            meta[key] = path.relative_to(root).as_posix() if path.is_relative_to(root) else path.name
    notebook.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
