"""Attention capture with bounded memory: forward hooks on the attention modules.

With eager attention every attention module returns ``(output, weights)``; a
hook hands each layer's ``(batch, heads, queries, keys)`` weights to a callback
as the layer runs, and nothing keeps them afterwards, so at most one layer's
maps exist at a time. Modules whose ``forward`` takes ``output_attentions``
(MPNet) are asked for their weights through a pre-hook; the model's own
``output_attentions`` stays off, so it never collects all layers.

Logs from logits: the geometry of a softmax row needs only its logarithm, and
``log softmax(z) = z − logsumexp(z)``. While an attention module runs, a torch
function mode records the input of its softmax (the final attention scores, with
mask, scaling and any soft-capping already applied); the callback then gets the
row's log-softmax as well (:class:`LogSoftmax`), so no part underflows and no ε
enters. Float32 probability rows of trained models hold parts down to about 1e-43
(subnormal), whose logarithms are rounding noise. The log-softmax is lazy: a
consumer that reduces rows (the signatures) reads the float32 scores and accumulates
in float64 (``rowstats.row_statistics_from_scores``); ``np.asarray`` of it gives the
full float64 log-softmax for consumers that want the array.

The reduction of each layer's maps (``rowstats.row_statistics`` and the
signature sums) happens in the callback, while only that layer's maps exist.
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from typing import Callable

import torch
from torch.overrides import TorchFunctionMode

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


class _SoftmaxScores(TorchFunctionMode):
    """Remembers the input of the last softmax called while it is active (the attention scores)."""

    SOFTMAX = (torch.nn.functional.softmax, torch.softmax, torch.Tensor.softmax)

    def __init__(self):
        super().__init__()
        self.scores = None

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func in self.SOFTMAX:
            self.scores = args[0]
        return func(*args, **kwargs)


class LogSoftmax:
    """The log-softmax of one layer's attention scores, formed only when asked: ``scores`` is the softmax's input as
    the module computed it, ``(batch, heads, queries, keys)``; ``np.asarray(self)`` is ``log_softmax(scores)`` in
    float64, the full array."""

    def __init__(self, scores):
        self.scores = scores
        self.shape = tuple(scores.shape)

    def __array__(self, dtype=None, copy=None):
        logs = torch.log_softmax(self.scores.to(torch.float64), dim=-1).cpu().numpy()  # the scores may be on a GPU
        return logs if dtype is None else logs.astype(dtype)


@contextmanager
def capture_attention(model, on_weights: Callable, logits: bool = True):
    """Within the block, every forward pass calls ``on_weights(layer, weights, log_weights)`` once per attention layer.

    ``weights`` is the module's ``(batch, heads, queries, keys)`` probability tensor;
    ``log_weights`` is the :class:`LogSoftmax` of the scores that produced it, or None
    when ``logits`` is False or the module computed no softmax of that shape.
    Raises CaptureError after the block if some attention module ran but returned no weights.
    """
    if getattr(getattr(model, "config", None), "is_encoder_decoder", False):
        raise CaptureError("encoder-decoder models are not covered: their cross-attention rows are not a sequence's own attention")
    ensure_eager(model)
    modules = attention_modules(model)
    if any(torch.is_tensor(getattr(m, "sinks", None)) for _, m in modules):
        raise CaptureError(f"{type(model).__name__} has learned attention sinks, and its eager weights drop the sink's part; "
                           "measure it through attncoda.engine.score_capture.capture_scores, which keeps that part")
    produced = [0] * len(modules)
    called = [0] * len(modules)
    handles = []
    active: list[_SoftmaxScores] = []

    def leave():
        while active:
            active.pop().__exit__(None, None, None)

    def enter(module, args, kwargs):
        if logits:
            mode = _SoftmaxScores()
            mode.__enter__()
            active.append(mode)

    def forward_hook(index):
        def hook(module, args, kwargs, output):
            mode = active[-1] if active else None
            leave()
            called[index] += 1
            weights = output[1] if isinstance(output, tuple) and len(output) > 1 else None
            if torch.is_tensor(weights) and weights.dim() == 4:
                produced[index] += 1
                scores = mode.scores if mode is not None else None
                log_weights = None
                if scores is not None and scores.shape == weights.shape:
                    log_weights = LogSoftmax(scores.detach())
                on_weights(index, weights.detach(), log_weights)

        return hook

    def ask_for_weights(place: int):
        def hook(module, args, kwargs):
            if len(args) > place:  # passed by position (DeBERTa, SqueezeBERT): set it there, not twice
                return (*args[:place], True, *args[place + 1 :]), kwargs
            kwargs["output_attentions"] = True
            return args, kwargs

        return hook

    for i, (_, module) in enumerate(modules):
        parameters = inspect.signature(module.forward).parameters
        if "output_attentions" in parameters:
            names = list(parameters)
            by_place = parameters["output_attentions"].kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and not any(
                parameters[n].kind is inspect.Parameter.VAR_POSITIONAL for n in names[: names.index("output_attentions")])
            place = names.index("output_attentions") if by_place else 1 << 30  # keyword-only: never by position
            handles.append(module.register_forward_pre_hook(ask_for_weights(place), with_kwargs=True))
        handles.append(module.register_forward_pre_hook(enter, with_kwargs=True))
        handles.append(module.register_forward_hook(forward_hook(i), with_kwargs=True))
    try:
        yield [n for n, _ in modules]
    finally:
        leave()  # a forward pass that raised inside an attention module never reached its forward hook
        for h in handles:
            h.remove()
    silent = [modules[i][0] for i in range(len(modules)) if called[i] and not produced[i]]
    if silent:
        raise CaptureError(f"{type(model).__name__}: {silent[0]} returned no attention weights under eager attention; this architecture cannot be captured")


def capture_batches(loaded, ids, batch_size: int, on_weights: Callable, on_batch: Callable | None = None) -> None:
    """Run ``loaded``'s backbone over the windows ``ids`` (windows × tokens) in batches of ``batch_size`` under
    :func:`capture_attention`; ``on_batch(batch_ids)`` is called before each pass (to hand an accumulator its tokens)."""
    batches = torch.as_tensor(ids)
    with torch.inference_mode(), capture_attention(loaded.backbone, on_weights):
        for start in range(0, len(batches), batch_size):
            batch = batches[start : start + batch_size]
            if on_batch is not None:
                on_batch(batch.numpy())
            loaded.forward(batch)
