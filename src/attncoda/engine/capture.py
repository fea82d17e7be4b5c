"""Attention capture with bounded memory: forward hooks on the attention modules.

With eager attention every attention module returns ``(output, weights)``; a
hook hands each layer's ``(batch, heads, queries, keys)`` weights to a callback
as the layer runs, and nothing keeps them afterwards, so at most one layer's
maps exist at a time. Modules whose ``forward`` takes ``output_attentions``
(MPNet) are asked for their weights through a pre-hook; the model's own
``output_attentions`` stays off, so it never collects all layers.

The reduction of each layer's maps (``rowstats.row_statistics`` and the
signature sums) happens in the callback, while only that layer's maps exist.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Callable

import torch

from ..base.errors import ModelError


class CaptureError(ModelError):
    """The architecture's attention weights cannot be captured."""


def attention_modules(model) -> list[tuple[str, torch.nn.Module]]:
    """The innermost modules whose class name contains ``Attention``, in forward order."""
    candidates = [(n, m) for n, m in model.named_modules() if "Attention" in type(m).__name__ and n]
    names = [n for n, _ in candidates]
    inner = [(n, m) for n, m in candidates if not any(o != n and o.startswith(n + ".") for o in names)]
    if not inner:
        raise CaptureError(f"no attention modules found in {type(model).__name__}; this architecture's attention cannot be captured")
    return inner


def ensure_eager(model) -> None:
    """Switch the model to eager attention (the only implementation that materializes weights)."""
    if getattr(model.config, "_attn_implementation", "eager") != "eager":
        if not hasattr(model, "set_attn_implementation"):
            raise CaptureError(f"{type(model).__name__} cannot be switched to eager attention; load it with attn_implementation='eager'")
        model.set_attn_implementation("eager")


@contextmanager
def capture_attention(model, on_weights: Callable[[int, torch.Tensor], None]):
    """Within the block, every forward pass calls ``on_weights(layer, weights)`` once per attention layer.

    Raises CaptureError after the block if some attention module ran but returned no weights.
    """
    ensure_eager(model)
    modules = attention_modules(model)
    produced = [0] * len(modules)
    called = [0] * len(modules)
    handles = []

    def forward_hook(index):
        def hook(module, args, output):
            called[index] += 1
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if torch.is_tensor(weights) and weights.dim() == 4:
                produced[index] += 1
                on_weights(index, weights.detach())

        return hook

    def ask_for_weights(module, args, kwargs):
        kwargs["output_attentions"] = True
        return args, kwargs

    for i, (_, module) in enumerate(modules):
        if "output_attentions" in inspect.signature(module.forward).parameters:
            handles.append(module.register_forward_pre_hook(ask_for_weights, with_kwargs=True))
        handles.append(module.register_forward_hook(forward_hook(i)))
    try:
        yield [n for n, _ in modules]
    finally:
        for h in handles:
            h.remove()
    silent = [modules[i][0] for i in range(len(modules)) if called[i] and not produced[i]]
    if silent:
        raise CaptureError(f"{type(model).__name__}: {silent[0]} returned no attention weights under eager attention; this architecture cannot be captured")
