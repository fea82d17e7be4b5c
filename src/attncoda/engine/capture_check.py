"""The capture checks itself: one window through the capture path against the model's own forward pass.

The score capture (:mod:`attncoda.engine.score_capture`) runs the model with an attention function of its own. If that
function computed something other than the model's own attention (a learned sink it did not know, an argument it
dropped), every number after it would describe a model that never ran. So the first time a model is captured, one
window goes through both:

- the model's own forward pass, with the attention implementation it was loaded with (eager);
- the capture path (:func:`attncoda.engine.signatures.capture_into`), with consumers that keep nothing.

Each attention module's output and the backbone's last hidden state are compared as a relative difference,
``max |capture − own| / max |own|`` (:func:`relative_difference`). A difference over :data:`TOLERANCE` for the loaded
dtype stops the run with one line naming the model, the largest difference and the first attention layer over the
tolerance. A model that passes is remembered under its weights' identity (which holds its dtype), so the check costs
one extra forward pass of one window, once per model.
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
CHECK_VERSION = 1
"""Part of a passed check's cache key: a change to what the check compares asks every model again."""


@dataclass(frozen=True)
class CaptureCheck:
    """One comparison: the largest relative difference over the attention outputs and the last hidden state, the first
    attention layer (index and module name) whose output is over ``tolerance``, or None, and the tolerance."""

    largest: float
    first_layer: int | None
    first_module: str | None
    tolerance: float

    @property
    def passed(self) -> bool:
        return self.largest <= self.tolerance


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


def _outputs(loaded, window, capture=None) -> tuple[list, object]:
    """Each attention module's output and the backbone's last hidden state for ``window`` (1 × tokens), under
    ``capture`` (a context manager) when given."""
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
            out = loaded.forward(window)
    finally:
        for h in handles:
            h.remove()
    last = getattr(out, "last_hidden_state", None)
    if last is None:
        last = out[0]
    return seen, last.detach().clone()


def compare(loaded, window) -> CaptureCheck:
    """:class:`CaptureCheck` of ``loaded`` on ``window`` (token ids, 1 × tokens): the capture path against the
    model's own forward pass."""
    from .capture import attention_modules
    from .models import load_options
    from .signatures import capture_into

    class Nothing:
        def update(self, *args) -> None:
            pass

        def update_scores(self, *args) -> None:
            pass

    own_layers, own_last = _outputs(loaded, window)
    capture, _ = capture_into(loaded.backbone, Nothing())
    cap_layers, cap_last = _outputs(loaded, window, capture)
    tolerance = TOLERANCE.get(load_options()[0], TOLERANCE["float32"])
    names = [n for n, _ in attention_modules(loaded.backbone)]
    first, largest = None, 0.0
    for i, (a, b) in enumerate(zip(own_layers, cap_layers)):
        if a is None or b is None:
            continue
        d = relative_difference(a, b)
        largest = max(largest, d)
        if first is None and d > tolerance:
            first = i
    largest = max(largest, relative_difference(own_last, cap_last))
    return CaptureCheck(largest, first, names[first] if first is not None else None, tolerance)


def _passed_path(info):
    from ..base.paths import cache_dir, slug

    key = hashlib.sha256(f"{info.weights_sha256}|{info.architecture}|v{CHECK_VERSION}".encode()).hexdigest()[:24]
    return cache_dir() / "capture_checks" / slug(info.name) / f"{key}.json"


def check_capture(loaded, window) -> CaptureCheck | None:
    """Stop with a :class:`~attncoda.engine.capture.CaptureError` in one line when the capture path's forward differs
    from ``loaded``'s own beyond :data:`TOLERANCE`; remember a pass under the model's weights' identity, so a model is
    checked once. Returns the comparison made, or None when an earlier pass is remembered."""
    from ..base.files import atomic_write_json

    path = _passed_path(loaded.info)
    if path.is_file():
        return None
    found = compare(loaded, window)
    if not found.passed:
        where = (f"from attention layer {found.first_layer} ({found.first_module})" if found.first_layer is not None
                 else "in the last hidden state, though no attention layer's output is over it")
        raise CaptureError(f"{loaded.info.name}: the capture's forward pass differs from the model's own by {found.largest:.3g} "
                           f"(relative, tolerance {found.tolerance:g}) {where}; attncoda does not compute this architecture's "
                           "attention as the model does, so it measures nothing from it: report the model's family")
    atomic_write_json(path, {"model": loaded.info.name, "weights": loaded.info.weights_sha256, "largest": found.largest,
                             "tolerance": found.tolerance, "version": CHECK_VERSION})
    return found
