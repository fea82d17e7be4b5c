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


def arrays_digest(arrays: dict[str, np.ndarray]) -> str:
    """SHA-256 over the arrays' names and bytes, in name order."""
    h = hashlib.sha256()
    for k in sorted(arrays):
        h.update(k.encode())
        h.update(np.ascontiguousarray(arrays[k]).tobytes())
    return h.hexdigest()


def save_arrays(path: Path, arrays: dict[str, np.ndarray], header: dict) -> None:
    """Atomically write ``arrays`` and ``header`` (plus the arrays' hash) as one ``.npz`` file."""
    buffer = io.BytesIO()
    full = {**header, "arrays_sha256": arrays_digest(arrays)}
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
    if arrays_digest(arrays) != header.get("arrays_sha256"):
        return None
    return header, arrays
