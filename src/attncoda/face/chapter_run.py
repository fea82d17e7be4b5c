"""One run of one chapter, as one object: its parameters (read once from the notebook), where its numbers and its
executed notebook go, the cache lookups it will make, and its execution with papermill.

:meth:`ChapterRun.prepare` checks everything a run depends on before any kernel starts (each problem is one
ChapterError line) and decides where the run writes:

* a run of the book's record (``record=True``) writes ``data/results``: only at the chapter's default model, the full
  profile and default parameters (:func:`~attncoda.face.chapters.is_book_run`);
* any other run writes its notebook and ``results/`` to its own :func:`~attncoda.base.paths.run_folder` (or to the
  ``results_dir`` parameter given, which may not lie inside the record).

:meth:`ChapterRun.execute` runs it atomically: a failed or interrupted run never replaces a good executed copy. The
notebook file is read twice per run: once here for its parameter cell, once by papermill.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass
from pathlib import Path

from ..base.errors import ChapterError
from ..base.paths import refuse_protected, repo_root, writable_folder
from .chapters import Chapter, find_chapter
from .plans import Lookup


@dataclass(frozen=True)
class ChapterRun:
    """A prepared run: ``defaults`` is the notebook's parameter cell, ``injected`` what papermill passes over it (the
    profile's values, the reader's, the model and ``results_dir``), ``target`` the executed notebook's path and
    ``results`` the folder its numbers go to."""

    chapter: Chapter
    notebook: Path
    defaults: dict
    injected: dict
    profile: str
    record: bool
    target: Path
    results: Path
    cache_only: bool = False

    @property
    def parameters(self) -> dict:
        """Every parameter as the notebook's kernel sees it: the defaults with the injected values over them."""
        return {**self.defaults, **self.injected}

    def plan(self) -> list[Lookup]:
        """The cache lookups the chapter makes with these parameters (:mod:`attncoda.face.plans`); with models loaded
        otherwise than in float32 on the CPU, each lookup carries the load options, so it loads as the kernel will."""
        from dataclasses import replace

        from ..base.run_setting import LOAD_FIELDS, RunSetting, using

        setting = RunSetting.from_kernel({k: v for k, v in self.parameters.items() if k in LOAD_FIELDS})
        with using(setting):  # as the kernel will: the collapse suite's runs name the device they train on
            lookups = self.chapter.plan(self.parameters) if self.chapter.plan else []
        load = setting.load_parameters()
        return [replace(lookup, options=tuple(sorted({**dict(lookup.options), **load}.items()))) for lookup in lookups] if load else lookups

    @classmethod
    def prepare(cls, name: str, model: str | None = None, parameters: dict | None = None, output: str | os.PathLike | None = None,
                profile: str = "full", record: bool = False, stage: bool = False, cache_only: bool = False) -> ChapterRun:
        """Check a run's chapter, model, parameters and output before any kernel starts, and decide where it writes.

        ``stage=True`` lets the executed notebook go to the book's stage (``attncoda book`` at another profile or a
        preset, whose numbers go elsewhere). ``cache_only=True`` makes every cache lookup of the chapter find its result
        or fail (its plan computed first)."""
        from ..base.paths import absolute_environment, check_environment_folders, results_dir, run_folder
        from .chapters import _model_from_parameters, is_book_run, note_missing_models, output_path, stage_dir
        from .parameters import check_parameters, notebook_parameters

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
        notebook = root / "notebooks" / f"{chapter.notebook}.ipynb"
        if not notebook.exists():
            raise ChapterError(f"{notebook} is missing; run from the project folder or set ATTNCODA_HOME")
        defaults = notebook_parameters(notebook)  # the run's one read of the notebook; papermill's is the other
        check_parameters(chapter.key, notebook, params, defaults)  # names and types first: nothing below reads an unchecked value
        _check_load(chapter.key, params)
        if model is not None:
            chapter.check_model(model, params)
        if chapter.series and params.get("revisions") and model in (None, chapter.default_model):
            raise ChapterError(f"-p revisions walks a Hub model's checkpoints; the default {chapter.default_model!r} has none (pass --model with a Hub id)")
        if chapter.per_model:
            from ..base.paths import writable_cache

            writable_cache()  # a read-only cache fails here, not after the chapter's computation
        record_folder = results_dir()
        given_results = bool(params.get("results_dir")) and chapter.writes_results and not record
        if record:
            if not is_book_run(chapter, model, profile, params, defaults):
                raise ChapterError(f"--record writes the book's record ({record_folder}), which holds chapter {chapter.key!r} at its default "
                                   "model, the full profile and default parameters only; drop --record (the run gets a folder of its own)")
            folder = stage_dir() / "notebooks"  # no parameter is injected: the page shows the notebook's own defaults
            results = record_folder
        elif params.get("results_dir") and chapter.writes_results:
            folder = refuse_protected(root / "notebooks" / params["results_dir"], "results_dir", ChapterError)  # as the kernel sees it
            writable_folder(folder, "results_dir", "pass another results_dir", ChapterError)
            results = folder
        else:
            seeds = {k: v for k, v in defaults.items() if k in ("seed", "seeds")}  # the folder names the seed used
            folder = run_folder(chapter.key, model if model is not None else chapter.default_model, profile, {**seeds, **params})
            # a chapter that only reads results (the reproducibility page) reads the record
            params.setdefault("results_dir", str(folder / "results") if chapter.writes_results else str(record_folder))
            results = root / "notebooks" / params["results_dir"]  # as the kernel sees it: an absolute path stays itself
        if model is not None:
            params["model"] = model
        if chapter.writes_results and not record:
            advice = ("pass another results_dir" if given_results else
                      "set $ATTNCODA_OUTPUT to a folder you can write (the run folders live there), or pass -p results_dir")
            writable_folder(root / "notebooks" / params["results_dir"], "results_dir" if given_results else "the run folder", advice, ChapterError)
        target = output_path(chapter, output, folder, "results_dir" if given_results else "the run folder", record=record, stage=stage)
        if chapter.per_model:
            note_missing_models(chapter, model, record)
        return cls(chapter, notebook, defaults, params, profile, record, target, Path(results), cache_only)

    def execute(self, progress: bool = True) -> Path:
        """Execute the chapter with papermill and return the executed notebook's path: :attr:`target`, or its first free
        numbered neighbour while another run is writing it (:func:`_claimed`)."""
        target, held = _claimed(self.target)
        try:
            return self._execute_to(target, progress)
        finally:
            held.release()  # after the notebook is in place: no other run wrote this path meanwhile

    def _execute_to(self, target: Path, progress: bool) -> Path:
        """:meth:`execute` once ``target`` is claimed."""
        import papermill
        from papermill.exceptions import PapermillExecutionError

        from ..base.files import remove_stale_twins, staging_prefix
        from ..base.run_setting import PARAMETER, RunSetting
        from .chapters import KERNEL_ARGUMENTS, KERNEL_QUIET, _ProgressEcho, kernel_manager

        root = repo_root()
        remove_stale_twins(target)  # the half-written copies of runs that were killed (SIGKILL) before they could remove them
        partial = target.with_name(staging_prefix(target) + "part.ipynb")
        kernel_log = target.with_name(staging_prefix(target) + "kernel.log")
        env_before = {k: os.environ.get(k) for k in (*KERNEL_QUIET, "ATTNCODA_HOME")}
        os.environ.update(KERNEL_QUIET)
        os.environ["ATTNCODA_HOME"] = str(root)
        echo = _ProgressEcho(self.chapter.key) if progress else None
        # the run's machine fields travel as one injected parameter, read once by the kernel's open_chapter; the executed
        # copy keeps none of it (_write_without_machine_paths)
        setting = RunSetting(record=self.record, progress=str(echo.path) if echo else None, cache_only=self.cache_only,
                             parameter_names=tuple(self.defaults))  # the provenance names every parameter (results.run_parameters)
        injected_setting = _SettingNotUnknown()  # the notebook declares no run_setting: papermill would warn that it is unknown
        logging.getLogger("papermill").addFilter(injected_setting)
        try:
            executed = papermill.execute_notebook(
                str(self.notebook), str(partial), parameters={**self.injected, PARAMETER: setting.machine_fields()}, kernel_name="python3",
                cwd=str(root / "notebooks"),
                progress_bar=progress, extra_arguments=KERNEL_ARGUMENTS, kernel_manager_class=kernel_manager(kernel_log),
            )
        except PapermillExecutionError as err:
            on = f" on model {self.injected['model']!r}" if "model" in self.injected else ""
            kernel_log.unlink(missing_ok=True)
            raise ChapterError(f"chapter {self.chapter.key!r}{on} failed in cell {err.exec_count}: {err.ename}: {err.evalue} "
                               f"(the last good page is kept; the failed run is in {partial})") from None
        except BaseException:  # interrupted or terminated: nothing half-made stays behind
            partial.unlink(missing_ok=True)
            kernel_log.unlink(missing_ok=True)
            raise
        finally:
            logging.getLogger("papermill").removeFilter(injected_setting)
            if echo:
                echo.stop()
            for k, v in env_before.items():
                if v is None:
                    os.environ.pop(k, None)
                else:
                    os.environ[k] = v
        _write_without_machine_paths(executed, partial, root)
        kernel_log.unlink(missing_ok=True)
        os.replace(partial, target)
        return target


