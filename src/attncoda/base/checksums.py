"""SHA-256 of files (remembered, so large weights are hashed once) and installed package versions."""

from __future__ import annotations

import json
import os
from importlib import metadata
from pathlib import Path

from .files import atomic_write_json, content_sha256
from .paths import cache_dir


def sha256_file(path: Path) -> str:
    """SHA-256 of a file's bytes, as hex (:func:`~attncoda.base.files.content_sha256`)."""
    return content_sha256(path)


def cached_sha256(path: Path) -> str:
    """SHA-256 of a file, remembered per (path, size, mtime) in the cache folder."""
    path = Path(path).resolve()
    stat = path.stat()
    key = f"{path}|{stat.st_size}|{stat.st_mtime_ns}"
    book = cache_dir() / "checksums.json"
    known = _read_book(book)
    if key not in known:
        known[key] = sha256_file(path)
        atomic_write_json(book, known)
    return known[key]


def _read_book(book: Path) -> dict:
    """The remembered checksums; a damaged file is named on stderr and rebuilt (it only saves time)."""
    if not os.path.lexists(book):
        return {}
    try:
        if book.is_file():  # a FIFO or a device at its path would block the read forever: it is damaged, and replaced
            known = json.loads(book.read_text())
            if isinstance(known, dict) and all(isinstance(v, str) for v in known.values()):
                return known
    except (ValueError, UnicodeDecodeError, RecursionError):
        pass
    import sys

    print(f"attncoda: {book} was damaged; it is rebuilt (the files' SHA-256 are computed again)", file=sys.stderr)
    return {}


def installed_version(distribution: str) -> str | None:
    """The installed version of a distribution, or None."""
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return None
