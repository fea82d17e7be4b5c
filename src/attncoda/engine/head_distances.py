"""Clark-style head distances of a bidirectional model, computed in one streaming pass (methods: :ref:`methods-clustering`).

The distance between two heads is the mean, over windows and query tokens, of a row
metric between their rows at the same position, on the full ``L``-key support, with
the sink kept or dropped (``𝒞(p_C)``). All layers of one batch of windows are held
at once (their heads are compared across layers); only ``(heads, heads)``
accumulators outlive the batch. Rows come from the float64 log-softmax of the
scores, so ``d_A^⊥`` needs no ε.

Also kept: each head's mean attention to every key position (for the [CLS]-, [SEP]-
and sink-head sets). Results are cached like signatures.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..base.arrays import as_numpy, load_arrays, save_arrays
from ..base.progress import Steps
from ..base.protocol import WINDOW_LENGTH
from ..math.pairdist import PAIR_METRICS, pair_distance_sums_of
from .cache import WindowedMeta

PROTOCOL = "clark-2"
"""Version of the computation, part of the cache key. ``clark-2``: JS's logarithm is fdlibm's, in loops the compiler
vectorizes, and the Gram matrices are BLAS products (``clark-1`` called the C library's ``log`` and ``einsum``; the two
give head distances within about 1e-15 of each other, relative)."""
CONVENTIONS = ("keep", "drop")
KEY_FIELDS = ("model", "weights_sha256", "corpus", "split", "n", "length", "seed", "batch_size", "protocol")
"""What a model's head distances depend on: the cache key hashes exactly these fields of its metadata."""


@dataclass(frozen=True)
class HeadDistanceMeta(WindowedMeta):
    """What one model's head distances were computed from: the model and its windows (the cache key hashes
    :data:`KEY_FIELDS` of them), the keys of its sink, [CLS] and [SEP], its shape, how many query positions were
    averaged and how long the computation took."""

    sink: list
    cls: int
    sep: list
    layers: int
    heads_per_layer: int
    compute_s: float | None = None
    positions: int = 0

    KEY_FIELDS: ClassVar[tuple] = KEY_FIELDS


@dataclass
class HeadDistances:
    """Mean head-to-head distances ``(heads, heads)`` per metric and convention, and mean attention per key ``(heads, L)``."""

    meta: HeadDistanceMeta
    distances: dict[str, dict[str, np.ndarray]]
    key_attention: np.ndarray

    @property
    def heads(self) -> int:
        return self.key_attention.shape[0]


class HeadDistanceAccumulator:
    """Collects one batch's layers, then adds every head pair's distances at every position."""

    def __init__(self, layers: int, heads: int, length: int, sink: tuple[int, ...]):
        self.layers, self.length = layers, length
        content = np.setdiff1d(np.arange(length), sink)
        contiguous = len(content) > 0 and content[-1] - content[0] + 1 == len(content)
        self.content = slice(int(content[0]), int(content[-1]) + 1) if contiguous else content  # a view, not a copy, where it can be
        size = layers * heads
        self.sums = {m: {c: np.zeros((size, size)) for c in CONVENTIONS} for m in PAIR_METRICS}
        self.key_sums = np.zeros((size, length))
        self.positions = 0
        self.pending: dict[int, np.ndarray] = {}

    def update(self, layer: int, weights, log_weights=None) -> None:
        """Keep one layer's float64 log-probabilities ``(batch, heads, L, L)`` until :meth:`flush`."""
        logs = as_numpy(log_weights) if log_weights is not None else np.log(as_numpy(weights).astype(np.float64))
        self.pending[layer] = logs

    def flush(self) -> None:
        """Add the batch held so far (every layer must have arrived)."""
        if sorted(self.pending) != list(range(self.layers)):
            raise RuntimeError(f"attention arrived for layers {sorted(self.pending)}, expected all {self.layers}")
        logs = np.stack([self.pending[i] for i in range(self.layers)], axis=1)  # (batch, layers, heads, L, L)
        self.pending.clear()
        b, layers, heads, q, k = logs.shape
        logs = logs.transpose(0, 3, 1, 2, 4).reshape(b * q, layers * heads, k)  # (positions, all heads, keys)
        keep = np.exp(logs)
        keep /= keep.sum(axis=-1, keepdims=True)
        content = keep[..., self.content]
        drop = content / content.sum(axis=-1, keepdims=True)
        clr = logs[..., self.content] - logs[..., self.content].mean(axis=-1, keepdims=True)
        content_sums = pair_distance_sums_of(clr, ("content",))["content"]
        for c, rows in (("keep", keep), ("drop", drop)):
            for metric, total in pair_distance_sums_of(rows, [m for m in PAIR_METRICS if m != "content"]).items():
                self.sums[metric][c] += total
            self.sums["content"][c] += content_sums  # one code path for both conventions: d_A^⊥ ignores the sink
        self.key_sums += keep.sum(axis=0)
        self.positions += keep.shape[0]

    def finish(self, meta: HeadDistanceMeta) -> HeadDistances:
        if self.positions == 0:
            raise RuntimeError("no attention was captured")
        distances = {m: {c: v / self.positions for c, v in per.items()} for m, per in self.sums.items()}
        return HeadDistances(meta=replace(meta, positions=int(self.positions)), distances=distances, key_attention=self.key_sums / self.positions)



