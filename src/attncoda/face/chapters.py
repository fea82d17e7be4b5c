"""The book's chapters: what each one is (notebook, title, models, plan), and the names a reader may call it by.

Each chapter is a notebook in ``notebooks/`` with one cell tagged ``parameters``. ``run_chapter`` executes it
(:class:`~attncoda.face.chapter_run.ChapterRun`: atomically, a failed or interrupted run never replaces a good
executed copy) into the book's stage when it records the book, and into a run folder of its own otherwise, so an
ordinary rerun never touches the committed record.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..base.errors import ChapterError
from ..base.paths import build_dir, refuse_protected, repo_root, writable_folder
from . import plans

KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]
"""The kernel's own log stays out of the terminal: a cell's error reaches the reader as a ChapterError line, and an
interrupted run ends with one line, not the kernel's complaint that its parent went away."""

QUIET = {"HF_HUB_DISABLE_PROGRESS_BARS": "1", "TRANSFORMERS_VERBOSITY": "error", "PYTHONWARNINGS": "ignore:IProgress not found"}
"""No download or loading progress bars and no advisory warnings from the libraries (the kernel's and the terminal's)."""

KERNEL_QUIET = {**QUIET, "TQDM_DISABLE": "1"}
"""The chapter kernel's environment: besides :data:`QUIET`, no tqdm bar at all (e.g. transformers' GGUF conversion), so
no page shows one; the reader follows progress in the terminal (the run setting's ``progress`` file, :mod:`attncoda.base.run_setting`)."""


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
    writes_results: bool = True  # False: the page only reads other chapters' results (the scorecard, the reproducibility page)
    colab_model: str | None = None  # what the chapter measures in Colab when model is left at its offline default
    part: str = "Pretrained models"  # the part of the book's table of contents it belongs to
    parent: str | None = None  # the chapter whose section it is (a sub-page in the table of contents)
    plan: Callable | None = None  # the cache lookups it makes for its parameters (attncoda.face.plans), for parallel builds
    groups: tuple = ()  # the group words its model parameter accepts besides one model (attncoda.engine.selection)

    def check_model(self, model: str, params: dict) -> None:
        """One ChapterError line, before any kernel starts, if ``model`` is not something this chapter can measure: a
        model chapter takes its group words (:attr:`groups`), one model, or (the measurement pages) a preset; a series
        chapter a checkpoint series; the others only their default."""
        if not self.per_model:
            if model != self.default_model:
                raise ChapterError(f"chapter {self.key!r} does not take a model (it is {self.default_model!r})")
            return
        if model.startswith("preset:"):
            from ..engine.presets import preset

            if "presets" not in self.groups:
                raise ChapterError(f"--preset runs the measurement chapter and its sections; chapter {self.key!r} takes one model at a time")
            preset(model)  # an unknown preset fails here, in one line
        elif model == self.default_model or model in self.groups:
            return
        elif model in GROUP_WORDS:
            accepted = " or ".join(repr(w) for w in (self.default_model, *(g for g in self.groups if g != "presets")))
            raise ChapterError(f"chapter {self.key!r} does not measure the group {model!r}; pass {accepted}, or one model")
        elif self.series:
            from ..engine.checkpoints import check_reachable, series

            check_reachable(series(model, params.get("revisions") or None))  # a bad series fails here, in one line
        else:
            from ..engine.models import resolve

            resolve(model)  # a bad name or path fails here, in one line


GROUP_WORDS = ("defaults", "encoders", "causal", "suite", "synthetic")
"""The words a chapter's model parameter may name a group by (:mod:`attncoda.engine.selection`; ``suite``: the collapse
chapter's own trained models, ``synthetic``: the theory chapters' generated rows)."""


GPT2 = "openai-community/gpt2"
"""The paper's GPT-2, which the model chapters measure in Colab (BERT-base for clustering, Pythia-70M's checkpoints
for collapse: the smallest series of the paper's Figure 5)."""

