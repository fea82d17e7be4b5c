"""Load any model a reader names: a registry short name, a Hugging Face id (``org/name@revision``),
a local model folder, or a ``.gguf`` file. Always with eager attention, so weights can be captured.

A GGUF file is dequantized once and saved as safetensors in the cache
(``$ATTNCODA_CACHE/models/gguf-<sha>``); later loads read that folder.
"""

from __future__ import annotations

import os
import re
import socket
import sys
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..base.checksums import cached_sha256, sha256_file
from ..base.errors import ModelError
from ..base.files import atomic_folder
from ..base.paths import cache_dir
from .model_files import check_dimensions, check_folder, check_gguf_header, one_line, read_json_object
from .registry import REGISTRY, locate

ENCODER_TYPES = {"bert", "mpnet", "roberta", "xlm-roberta", "distilbert", "electra", "albert", "deberta", "deberta-v2", "vit", "deit", "beit", "dinov2", "camembert", "ernie"}
VISION_TYPES = {"vit", "deit", "beit", "dinov2"}
GATED_ORGS = {"meta-llama"}
"""Hub organisations whose models usually need an accepted licence and a login (the message says how)."""
HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.-]+(@[\w./-]+)?$|^[A-Za-z0-9][\w.-]*@[\w./-]+$")


@dataclass(frozen=True)
class ModelInfo:
    """What the math needs to know about a model."""

    name: str  # as the reader gave it
    source: str  # what was loaded, with no path of this machine (ModelRef.public_source)
    revision: str | None
    architecture: str  # config.model_type
    layers: int
    heads: int
    causal: bool
    vision: bool
    weights_sha256: str  # or "hub:<commit>" for a Hub download
    default_sink: str  # "first", "cls_sep", or "learned" (a learned sink logit, part 0 of every row)
    attention_window: int | None = None  # sliding-window length of local attention layers, if any
    notes: tuple[str, ...] = field(default_factory=tuple)

    def as_dict(self) -> dict:
        return asdict(self)


@dataclass
class LoadedModel:
    info: ModelInfo
    model: object  # the full transformers model (eval mode, eager attention)
    processor: object  # tokenizer, or image processor for vision models

    @property
    def has_lm_head(self) -> bool:
        """Whether the loaded model carries its language-modelling head (causal or masked)."""
        return type(self.model).__name__.endswith(("ForCausalLM", "ForMaskedLM"))

    @property
    def backbone(self):
        """The model without its task head (no vocabulary-sized logits)."""
        return getattr(self.model, "base_model", self.model)

    @property
    def input_device(self):
        """The device the backbone takes its inputs on: its first parameter's, the input embedding's. A device map of one
        device moves the model whole, with no hook to carry inputs made on the CPU over, so every forward pass hands its
        ids there (a map over several devices starts at the embedding, and its hooks move the rest)."""
        return next(self.backbone.parameters()).device

    def forward(self, batch):
        """One forward pass of the backbone over ``batch``, handed to :attr:`input_device` first: pixel values for a
        vision model, otherwise token ids (windows × tokens) with every token attended. Every capture runs through it."""
        import torch

        batch = batch.to(self.input_device)
        if self.info.vision:
            return self.backbone(pixel_values=batch)
        return self.backbone(input_ids=batch, attention_mask=torch.ones_like(batch))


def hub_reachable(timeout: float = 3.0) -> bool:
    endpoint = os.environ.get("HF_ENDPOINT", "https://huggingface.co")
    host = re.sub(r"^https?://", "", endpoint).split("/")[0]
    try:
        with socket.create_connection((host, 443), timeout=timeout):
            return True
    except OSError:
        return False