class _SettingNotUnknown(logging.Filter):
    """Drops papermill's warning that the injected run setting is an unknown parameter (no notebook declares it: a
    reader never sets it)."""

    def filter(self, record) -> bool:
        from ..base.run_setting import PARAMETER

        return record.getMessage() != f"Passed unknown parameter: {PARAMETER}"


def _check_load(key: str, params: dict) -> None:
    """A bad ``load_dtype`` or ``device_map`` (a dtype this project does not load, a device this machine lacks) is one
    ChapterError line before any kernel starts, not a failure in the chapter's opening cell."""
    from ..base.errors import ModelError
    from ..base.run_setting import LOAD_FIELDS, RunSetting

    try:
        setting = RunSetting.from_kernel({name: params[name] for name in LOAD_FIELDS if name in params})
        if setting.device_map:
            from ..engine.models import check_device_map

            check_device_map(setting.device_map)
    except (ValueError, ModelError) as err:
        raise ChapterError(f"chapter {key!r}: {err}") from None


def _claimed(target: Path) -> tuple:
    """The notebook path this run writes, and its claim (:func:`~attncoda.base.files.claim`): ``target``, or, while
    another run is writing it, the first free ``<name>-2.ipynb``, ``-3`` … beside it, said on the terminal; two runs
    with one ``--output`` never write one file."""
    import sys

    from ..base.files import claim
    from ..base.terminal import visible

    for n in range(1, 1000):
        candidate = target if n == 1 else target.with_name(f"{target.stem}-{n}{target.suffix}")
        held = claim(candidate)
        if held is not None:
            if n > 1:
                print(f"attncoda: note: another run is writing {visible(target)}; this run writes {visible(candidate)}", file=sys.stderr, flush=True)
            return candidate, held
    raise ChapterError(f"999 runs are writing {target} and its numbered neighbours; wait for them, or pass another --output")


