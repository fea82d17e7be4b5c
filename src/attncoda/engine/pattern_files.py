"""Attention patterns saved to a file, for ``attncoda audit --patterns``: a reader who holds attention (from bertviz,
TransformerLens or hooks of their own) but cannot rerun the model.

Two formats are read, and never a pickle (unpickling a file runs the code it names):

* ``.npz``, numpy's archive, opened with ``allow_pickle=False``;
* ``.safetensors``.

The file holds one ``[layer, head, query, key]`` or ``[window, layer, head, query, key]`` array (under any name,
or named ``patterns`` beside others), or a TransformerLens cache's ``blocks.{l}.attn.hook_pattern`` arrays, one per
layer. :func:`attncoda.engine.patterns.signatures_from_patterns` checks what they hold: rank, rows that sum to one,
finite values, no weight on later keys in a causal file.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .patterns import TL_PATTERN

SUFFIXES = (".npz", ".safetensors")
MAX_VALUES = 1 << 29
"""Most values one file may declare over its arrays (2 GiB as float32, half a billion: 64 windows × 12 layers × 12 heads
of 1,024² keys is a third of it); checked from the headers, before anything is read."""
KINDS = "f"
"""The dtype kinds a file's patterns may have: real floating point (probabilities); text, records, complex numbers and
byte-sized types numpy cannot do arithmetic in are refused before they are read."""
NAMES = ("patterns", "attention", "attentions")
"""Names under which the array is found when a file holds other arrays beside it."""


def read_patterns(path: str | Path):
    """The patterns saved in ``path``: one array, or a mapping of ``blocks.{l}.attn.hook_pattern`` arrays.

    Raises ValueError in one line for a file that is missing, not a regular file, of another format, damaged, or
    holding no array it can tell is the patterns.
    """
    path = check_file(path)
    suffix = path.suffix.lower()
    try:
        declared = _npz_headers(path) if suffix == ".npz" else _safetensors_headers(path)
    except (ValueError, OSError, EOFError, KeyError, RuntimeError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise ValueError(f"--patterns {path} cannot be read as {suffix} ({reason}); save the patterns again with numpy.savez or safetensors") from None
    check_declared(declared, path)
    try:
        arrays = _npz(path) if suffix == ".npz" else _safetensors(path)
    except (ValueError, OSError, EOFError, KeyError, RuntimeError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "allow_pickle" in reason or "Object arrays" in reason:
            reason = "it holds Python objects, which only a pickle can restore"
        raise ValueError(f"--patterns {path} cannot be read as {suffix} ({reason}); save the patterns again as numeric arrays") from None
    return pick(arrays, path)


def check_file(path) -> Path:
    """``path`` when it is a regular file of a format attncoda reads (ValueError in one line otherwise)."""
    from ..base.files import regular_file

    path = Path(path)
    if not path.exists() and not path.is_symlink():
        raise ValueError(f"--patterns {path}: no such file")
    regular_file(path, "--patterns", "pass a saved .npz or .safetensors file")
    if path.suffix.lower() not in SUFFIXES:
        raise ValueError(f"--patterns {path}: attncoda reads .npz or .safetensors files, never a pickle (loading one runs code); "
                         "save the patterns with numpy.savez or safetensors' save_file")
    return path


def _npz_headers(path: Path) -> dict:
    """``{name: (shape, dtype)}`` of every array in an .npz archive, read from the headers alone (no array is inflated)."""
    import zipfile

    with open(path, "rb") as f:
        if f.read(6) == b"\x93NUMPY":
            raise ValueError("it is a bare .npy array, not an .npz archive")
    declared = {}
    try:
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                with archive.open(info) as member:
                    version = np.lib.format.read_magic(member)
                    read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                    shape, _, dtype = read(member)
                declared[info.filename.removesuffix(".npy")] = (tuple(shape), np.dtype(dtype))
    except zipfile.BadZipFile as err:
        raise ValueError(f"not a zip archive: {err}") from None
    return declared


def _safetensors_headers(path: Path) -> dict:
    """``{name: (shape, dtype name)}`` of every tensor in a .safetensors file, from its header alone."""
    from safetensors import SafetensorError, safe_open

    try:
        with safe_open(str(path), "pt") as f:
            return {k: (tuple(f.get_slice(k).get_shape()), f.get_slice(k).get_dtype()) for k in f.keys()}
    except SafetensorError as err:
        raise ValueError(str(err)) from None


def floating(dtype) -> bool:
    """Whether a declared dtype holds real floating-point numbers (numpy's, or a safetensors name such as ``BF16``).

    >>> floating(np.dtype("float32")), floating("BF16"), floating(np.dtype("complex64")), floating("F8_E4M3"), floating(np.dtype("<U3"))
    (True, True, False, False, False)
    """
    if isinstance(dtype, np.dtype):
        return dtype.kind in KINDS and dtype.fields is None and dtype.itemsize >= 2
    return str(dtype) in ("F16", "BF16", "F32", "F64")


def check_declared(declared: dict, path) -> None:
    """Refuse a file by what its headers declare, before an array is read (ValueError in one line): no array, a dtype
    that is not real floating point, or more values than :data:`MAX_VALUES`."""
    if not declared:
        raise ValueError(f"--patterns {path} holds no arrays")
    chosen = pick(declared, path) if not any(TL_PATTERN.fullmatch(k) for k in declared) else {
        k: v for k, v in declared.items() if TL_PATTERN.fullmatch(k)}
    items = chosen.items() if isinstance(chosen, dict) else [("patterns", chosen)]
    for name, (shape, dtype) in items:
        if isinstance(dtype, np.dtype) and dtype.hasobject:
            raise ValueError(f"--patterns {path} cannot be read as .npz (it holds Python objects, which only a pickle can restore); save the "
                             "patterns again as numeric arrays")
        if not floating(dtype):
            raise ValueError(f"--patterns {path}: array {name} holds {dtype}, not real floating-point probabilities; save the softmax output "
                             "as float16, bfloat16, float32 or float64")
        ranks = (4,) if isinstance(chosen, dict) else (4, 5)
        if len(shape) not in ranks:
            raise ValueError(f"--patterns {path}: attention patterns must be [layer, head, query, key] or [window, layer, head, query, key]; "
                             f"got shape {shape}" if ranks == (4, 5) else
                             f"--patterns {path}: {name} must be a (window, head, query, key) array; got shape {shape}")
        if shape[-1] != shape[-2]:
            raise ValueError(f"--patterns {path}: patterns must be square (query = key positions); got {shape[-2]} queries and {shape[-1]} keys")
    values = sum(int(np.prod(shape, dtype=object)) for shape, _ in declared.values())
    if values > MAX_VALUES:
        raise ValueError(f"--patterns {path} declares {values:,} values, more than the {MAX_VALUES:,} attncoda reads from one file; save "
                         "fewer windows in each file and pass every file")


def _npz(path: Path) -> dict:
    import zipfile

    try:
        with np.load(path, allow_pickle=False) as archive:
            if not hasattr(archive, "files"):  # a bare .npy renamed .npz
                raise ValueError("it is not an .npz archive")
            return {name: archive[name] for name in archive.files}
    except zipfile.BadZipFile as err:
        raise ValueError(f"not a zip archive: {err}") from None


def _safetensors(path: Path) -> dict:
    from safetensors import SafetensorError
    from safetensors.torch import load_file

    try:
        return load_file(str(path))
    except SafetensorError as err:
        raise ValueError(str(err)) from None


def pick(arrays: dict, path: Path | str = "the file"):
    """The patterns among a file's ``arrays``: the TransformerLens blocks, the only array, or the one named as in
    :data:`NAMES` (ValueError in one line otherwise).

    >>> pick({"x": np.zeros((1, 1, 2, 2))}).shape
    (1, 1, 2, 2)
    >>> sorted(pick({"blocks.0.attn.hook_pattern": 0, "blocks.1.attn.hook_pattern": 1, "tokens": 2}))
    ['blocks.0.attn.hook_pattern', 'blocks.1.attn.hook_pattern']
    >>> pick({"a": 0, "b": 1}, "f.npz")
    Traceback (most recent call last):
    ...
    ValueError: --patterns f.npz holds 2 arrays (a, b) and none is named patterns; save one [layer, head, query, key] or [window, layer, head, query, key] array, or name it patterns
    """
    if not arrays:
        raise ValueError(f"--patterns {path} holds no arrays")
    blocks = {k: v for k, v in arrays.items() if TL_PATTERN.fullmatch(k)}
    if blocks:
        return blocks
    if len(arrays) == 1:
        return next(iter(arrays.values()))
    for name in NAMES:
        if name in arrays:
            return arrays[name]
    names = ", ".join(sorted(arrays)[:5]) + (", …" if len(arrays) > 5 else "")
    raise ValueError(f"--patterns {path} holds {len(arrays)} arrays ({names}) and none is named patterns; save one [layer, head, query, key] "
                     "or [window, layer, head, query, key] array, or name it patterns")