class ModelRef(NamedTuple):
    """A resolved model name: ``kind`` is registry, local, gguf or hub; ``target`` the short name, folder, file or Hub id."""

    kind: str
    target: str
    revision: str | None

    def public_source(self) -> str:
        """What was loaded, without any path of this machine: the registry packages, a file or folder's own name, or the Hub id."""
        if self.kind == "registry":
            return "registry: " + ", ".join(REGISTRY[self.target].packages)
        if self.kind in ("gguf", "local"):
            return f"{self.kind}: {Path(self.target).name}"
        return f"hub: {self.target}" + (f"@{self.revision}" if self.revision else "")


def resolve(name: str) -> ModelRef:
    """Classify ``name`` as a registry short name, a local folder, a ``.gguf`` file or a Hub id (ModelError otherwise).

    Examples
    --------
    >>> resolve("smollm2-135m").kind
    'registry'
    >>> resolve("EleutherAI/pythia-70m@step1000")
    ModelRef(kind='hub', target='EleutherAI/pythia-70m', revision='step1000')
    """
    if not isinstance(name, str) or not name.strip():
        raise ModelError(f"model {name!r} is not a model name; pass a short name, a Hugging Face id, a local folder or a .gguf file")
    if len(name) > MAX_NAME:
        raise ModelError(f"the model name is {len(name):,} characters long, more than a path or Hub id can be ({MAX_NAME:,}); "
                         "pass a short name, a Hugging Face id, a local folder or a .gguf file")
    if name in REGISTRY:
        return ModelRef("registry", name, None)
    try:
        path = Path(name).expanduser()
        if path.suffix == ".gguf":
            if not path.is_file():
                raise ModelError(f"no such GGUF file: {path}")
            check_gguf(path)
            return ModelRef("gguf", str(path.resolve()), None)
        if path.is_dir():
            if not os.path.lexists(path / "config.json"):
                raise ModelError(f"{path} is a folder without config.json; pass a saved Hugging Face model folder")
            check_folder(path)  # regular files of bounded size, dimensions within limits: before anything reads them
            refuse_code(path)
            return ModelRef("local", str(path.resolve()), None)
        is_file = path.is_file()
    except ModelError:
        raise
    except RecursionError:  # a RuntimeError too, but not the one below
        raise ModelError(f"cannot read the model {name}: one of its files is nested too deep to be a model's") from None
    except RuntimeError:  # "~user/…" for a user this machine does not have
        raise ModelError(f"no such model folder or file: {name} (the user {name.split('/')[0]} does not exist here)") from None
    except OSError as err:
        raise ModelError(f"cannot read the model path {name}: {err.strerror}") from None
    if is_file:
        raise ModelError(f"{path} is a file but not a model; pass a saved Hugging Face model folder (with config.json) or a .gguf file")
    if name.startswith((".", "/", "~")):
        raise ModelError(f"no such model folder or file: {path}")
    if HUB_ID.match(name):
        repo, _, revision = name.partition("@")
        return ModelRef("hub", repo, revision or None)
    raise ModelError(f"unknown model {name!r}; known short names: {', '.join(REGISTRY)} (or pass a Hugging Face id, a local folder or a .gguf file)")


MAX_NAME = 1024
"""The longest model name accepted (a path on Linux is at most 4,096 bytes, each of its names 255; a Hub id is short)."""
GGUF_MAGIC = b"GGUF"
CODE_CONFIGS = ("config.json", "tokenizer_config.json", "preprocessor_config.json", "processor_config.json")
"""The files of a model folder that can point transformers at code of the folder's own (``auto_map``)."""


def check_gguf(path: Path) -> None:
    """A ModelError in one line unless ``path`` starts with the GGUF magic bytes (checked before any conversion)."""
    head = _first_bytes(path, 4)
    if head != GGUF_MAGIC:
        raise ModelError(f"{path} is not a GGUF file (it does not start with the GGUF magic bytes); pass a .gguf model file")
    check_gguf_header(path)


def _first_bytes(path: Path, count: int) -> bytes:
    """The first ``count`` bytes of a regular file (a device or FIFO is refused before it is opened)."""
    import stat

    if not stat.S_ISREG(os.stat(path).st_mode):
        raise ModelError(f"{path} is not a regular file; pass a .gguf model file")
    with open(path, "rb") as f:
        return f.read(count)


