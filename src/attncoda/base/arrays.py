"""Arrays: numpy from tensors, and a cache file of named arrays with a JSON header, written atomically and checked against a hash of its arrays."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from .files import atomic_write_bytes


def as_numpy(x) -> np.ndarray:
    """A torch tensor's values (detached, on the CPU) or any array-like, as a numpy array (torch is never imported)."""
    if not hasattr(x, "detach"):
        return np.asarray(x)
    x = x.detach().cpu()
    return (x.float() if str(x.dtype) in ("torch.bfloat16", "torch.float16") else x).numpy()  # numpy has no bfloat16


DIGEST_VERSION = 2
"""The version of :func:`arrays_digest` that :func:`save_arrays` writes (stored as ``digest`` in the header)."""


def arrays_digest(arrays: dict[str, np.ndarray], version: int = DIGEST_VERSION) -> str:
    """SHA-256 over the arrays in name order: each one's name, dtype and shape, then its bytes. Version 1 (files
    written before the dtype and shape were hashed, which a cache may still hold) hashed names and bytes alone, so a
    float32 ``[2, 2]`` and a float32 ``[4]`` of zeros hashed the same.

    >>> a, b = {"x": np.zeros((2, 2), np.float32)}, {"x": np.zeros(4, np.float32)}
    >>> arrays_digest(a) == arrays_digest(b), arrays_digest(a, version=1) == arrays_digest(b, version=1)
    (False, True)
    """
    h = hashlib.sha256()
    for k in sorted(arrays):
        x = np.ascontiguousarray(arrays[k])
        h.update(k.encode())
        if version >= 2:
            h.update(f"|{x.dtype.str}|{x.shape}|".encode())
        h.update(x.tobytes())
    return h.hexdigest()


def save_arrays(path: Path, arrays: dict[str, np.ndarray], header: dict) -> None:
    """Atomically write ``arrays`` and ``header`` (plus the arrays' hash and its version) as one ``.npz`` file."""
    buffer = io.BytesIO()
    full = {**header, "arrays_sha256": arrays_digest(arrays), "digest": DIGEST_VERSION}
    np.savez(buffer, header=np.array(json.dumps(full)), **arrays)
    atomic_write_bytes(path, buffer.getvalue())


def load_arrays(path: Path) -> tuple[dict, dict[str, np.ndarray]] | None:
    """``(header, arrays)`` of a file written by :func:`save_arrays`; None if missing, not a regular file (a FIFO would
    block the read forever), unreadable or damaged."""
    path = Path(path)
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as z:
            header = json.loads(str(z["header"]))
            arrays = {k: z[k] for k in z.files if k != "header"}
    except Exception:  # any damage to the file means: recompute
        return None
    version = header.get("digest", 1)
    if version not in (1, DIGEST_VERSION) or arrays_digest(arrays, version) != header.get("arrays_sha256"):
        return None
    return header, arrays
