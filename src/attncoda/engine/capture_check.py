"""The capture checks itself: one window through the capture path against the model's own forward pass.

The score capture (:mod:`attncoda.engine.score_capture`) runs the model with an attention function of its own. If that
function computed something other than the model's own attention (a learned sink it did not know, an argument it
dropped), every number after it would describe a model that never ran. So the first time a model is captured, one
window goes through both:

- the model's own forward pass, with the attention implementation it was loaded with (eager);
- the capture path (:func:`attncoda.engine.signatures.capture_into`), with consumers that keep nothing.

Each attention module's output, the backbone's last hidden state, and the rows the capture measures (the softmax of
its scores over the keys, a learned sink's part left out as the model leaves it out) against the model's own attention
weights are compared as a relative difference, ``max |capture − own| / max |own|`` (:func:`relative_difference`). A difference over :data:`TOLERANCE` for the loaded
dtype stops the run with one line naming the model, the largest difference and the first attention layer over the
tolerance. A model that passes is remembered under its weights' identity (which holds its dtype), the capture's source
and the transformers version, so the check costs two extra forward passes of one window, once per model and code.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from .capture import CaptureError

TOLERANCE = {"float32": 1e-3, "bfloat16": 5e-2, "float16": 5e-2}
"""The largest relative difference (:func:`relative_difference`) a capture may show against the model's own forward,
per loaded dtype. sdpa and eager attention agree to float32 rounding, which grows through the layers to about 1e-6 of
the largest value on the default models (``tests/engine/test_capture_check.py`` prints each); a capture that changes a
layer's computation moves it by far more (a learned sink ignored: order 1)."""
CHECK_TOKENS = 1024
"""The longest text window the check runs (a longer one is cut to its first tokens). The model's own forward returns
every layer's eager weights at once, layers × heads × L² floats: at 8,192 tokens a 30-layer, 9-head model's would take
72 GB, and ``audit --length 8192`` was killed for memory. What the check compares, the capture's attention against the
model's, is the same computation at any length; a sliding window longer than this is not reached by the check."""

CHECK_VERSION = 3
"""Part of a passed check's cache key: a change to what the check compares asks every model again."""
CAPTURE_MODULES = ("attncoda.engine.capture", "attncoda.engine.score_capture", "attncoda.engine.capture_check")
"""The code a passed check vouches for: its source hash is part of the cache key, with the transformers version."""


@dataclass(frozen=True)
class CaptureCheck:
    """One comparison: the largest relative difference over the attention outputs and the last hidden state, the first
    attention layer (index and module name) whose output is over ``tolerance``, or None, and the tolerance."""

    largest: float
    first_layer: int | None
    first_module: str | None
    tolerance: float
    rows_compared: int = 0
    """Attention layers whose measured rows were compared with the model's own weights."""
    rows_needed: bool = False
    """Whether the rows must be compared: on the score path the outputs come from sdpa, not from the captured scores,
    so outputs alone vouch for nothing the project measures."""

    @property
    def passed(self) -> bool:
        return self.largest <= self.tolerance and (self.rows_compared > 0 or not self.rows_needed)


def relative_difference(own, other) -> float:
    """``max |other − own| / max |own|`` in float64 (0 when both are zero; infinite when ``own`` is zero and ``other`` not).

    >>> import torch
    >>> relative_difference(torch.tensor([1.0, -2.0]), torch.tensor([1.0, -2.2]))
    0.1...
    """
    import torch

    own, other = own.detach().to(torch.float64), other.detach().to(torch.float64)
    scale = float(own.abs().max()) if own.numel() else 0.0
    gap = float((other - own).abs().max()) if own.numel() else 0.0
    if scale == 0.0:
        return 0.0 if gap == 0.0 else float("inf")
    return gap / scale


def _inputs(loaded, window) -> dict:
    """The backbone's keyword inputs for ``window`` on its device, as :meth:`~attncoda.engine.models.LoadedModel.forward`
    builds them."""
    import torch

    window = window.to(loaded.input_device)
    if loaded.info.vision:
        return {"pixel_values": window}
    return {"input_ids": window, "attention_mask": torch.ones_like(window)}


def _outputs(loaded, window, capture=None, weights: bool = False) -> tuple[list, object, tuple | None]:
    """Each attention module's output, the backbone's last hidden state and (``weights``) its own attention weights for
    ``window`` (1 × tokens), under ``capture`` (a context manager) when given."""
    import contextlib

    import torch

    from .capture import attention_modules

    modules = attention_modules(loaded.backbone)
    seen: list = [None] * len(modules)

    def keep(index):
        def hook(module, args, output):
            first = output[0] if isinstance(output, tuple) else output
            if torch.is_tensor(first) and seen[index] is None:
                seen[index] = first.detach().clone()

        return hook

    handles = [m.register_forward_hook(keep(i)) for i, (_, m) in enumerate(modules)]
    try:
        with torch.inference_mode(), capture if capture is not None else contextlib.nullcontext():
            out = loaded.backbone(**_inputs(loaded, window), **({"output_attentions": True} if weights else {}))
    finally:
        for h in handles:
            h.remove()
    last = getattr(out, "last_hidden_state", None)
    if last is None:
        last = out[0]
    own = getattr(out, "attentions", None) if weights else None
    return seen, last.detach().clone(), own