def refuse_code(folder: Path) -> None:
    """A ModelError in one line if a model folder ships Python code or asks for it (``auto_map``): attncoda never runs
    a model folder's own code, and every load also passes ``trust_remote_code=False``."""
    scripts = sorted(p.name for p in folder.glob("*.py"))
    asks = []
    for name in CODE_CONFIGS:
        file = folder / name
        if os.path.lexists(file):
            asks += [name] if "auto_map" in read_json_object(file, name) else []
    if scripts or asks:
        what = ", ".join([*(f"auto_map in {a}" for a in asks), *scripts])
        raise ModelError(f"{folder} ships code of its own ({what}); attncoda runs no model folder's code: load it with a "
                         "built-in transformers architecture and save_pretrained it to a folder without code")


def _gguf_folder(gguf: Path) -> Path:
    """Dequantize ``gguf`` once into a safetensors folder in the cache; return the folder."""
    import torch
    import transformers as tf

    digest = cached_sha256(gguf)

    def dequantize(staging: Path) -> None:
        tokenizer = tf.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name, trust_remote_code=False)
        model, info = tf.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32, trust_remote_code=False,
                                                              output_loading_info=True)
        check_coverage(info, str(gguf))  # a GGUF that lacks tensors would be saved with random ones in their place
        # The weights are already dequantized to float32; drop the GGUF quantizer so the model saves as plain safetensors.
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.hf_quantizer = None
        model.is_quantized = False
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
        (staging / "SOURCE_SHA256").write_text(f"{digest}  {gguf.name}\n")
        weights = sorted(staging.glob("*.safetensors"))
        (staging / WEIGHTS_SHA256).write_text("".join(f"{sha256_file(w)}  {w.name}\n" for w in weights))

    folder = cache_dir() / "models" / f"gguf-{digest[:16]}"
    if os.path.lexists(folder) and not conversion_holds(folder, digest):
        import shutil
        import sys

        print(f"attncoda: the converted folder {folder} is incomplete, changed or not the conversion of {gguf.name} "
              "(its SOURCE_SHA256, WEIGHTS_SHA256, config or weights do not match); converting again", file=sys.stderr, flush=True)
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
        else:
            folder.unlink()
    return atomic_folder(folder, dequantize)


WEIGHTS_SHA256 = "WEIGHTS_SHA256"
"""A converted GGUF folder's record of its own weights files' SHA-256, written when it is made."""


def conversion_holds(folder: Path, digest: str) -> bool:
    """Whether a cached GGUF conversion is complete, made from the GGUF file whose SHA-256 is ``digest``, and unchanged
    since: its ``SOURCE_SHA256`` names that checksum, every weights file it recorded in ``WEIGHTS_SHA256`` is there
    with that SHA-256 (a zeroed or truncated file is not the conversion), and its config passes :func:`check_folder`."""
    try:
        source = (folder / "SOURCE_SHA256").read_text().split()
        if not source or source[0] != digest:
            return False
        recorded = [line.split() for line in (folder / WEIGHTS_SHA256).read_text().splitlines() if line.strip()]
        if not recorded or any(len(r) != 2 or not (folder / r[1]).is_file() or cached_sha256(folder / r[1]) != r[0] for r in recorded):
            return False
        if {p.name for p in folder.glob("*.safetensors")} != {r[1] for r in recorded}:
            return False
        check_folder(folder)
    except (OSError, ModelError, ValueError):
        return False
    return True


def loaded_identity(weights_sha256: str) -> str:
    """A weights identity as loaded: another dtype than float32 gives other numbers, so it is part of the identity."""
    dtype, _ = load_options()
    return weights_sha256 if dtype == "float32" else f"{weights_sha256}+{dtype}"