SCORECARD_PART = "The verdicts"
PARTS = (SCORECARD_PART, "Theory", "Pretrained models", "About this book")
"""The book's parts, in the order of its table of contents. Chapters run in :data:`CHAPTERS` order, so the pages that
read every other chapter's results (the scorecard, the reproducibility page) come last there, wherever they are shown."""

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
            plan=plans.measurement,
            groups=("presets",),
        ),
        *(
            Chapter(key, notebook, title, per_model=True, default_model="defaults",
                    small={"seeds": [0], "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2}, colab_model=GPT2, parent="measurement",
                    plan=plans.measurement, groups=("presets",))
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
            plan=plans.collapse,
        ),
        Chapter(
            "clustering",
            "05_clustering",
            "Head clustering",
            per_model=True,
            default_model="encoders",
            small={"n": 4, "length": 24, "batch_size": 2, "signature_n": 4, "samples": 2, "holdout": 1},
            test_family="bert",
            colab_model="google-bert/bert-base-uncased",
            plan=plans.clustering,
        ),
        Chapter(
            "pruning",
            "06_pruning",
            "Pruning heads",
            per_model=True,
            default_model="causal",
            small={"seeds": [0, 1], "tie_draws": 2, "random_sets": 3, "n_windows": 2, "calibration_windows": 4, "length": 24, "signature_n": 4},
            colab_model=GPT2,
            plan=plans.pruning,
        ),
        Chapter("scorecard", "00_scorecard", "The paper's claims, judged", writes_results=False, part=SCORECARD_PART),
        Chapter("reproducibility", "09_reproducibility", "Reproducibility", writes_results=False, part="About this book"),
    )
}


EXTRA_PAGES = {"About this book": ["book/methods", "book/families", "book/api"]}
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
    ordered = sorted(parts.items(), key=lambda item: PARTS.index(item[0]) if item[0] in PARTS else len(PARTS))
    return {"format": "jb-book", "root": "book/intro", "parts": [{"caption": p, "chapters": cs} for p, cs in ordered]}


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
    resolved = refuse_protected(target, what, ChapterError, record=record, stage=record or stage)
    if resolved.parent == repo_root().resolve():
        raise ChapterError(f"{what} {output or target} would put a notebook loose in the project folder's root; "
                           "choose a folder outside the project, or one of its own (the default is _build/runs)")
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


def note_missing_models(chapter: Chapter, model: str | None, record: bool) -> None:
    """When a chapter runs on its default group of offline models and some of them are not installed: refuse a recorded
    run (the record holds every model), and say so in one line on the terminal otherwise (the chapter measures the rest)."""
    import sys

    from ..engine.registry import REGISTRY
    from ..engine.selection import GROUPS, group_members

    if chapter.default_model not in GROUPS or model not in (None, chapter.default_model):
        return
    group = "defaults" if chapter.default_model == "encoders" else chapter.default_model  # the encoders chapter's Table 5 takes every model
    missing = [name for name in group_members(group) if not REGISTRY[name].installed()]
    if not missing:
        return
    own = group_members(chapter.default_model)
    if all(name in missing for name in own):
        raise ChapterError(f"chapter {chapter.key!r} measures the {chapter.default_model} models ({', '.join(own)}), and none is installed here; "
                           "run `attncoda models --install` (or make models), or pass --model")
    names = ", ".join(missing)
    if record:
        raise ChapterError(f"the book's record of chapter {chapter.key!r} holds every offline model, and {names} "
                           f"{'is' if len(missing) == 1 else 'are'} not installed; run `attncoda models --install` (or make models) first")
    print(f"attncoda: note: {names} {'is' if len(missing) == 1 else 'are'} not installed, so chapter {chapter.key!r} measures the other "
          "offline models only; `attncoda models --install` adds them", file=sys.stderr, flush=True)


def is_book_run(chapter: Chapter, model: str | None, profile: str, parameters: dict, defaults: dict | None = None) -> bool:
    """Whether a run is the one the book records: the chapter's default model, the full profile, and no parameter
    away from the notebook's default (``defaults``: its parameter cell, read from the notebook if not given)."""
    from .parameters import notebook_parameters

    if profile != "full" or model not in (None, chapter.default_model):
        return False
    defaults = defaults if defaults is not None else notebook_parameters(repo_root() / "notebooks" / f"{chapter.notebook}.ipynb")
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
    """Echoes the lines a chapter's kernel writes to its progress file (the run setting's ``progress``) to this terminal, prefixed by the chapter."""

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


def kernel_manager(log: Path):
    """A kernel manager class whose kernel writes its own stderr to ``log`` instead of the terminal: what the kernel
    process itself prints (ipykernel's logging, such as a ZMQ error raised while it shuts down after a failed cell) is
    not the chapter's output, which reaches the page and the terminal through the messaging protocol and
    its progress file. The caller removes the log when the run ends."""
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
