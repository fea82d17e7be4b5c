"""A model's files, checked before anything is built from them: regular files of bounded size, a config that is a JSON
object, and dimensions within stated limits.

A hostile or damaged model folder must fail in one line that names what is wrong, before any allocation: a
``config.json`` that is a link to ``/dev/zero`` (endless bytes), a FIFO (a read that never returns), a directory, JSON
that is not an object, or ``"num_hidden_layers": 1000000`` (a model that would take the machine's memory). A GGUF
file's header is read the same way (its metadata, not its tensors) before it is converted.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

from ..base.errors import ModelError

CONFIG_BYTES = 4 << 20
"""The largest config-like JSON file read (``config.json``, ``tokenizer_config.json``, …): 4 MiB; real ones are kilobytes."""
TOKENIZER_BYTES = 256 << 20
"""The largest tokenizer or vocabulary file accepted (Gemma 3's ``tokenizer.json`` is 33 MB)."""

LIMITS = {
    "layers": (("num_hidden_layers", "n_layer", "num_layers", "block_count"), 512),
    "heads": (("num_attention_heads", "n_head", "num_key_value_heads", "head_count", "head_count_kv"), 1024),
    "width": (("hidden_size", "n_embd", "d_model", "embedding_length"), 65_536),
    "feed-forward width": (("intermediate_size", "n_inner", "feed_forward_length"), 1 << 20),
    "head width": (("head_dim",), 4096),
    "vocabulary": (("vocab_size",), 1 << 22),
    "positions": (("max_position_embeddings", "n_positions", "context_length"), 1 << 24),
}
"""For each dimension a model is built from: the config fields (and GGUF keys) that give it, and the largest value
accepted. The largest real models stay far below (405B Llama: 126 layers, width 16,384; Gemma 3: 262,144 tokens)."""


MAX_PARAMETERS = 20_000_000_000
"""The most parameters attncoda builds a model with (80 GB in float32): each dimension may be within its own limit while
their product is not, and the allocation would then be the only thing to stop it."""


def estimated_parameters(settings: dict) -> int | None:
    """A transformer's parameter count from its config, roughly: per layer, attention (4 h²) and a gated feed-forward
    (3 h f), plus the token embedding and output (2 v h); None when the config lacks a dimension.

    >>> estimated_parameters({"num_hidden_layers": 30, "hidden_size": 576, "intermediate_size": 1536, "vocab_size": 49152})
    176062464
    """
    values = dict(_numbers(settings))

    def first(dimension):
        return next((values[n] for n in LIMITS[dimension][0] if isinstance(values.get(n), int) and not isinstance(values.get(n), bool)), None)

    layers, width, ff, vocab = first("layers"), first("width"), first("feed-forward width"), first("vocabulary")
    if not (layers and width):
        return None
    return layers * (4 * width * width + 3 * width * (ff or 4 * width)) + 2 * (vocab or 0) * width


def read_capped(path: Path, cap: int, what: str = "file") -> bytes:
    """The bytes of ``path``, read only when it is a regular file (links followed) of at most ``cap`` bytes; a ModelError
    in one line otherwise (a device, a FIFO or a folder is never opened, so nothing hangs or fills memory)."""
    path = Path(path)
    try:
        info = os.stat(path)
    except OSError as err:
        raise ModelError(f"cannot read {what} {path}: {err.strerror}") from None
    if not stat.S_ISREG(info.st_mode):
        kind = "folder" if stat.S_ISDIR(info.st_mode) else "FIFO" if stat.S_ISFIFO(info.st_mode) else "device" if (
            stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode)) else "special file"
        linked = f" (a link to {os.path.realpath(path)})" if path.is_symlink() else ""
        raise ModelError(f"{what} {path}{linked} is a {kind}, not a regular file; the model folder is damaged or not a model")
    if info.st_size > cap:
        raise ModelError(f"{what} {path} is {info.st_size:,} bytes, more than the {cap:,} such a file may have; the model folder is damaged or not a model")
    with open(path, "rb") as f:
        data = f.read(cap + 1)
    if len(data) > cap:
        raise ModelError(f"{what} {path} holds more than {cap:,} bytes; the model folder is damaged or not a model")
    return data


def read_json_object(path: Path, what: str | None = None, cap: int = CONFIG_BYTES) -> dict:
    """A JSON object from ``path`` (:func:`read_capped` first), or a ModelError in one line naming what it holds instead."""
    what = what or Path(path).name
    data = read_capped(path, cap, what)
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, UnicodeDecodeError):
        raise ModelError(f"{what} {path} is not valid JSON; the model folder is damaged (save it again with save_pretrained)") from None
    except RecursionError:
        raise ModelError(f"{what} {path} is nested deeper than any config is; the model folder is damaged (save it again with "
                         "save_pretrained)") from None
    if not isinstance(value, dict):
        raise ModelError(f"{what} {path} holds {type(value).__name__ if value is not None else 'null'}, not a JSON object of settings; "
                         "the model folder is damaged (save it again with save_pretrained)")
    return value


