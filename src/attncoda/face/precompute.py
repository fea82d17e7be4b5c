"""Parallel builds: every chapter's plan (:mod:`attncoda.face.plans`), computed before the chapters run.

``attncoda book --jobs N`` computes every cache lookup the chapters will make (signatures per model and seed, the
encoders' head distances, the endpoints' entropy terms, the collapse suite's training runs and the defaults'
initialized twins) in ``N`` worker processes; ``--scheduler ADDRESS`` sends the same lookups to a Dask distributed
cluster. A worker returns the cache files it produced and this process writes them (atomically) into its own cache,
so workers on other machines need no shared disk. The chapters then run one after another and find everything
cached, exactly as in a serial build: their results files are the serial build's, byte for byte (a test checks it).

Each chapter's plan is that of its run as the book build prepares it (:class:`~attncoda.face.chapter_run.ChapterRun`,
:func:`attncoda.face.book.book_plan`), so the lookups are the very computations the chapters will make.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from ..base.files import atomic_write_bytes
from ..base.paths import cache_dir
from .plans import Lookup


def union(plans) -> list[Lookup]:
    """The lookups of several plans, each once, in the order first named."""
    return list(dict.fromkeys(lookup for plan in plans for lookup in plan))


def run_lookup(lookup: Lookup, threads: int | None = None) -> dict[str, bytes]:
    """Compute one lookup (or find it cached) and return its cache files as ``{path relative to the cache: bytes}``. A
    lookup whose options carry ``load_dtype`` or ``device_map`` (:meth:`~attncoda.face.chapter_run.ChapterRun.plan`)
    loads its model so, as the chapter's kernel will."""
    from ..base import run_setting

    options = dict(lookup.options)
    load = {name: options.pop(name) for name in run_setting.LOAD_FIELDS if name in options}
    with run_setting.using(run_setting.RunSetting(**load)):  # the lookup's own, whatever the worker's process holds
        return _run_lookup(lookup, options, threads)


def _run_lookup(lookup: Lookup, options: dict, threads: int | None) -> dict[str, bytes]:
    from ..engine import set_threads

    if threads:
        set_threads(threads)
    if lookup.kind == "signatures":
        from ..engine.signatures import cache_path, signature_sets

        sig = signature_sets(lookup.model, (lookup.seed,), n=options["n"], length=options["length"], batch_size=options["batch_size"])[0]
        files = [cache_path(sig.meta)]
    elif lookup.kind == "init_signatures":
        from ..engine.initialization import init_signatures
        from ..engine.signatures import cache_path

        sig = init_signatures(lookup.model, options.get("init_seed", 0), lookup.seed, n=options["n"], length=options["length"],
                              batch_size=options["batch_size"])
        files = [cache_path(sig.meta)]
    elif lookup.kind == "head_distances":
        from ..engine import head_distances as hd_module

        hd = hd_module.head_distances(lookup.model, n=options["n"], length=options["length"], seed=lookup.seed, batch_size=options["batch_size"])
        files = [hd_module.cache_path(hd.meta)]
    elif lookup.kind == "entropy_terms":
        from ..engine.entropy_terms import cache_path, entropy_terms
        from ..engine.signatures import SignatureSpec

        spec = SignatureSpec(n=options["n"], length=options["length"], batch_size=options["batch_size"])
        entropy_terms(lookup.model, lookup.seed, options.get("init_seed"), spec)
        files = [cache_path(lookup.model, lookup.seed, options.get("init_seed"), spec)]
    elif lookup.kind == "suite_run":
        from ..engine import training
        from ..studies.collapse_suite import Options, monitored_training

        watch = {k: options.pop(f"monitor_{k}") for k in ("n", "length", "seed")}
        run = training.SuiteRun(**options)
        monitored_training(run, Options(**watch))
        files = sorted(p for p in run.folder().rglob("*") if p.is_file())
        if run.task == "text":
            files.append(training.tokenizer_folder(run.vocab, run.corpus))
    else:
        raise ValueError(f"unknown lookup kind {lookup.kind!r}")
    root = cache_dir()
    out = {}
    for f in files:
        for path in (sorted(p for p in f.rglob("*") if p.is_file()) if f.is_dir() else [f]):
            if not path.exists():
                raise RuntimeError(f"lookup {lookup.label()} reported {path}, which is not in the cache")
            out[str(path.relative_to(root))] = path.read_bytes()
    return out


