"""Parallel builds: the (chapter, model, seed) jobs behind the book, computed before the chapters run.

``attncoda book --jobs N`` computes every job the chapters will ask the cache for (signatures per model and seed,
the encoders' head distances, the collapse suite's training runs and the defaults' initialized twins) in ``N``
worker processes; ``--scheduler ADDRESS`` sends the same jobs to a Dask distributed cluster. A job returns the
cache files it produced and this process writes them (atomically) into its own cache, so workers on other
machines need no shared disk. The chapters then run one after another and find everything cached, exactly as in
a serial build: their results files are the serial build's, byte for byte (a test checks it).

The jobs are read from the chapters' own parameter cells (and the profile's overrides), so they are the very
computations the chapters will look up. The pruning chapter's perplexity evaluations stay in the chapter.
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
    """One unit of work: ``kind`` is signatures, init_signatures, head_distances or suite_run."""

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
    """Every job the book's chapters will look up in the cache, on their default models, without duplicates."""
    from ..engine.registry import REGISTRY
    from ..engine.training import suite

    jobs: list[Job] = []

    def add(kind, model, seed, **options):
        job = Job(kind, model, int(seed), tuple(sorted(options.items())))
        if job not in jobs:
            jobs.append(job)

    m = _parameters("measurement", profile)
    for name in REGISTRY:
        for seed in m["seeds"]:
            add("signatures", name, seed, n=m["n"], length=m["length"], batch_size=m["batch_size"])
    c = _parameters("collapse", profile)
    for run in suite(c["steps"], tuple(c["suite_seeds"]), c["length"]):
        add("suite_run", run.name, run.seed, size=run.size, steps=run.steps, length=run.length)
    endpoint_models = list(REGISTRY) if c["endpoints"] == "defaults" else [e.strip() for e in c["endpoints"].split(",") if e.strip()]
    for name in endpoint_models:
        add("signatures", name, c["seed"], n=c["n"], length=c["length"], batch_size=c["batch_size"])
        add("init_signatures", name, c["seed"], n=c["n"], length=c["length"], batch_size=c["batch_size"])
    k = _parameters("clustering", profile)
    for name in [n for n, e in REGISTRY.items() if not e.causal]:
        add("head_distances", name, k["seed"], n=k["n"], length=k["length"], batch_size=k["batch_size"])
    for name in REGISTRY:
        add("signatures", name, 0, n=k["signature_n"], length=k["length"], batch_size=8)
    p = _parameters("pruning", profile)
    for name in [n for n, e in REGISTRY.items() if e.causal]:
        for seed in p["seeds"]:
            add("signatures", name, seed, n=p["signature_n"], length=p["length"], batch_size=8)
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

        sig = init_signatures(job.model, 0, job.seed, n=options["n"], length=options["length"], batch_size=options["batch_size"])
        files = [cache_path(sig.meta)]
    elif job.kind == "head_distances":
        from ..engine import head_distances as hd_module

        hd = hd_module.head_distances(job.model, n=options["n"], length=options["length"], seed=job.seed, batch_size=options["batch_size"])
        files = [hd_module.cache_path(hd.meta)]
    elif job.kind == "suite_run":
        from ..engine import training

        run = next(r for r in training.suite(options["steps"], (job.seed,), options["length"]) if r.size == options["size"])
        training.train(run)
        files = sorted(p for p in run.folder().rglob("*") if p.is_file())
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