def check_dimensions(settings: dict, source: str) -> None:
    """A ModelError in one line, naming the field, when a dimension in ``settings`` (a config, with its nested configs,
    or a GGUF header's numbers) is not a whole number of at least 1 or exceeds :data:`LIMITS`."""
    for field, value in _numbers(settings):
        for dimension, (names, largest) in LIMITS.items():
            if field not in names:
                continue
            if value is None:  # a field left unset (head_dim: null): the architecture's own default
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ModelError(f"{source}: {field} = {value!r} is not a {dimension} a model can have (a whole number of at least 1); "
                                 "the config is damaged")
            if value > largest:
                raise ModelError(f"{source}: {field} = {value:,} exceeds the {largest:,} {dimension} attncoda builds a model with; "
                                 "the config is damaged or describes a model too large for this tool")
    total = estimated_parameters(settings)
    if total and total > MAX_PARAMETERS:
        raise ModelError(f"{source}: its dimensions make about {total / 1e9:,.0f} billion parameters ({4 * total / 1e9:,.0f} GB in float32), "
                         f"more than the {MAX_PARAMETERS / 1e9:.0f} billion attncoda builds a model with; the config is damaged or "
                         "describes a model too large for this tool")


def _numbers(settings, depth: int = 0):
    """Every ``(key, value)`` of a config and of the configs nested in it (``text_config``, ``vision_config``, …)."""
    if depth > 4 or not isinstance(settings, dict):
        return
    for key, value in settings.items():
        if isinstance(value, dict):
            yield from _numbers(value, depth + 1)
        elif isinstance(value, (int, float, bool)) or value is None:
            yield key.rsplit(".", 1)[-1], value


CONFIG_FILES = ("config.json", "generation_config.json", "tokenizer_config.json", "special_tokens_map.json", "preprocessor_config.json",
                "processor_config.json", "added_tokens.json")
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model")


BYTES_PER_TOKEN = 1024
"""A tokenizer file's bytes per vocabulary entry, generously (the defaults hold 15 to 130)."""


def tokenizer_cap(config: dict) -> int:
    """The largest tokenizer file a model of this config may have: :data:`BYTES_PER_TOKEN` per entry of its
    ``vocab_size`` and 1 MiB besides, within :data:`TOKENIZER_BYTES` (a 10-million-entry vocabulary beside a config of
    320 tokens is refused before it is parsed).

    >>> tokenizer_cap({"vocab_size": 320}), tokenizer_cap({}) == TOKENIZER_BYTES
    (1376256, True)
    """
    sizes = [v for k, v in _numbers(config) if k == "vocab_size" and isinstance(v, int) and not isinstance(v, bool) and v > 0]
    return min(TOKENIZER_BYTES, BYTES_PER_TOKEN * max(sizes) + (1 << 20)) if sizes else TOKENIZER_BYTES


def check_folder(folder: Path) -> dict:
    """Check a model folder before anything reads it (:func:`read_capped` on every config and tokenizer file it has,
    regular weight files, :func:`check_dimensions` on ``config.json``); returns the config."""
    folder = Path(folder)
    config = read_json_object(folder / "config.json", "config.json")
    for name in CONFIG_FILES[1:]:
        if os.path.lexists(folder / name):
            read_json_object(folder / name, name)
    cap = tokenizer_cap(config)
    for name in TOKENIZER_FILES:
        if os.path.lexists(folder / name):
            size = os.stat(folder / name).st_size if (folder / name).is_file() else 0
            if cap < TOKENIZER_BYTES and size > cap:
                raise ModelError(f"{name} {folder / name} is {size:,} bytes, more than the {cap:,} a tokenizer of the config's "
                                 f"{(cap - (1 << 20)) // BYTES_PER_TOKEN:,}-token vocabulary needs; the tokenizer is not this model's")
            read_capped(folder / name, cap, name)
    for weights in (*folder.glob("*.safetensors"), *folder.glob("*.bin")):
        mode = os.stat(weights).st_mode if weights.exists() else 0
        if not stat.S_ISREG(mode):
            raise ModelError(f"weights file {weights} is not a regular file (a missing link target, a device or a FIFO); the model folder is damaged")
    check_dimensions(config, f"{folder}/config.json")
    return config


def check_gguf_header(path: Path) -> None:
    """Read a GGUF file's metadata (not its tensors) and :func:`check_dimensions` on its numbers, the vocabulary counted
    from its token list; a ModelError in one line for a header that cannot be read."""
    from gguf import GGUFReader

    try:
        reader = GGUFReader(str(path), "r")
        numbers = {}
        for name, field in reader.fields.items():
            if name == "tokenizer.ggml.tokens":
                numbers["vocab_size"] = len(field.data)
            elif len(field.data) == 1 and len(field.types) == 1:
                value = field.parts[field.data[0]]
                if getattr(value, "size", 0) == 1 and value.dtype.kind in "iu":
                    numbers[name] = int(value[0])
    except (ValueError, KeyError, IndexError, OSError, MemoryError) as err:
        raise ModelError(f"{path}: its GGUF header cannot be read ({type(err).__name__}: {one_line(err)}); the file is damaged or truncated") from None
    check_dimensions({k.rsplit(".", 1)[-1] if not k.startswith("tokenizer") else k: v for k, v in numbers.items()}, str(path))


def one_line(err: BaseException, limit: int = 300) -> str:
    """The first line of an error's message, shortened at a word (with an ellipsis) when it is longer than ``limit``.

    Examples
    --------
    >>> one_line(ValueError("first line\\nsecond"))
    'first line'
    >>> one_line(ValueError("word " * 100), limit=20)
    'word word word word…'
    """
    lines = [line.strip() for line in str(err).splitlines() if line.strip()]
    text = lines[0] if lines else type(err).__name__
    if len(text) <= limit:
        return text
    return text[:limit].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
