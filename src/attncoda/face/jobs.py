"""Parallel builds: the (chapter, model, seed) jobs behind the book, computed before the chapters run.

``attncoda book --jobs N`` computes every job the chapters will ask the cache for (signatures per model and seed,
the encoders' head distances, the collapse suite's training runs and the defaults' initialized twins) in ``N``
worker processes; ``--scheduler ADDRESS`` sends the same jobs to a Dask distributed cluster. A job returns the
cache files it produced and this process writes them (atomically) into its own cache, so workers on other
machines need no shared disk. The chapters then run one after another and find everything cached, exactly as in
a serial build: their results files are the serial build's, byte for byte (a test checks it).

Each chapter of the registry names the function that lists its lookups (``Chapter.jobs``: e.g.
:func:`attncoda.studies.collapse_suite.jobs`), which shares its choice of models and runs with the chapter's own code;
it is called with the chapter's parameter cell (and the profile's overrides), so the jobs are the very computations
the chapters will look up. The pruning chapter's perplexity evaluations stay in the chapter.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path

from ..base.files import atomic_write_bytes
from ..base.paths import cache_dir, repo_root


@dataclass(frozen=True)
class Job:
    """One unit of work: ``kind`` is signatures, init_signatures, head_distances or suite_run (its options are the
    :class:`~attncoda.engine.training.SuiteRun`'s fields)."""

    kind: str
    model: str
    seed: int = 0
    options: tuple = ()  # (name, value) pairs, sorted

    def label(self) -> str:
        return f"{self.kind} {self.model} seed {self.seed}"


def _parameters(key: str, profile: str) -> dict:
    from .chapters import CHAPTERS
    from .parameters import notebook_parameters

    chapter = CHAPTERS[key]
    params = notebook_parameters(repo_root() / "notebooks" / f"{chapter.notebook}.ipynb")
    return {**params, **(chapter.small if profile == "small" else {})}


def plan(profile: str = "full") -> list[Job]:
    """Every cache lookup the book's chapters make on their default parameters (each chapter's own ``jobs``, the
    function its code computes them with), without duplicates."""
    from .chapters import CHAPTERS

    jobs: list[Job] = []
    for chapter in CHAPTERS.values():
        for kind, model, seed, options in chapter.job_list(_parameters(chapter.key, profile)):
            job = Job(kind, model, int(seed), tuple(sorted(options.items())))
            if job not in jobs:
                jobs.append(job)
    return jobs


def run_job(job: Job, threads: int | None = None) -> dict[str, bytes]:
    """Compute one job (or find it cached) and return its cache files as ``{path relative to the cache: bytes}``."""
    from ..engine import set_threads

    if threads:
        set_threads(threads)
    options = dict(job.options)
    if job.kind == "signatures":
        from ..engine.signatures import cache_path, signature_sets

        sig = signature_sets(job.model, (job.seed,), n=options["n"], length=options["length"], batch_size=options["batch_size"])[0]
        files = [cache_path(sig.meta)]
    elif job.kind == "init_signatures":
        from ..engine.initialization import init_signatures
        from ..engine.signatures import cache_path

        sig = init_signatures(job.model, options.get("init_seed", 0), job.seed, n=options["n"], length=options["length"],
                              batch_size=options["batch_size"])
        files = [cache_path(sig.meta)]
    elif job.kind == "head_distances":
        from ..engine import head_distances as hd_module

        hd = hd_module.head_distances(job.model, n=options["n"], length=options["length"], seed=job.seed, batch_size=options["batch_size"])
        files = [hd_module.cache_path(hd.meta)]
    elif job.kind == "suite_run":
        from ..engine import training

        run = training.SuiteRun(**options)
        training.train(run)
        files = sorted(p for p in run.folder().rglob("*") if p.is_file())
        if run.task == "text":
            files.append(training.tokenizer_folder(run.vocab, run.corpus))
    else:
        raise ValueError(f"unknown job kind {job.kind!r}")
    root = cache_dir()
    out = {}
    for f in files:
        for path in (sorted(p for p in f.rglob("*") if p.is_file()) if f.is_dir() else [f]):
            if not path.exists():
                raise RuntimeError(f"job {job.label()} reported {path}, which is not in the cache")
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def store(files: dict[str, bytes]) -> int:
    """Write a job's cache files into this machine's cache (atomically, each only if missing); a checkpoint's
    ``training.json``, which marks it complete, is written after its weights. Returns how many were written."""
    from ..base.errors import ChapterError
    from ..base.paths import is_inside

    root, written = cache_dir(), 0
    for rel in files:  # a worker names files relative to the cache: nothing it returns is written outside it
        if Path(rel).is_absolute() or ".." in Path(rel).parts or not is_inside(root / rel, root):
            raise ChapterError(f"a job returned the file {rel!r}, which lies outside the cache; nothing of that job was written")
    for rel in sorted(files, key=lambda r: (Path(r).parent.as_posix(), Path(r).name == "training.json", r)):
        target = root / rel
        if target.exists():
            continue
        atomic_write_bytes(target, files[rel])
        written += 1
    return written


def _threads(jobs: int) -> int:
    return max(1, (os.cpu_count() or 1) // jobs)


def run_all(jobs: list[Job], workers: int = 1, scheduler: str | None = None) -> dict:
    """Run ``jobs`` on ``workers`` local processes, or on the Dask cluster at ``scheduler``; returns timings."""
    from ..base.progress import Steps

    started = time.perf_counter()
    steps = Steps(f"precomputing {len(jobs)} jobs", len(jobs))
    done = 0
    if scheduler:
        from ..base.errors import ChapterError

        try:
            from distributed import Client, as_completed
        except ImportError:
            raise ChapterError("--scheduler needs dask's distributed package: pip install 'attncoda[cluster]'") from None
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as err:
            raise ChapterError(f"cannot reach the Dask scheduler at {scheduler} ({err}); start one with `dask scheduler`, or drop --scheduler") from None
        with client:
            futures = {client.submit(run_job, job, None, pure=False, key=f"attncoda-{i}-{job.kind}"): job for i, job in enumerate(jobs)}
            for future in as_completed(futures):
                store(future.result())
                done += 1
                print(f"  job {done}/{len(jobs)}: {futures[future].label()}", flush=True)
                steps.step(done)
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed as completed

        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            futures = {pool.submit(run_job, job, _threads(workers)): job for job in jobs}
            for future in completed(futures):
                store(future.result())
                done += 1
                print(f"  job {done}/{len(jobs)}: {futures[future].label()}", flush=True)
                steps.step(done)
    return {"jobs": len(jobs), "seconds": time.perf_counter() - started}