def load_options() -> tuple[str, str | None]:
    """``(dtype, device_map)`` of the run in effect (:func:`attncoda.base.run_setting.current`: ``--dtype`` and
    ``--device-map``, or a chapter's ``load_dtype`` and ``device_map``). In Google Colab with a GPU attached and no
    device map asked for, the model goes to the GPU (``cuda``): a reader who attached one wants it used; a device map
    of ``cpu`` keeps the CPU."""
    from ..base.run_setting import current

    setting = current()
    device_map = setting.device_map
    if device_map is None and "google.colab" in sys.modules and _gpu_attached():
        device_map = "cuda"
    if device_map:
        check_device_map(device_map)
    return setting.load_dtype, device_map


def _gpu_attached() -> bool:
    import torch

    return bool(torch.cuda.is_available())


def check_device_map(device_map: str) -> None:
    """Refuse, in one line, a device map naming a device this machine does not have (``cuda:7`` on a machine with no
    such GPU), before any weight is read: the library's own failure would look like a damaged model."""
    import torch

    if device_map.strip().lower() in ("meta", "disk"):
        raise ModelError(f"device map {device_map}: a model placed there holds no weights to run (only their shapes); pass --device-map auto, "
                         "or leave it out to load on the CPU")
    match = re.fullmatch(r"(cuda|mps|xpu)(?::(\d+))?", device_map)
    if not match:
        return  # "auto", "balanced", "cpu" and friends: accelerate places the layers where it can
    kind, index = match.group(1), int(match.group(2) or 0)
    backend = getattr(torch, kind, None)
    count = backend.device_count() if backend is not None and hasattr(backend, "device_count") and backend.is_available() else 0
    if index >= count:
        has = f"{count} {kind} device{'s' if count != 1 else ''}" if count else f"no {kind} device"
        raise ModelError(f"--device-map {device_map}: this machine has {has}; pass --device-map auto, or leave it out to load on the CPU")


def _from_pretrained(target: str, causal_hint: bool | None, revision: str | None, local_only: bool):
    import torch
    import transformers as tf

    dtype, device_map = load_options()
    common = dict(revision=revision, local_files_only=local_only, trust_remote_code=False)  # never a model's own code
    kwargs = dict(common, attn_implementation="eager", dtype=getattr(torch, dtype))
    if device_map:
        kwargs["device_map"] = device_map
    config = tf.AutoConfig.from_pretrained(target, **common)
    check_dimensions(config.to_dict(), f"{target} (config)")  # before any layer is built: a Hub or converted config too
    model_type = config.model_type
    vision = model_type in VISION_TYPES
    causal = not is_encoder(model_type, config) if causal_hint is None else causal_hint
    if vision:
        processor = tf.AutoImageProcessor.from_pretrained(target, **common)
        model, info = tf.AutoModel.from_pretrained(target, output_loading_info=True, **kwargs)
    else:
        processor = tf.AutoTokenizer.from_pretrained(target, **common)
        masked_lm = any(a.endswith("ForMaskedLM") for a in (getattr(config, "architectures", None) or []))
        auto = tf.AutoModelForCausalLM if causal else (tf.AutoModelForMaskedLM if masked_lm else tf.AutoModel)
        model, info = auto.from_pretrained(target, output_loading_info=True, **kwargs)
        if masked_lm and not causal and only_the_head_is_missing(info):
            # a sentence-embedding folder keeps its config's *ForMaskedLM but not the head: load the encoder alone, so that no
            # random head passes for the model's own (the pseudo-perplexity then refuses it: it has no language-modelling head)
            model, info = tf.AutoModel.from_pretrained(target, output_loading_info=True, **kwargs)
    check_coverage(info, target)
    if not vision:
        check_vocabulary(processor, config, target)
    model.eval()
    return model, processor, config, causal, vision


UNUSED_BY_ATTENTION = ("pooler.",)
"""Parameters a model may lack without touching its attention or its language-modelling head: an encoder's pooler
(sentence-embedding folders often ship without one). Any other missing parameter would be left at its random
initialization, so the load is refused."""