def store(files: dict[str, bytes]) -> int:
    """Write a lookup's cache files into this machine's cache (atomically, each only if missing); a checkpoint's
    ``training.json``, which marks it complete, is written after its weights. Returns how many were written."""
    from ..base.errors import ChapterError
    from ..base.paths import is_inside

    root, written = cache_dir(), 0
    for rel in files:  # a worker names files relative to the cache: nothing it returns is written outside it
        if Path(rel).is_absolute() or ".." in Path(rel).parts or not is_inside(root / rel, root):
            raise ChapterError(f"a worker returned the file {rel!r}, which lies outside the cache; nothing of that lookup was written")
    for rel in sorted(files, key=lambda r: (Path(r).parent.as_posix(), Path(r).name == "training.json", r)):
        target = root / rel
        if target.exists():
            continue
        atomic_write_bytes(target, files[rel])
        written += 1
    return written


def alone_first(lookups: list[Lookup]) -> tuple[list[Lookup], list[Lookup]]:
    """``(training runs, the rest)``: on one machine the collapse suite's runs are trained one at a time, before the
    other lookups start. Two runs trained at once on a 2-core machine took 3.4× [2.6, 4.5] as long as one after the
    other (``benchmarks/parallel_training.sh``: ``gpt2-1x1``, 3 rounds, 95 % t interval of the log ratio). And one of
    them sometimes left the bits of the run trained alone from its first step (always the same other bits, cause not
    yet found): a serial build's record would not match them."""
    training = [lookup for lookup in lookups if lookup.kind == "suite_run"]
    return training, [lookup for lookup in lookups if lookup.kind != "suite_run"]


def _threads(workers: int) -> int:
    return max(1, (os.cpu_count() or 1) // workers)


def connect(scheduler: str):
    """A Dask ``Client`` for the scheduler at ``scheduler``, or ChapterError in one line when distributed is missing
    or nobody answers within 10 s. ``attncoda book`` calls it before planning, so a wrong address costs no work."""
    from ..base.errors import ChapterError

    try:
        from distributed import Client
    except ImportError:
        raise ChapterError("--scheduler needs dask's distributed package: pip install 'attncoda[cluster]'") from None
    try:
        return Client(scheduler, timeout="10s")
    except (OSError, TimeoutError) as err:
        raise ChapterError(f"cannot reach the Dask scheduler at {scheduler} ({err}); start one with `dask scheduler`, or drop --scheduler") from None


def run_all(lookups: list[Lookup], workers: int = 1, scheduler: str | None = None, client=None) -> dict:
    """Compute ``lookups`` on ``workers`` local processes, or on the Dask cluster at ``scheduler`` (through
    ``client`` when one is already connected); returns ``{"lookups": how many, "seconds": wall time}``."""
    from ..base.progress import Steps

    started = time.perf_counter()
    steps = Steps(f"precomputing {len(lookups)} lookups", len(lookups))
    done = 0

    def keep(files: dict[str, bytes], lookup: Lookup) -> None:
        nonlocal done
        store(files)
        done += 1
        print(f"  lookup {done}/{len(lookups)}: {lookup.label()}", flush=True)
        steps.step(done)

    if scheduler or client is not None:
        from distributed import as_completed

        client = client if client is not None else connect(scheduler)
        with client:
            futures = {client.submit(run_lookup, lookup, None, pure=False, key=f"attncoda-{i}-{lookup.kind}"): lookup
                       for i, lookup in enumerate(lookups)}
            for future in as_completed(futures):
                keep(future.result(), futures[future])
    else:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed as completed

        training, rest = alone_first(lookups)
        with ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn")) as pool:
            for lookup in training:  # one at a time, each awaited before the next starts (see alone_first)
                keep(pool.submit(run_lookup, lookup).result(), lookup)
            futures = {pool.submit(run_lookup, lookup, _threads(workers)): lookup for lookup in rest}
            for future in completed(futures):
                keep(future.result(), futures[future])
    return {"lookups": len(lookups), "seconds": time.perf_counter() - started}
