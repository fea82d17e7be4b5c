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
NAMES = ("patterns", "attention", "attentions")
"""Names under which the array is found when a file holds other arrays beside it."""


def read_patterns(path: str | Path):
    """The patterns saved in ``path``: one array, or a mapping of ``blocks.{l}.attn.hook_pattern`` arrays.

    Raises ValueError in one line for a file that is missing, not a regular file, of another format, damaged, or
    holding no array it can tell is the patterns.
    """
    path = Path(path)
    if not path.exists():
        raise ValueError(f"--patterns {path}: no such file")
    if not path.is_file():
        raise ValueError(f"--patterns {path} is not a regular file; pass a saved .npz or .safetensors file")
    suffix = path.suffix.lower()
    if suffix not in SUFFIXES:
        raise ValueError(f"--patterns {path}: attncoda reads .npz or .safetensors files, never a pickle (loading one runs code); "
                         "save the patterns with numpy.savez or safetensors' save_file")
    try:
        arrays = _npz(path) if suffix == ".npz" else _safetensors(path)
    except (ValueError, OSError, EOFError, KeyError, RuntimeError) as err:
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        if "allow_pickle" in reason or "Object arrays" in reason:
            reason = "it holds Python objects, which only a pickle can restore"
        raise ValueError(f"--patterns {path} cannot be read as {suffix} ({reason}); save the patterns again as numeric arrays") from None
    return pick(arrays, path)


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