HEAD_PREFIXES = ("lm_head.", "cls.")
"""Where an encoder's masked-language-modelling head lives (MPNet, RoBERTa: ``lm_head``; BERT: ``cls.predictions``)."""


def only_the_head_is_missing(info: dict) -> bool:
    """Whether every parameter missing from the weights belongs to the masked-LM head (:data:`HEAD_PREFIXES`).

    >>> only_the_head_is_missing({"missing_keys": ["lm_head.decoder.bias", "lm_head.dense.weight"]})
    True
    >>> only_the_head_is_missing({"missing_keys": ["lm_head.decoder.bias", "encoder.layer.0.attention.self.query.weight"]})
    False
    """
    missing = list(info.get("missing_keys") or ())
    return bool(missing) and all(k.startswith(HEAD_PREFIXES) for k in missing)


def check_vocabulary(tokenizer, config, target: str) -> None:
    """Refuse a tokenizer whose ids reach past the model's embedding (ModelError in one line), or the first such token
    ends deep inside torch's embedding lookup. The ids that text can produce must lie below the config's
    ``vocab_size``: the vocabulary's, less the special tokens added on top of it (such as an ``<|endoftext|>`` that
    some tokenizers place just past the embedding and never emit for plain text), and the special tokens the tokenizer
    itself puts around a text (its [BOS], [CLS] or [SEP])."""
    size = getattr(config, "vocab_size", None)
    if size is None and hasattr(config, "get_text_config"):
        size = getattr(config.get_text_config(), "vocab_size", None)
    vocab = tokenizer.get_vocab() if hasattr(tokenizer, "get_vocab") else {}
    if not size or not vocab:
        return
    added = getattr(tokenizer, "added_tokens_decoder", None) or {}
    set_aside = {i for i, token in added.items() if getattr(token, "special", False)}
    try:
        around = set(tokenizer("attention", add_special_tokens=True)["input_ids"])
    except Exception:  # a tokenizer that cannot encode is refused where the windows are made, in its own words
        around = set()
    used = [i for i in vocab.values() if i not in set_aside] + sorted(around)
    largest = max(used, default=-1)
    if largest >= size:
        raise ModelError(f"{target}: its tokenizer has ids up to {largest:,}, but the model's embedding has {size:,} rows (vocab_size); "
                         "the tokenizer belongs to another model: save the model with its own tokenizer")


def _in_order(name: str) -> list:
    """Sort key for parameter names in the model's own order, layer 2 before layer 10 (transformers reports them as a
    set, whose order changes from run to run).

    >>> sorted(["h.10.w", "h.2.w", "emb"], key=_in_order)
    ['emb', 'h.2.w', 'h.10.w']
    """
    import re

    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name) if part]


