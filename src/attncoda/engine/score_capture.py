"""Attention scores beside a fast forward pass: the model keeps its sdpa attention for the output, and each layer's
scores are formed from the same query and key, a few heads at a time.

The capture's consumers need each row's scores ``z`` (the softmax's input), never the model's own probability tensor.
Eager attention builds ``softmax(z)`` for every head of a layer at once and multiplies it by the values; a fused sdpa
kernel never builds it. Through transformers' ``AttentionInterface`` this module registers one attention function
(:data:`IMPLEMENTATION`) that

1. returns ``sdpa_attention_forward``'s output, so the forward pass is the plain sdpa one;
2. forms ``z = q·kᵀ · scaling`` (plus any position bias), with ``−inf`` where the layer's mask hides a key (the causal
   triangle, a sliding window, padding), a few heads (or, at long L, a few windows of one head) at a time, and hands
   each chunk to ``on_scores(layer, heads, z)`` while only that chunk exists.

The extra work over a plain forward pass is one ``q·kᵀ`` per layer and one read of it. The scores are the same matmul
eager attention computes (``matmul(q, repeat_kv(k)ᵀ) · scaling``); they differ from eager's in a layer only because
the hidden states entering it do (sdpa's output and eager's agree to float32 rounding, not bit for bit).

Which architectures: those whose attention modules call the interface (transformers' ``_supports_attention_backend``)
and that use no logit soft-capping (sdpa has none). :func:`score_path_reason` says why another model is not covered;
such a model (MPNet, with its relative position bias added inside its own attention module, or Gemma 2, which caps its
logits) keeps the eager path of :mod:`attncoda.engine.capture`.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

import torch

from .capture import CaptureError, attention_modules

IMPLEMENTATION = "attncoda_scores"
"""The name under which the score-capturing attention function is registered with transformers."""
CHUNK_BYTES = 16 * 2**20
"""Budget of one chunk of float32 scores: ``heads_per_chunk = max(1, CHUNK_BYTES // (batch · Q · K · 4))``; when one
head of the whole batch is over it, one head of ``max(1, CHUNK_BYTES // (Q · K · 4))`` windows at a time (so a chunk
exceeds the budget only when a single window's ``Q × K`` scores do: above L ≈ 2,048)."""

_active: dict = {}
"""The one capture in progress: ``on_scores`` and the module → layer map (a module-level slot, since transformers calls
the registered function by name)."""


def score_path_reason(model) -> str | None:
    """Why ``model``'s scores cannot be formed beside an sdpa forward pass, or None when they can."""
    config = getattr(model, "config", None)
    if not getattr(type(model), "_supports_attention_backend", False):
        return f"{type(model).__name__}'s attention modules do not go through transformers' attention interface"
    if getattr(config, "attn_logit_softcapping", None) is not None:
        return f"{type(model).__name__} soft-caps its attention logits, which sdpa cannot"
    if getattr(config, "is_encoder_decoder", False):
        return "encoder-decoder models are not covered"
    return None


def _chunks(batch: int, heads: int, queries: int, keys: int):
    """The ``(windows, heads)`` slices the scores are formed in: whole batches of several heads while they fit the
    budget, else one head of as many windows as fit (at least one)."""
    head_bytes = max(1, queries * keys * 4)
    windows = min(batch, max(1, CHUNK_BYTES // head_bytes))
    step = max(1, CHUNK_BYTES // (batch * head_bytes)) if windows == batch else 1
    for first in range(0, batch, windows):
        for start in range(0, heads, step):
            yield slice(first, min(batch, first + windows)), slice(start, min(heads, start + step))


def _scores(query, key, heads: slice, groups: int, scaling: float, mask, causal: bool, position_bias) -> torch.Tensor:
    """``z`` for the query heads ``heads``: float32 ``(batch, h, Q, K)`` with ``−inf`` where a key is hidden.

    ``scaling · (q·kᵀ)`` is one batched matmul; with no mask given, a causal layer's hidden triangle enters as an
    additive ``0 / −inf`` matrix in the same call (``baddbmm``), so the scores are written once."""
    q = query[:, heads]
    k = key[:, heads.start // groups : (heads.stop - 1) // groups + 1]
    if groups > 1:  # the key head of query head h is h // groups
        k = k.repeat_interleave(groups, dim=1)[:, heads.start % groups : heads.start % groups + q.shape[1]]
    batch, h, queries, width = q.shape
    keys = k.shape[2]
    q3, k3 = q.reshape(batch * h, queries, width), k.transpose(2, 3).reshape(batch * h, width, keys)
    if mask is None and causal and queries > 1 and position_bias is None:
        z = torch.baddbmm(_causal_additive(queries, keys, q.dtype, q.device), q3, k3, alpha=scaling)
    else:
        z = torch.bmm(q3, k3).mul_(scaling)
    z = z.reshape(batch, h, queries, keys)
    if position_bias is not None:
        z = z + (position_bias[:, heads] if position_bias.shape[1] > 1 else position_bias)
    z = z.float()
    if mask is not None:
        m = (mask if mask.shape[1] == 1 else mask[:, heads])[..., :keys]
        hidden = ~m if m.dtype == torch.bool else m <= torch.finfo(m.dtype).min / 2
        z = z.masked_fill_(hidden, float("-inf"))
    elif causal and queries > 1 and position_bias is not None:
        z = z.masked_fill_(_causal_additive(queries, keys, torch.float32, z.device) < 0, float("-inf"))
    return z


_CAUSAL: dict = {}


def _causal_additive(queries: int, keys: int, dtype, device) -> torch.Tensor:
    """``(Q, K)``: 0 where query ``t`` sees key ``j ≤ t + K − Q``, ``−inf`` elsewhere (kept per shape, dtype and device)."""
    key = (queries, keys, dtype, str(device))
    if key not in _CAUSAL:
        hidden = torch.ones(queries, keys, dtype=torch.bool, device=device).triu_(keys - queries + 1)
        _CAUSAL.clear()
        _CAUSAL[key] = torch.zeros(queries, keys, dtype=dtype, device=device).masked_fill_(hidden, float("-inf"))
    return _CAUSAL[key]


def _attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling: float | None = None, **kwargs):
    """The registered attention function: sdpa's output, and the scores handed on in chunks of heads."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    output, _ = sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    state = _active.get("state")
    if state is None:
        return output, None
    layer = state["layers"].get(id(module))
    if layer is None:
        return output, None
    state["called"][layer] += 1
    scaling = scaling if scaling is not None else query.shape[-1] ** -0.5
    causal = bool(kwargs.get("is_causal", getattr(module, "is_causal", False)))
    groups = query.shape[1] // key.shape[1]
    bias = kwargs.get("position_bias")
    for windows, heads in _chunks(query.shape[0], query.shape[1], query.shape[2], key.shape[2]):
        mask = attention_mask[windows] if attention_mask is not None and attention_mask.shape[0] > 1 else attention_mask
        z = _scores(query[windows], key[windows], heads, groups, scaling, mask, causal,
                    bias[windows] if bias is not None and bias.shape[0] > 1 else bias)
        state["on_scores"](layer, heads, z)
        del z
    return output, None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(IMPLEMENTATION, _attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(IMPLEMENTATION, sdpa_mask)


@contextmanager
def capture_scores(model, on_scores: Callable):
    """Within the block, every forward pass runs sdpa attention and calls ``on_scores(layer, heads, scores)`` for each
    chunk of each attention layer: ``heads`` a slice of the layer's query heads, ``scores`` their float32
    ``(windows, len(heads), Q, K)`` softmax input, ``−inf`` where a key is hidden. ``windows`` is the whole batch, or
    consecutive slices of it when one head of the whole batch is over :data:`CHUNK_BYTES`, so ``on_scores`` must sum
    over windows rather than expect each batch whole.

    Raises CaptureError up front when the architecture is not covered (:func:`score_path_reason`), and after the block
    when some attention layer ran without calling the function. The model's attention implementation is restored on
    exit.
    """
    reason = score_path_reason(model)
    if reason is not None:
        raise CaptureError(f"{reason}; capture this model with attncoda.engine.capture.capture_attention (eager attention)")
    if _active.get("state") is not None:
        raise CaptureError("a score capture is already running in this process; nest no captures")
    _register()
    modules = attention_modules(model)
    previous = getattr(model.config, "_attn_implementation", "eager")
    model.set_attn_implementation(IMPLEMENTATION)
    state = {"on_scores": on_scores, "layers": {id(m): i for i, (_, m) in enumerate(modules)}, "called": [0] * len(modules)}
    _active["state"] = state
    try:
        yield [n for n, _ in modules]
    finally:
        _active["state"] = None
        model.set_attn_implementation(previous)
    ran = state["called"]
    if any(ran) and not all(ran):
        missed = modules[ran.index(0)][0]
        raise CaptureError(f"{type(model).__name__}: {missed} never called the attention interface; capture this model with eager attention")