def cache_path(key: dict | HeadDistanceMeta) -> Path:
    """Where a model's head distances are cached: a hash of its :data:`KEY_FIELDS` (``key``: those fields, or the whole
    :class:`HeadDistanceMeta`)."""
    from .cache import key_path

    return key_path("head_distances", key.key() if isinstance(key, HeadDistanceMeta) else key, KEY_FIELDS)


def _save(result: HeadDistances, path: Path) -> None:
    arrays = {f"{m}_{c}": v for m, per in result.distances.items() for c, v in per.items()}
    arrays["key_attention"] = result.key_attention
    save_arrays(path, arrays, {"meta": result.meta.to_json()})


def _load(path: Path) -> HeadDistances | None:
    from .cache import holds_its_key

    found = load_arrays(path)
    if found is None:
        return None
    header, arrays = found
    if not holds_its_key(path, "head_distances", header["meta"], KEY_FIELDS):
        return None
    distances = {m: {c: arrays[f"{m}_{c}"] for c in CONVENTIONS} for m in PAIR_METRICS}
    return HeadDistances(meta=HeadDistanceMeta.from_json(header["meta"]), distances=distances, key_attention=arrays["key_attention"])


def compute(loaded, n: int, length: int, seed: int, corpus: str = "wikipedia", split: str = "sample", batch_size: int = 4,
            progress: bool = False) -> HeadDistances:
    """One pass of the model over ``n`` windows, accumulating head distances with the model's default sink set."""
    import torch

    from .capture import capture_attention
    from .corpus import text_windows
    from .signatures import sink_positions

    info = loaded.info
    if info.causal or info.vision:
        raise ValueError(f"{info.name} is {'causal' if info.causal else 'a vision model'}; Clark-style head distances here are for text encoders "
                         "(every query row spans all keys). Pass a BERT-family model")
    started = time.perf_counter()
    from .models import check_length

    check_length(loaded, length)
    ids, layout = text_windows(loaded.processor, n, length, seed, corpus, split)
    sink = sink_positions(info.default_sink, length, len(layout.prefix), len(layout.suffix))
    acc = HeadDistanceAccumulator(info.layers, info.heads, length, sink)
    batches = range(0, n, batch_size)
    if progress:
        from tqdm.auto import tqdm

        batches = tqdm(batches, desc=f"head distances {info.name}", unit="batch")
    ids = torch.as_tensor(ids)
    steps = Steps(f"{info.name}: head distances, batches of {batch_size} windows", len(range(0, n, batch_size)))
    with torch.inference_mode(), capture_attention(loaded.backbone, acc.update):
        for done, start in enumerate(batches, 1):
            loaded.forward(ids[start : start + batch_size])
            acc.flush()
            steps.step(done)
    meta = HeadDistanceMeta(info.name, info.weights_sha256, corpus, split, int(n), int(length), int(seed), int(batch_size), PROTOCOL,
                            model_info=info.as_dict(), sink=list(sink), cls=0, sep=[int(i) for i in range(length - len(layout.suffix), length)],
                            layers=info.layers, heads_per_layer=info.heads, compute_s=time.perf_counter() - started)
    return acc.finish(meta)


def head_distances(model: str, n: int = 32, length: int = WINDOW_LENGTH, seed: int = 0, corpus: str = "wikipedia", batch_size: int = 4,
                   progress: bool = False, refresh: bool = False) -> HeadDistances:
    """Clark-style head distances of ``model``, from the cache or computed once (:func:`attncoda.engine.cache.cache_or_compute`)."""
    from .cache import cache_or_compute

    def path_for(job, sha, sink):
        return cache_path({"model": model, "weights_sha256": sha, "corpus": corpus, "split": "sample", "n": int(n), "length": int(length),
                           "seed": int(seed), "batch_size": int(batch_size), "protocol": PROTOCOL})

    def make(loaded, job):
        return compute(loaded, n, length, seed, corpus, "sample", batch_size, progress)

    return cache_or_compute(model, (seed,), path_for, _load, _save, make, refresh=refresh)[0]