def check_coverage(info: dict, target: str) -> None:
    """Refuse a model whose weights do not cover it (ModelError in one line): transformers fills a parameter missing
    from the weights with random numbers and only warns, so every number computed from it would be silently wrong.
    ``info`` is ``from_pretrained``'s loading info; keys of :data:`UNUSED_BY_ATTENTION` may be missing, and unexpected
    keys (weights the model does not use, such as a classification head) are named only beside missing ones.

    >>> check_coverage({"missing_keys": ["bert.pooler.dense.weight"], "unexpected_keys": ["cls.predictions.bias"]}, "m")
    >>> check_coverage({"missing_keys": ["model.layers.0.self_attn.q_proj.weight", "lm_head.weight"], "unexpected_keys": ["foo"]}, "m")
    Traceback (most recent call last):
    ...
    attncoda.base.errors.ModelError: m: its weights do not cover the model: 2 parameters are missing (lm_head.weight, model.layers.0.self_attn.q_proj.weight) and 1 weight is not the model's (foo); they would be random numbers, so nothing is computed from them. Save the model again with save_pretrained, or pass the folder its weights belong to
    """
    missing = sorted({k for k in info.get("missing_keys") or () if not any(part in k for part in UNUSED_BY_ATTENTION)}, key=_in_order)
    mismatched = sorted({k[0] if isinstance(k, tuple) else k for k in info.get("mismatched_keys") or ()}, key=_in_order)
    if not missing and not mismatched:
        return
    unexpected = sorted(set(info.get("unexpected_keys") or ()), key=_in_order)

    def named(keys) -> str:
        return ", ".join(keys[:3]) + (f", and {len(keys) - 3:,} more" if len(keys) > 3 else "")

    parts = []
    if missing:
        parts.append(f"{len(missing):,} parameter{'s are' if len(missing) != 1 else ' is'} missing ({named(missing)})")
    if mismatched:
        parts.append(f"{len(mismatched):,} ha{'ve' if len(mismatched) != 1 else 's'} another shape ({named(mismatched)})")
    if unexpected:
        parts.append(f"{len(unexpected):,} weight{'s are' if len(unexpected) != 1 else ' is'} not the model's ({named(unexpected)})")
    raise ModelError(f"{target}: its weights do not cover the model: {' and '.join(parts)}; they would be random numbers, so nothing is "
                     "computed from them. Save the model again with save_pretrained, or pass the folder its weights belong to")


def _count(config, *names) -> int:
    for n in names:
        value = getattr(config, n, None)
        if value is None and hasattr(config, "get_text_config"):
            value = getattr(config.get_text_config(), n, None)
        if value is not None:
            return int(value)
    raise ModelError(f"cannot read {names[0]} from the model's config")


LEARNED_SINK_TYPES = {"gpt_oss", "deepseek_v4", "granite_swa", "granitemoe_swa", "hy_v4", "hy_v4_vl", "mimo_v2_flash", "flint",
                      "openai_privacy_filter"}
"""Model types whose attention adds a learned per-head sink logit to the softmax (``s_aux``): the families of the
pinned transformers that pass it (``tests/engine/test_families.py`` reads them from its modeling files)."""


def is_encoder(model_type: str, config=None) -> bool:
    """Whether a model type attends both ways: a listed encoder (:data:`ENCODER_TYPES`) or a family with a masked-LM
    head in transformers' auto mapping, unless its config says it is a decoder (BERT built as a causal LM, XLM's CLM
    checkpoints with ``causal``)."""
    from transformers.models.auto.modeling_auto import MODEL_FOR_MASKED_LM_MAPPING_NAMES

    listed = model_type in ENCODER_TYPES or model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    return listed and not getattr(config, "is_decoder", False) and not getattr(config, "causal", False)  # XLM's CLM checkpoints


def default_sink(model_type: str) -> str:
    """The sink set a model gets by default: the learned sink for models that have one, [CLS] and every [SEP] for text
    encoders, the first key otherwise."""
    if model_type in LEARNED_SINK_TYPES:
        return "learned"
    return "cls_sep" if is_encoder(model_type) and model_type not in VISION_TYPES else "first"


def attention_window(config) -> int | None:
    """The sliding window of local-attention layers (Gemma 3, Mistral), or None when every layer sees all keys."""
    window = getattr(config, "sliding_window", None)
    if not window:
        return None
    layer_types = getattr(config, "layer_types", None)
    if layer_types is not None:
        return int(window) if "sliding_attention" in layer_types else None
    return None if getattr(config, "use_sliding_window", True) is False else int(window)


def weights_checksum(folder: Path) -> str:
    """Combined SHA-256 of a folder's weight files (safetensors, else .bin), in name order."""
    files = sorted(folder.glob("*.safetensors")) or sorted(folder.glob("*.bin"))
    if not files:
        raise ModelError(f"{folder} holds no *.safetensors or *.bin weights")
    if len(files) == 1:
        return cached_sha256(files[0])
    import hashlib

    return hashlib.sha256("".join(cached_sha256(f) for f in files).encode()).hexdigest()


