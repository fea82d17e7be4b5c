"""Files a reader can trust: atomic writes (never half-written) and hashed, frozen JSON."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable


def staging_prefix(final: Path) -> str:
    """The name prefix of a staging twin of ``final``: ``.<name>.<pid>.``, so that a later run can tell a twin whose
    process is gone (killed mid-write) from one still being written, and remove it (:func:`remove_stale_twins`)."""
    return f".{Path(final).name}.{os.getpid()}."


def process_alive(pid: int) -> bool:
    """Whether a process with this id exists (one of another user's counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def remove_stale_twins(final: Path) -> int:
    """Remove the staging files and folders of ``final`` left by killed processes; returns how many were removed."""
    final = Path(final)
    removed = 0
    if not final.parent.is_dir():
        return 0
    for twin in final.parent.glob(f".{final.name}.*"):
        pid = twin.name[len(final.name) + 2:].split(".", 1)[0]
        if pid.isdigit() and int(pid) != os.getpid() and not process_alive(int(pid)):
            if twin.is_dir():
                shutil.rmtree(twin, ignore_errors=True)
            else:
                twin.unlink(missing_ok=True)
            removed += 1
    return removed


def claim(final: Path):
    """Claim ``final``: hold its lock (:class:`filelock.FileLock`, the operating system's file lock, taken without
    waiting). Returns the held lock (release it when the write is done), or None while another holder has it. A process
    that dies, however it dies, lets its lock go with it, so no claim outlives its run.

    The lock file is named by a hash of ``final``'s real path (links resolved) in a folder of this user's in the system's
    temporary folder: nothing is left beside ``final``, and no lock file is ever removed (removing one while another
    process opens it would let two hold it). A folder of that name that another user made is refused (OSError)."""
    from filelock import FileLock, Timeout

    folder = Path(tempfile.gettempdir()) / f"attncoda-claims-{os.getuid()}"
    folder.mkdir(mode=0o700, exist_ok=True)
    if folder.stat().st_uid != os.getuid() or folder.is_symlink():
        raise OSError(f"{folder} belongs to another user; remove it, or set TMPDIR to a folder of your own")
    name = hashlib.sha256(os.path.realpath(final).encode()).hexdigest()[:32]
    lock = FileLock(folder / f"{name}.lock")
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return None
    return lock


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it into place."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=staging_prefix(path), suffix=".part", dir=path.parent)
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
    remove_stale_twins(final)  # a conversion killed mid-way left its staging folder: it is never trusted, and goes now
    staging = Path(tempfile.mkdtemp(prefix=staging_prefix(final), dir=final.parent))
    try:
        fill(staging)
        os.replace(staging, final)
    except OSError:
        if not final.exists():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return final


def undefined_as_null(value):
    """``value`` with every NaN or infinite float (numpy's included) replaced by None, so that it is strict JSON.

    Examples
    --------
    >>> undefined_as_null({"rate": float("nan"), "runs": [1.5, float("inf")], "n": 3})
    {'rate': None, 'runs': [1.5, None], 'n': 3}
    """
    import math

    if isinstance(value, dict):
        return {k: undefined_as_null(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [undefined_as_null(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:  # a numpy scalar
        return undefined_as_null(value.item())
    return value


def atomic_write_json(path: Path, obj, strict: bool = False) -> None:
    """Atomically write ``obj`` as indented JSON (keys in insertion order). ``strict``: an undefined number (NaN,
    ±inf) is written as ``null``, so that strict parsers (browsers among them) read the file."""
    text = json.dumps(undefined_as_null(obj), indent=1, allow_nan=False) if strict else json.dumps(obj, indent=1, allow_nan=True)
    atomic_write_bytes(path, (text + "\n").encode())


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


def regular_file(path, what: str, advice: str, error=ValueError) -> os.stat_result:
    """``path``'s status when it is a regular file (links followed); ``error`` in one line naming ``what`` and ``advice``
    when it is missing, a folder, a FIFO (a read would block forever) or a device. The one check before every input read."""
    import stat

    try:
        info = os.stat(path)
    except OSError as err:
        raise error(f"{what} {path}: {err.strerror.lower() if err.strerror else 'cannot be read'}; {advice}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "FIFO" if stat.S_ISFIFO(info.st_mode) else "device" if (
            stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)) else "special file"
        raise error(f"{what} {path} is a {kind}, not a regular file; {advice}")
    return info


def read_regular(path, what: str, advice: str, cap: int = 1 << 28, error=ValueError) -> bytes:
    """The bytes of ``path`` (:func:`regular_file` first), at most ``cap`` of them (``error`` in one line beyond)."""
    info = regular_file(path, what, advice, error)
    if info.st_size > cap:
        raise error(f"{what} {path} is {info.st_size:,} bytes, more than the {cap:,} it may have; {advice}")
    with open(path, "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise error(f"{what} {path} holds more than {cap:,} bytes; {advice}")
    return data


def content_sha256(path) -> str:
    """The SHA-256 of a file's bytes, as hex (:func:`hashlib.file_digest`: read in blocks)."""
    with open(path, "rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()