class _Rows:
    """Every block the capture hands on, kept: a layer's scores assembled into its probability rows over the keys
    (:meth:`rows`), or the eager path's weights as they are."""

    def __init__(self, layers: int, causal: bool, virtual: int):
        self.causal, self.virtual = causal, virtual
        self.blocks: list = [[] for _ in range(layers)]

    def update(self, layer: int, weights, log_weights=None) -> None:
        self.blocks[layer].append(weights.detach().float().cpu().clone())

    def update_scores(self, layer: int, heads: slice, queries: slice, scores) -> None:
        self.blocks[layer].append((heads, queries, scores.detach().float().cpu().clone()))

    def rows(self, layer: int):
        """The layer's rows over the keys: ``softmax`` of its assembled scores with the learned sink's part left out
        (as the model's own weights leave it out: GPT-OSS returns what is left, Granite re-closes it, and
        :func:`compare` re-closes ours to match), or its eager weights."""
        import torch

        blocks = self.blocks[layer]
        if not blocks:
            return None
        if torch.is_tensor(blocks[0]):
            return blocks[0]
        heads = max(h.stop for h, _, _ in blocks)
        queries = max(q.stop for _, q, _ in blocks)
        parts = max(z.shape[-1] for _, _, z in blocks)
        full = torch.full((blocks[0][2].shape[0], heads, queries, parts), float("-inf"))
        for h, q, z in blocks:
            full[:, h, q, : z.shape[-1]] = z
        return torch.softmax(full, dim=-1)[..., self.virtual :]


def compare(loaded, window) -> CaptureCheck:
    """:class:`CaptureCheck` of ``loaded`` on ``window`` (token ids, 1 × tokens): the capture path against the
    model's own forward pass, on every attention layer's output, the last hidden state, and the rows the capture
    measures (its scores' softmax over the keys) against the model's own attention weights."""
    from .capture import attention_modules
    from .models import load_options
    from .score_capture import learned_sinks
    from .signatures import capture_into

    names = [n for n, _ in attention_modules(loaded.backbone)]
    try:
        own_layers, own_last, own_weights = _outputs(loaded, window, weights=True)
    except Exception:  # noqa: BLE001: a model that cannot return its weights is compared on its outputs alone
        own_layers, own_last, own_weights = _outputs(loaded, window)
    rows = _Rows(len(names), loaded.info.causal, int(learned_sinks(loaded.backbone)))
    capture, score_path = capture_into(loaded.backbone, rows)
    cap_layers, cap_last, _ = _outputs(loaded, window, capture)
    tolerance = TOLERANCE.get(load_options()[0], TOLERANCE["float32"])
    weights = list(own_weights) if own_weights is not None and len(own_weights) == len(names) else [None] * len(names)
    first, largest, compared = None, 0.0, 0
    for i, (a, b, w) in enumerate(zip(own_layers, cap_layers, weights)):
        gaps = [relative_difference(a, b)] if a is not None and b is not None else []
        measured = rows.rows(i)
        if torch_tensor(w) and measured is not None and tuple(w.shape) == tuple(measured.shape):
            w = w.float().cpu()
            if rows.virtual and bool(((w.sum(-1) - 1).abs() < 1e-3).all()):  # weights re-closed over the keys (Granite's)
                measured = measured / measured.sum(-1, keepdim=True)
            gaps.append(relative_difference(w, measured))
            compared += 1
        if not gaps:
            continue
        largest = max(largest, *gaps)
        if first is None and max(gaps) > tolerance:
            first = i
    largest = max(largest, relative_difference(own_last, cap_last))
    return CaptureCheck(largest, first, names[first] if first is not None else None, tolerance, compared, score_path)


def torch_tensor(x) -> bool:
    import torch

    return torch.is_tensor(x)


def _passed_path(loaded):
    from ..base.paths import cache_dir, slug

    import transformers

    from ..base.provenance import modules_sha256

    import torch

    info = loaded.info
    code = modules_sha256(CAPTURE_MODULES)  # a change to the capture, a new transformers or torch, or another device asks again
    key = hashlib.sha256(f"{info.weights_sha256}|{info.architecture}|v{CHECK_VERSION}|{code}|{transformers.__version__}|"
                         f"{torch.__version__}|{loaded.input_device.type}".encode()).hexdigest()[:24]
    return cache_dir() / "capture_checks" / slug(info.name) / f"{key}.json"


def failure(found: CaptureCheck) -> str:
    """Why ``found`` did not pass, in one line (after the model's name)."""
    if found.largest <= found.tolerance:
        return ("the model returned no attention weights to compare the captured rows with, and its outputs cannot vouch "
                "for them (on the score path they come from sdpa, not from the rows): report the model's family")
    where = (f"from attention layer {found.first_layer} ({found.first_module})" if found.first_layer is not None
             else "in the last hidden state, though no attention layer's output is over it")
    return (f"the capture's forward pass differs from the model's own by {found.largest:.3g} (relative, tolerance "
            f"{found.tolerance:g}) {where}; attncoda does not compute this architecture's attention as the model does, so "
            "it measures nothing from it: report the model's family")


def check_capture(loaded, window) -> CaptureCheck | None:
    """Stop with a :class:`~attncoda.engine.capture.CaptureError` in one line when the capture path's forward differs
    from ``loaded``'s own beyond :data:`TOLERANCE`; remember a pass under the model's weights' identity, so a model is
    checked once. Returns the comparison made, or None when an earlier pass is remembered."""
    from ..base.files import atomic_write_json

    path = _passed_path(loaded)
    if path.is_file():
        return None
    if not loaded.info.vision and getattr(window, "ndim", 0) == 2:
        window = window[:, :CHECK_TOKENS]  # token ids: the first CHECK_TOKENS of the window
    found = compare(loaded, window)
    if not found.passed:
        raise CaptureError(f"{loaded.info.name}: {failure(found)}")
    atomic_write_json(path, {"model": loaded.info.name, "weights": loaded.info.weights_sha256, "largest": found.largest,
                             "tolerance": found.tolerance, "version": CHECK_VERSION})
    return found
