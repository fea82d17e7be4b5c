"""Head ablation: zero chosen heads' slices of the attention output before the output projection (methods: :ref:`methods-pruning`).

Transformers 5 has no ``head_mask``. Every supported architecture concatenates its
heads' outputs ``(batch, tokens, heads·d)`` and feeds them to one linear output
projection; a forward pre-hook on that projection zeroes the slices of the ablated
heads. With grouped-query attention the projection's input holds one slice per
*query* head, so a query head is ablated, never a shared key/value head.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterable

import torch

from ..base.errors import ModelError

OUTPUT_PROJECTIONS = ("self_attn.o_proj", "attention.o_proj", "attn.c_proj", "attention.dense", "attention.output.dense", "attention.attn.o")
"""Names (suffixes) of the modules that project the concatenated heads back to the residual stream."""


def output_projections(model) -> list[tuple[str, torch.nn.Module]]:
    """The attention output projections of ``model``, one per layer, in forward order."""
    found = [(n, m) for n, m in model.named_modules() if n.endswith(OUTPUT_PROJECTIONS) and not n.endswith("mlp.c_proj")]
    if not found:
        raise ModelError(f"{type(model).__name__}: no attention output projection found; heads of this architecture cannot be ablated")
    return found


def _by_layer(heads: Iterable[tuple[int, int]], layers: int, per_layer: int) -> dict[int, list[int]]:
    chosen: dict[int, list[int]] = {}
    for layer, head in heads:
        if not (0 <= layer < layers and 0 <= head < per_layer):
            raise ValueError(f"head ({layer}, {head}) does not exist: the model has {layers} layers of {per_layer} heads")
        chosen.setdefault(int(layer), []).append(int(head))
    return chosen


@contextmanager
def ablate_heads(model, heads: Iterable[tuple[int, int]], n_heads: int):
    """Within the block, the ``(layer, head)`` pairs in ``heads`` contribute nothing to the model's output.

    ``n_heads`` is the number of (query) heads per layer. The hooks are removed when the block ends,
    also when it raises. With no heads, no hook is registered and outputs are bit-identical.
    """
    projections = output_projections(model)
    chosen = _by_layer(heads, len(projections), n_heads)
    handles = []

    def zero(slices):
        def hook(module, args):
            x = args[0]
            width = x.shape[-1] // n_heads
            x = x.clone()
            for h in slices:
                x[..., h * width : (h + 1) * width] = 0
            return (x, *args[1:])

        return hook

    try:
        for layer, slices in chosen.items():
            handles.append(projections[layer][1].register_forward_pre_hook(zero(sorted(slices))))
        yield
    finally:
        for h in handles:
            h.remove()
