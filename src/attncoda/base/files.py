"""Files a reader can trust: atomic writes (never half-written) and hashed, frozen JSON."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600 files; give the result ordinary permissions
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_folder(final: Path, fill: Callable[[Path], None]) -> Path:
    """Make the folder ``final`` by calling ``fill(staging)`` on a staging twin beside it, then renaming it into place:
    it exists complete or not at all. An existing ``final`` is returned untouched, and so is one that a parallel job
    finished first."""
    final = Path(final)
    if final.exists():
        return final
    final.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{final.name}.", dir=final.parent))
    try:
        fill(staging)
        os.replace(staging, final)
    except OSError:
        if not final.exists():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def atomic_write_json(path: Path, obj) -> None:
    """Atomically write ``obj`` as indented JSON (keys in insertion order)."""
    atomic_write_bytes(path, (json.dumps(obj, indent=1, allow_nan=True) + "\n").encode())


def json_hash(obj: dict) -> str:
    """SHA-256 of the canonical JSON (sorted keys, no spaces) of every field of ``obj`` but ``sha256``.

    Examples
    --------
    >>> json_hash({"a": 1, "sha256": "ignored"}) == json_hash({"a": 1})
    True
    """
    body = {k: v for k, v in obj.items() if k != "sha256"}
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def write_hashed_json(path: Path, obj: dict) -> str:
    """Atomically write ``obj`` with its own :func:`json_hash` in the field ``sha256``; returns the hash."""
    digest = json_hash(obj)
    atomic_write_json(path, {**{k: v for k, v in obj.items() if k != "sha256"}, "sha256": digest})
    return digest


def read_hashed_json(path: Path, what: str) -> dict:
    """Read a file written by :func:`write_hashed_json`; ValueError if its content no longer matches its hash."""
    data = json.loads(Path(path).read_text())
    if json_hash(data) != data.get("sha256"):
        raise ValueError(f"{path} does not match its recorded sha256; the frozen {what} was modified (restore it with git)")
    return data
