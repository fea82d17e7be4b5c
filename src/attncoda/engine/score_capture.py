"""Attention scores beside a fast forward pass: the model keeps its sdpa attention for the output, and each layer's
scores are formed from the same query and key, a few heads at a time.

The capture's consumers need each row's scores ``z`` (the softmax's input), never the model's own probability tensor.
Eager attention builds ``softmax(z)`` for every head of a layer at once and multiplies it by the values; a fused sdpa
kernel never builds it. Through transformers' ``AttentionInterface`` this module registers one attention function
(:data:`IMPLEMENTATION`) that

1. returns ``sdpa_attention_forward``'s output, so the forward pass is the plain sdpa one;
2. forms ``z = q·kᵀ · scaling`` (plus any position bias), with ``−inf`` where the layer's mask hides a key (the causal
   triangle, a sliding window, padding), a few heads (or windows, or blocks of queries) at a time, and hands each
   chunk to ``on_scores(layer, heads, queries, z)`` while only that chunk exists. A causal layer's block of queries
   gets the keys its rows can see and no more, so the hidden triangle is never computed.

The extra work over a plain forward pass is one ``q·kᵀ`` per layer and one read of it. The scores are the same matmul
eager attention computes (``matmul(q, repeat_kv(k)ᵀ) · scaling``); they differ from eager's in a layer only because
the hidden states entering it do (sdpa's output and eager's agree to float32 rounding, not bit for bit).

Which architectures: those whose attention modules call the interface (transformers' ``_supports_attention_backend``)
and that use no logit soft-capping (sdpa has none). :func:`score_path_reason` says why another model is not covered;
such a model (MPNet, with its relative position bias added inside its own attention module, or Gemma 2, which caps its
logits) keeps the eager path of :mod:`attncoda.engine.capture`.

Learned sinks (GPT-OSS and its kin): the layer hands the interface a per-head logit ``s_aux``, which the softmax takes
as one more column and which is dropped before the value product, so the rows over the keys sum to less than 1. sdpa
has no such column, so for these layers the output comes from the model family's own ``eager_attention_forward``, and
the scores handed on carry ``s_aux`` as part 0, before key 0: each row is then a composition of ``1 + K`` parts that
sums to 1, and the learned sink is a part of it (sink set ``learned``).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Callable

import torch

from .capture import CaptureError, attention_modules

IMPLEMENTATION = "attncoda_scores"
"""The name under which the score-capturing attention function is registered with transformers."""
CHUNK_BYTES = 16 * 2**20
"""Budget of one chunk of float32 scores. A chunk is a block of ``rows`` queries over the ``keys`` they can see, for
several windows and heads: whole batches of as many heads as fit the budget, else as many windows of one head as fit
(at least one); ``rows`` is every query unless one window of one head is over the budget (then as many rows as fit)
or the layer is causal with at least :data:`CAUSAL_BLOCKS_FROM` queries (then at most ``Q/8``)."""
CAUSAL_BLOCKS_FROM = 512
"""From this many queries on, a causal layer's scores are formed in blocks of at most ``Q/8`` queries, each over the
keys its rows can see, skipping the hidden triangle. ``benchmarks/capture_overhead.py --blocks`` times one layer's
scores both ways; ``benchmarks/results/causal_blocks.md`` gives the ratio at each length."""

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
    try:
        sinks = {_has_sink(m) for _, m in attention_modules(model)}
    except CaptureError as err:
        return str(err)
    if len(sinks) > 1:
        return (f"{type(model).__name__} has a learned sink in some attention layers and none in others, so its rows' parts differ "
                "from layer to layer")
    return None


def _chunks(batch: int, heads: int, queries: int, keys: int, causal: bool):
    """The ``(windows, heads, queries)`` slices the scores are formed in (:data:`CHUNK_BYTES`), queries outermost so
    that a causal block's keys are fixed across its windows and heads."""
    rows = max(1, min(queries, CHUNK_BYTES // (keys * 4)))
    if causal and queries >= CAUSAL_BLOCKS_FROM:
        rows = min(rows, -(-queries // 8))
    block_bytes = rows * keys * 4
    windows = min(batch, max(1, CHUNK_BYTES // block_bytes))
    step = max(1, CHUNK_BYTES // (batch * block_bytes)) if windows == batch else 1
    for first_query in range(0, queries, rows):
        for first in range(0, batch, windows):
            for start in range(0, heads, step):
                yield (slice(first, min(batch, first + windows)), slice(start, min(heads, start + step)),
                       slice(first_query, min(queries, first_query + rows)))


def _head_major(query: torch.Tensor, key: torch.Tensor, groups: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A layer's queries as ``(heads, batch, Q, d)`` and its keys, one per query head, as ``(heads, batch, d, K)``, both
    contiguous: made once per layer, so every chunk's operands are views (no per-chunk copy of the keys)."""
    keys = key.transpose(0, 1)
    if groups > 1:  # the key head of query head h is h // groups
        keys = keys.repeat_interleave(groups, dim=0)
    return query.transpose(0, 1).contiguous(), keys.transpose(2, 3).contiguous()


def _scores(q_heads, k_heads, windows: slice, heads: slice, rows: slice, scaling: float, mask, causal: bool, position_bias) -> torch.Tensor:
    """``z`` for the windows ``windows``, query heads ``heads`` and queries ``rows`` of one layer (operands from
    :func:`_head_major`): float32 ``(windows, heads, rows, seen)``, a view of a head-major ``(heads, windows, rows, seen)``
    tensor, ``−inf`` where a key is hidden, ``seen`` the keys the block can see (``rows.stop + K − Q`` when causal,
    else ``K``).

    ``scaling · (q·kᵀ)`` is one batched matmul over (head, window) pairs; with no mask given, a causal layer's hidden
    triangle enters as an additive ``0 / −inf`` matrix in the same call (``baddbmm``), so the scores are written once."""
    queries, all_keys = q_heads.shape[2], k_heads.shape[3]
    seen = rows.stop + all_keys - queries if causal else all_keys
    q = q_heads[heads, windows, rows]
    h, batch, n_rows, width = q.shape
    q3, k3 = q.reshape(h * batch, n_rows, width), k_heads[heads, windows, :, :seen].reshape(h * batch, width, seen)
    triangle = causal and queries > 1
    if mask is None and triangle and position_bias is None:
        z = torch.baddbmm(_causal_block(rows, queries, all_keys, q.dtype, q.device), q3, k3, alpha=scaling)
    else:
        z = torch.bmm(q3, k3).mul_(scaling)
    z = z.reshape(h, batch, n_rows, seen).transpose(0, 1)
    if position_bias is not None:
        z = z + _block(position_bias[:, heads] if position_bias.shape[1] > 1 else position_bias, rows, seen)
    z = z.float()
    if mask is not None:
        m = _block(mask if mask.shape[1] == 1 else mask[:, heads], rows, seen)
        hidden = ~m if m.dtype == torch.bool else m <= torch.finfo(m.dtype).min / 2
        z = z.masked_fill_(hidden, float("-inf"))
    elif triangle and position_bias is not None:
        z = z.masked_fill_(_causal_block(rows, queries, all_keys, torch.float32, z.device) < 0, float("-inf"))
    return z


def _block(x: torch.Tensor, rows: slice, seen: int) -> torch.Tensor:
    """A mask or bias ``(…, Q or 1, K)`` cut to the queries ``rows`` (a broadcast query axis stays) and the first ``seen`` keys."""
    return x[..., :seen] if x.shape[-2] == 1 else x[..., rows, :seen]


_CAUSAL: dict = {}


def _causal_additive(queries: int, keys: int, dtype, device) -> torch.Tensor:
    """``(Q, K)``: 0 where query ``t`` sees key ``j ≤ t + K − Q``, ``−inf`` elsewhere (kept per shape, dtype and device)."""
    key = (queries, keys, dtype, str(device))
    if key not in _CAUSAL:
        hidden = torch.ones(queries, keys, dtype=torch.bool, device=device).triu_(keys - queries + 1)
        _CAUSAL.clear()
        _CAUSAL[key] = torch.zeros(queries, keys, dtype=dtype, device=device).masked_fill_(hidden, float("-inf"))
    return _CAUSAL[key]


_BLOCK: dict = {}


def _causal_block(rows: slice, queries: int, keys: int, dtype, device) -> torch.Tensor:
    """The rows ``rows`` of :func:`_causal_additive`'s ``(Q, K)`` matrix over the keys they can see, ``(len(rows),
    rows.stop + K − Q)``: the same values, made for one block and kept only while the next call asks for the same block
    (the capture asks for one block across its windows and heads in turn). The whole matrix is ``Q · K`` floats, 268 MB
    at 8,192 tokens; a block of ``Q/8`` rows is at most an eighth of it."""
    seen = rows.stop + keys - queries
    key = (rows.start, rows.stop, queries, keys, dtype, str(device))
    if key not in _BLOCK:
        hidden = torch.ones(rows.stop - rows.start, seen, dtype=torch.bool, device=device).triu_(rows.start + keys - queries + 1)
        _BLOCK.clear()
        _BLOCK[key] = torch.zeros(hidden.shape, dtype=dtype, device=device).masked_fill_(hidden, float("-inf"))
    return _BLOCK[key]


def learned_sinks(model) -> bool:
    """Whether the attention modules of ``model`` hold learned sinks: a per-head ``sinks`` tensor that the softmax
    takes as a column of its own (GPT-OSS and its kin)."""
    return any(_has_sink(m) for _, m in attention_modules(model))


def _has_sink(module) -> bool:
    return torch.is_tensor(getattr(module, "sinks", None))


def _family_eager(module):
    """The ``eager_attention_forward`` of the modeling file that defines ``module``'s class: the model's own attention
    arithmetic, learned sink included."""
    import sys

    own = getattr(sys.modules.get(type(module).__module__), "eager_attention_forward", None)
    if own is None:
        raise CaptureError(f"{type(module).__name__} passes a learned sink, and its modeling file has no eager_attention_forward to compute it with")
    return own


def _additive_mask(mask, query, key, causal: bool):
    """The mask an eager attention function adds to its scores: sdpa's boolean mask (True where a key is seen) as
    ``0 / finfo.min``, or, where sdpa's mask was skipped for ``is_causal``, the causal triangle itself."""
    low = torch.finfo(query.dtype).min
    if mask is None:
        if not causal or query.shape[2] == 1:
            return None
        return _causal_additive(query.shape[2], key.shape[2], query.dtype, query.device).clamp(min=low)[None, None]
    if mask.dtype == torch.bool:
        return torch.zeros(mask.shape, dtype=query.dtype, device=mask.device).masked_fill_(~mask, low)
    return mask


def _with_sink(z: torch.Tensor, sink: torch.Tensor, heads: slice) -> torch.Tensor:
    """The scores ``(windows, heads, rows, keys)`` with the learned sink logits of ``heads`` as part 0."""
    column = sink[heads].to(torch.float32).reshape(1, -1, 1, 1).expand(z.shape[0], -1, z.shape[2], 1)
    return torch.cat([column, z], dim=-1)


def _attention(module, query, key, value, attention_mask, dropout: float = 0.0, scaling: float | None = None, **kwargs):
    """The registered attention function: sdpa's output (the family's own eager output when a learned sink is passed),
    and the scores handed on in chunks of heads."""
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    sink = kwargs.get("s_aux")
    if sink is None:
        output, _ = sdpa_attention_forward(module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs)
    else:
        additive = _additive_mask(attention_mask, query, key, bool(kwargs.get("is_causal", getattr(module, "is_causal", False))))
        output, _ = _family_eager(module)(module, query, key, value, additive, dropout=dropout,
                                          scaling=scaling if scaling is not None else query.shape[-1] ** -0.5, **kwargs)
    state = _active.get("state")
    if state is None:
        return output, None
    layer = state["layers"].get(id(module))
    if layer is None:
        return output, None
    causal = bool(kwargs.get("is_causal", getattr(module, "is_causal", False)))
    if state["causal"] is not None and causal != state["causal"]:
        raise CaptureError(f"{type(module).__name__} attends {'causally' if causal else 'both ways'}, but its model was taken for "
                           f"{'a causal' if state['causal'] else 'a bidirectional'} one, so its rows would be cut or widened; report the model's family")
    if (sink is not None) != state["learned"]:
        raise CaptureError(f"{type(module).__name__} {'passes' if sink is not None else 'does not pass'} a learned sink to the attention "
                           "interface, against what its model's modules declare; attncoda cannot tell its rows' parts")
    state["called"][layer] += 1
    scaling = scaling if scaling is not None else query.shape[-1] ** -0.5
    q_heads, k_heads = _head_major(query, key, query.shape[1] // key.shape[1])
    bias = kwargs.get("position_bias")
    for windows, heads, rows in _chunks(query.shape[0], query.shape[1], query.shape[2], key.shape[2], causal):
        mask = attention_mask[windows] if attention_mask is not None and attention_mask.shape[0] > 1 else attention_mask
        z = _scores(q_heads, k_heads, windows, heads, rows, scaling, mask, causal,
                    bias[windows] if bias is not None and bias.shape[0] > 1 else bias)
        if sink is not None:
            z = _with_sink(z, sink, heads)
        state["on_scores"](layer, heads, rows, z)
        del z
    return output, None


def _register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import ALL_MASK_ATTENTION_FUNCTIONS, sdpa_mask

    AttentionInterface.register(IMPLEMENTATION, _attention)
    ALL_MASK_ATTENTION_FUNCTIONS.register(IMPLEMENTATION, sdpa_mask)


@contextmanager
def capture_scores(model, on_scores: Callable, causal: bool | None = None):
    """Within the block, every forward pass runs sdpa attention and calls ``on_scores(layer, heads, queries, scores)``
    for each chunk of each attention layer: ``heads`` a slice of the layer's query heads, ``queries`` a slice of its
    query positions, ``scores`` their float32 ``(windows, len(heads), len(queries), keys)`` softmax input, ``−inf`` where
    a key is hidden. ``keys`` is every key, or for a causal layer the ``queries.stop + K − Q`` keys its rows can see
    (the rest are hidden). ``windows`` is the whole batch, or consecutive slices of it (:data:`CHUNK_BYTES`), so
    ``on_scores`` must sum over windows and query blocks rather than expect each batch whole. A model with learned
    sinks (:func:`learned_sinks`) hands ``1 + keys`` parts: its sink logit first, then the keys.

    Raises CaptureError up front when the architecture is not covered (:func:`score_path_reason`), during the block
    when a layer attends otherwise than ``causal`` says (when given: the consumer's rows would be cut or widened), and
    after the block when some attention layer ran without calling the function. The model's attention implementation
    is restored on exit.
    """
    reason = score_path_reason(model)
    if reason is not None:
        if learned_sinks(model):  # the eager path drops a learned sink's part: no other capture to point to
            raise CaptureError(f"{reason}; attncoda cannot measure it")
        raise CaptureError(f"{reason}; capture this model with attncoda.engine.capture.capture_attention (eager attention)")
    if _active.get("state") is not None:
        raise CaptureError("a score capture is already running in this process; nest no captures")
    _register()
    modules = attention_modules(model)
    previous = getattr(model.config, "_attn_implementation", "eager")
    model.set_attn_implementation(IMPLEMENTATION)
    state = {"on_scores": on_scores, "layers": {id(m): i for i, (_, m) in enumerate(modules)}, "called": [0] * len(modules),
             "learned": learned_sinks(model), "causal": causal}
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