def _write_without_machine_paths(executed, path: Path, root: Path) -> None:
    """Write the executed notebook papermill returned to ``path`` with the input and output paths papermill recorded in
    its metadata made relative to the project folder, and without the injected run setting (:func:`without_run_setting`):
    the book's copy, which readers download, names no path of this machine."""
    import json

    executed = without_run_setting(executed)
    meta = executed.get("metadata", {}).get("papermill", {})
    for key in ("input_path", "output_path"):
        if meta.get(key):
            p = Path(meta[key])
            meta[key] = p.relative_to(root).as_posix() if p.is_relative_to(root) else p.name
    path.write_text(json.dumps(executed, indent=1, ensure_ascii=False) + "\n")


def without_run_setting(executed):
    """``executed`` (a notebook as papermill returns it) without the run setting its runner injected: its line in the
    injected-parameters cell (the whole cell when nothing else was injected) and its entry in papermill's metadata.

    Examples
    --------
    >>> nb = {"cells": [{"cell_type": "code", "metadata": {"tags": ["injected-parameters"]},
    ...                  "source": "# Parameters\\nrun_setting = {'record': True}\\n"}], "metadata": {"papermill": {"parameters": {"run_setting": {}}}}}
    >>> out = without_run_setting(nb)
    >>> out["cells"], out["metadata"]["papermill"]["parameters"]
    ([], {})
    """
    import re

    from ..base.run_setting import PARAMETER

    line = re.compile(rf"^{PARAMETER} = .*$\n?", flags=re.M)
    cells = []
    for cell in executed.get("cells", []):
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            source = cell["source"] if isinstance(cell["source"], str) else "".join(cell["source"])
            source = line.sub("", source)
            if not [s for s in source.splitlines() if s.strip() and not s.lstrip().startswith("#")]:
                continue
            cell["source"] = source
        cells.append(cell)
    executed["cells"] = cells
    executed.get("metadata", {}).get("papermill", {}).get("parameters", {}).pop(PARAMETER, None)
    return executed


def run_chapter(name: str, model: str | None = None, parameters: dict | None = None, output: str | os.PathLike | None = None,
                profile: str = "full", progress: bool = True, record: bool = False, stage: bool = False) -> Path:
    """Execute one chapter with papermill and return the executed notebook's path: a :class:`ChapterRun` prepared (every
    check, and where it writes) and executed."""
    return ChapterRun.prepare(name, model, parameters, output, profile, record, stage).execute(progress)
