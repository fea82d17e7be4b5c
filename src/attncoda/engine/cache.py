"""The engine's one cache-or-load decision, shared by everything it computes from a model (signatures, head distances).

A model name is resolved once. Every job (e.g. a seed) whose result is in the cache is read from it, with the
model's weights identity known without loading it where possible; the model is loaded once, only when some
job is missing, and each computed result is written atomically under a key that hashes what it depends on.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from ..base.paths import cache_dir, slug, writable_cache


class CachedMeta:
    """The metadata of a cached result, as a dataclass: :meth:`key` gives the fields its cache key hashes (the subclass's
    ``KEY_FIELDS``), :meth:`to_json` the header the cache file stores, :meth:`from_json` reads one back (a field the
    header lacks takes its default; ``NESTED`` names fields that are dataclasses of their own)."""

    KEY_FIELDS: tuple = ()
    NESTED: dict = {}

    def key(self) -> dict:
        return {k: getattr(self, k) for k in self.KEY_FIELDS}

    def to_json(self) -> dict:
        from dataclasses import asdict

        return asdict(self)

    @classmethod
    def from_json(cls, data: dict):
        from dataclasses import fields

        values = {f.name: data[f.name] for f in fields(cls) if f.name in data}
        for name, kind in cls.NESTED.items():
            values[name] = kind(**values[name])
        return cls(**values)


@dataclass(frozen=True)
class WindowedMeta(CachedMeta):
    """The fields every cached reading of a model over text windows shares: the model (its name, weights and facts),
    the windows (``n`` of ``length`` tokens from ``split`` of ``corpus``, drawn by ``seed``), how many went through one
    forward pass, and the version of the computation."""

    model: str
    weights_sha256: str
    corpus: str
    split: str
    n: int
    length: int
    seed: int
    batch_size: int
    protocol: str
    model_info: dict


def key_path(kind: str, meta: dict, fields) -> Path:
    """``$ATTNCODA_CACHE/<kind>/<model>/<hash of meta's fields>.npz``."""
    key = hashlib.sha256(json.dumps({k: meta[k] for k in fields}, sort_keys=True).encode()).hexdigest()
    return cache_dir() / kind / slug(meta["model"]) / f"{key[:24]}.npz"


def holds_its_key(path: Path, kind: str, meta: dict, fields) -> bool:
    """Whether a cache file read from ``path`` is the one its name promises: the key hashed from the metadata stored
    in the file names the same file. Another model's valid file copied there is thereby never used."""
    try:
        return key_path(kind, meta, fields).name == Path(path).name
    except (KeyError, TypeError):
        return False


def identity_without_loading(ref) -> tuple[str, str] | None:
    """``(weights_sha256, default_sink)`` of a resolved model when they can be known without loading it (not for Hub
    ids); a dtype other than float32 (the run setting's ``load_dtype``) is part of the identity, as :func:`~.models.load_model` records it."""
    from .models import loaded_identity

    found = _stored_identity(ref)
    return None if found is None else (loaded_identity(found[0]), found[1])


def _stored_identity(ref) -> tuple[str, str] | None:
    from ..base.checksums import cached_sha256
    from .models import default_sink, folder_checksum
    from .registry import REGISTRY

    if ref.kind == "registry":
        entry = REGISTRY[ref.target]
        return entry.sha256, entry.sink
    if ref.kind == "gguf":
        return cached_sha256(Path(ref.target)), "first"
    if ref.kind == "local":
        from .model_files import read_json_object

        model_type = read_json_object(Path(ref.target) / "config.json").get("model_type")
        return folder_checksum(Path(ref.target)), default_sink(model_type)
    return None


def refuse_when_cache_only(what: str) -> None:
    """Raise CacheError for the lookup ``what`` when the run in effect is cache-only (its setting's ``cache_only``:
    every lookup must find its result, so a chapter run after its plan (:mod:`attncoda.face.plans`) has been computed
    shows that the plan held every lookup the chapter made); do nothing otherwise."""
    from ..base.errors import CacheError
    from ..base.run_setting import current

    if current().cache_only:
        raise CacheError(f"{what} is not in the cache, and this run is cache-only (it may compute nothing); compute the "
                         "chapter's plan first (attncoda book --jobs N), or run without cache_only")


def refuse_odd_entry(path: Path) -> None:
    """CacheError in one line when a folder sits where a cache entry belongs: the result could not be stored there, so
    nothing is computed for it. (A FIFO or socket there is never read, and the atomic write replaces it.)"""
    import stat

    from ..base.errors import CacheError

    try:
        mode = Path(path).stat().st_mode
    except FileNotFoundError:
        return
    except OSError as err:
        raise CacheError(f"the cache entry {path} cannot be inspected ({err.strerror}); remove it, or point $ATTNCODA_CACHE elsewhere") from None
    if stat.S_ISDIR(mode):
        raise CacheError(f"the cache entry {path} is a folder, so no result can be stored there; remove it and run again")