POSITION_OFFSET = {"mpnet": 2, "roberta": 2, "xlm-roberta": 2, "camembert": 2}
"""Position embeddings these families reserve before the first token (their ``max_position_embeddings`` counts them)."""


def check_length(loaded, length: int, text_limit=None) -> None:
    """A ModelError in one line, before any forward pass, when windows of ``length`` tokens exceed the positions the
    model has (``max_position_embeddings``, less what its family reserves). ``text_limit()``, when given, is the longest
    window the text can give: the length advised is the smaller of the two, so the advice itself runs."""
    config = loaded.model.config
    config = config.get_text_config() if hasattr(config, "get_text_config") else config
    positions = getattr(config, "max_position_embeddings", None)
    if loaded.info.vision or not positions:
        return
    usable = int(positions) - POSITION_OFFSET.get(config.model_type, 0)
    if length > usable:
        text = text_limit(usable) if text_limit is not None else usable
        if text < usable:
            raise ModelError(f"L = {length} exceeds the {usable} positions {loaded.info.name} was built for, and the text gives windows of at "
                             f"most {text} tokens at this --n; use --length {text} or less")
        raise ModelError(f"L = {length} exceeds the {usable} positions {loaded.info.name} was built for; use --length {usable} or less")


IDENTITY_FILES = ("config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json",
                  "vocab.txt", "vocab.json", "merges.txt", "tokenizer.model", "spiece.model", "added_tokens.json", "preprocessor_config.json")
"""A model folder's files besides its weights that change its numbers (a config's rope_theta, a tokenizer's vocabulary)."""


def folder_checksum(folder: Path) -> str:
    """A local model folder's identity: SHA-256 over the content hashes of its :data:`IDENTITY_FILES` and its weights
    (:func:`weights_checksum`), so that a changed config or tokenizer is another model to the cache.

    ``sha256(name₁ ‖ sha256(file₁) ‖ … ‖ "weights" ‖ weights_checksum)``, the files in :data:`IDENTITY_FILES` order.
    """
    import hashlib

    from ..base.checksums import sha256_file

    h = hashlib.sha256()
    for name in IDENTITY_FILES:
        file = Path(folder) / name
        if file.is_file():
            h.update(f"{name}:{sha256_file(file)}|".encode())
    h.update(f"weights:{weights_checksum(Path(folder))}".encode())
    return h.hexdigest()


