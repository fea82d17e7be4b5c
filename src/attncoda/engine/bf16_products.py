"""bfloat16 matrix products on a CPU without bfloat16 instructions (methods: :ref:`methods-pruning`).

The pruning chapter scores its prune sets under bfloat16 autocast, and the collapse suite trains its bf16 runs the
same way. A CPU with ``avx512_bf16`` or AMX runs those products natively. Without them (an AVX2-only CPU, as on most
laptops) torch falls back to a generic kernel several times slower than float32 (``benchmarks/bf16_products.py``).

The product of two bf16 numbers is exact in float32, and native kernels sum those products in float32. So on such a
CPU every bf16 ``mm``, ``addmm``, ``bmm`` and ``baddbmm`` runs as the float32 op on the widened operands, rounded
once to bf16: ``bf16(float32(a) @ float32(b))`` (:class:`Float32Products`). Only the order of the float32 sums
differs from a native kernel, as two native kernels (AMX, avx512_bf16) differ from each other.

:func:`products_path` says which path a bf16 pass on a device takes: ``native`` (any device but the CPU, or a CPU with
bf16 instructions) or ``float32``. A pass on the float32 path gives other bits than a native one, so the caches of
perplexity evaluations and suite runs name it in their keys.
"""

from __future__ import annotations

import contextlib
from contextvars import ContextVar

import torch
from torch.utils._python_dispatch import TorchDispatchMode

PATHS = ("native", "float32")
"""How a bf16 matrix product is computed: by the device's own bf16 kernel, or in float32 on the widened operands."""

PRODUCTS = frozenset({torch.ops.aten.mm.default, torch.ops.aten.addmm.default, torch.ops.aten.bmm.default, torch.ops.aten.baddbmm.default})
"""The matrix products :class:`Float32Products` computes in float32."""

_chosen: ContextVar[str | None] = ContextVar("bf16_products", default=None)


def native_bf16_cpu() -> bool:
    """Whether this CPU has bf16 instructions torch uses (``avx512_bf16`` or AMX tiles)."""
    return bool(torch.cpu._is_avx512_bf16_supported() or torch.cpu._is_amx_tile_supported())


def products_path(device="cpu") -> str:
    """The path of a bf16 pass on ``device`` (see :data:`PATHS`): the one a surrounding :func:`bf16_products` block
    chose, else ``native`` off the CPU or on a CPU with bf16 instructions, else ``float32``."""
    if _chosen.get() is not None:
        return _chosen.get()
    return "native" if torch.device(device).type != "cpu" or native_bf16_cpu() else "float32"


class Float32Products(TorchDispatchMode):
    """Inside the block, ``mm``, ``addmm``, ``bmm`` and ``baddbmm`` whose tensor operands are all bf16 run in float32 on
    the widened operands: ``bf16(float32(a) @ float32(b))``. Every other op passes through."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        tensors = [a for a in args if isinstance(a, torch.Tensor)]
        if func in PRODUCTS and tensors and all(t.dtype == torch.bfloat16 for t in tensors):
            return func(*[a.float() if isinstance(a, torch.Tensor) else a for a in args], **kwargs).to(torch.bfloat16)
        return func(*args, **kwargs)


@contextlib.contextmanager
def bf16_products(device="cpu", path: str | None = None):
    """The bf16 matrix products inside run on ``path`` (:data:`PATHS`; by default :func:`products_path` of ``device``),
    which the block yields. A block inside another keeps the outer block's path: a pass cannot leave float32 products
    half way, and a nested block adds no second mode."""
    if path is not None and path not in PATHS:
        raise ValueError(f"unknown bf16 products path {path!r}; use one of {', '.join(PATHS)}")
    outer = _chosen.get()
    chosen = outer or path or products_path(device)
    token = _chosen.set(chosen)
    try:
        with Float32Products() if chosen == "float32" and outer is None else contextlib.nullcontext():
            yield chosen
    finally:
        _chosen.reset(token)