def cache_or_compute(model: str, jobs, path_for: Callable, read: Callable, write: Callable, compute: Callable,
                     loaded=None, refresh: bool = False, ref=None) -> list:
    """One result per job, from the cache or computed.

    ``path_for(job, weights_sha256, default_sink)`` names a job's cache file; ``read(path)`` returns its
    result or None; ``compute(loaded, job)`` makes one and ``write(result, path)`` stores it. ``ref`` is ``model``
    already resolved (:func:`attncoda.engine.selection.choose` resolves a chapter's models once); else it is resolved here.
    """
    from .models import load_model, resolve

    writable_cache()  # a cache that cannot be written fails now, in one line, not after the computation
    found, missed = {}, set()
    ref = (ref or resolve(model)) if loaded is None else None
    identity = identity_without_loading(ref) if ref is not None else None
    if identity is not None and not refresh:
        for job in jobs:
            path = path_for(job, *identity)
            cached = read(path)
            if cached is not None:
                found[job] = cached
            else:
                missed.add(path)  # read once: after the load, the same path is not read (nor a damaged entry named) again
    for job in jobs:
        if job in found:
            continue
        if loaded is None and identity is not None and not refresh:  # a miss known before loading: no conversion, no load
            refuse_when_cache_only(f"{model}: {path_for(job, *identity).parent.parent.name} of seed {job}")
        loaded = loaded or load_model(model, ref)
        path = path_for(job, loaded.info.weights_sha256, loaded.info.default_sink)
        cached = None if refresh or path in missed else read(path)
        if cached is None:
            refuse_when_cache_only(f"{model}: {path.parent.parent.name} of seed {job}")
            refuse_odd_entry(path)
            cached = compute(loaded, job)
            write(cached, path)
        found[job] = cached
    return [found[job] for job in jobs]


class KeyedJson:
    """JSON cache entries that carry their key: ``{"key": …, "result": …}`` at ``<kind>/<model>/<hash of the key>.json``.

    :meth:`read` uses an entry only when the key stored in it hashes to the entry's own path and its result still has
    the SHA-256 written beside it (:func:`result_digest`), so a file copied from another model's or another sample's
    key, an empty ``{}``, a damaged file or an edited result is named on stderr and computed again (``None``), never used. :meth:`path` is ``cache_or_compute``'s ``path_for`` step, and remembers the key for :meth:`write`.
    """

    def __init__(self, kind: str):
        self.kind, self.keys = kind, {}

    def path(self, key: dict) -> Path:
        path = key_path(self.kind, key, tuple(key)).with_suffix(".json")
        self.keys[path] = key
        return path

    def read(self, path: Path):
        import sys

        if not Path(path).exists():
            return None
        data = read_json(path)
        try:
            holds = (isinstance(data, dict) and set(data) == {"key", "result", "sha256"} and self.path(dict(data["key"])) == Path(path)
                     and data["sha256"] == result_digest(data["result"]))
        except (TypeError, ValueError, KeyError, AttributeError):
            holds = False
        if not holds:
            print(f"attncoda: cache entry {path} does not hold what its name promises (damaged, or copied from another key); "
                  "computing it again", file=sys.stderr, flush=True)
            return None
        return data["result"]

    def write(self, result, path: Path) -> None:
        write_json({"key": self.keys[Path(path)], "result": result, "sha256": result_digest(result)}, path)


def result_digest(result) -> str:
    """SHA-256 of a cached result's canonical JSON (sorted keys): what a keyed entry stores beside its result.

    >>> result_digest({"b": 1, "a": [0.5]}) == result_digest({"a": [0.5], "b": 1})
    True
    """
    import hashlib

    return hashlib.sha256(json.dumps(result, sort_keys=True, allow_nan=True).encode()).hexdigest()


def read_json(path: Path):
    """A result cached as JSON, or None when it is missing, not a regular file (a FIFO would block the read forever),
    unreadable or nested beyond Python's recursion limit (then it is computed again)."""
    try:
        if not Path(path).is_file():
            return None
        return json.loads(Path(path).read_text())
    except (OSError, ValueError, RecursionError):
        return None


def write_json(result, path: Path) -> None:
    """Cache a JSON result atomically (an interrupted write leaves no half-written file)."""
    from ..base.files import atomic_write_json

    atomic_write_json(path, result)