def interrupted(err: BaseException) -> bool:
    """Whether ``err`` arose while handling a Ctrl-C or SIGTERM (torch can turn an interrupt in a conversion into a
    RuntimeError such as "trying to pop from empty mode stack", with the KeyboardInterrupt as its context)."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, KeyboardInterrupt):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False


def load_error(name: str, err: Exception) -> BaseException:
    """The one-line error for a load that failed with ``err``: the model named, the reason in words (the first line of
    the library's message, shortened at a word), and what to do; a KeyboardInterrupt when the load was interrupted."""
    if interrupted(err):
        return KeyboardInterrupt()
    text = " ".join(str(err).split())
    if "ignore_mismatched_sizes" in text or "size mismatch" in text:
        return ModelError(f"could not load {name!r}: its weights have other shapes than its config describes (the two come from different "
                          "models, or one is damaged); save or download the model again")
    if "negative dimensions" in text:
        return ModelError(f"could not load {name!r}: its config gives a negative dimension; the config is damaged")
    if "No space left on device" in text or getattr(err, "errno", None) == 28:
        return ModelError(f"could not load {name!r}: the disk ran out of space while writing its files ({one_line(err, 120)}); "
                          "free some space (or point $ATTNCODA_CACHE at a larger disk) and run again")
    if isinstance(err, (OSError, ValueError, KeyError)):
        return ModelError(f"could not load {name!r}: {one_line(err)}")
    # damaged weights: struct.error, SafetensorError, UnpicklingError, ...
    return ModelError(f"could not load {name!r}: its weights or config look damaged ({type(err).__name__}: {one_line(err, 200)}); "
                      "save or download the model again")


_REUSED: dict | None = None
"""Inside :func:`reusing_loads`: the models loaded so far, by resolved reference."""


@contextmanager
def reusing_loads():
    """Within the block, :func:`load_model` loads each model once and hands the same object to every later caller (one
    command that reads a model twice, such as the audit's signatures and its attention maps, loads it once)."""
    global _REUSED
    outer = _REUSED
    _REUSED = {} if outer is None else outer
    try:
        yield
    finally:
        _REUSED = outer


def load_model(name: str, ref: ModelRef | None = None) -> LoadedModel:
    """Load ``name`` (resolved as ``ref`` if given) with eager attention in float32 on the CPU. Raises ModelError with one clear line."""
    ref = ref or resolve(name)
    if _REUSED is not None:
        if ref not in _REUSED:
            _REUSED[ref] = _load(name, ref)
        return _REUSED[ref]
    return _load(name, ref)


def _load(name: str, ref: ModelRef) -> LoadedModel:
    kind, target, revision = ref
    notes: list[str] = []
    try:
        if kind == "registry":
            entry, path = locate(target)
            digest, sink, causal_hint = entry.sha256, entry.sink, entry.causal
            folder = _gguf_folder(path) if path.suffix == ".gguf" else path
            if path.suffix == ".gguf":
                notes.append("quantized GGUF weights, dequantized to float32")
            model, processor, config, causal, vision = _from_pretrained(str(folder), causal_hint, None, True)
        elif kind == "gguf":
            folder = _gguf_folder(Path(target))
            model, processor, config, causal, vision = _from_pretrained(str(folder), None, None, True)
            digest = cached_sha256(Path(target))
            notes.append("quantized GGUF weights, dequantized to float32")
        elif kind == "local":
            model, processor, config, causal, vision = _from_pretrained(target, None, None, True)
            digest = folder_checksum(Path(target))
        else:
            gated = target.split("/")[0] in GATED_ORGS
            login = " It is gated: accept its licence on the Hub and log in with `huggingface-cli login` first." if gated else ""
            try:
                model, processor, config, causal, vision = _from_pretrained(target, None, revision, True)
            except OSError:
                if not hub_reachable():
                    raise ModelError(
                        f"cannot reach the Hugging Face Hub to download {name!r} and it is not in the local cache; "
                        f"download it where the Hub is reachable (model.save_pretrained(folder)) and pass that folder.{login}"
                    ) from None
                try:
                    model, processor, config, causal, vision = _from_pretrained(target, None, revision, False)
                except OSError as err:
                    if gated or "gated" in str(err).lower() or "401" in str(err) or "403" in str(err):
                        raise ModelError(f"{name!r} is gated on the Hub: accept its licence there and log in with `huggingface-cli login`, then rerun") from None
                    raise
            digest = f"hub:{getattr(config, '_commit_hash', None) or revision or 'unknown'}"
    except ModelError:
        raise
    except Exception as err:
        raise load_error(name, err) from None
    if kind != "registry":
        sink = default_sink(config.model_type)
    dtype, device_map = load_options()
    digest = loaded_identity(digest)  # other numbers: cached results must not be mistaken for the float32 ones
    if dtype != "float32":
        notes.append(f"loaded in {dtype}")
    if device_map:
        notes.append(f"device_map={device_map}")
    info = ModelInfo(
        name=name,
        source=ref.public_source(),
        revision=revision,
        architecture=config.model_type,
        layers=_count(config, "num_hidden_layers", "n_layer"),
        heads=_count(config, "num_attention_heads", "n_head"),
        causal=causal,
        vision=vision,
        weights_sha256=digest,
        default_sink=sink,
        attention_window=attention_window(config),
        notes=tuple(notes),
    )
    return LoadedModel(info=info, model=model, processor=processor)
