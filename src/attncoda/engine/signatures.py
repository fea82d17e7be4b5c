"""Per-head signatures and row statistics (methods: :ref:`methods-signatures`), with an on-disk cache.

* Signature of a head (causal model): the Aitchison mean, over the N windows, of
  the head's row at the last query position (support: all L keys). Encoders:
  the Aitchison mean over every row of every window.
  - ``logit``: from each row's float64 log-softmax of its attention scores
    (methods: :ref:`methods-zeros`, the log path): ``𝒞(exp(mean ln p))`` with
    ``ln p`` exact, so no ε enters. The default wherever the scores can be captured.
  - ``aitchison[ε]``: the paper's probability path: the float32 probability rows,
    their exact zeros replaced with ε, for each ε of the sweep.
  - ``arithmetic``: the plain mean of the same probability rows.
* Row statistics: per layer, head and query position, the mean over windows of
  row sink mass, ``H``, ``H(π)`` and ``C_A^⊥`` (default sink set of the model),
  from the log-softmax rows when captured. Causal row 0 (the trivial ``[1]``) is NaN.

The cache key is a hash of the model, its weights checksum, the corpus, N, L,
the seed, the batch size (batching changes the last bits of a forward pass),
the ε sweep and the protocol version; files are written atomically
and carry a hash of their arrays, so a damaged file is detected and recomputed.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import ClassVar

import numpy as np

from ..base.arrays import as_numpy, load_arrays, save_arrays
from ..base.progress import Steps
from ..base.protocol import BATCH_SIZE, DEFAULT_EPS, EPS_SWEEP, N_WINDOWS, WINDOW_LENGTH
from ..math.coda import closure, replace_zeros
from ..math.rowstats import STATISTICS
from .cache import WindowedMeta

PROTOCOL_VERSION = 5
"""2: exact-zero replacement only; float64 log-softmax signatures; one-document encoder windows; model-specific sink sets.
3: the log path reduces the scores in float64 inside the row kernel, one ``exp`` per element (no float64 log-softmax
array); it agrees with 2 to rounding (``benchmarks/capture_overhead.py``, ``tests/engine/test_capture.py``).
4: the forward pass runs sdpa attention and the scores are formed beside it (:mod:`attncoda.engine.score_capture`), for
every model whose attention goes through transformers' interface; the others keep eager attention (``meta.capture``
says which). Hidden states now follow sdpa's output, which agrees with eager's to float32 rounding, not bit for bit
(``tests/engine/test_score_capture.py``).
5: the row kernel sums on vector lanes, with an ``exp`` of its own (``rowstats._exp_nonpositive``, within 2 ulp of
libm's), so its sums' order, not their terms, changes: statistics and log-sum-exps agree with 4's to about 1e-13
relative. Scores reach the accumulator in blocks of queries; a causal block of a long window (from
``score_capture.CAUSAL_BLOCKS_FROM`` queries) stops at the keys its rows can see."""

SINK_SETS = {
    "learned": "the learned sink (a per-head logit the softmax adds as a part of its own, part 0 of a row)",
    "first": "key 0 (the first token)",
    "first4": "keys 0-3 (the first four tokens)",
    "cls_sep": "[CLS] and every [SEP]",
    "cls": "[CLS] alone",
}
ALTERNATIVE_SINK = {"learned": "first", "first": "first4", "cls_sep": "cls", "given": "first4"}
"""The alternative sink definition Table 8 compares each default against."""


def virtual_parts(default_sink: str) -> int:
    """How many parts a row holds before its first key: 1 for a model with a learned sink (default sink set
    ``learned``), whose softmax adds a per-head logit as a column of its own, else 0."""
    return 1 if default_sink == "learned" else 0


def sink_positions(kind: str, length: int, prefix: int = 0, suffix: int = 0, virtual: int = 0) -> tuple[int, ...]:
    """Part indices of a sink set for a window of ``length`` positions, in a row of ``virtual + length`` parts whose
    first ``virtual`` parts are learned sinks (key ``j`` is part ``virtual + j``). A learned sink holds no token's
    content, so it is in every sink set of its model: the sets below add their keys to it.

    ``learned``: part 0, the learned sink alone (``virtual`` = 1). ``first``: key 0. ``first4``: keys 0-3. ``cls_sep``
    (windows with a suffix, the encoders): [CLS] (key 0) and every [SEP] (the last ``suffix`` keys). ``cls``: [CLS] alone.

    Examples
    --------
    >>> sink_positions("cls_sep", 128, prefix=1, suffix=1)
    (0, 127)
    >>> sink_positions("first4", 128)
    (0, 1, 2, 3)
    >>> sink_positions("learned", 128, virtual=1), sink_positions("first", 128, virtual=1)
    ((0,), (0, 1))
    """
    if kind == "learned":
        if virtual < 1:
            raise ValueError("the sink set 'learned' needs a model with learned attention sinks (GPT-OSS and its kin); this one has none "
                             "(use 'first')")
        return (0,)
    if kind in ("first", "cls"):
        keys: tuple[int, ...] = (0,)
    elif kind == "first4":
        keys = (0, 1, 2, 3)
    elif kind == "cls_sep":
        if suffix < 1:
            raise ValueError("the sink set cls_sep needs windows that end in [SEP], and this model's tokenizer closes a text with none "
                             "(use 'first')")
        keys = (0, *range(length - suffix, length))
    else:
        raise ValueError(f"unknown sink set {kind!r}; use one of {', '.join(SINK_SETS)}")
    return (*range(virtual), *(virtual + k for k in keys))


def sink_sets_for(default: str, length: int, prefix: int, suffix: int) -> dict[str, list[int]]:
    """The default sink set of a model and the alternative Table 8 compares it with, as part indices
    (:func:`sink_positions`, with the model's :func:`virtual_parts`)."""
    virtual = virtual_parts(default)
    return {k: list(sink_positions(k, length, prefix, suffix, virtual)) for k in (default, ALTERNATIVE_SINK[default])}


KEY_FIELDS = ("model", "weights_sha256", "default_sink", "corpus", "split", "n", "length", "seed", "batch_size", "eps_values", "protocol")
"""What a set of signatures depends on: the cache key hashes exactly these fields of its metadata."""


class NonFiniteAttention(ValueError):
    """Raised inside the capture when a layer's attention rows hold NaN or infinity; :func:`compute_spec` names the model."""

    def __init__(self, layer: int):
        super().__init__(f"layer {layer} gives NaN or infinite attention")
        self.layer = layer


@dataclass(frozen=True)
class WindowLayout:
    """Where a window's text sits among its special tokens: ``prefix_tokens`` before it (a [CLS], or a BOS the
    tokenizer or the corpus prepends), ``suffix_tokens`` after it (a [SEP])."""

    prefix_tokens: int
    suffix_tokens: int
    bos_prepended: bool


@dataclass(frozen=True)
class SignatureMeta(WindowedMeta):
    """What one set of signatures was computed from: the model and its windows, its default sink set and the ε sweep
    (the cache key hashes :data:`KEY_FIELDS` of them), and what the readings need besides (its sink sets, the windows'
    layout, how the scores were captured, whether the log-softmax path was)."""

    default_sink: str
    eps_values: list
    sink_sets: dict
    layout: WindowLayout
    causal: bool
    corpus_attribution: str = ""
    capture: str = "eager"
    log_path: bool = False

    KEY_FIELDS: ClassVar[tuple] = KEY_FIELDS
    NESTED: ClassVar[dict] = {"layout": WindowLayout}


@dataclass
class Signatures:
    """Signatures and row statistics of one model on one sample: signatures ``(layers, heads, P)`` over a row's parts
    (``P = L``, or ``L + 1`` with a learned sink as part 0), row statistics ``(layers, heads, L)`` over query rows."""

    meta: SignatureMeta
    aitchison: dict[float, np.ndarray]
    arithmetic: np.ndarray
    stats: dict[str, np.ndarray]
    logit: np.ndarray | None = None
    zeros: int = 0
    timings: dict = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int, int]:
        return self.arithmetic.shape

    @property
    def default_kind(self) -> str:
        """``logit`` when the log-softmax path was captured, else ``aitchison``."""
        return "logit" if self.logit is not None else "aitchison"

    def heads(self, kind: str | None = None, eps: float = DEFAULT_EPS) -> np.ndarray:
        """All heads' signatures as ``(layers·heads, L)`` rows (layers pooled).

        ``kind``: ``logit`` (float64 log-softmax path), ``aitchison`` (probability path at ``eps``),
        ``arithmetic``; default :attr:`default_kind`.
        """
        kind = kind or self.default_kind
        if kind == "logit":
            if self.logit is None:
                raise ValueError("these signatures have no log-softmax path (the scores could not be captured); use kind='aitchison'")
            rows = self.logit
        elif kind == "aitchison":
            rows = self.aitchison[eps]
        elif kind == "arithmetic":
            rows = self.arithmetic
        else:
            raise ValueError(f"unknown signature kind {kind!r}; use 'logit', 'aitchison' or 'arithmetic'")
        return rows.reshape(-1, rows.shape[-1])

    def sink(self, kind: str | None = None) -> tuple[int, ...]:
        """Key indices of a sink set (default: the model's default)."""
        kind = kind or self.meta.default_sink
        if kind not in self.meta.sink_sets:
            raise ValueError(f"sink set {kind!r} is not defined for this model; it has {', '.join(self.meta.sink_sets)}")
        return tuple(self.meta.sink_sets[kind])

    @property
    def alternative_sink(self) -> str:
        return ALTERNATIVE_SINK[self.meta.default_sink]

    @property
    def first_row(self) -> int:
        """First query row the row statistics cover: 1 for causal models (row 0 is the trivial [1]), else 0."""
        return 1 if self.meta.causal else 0

    def row_mean(self, statistic: str) -> float:
        """Mean of a row statistic over layers, heads and the covered query rows."""
        return float(np.nanmean(self.stats[statistic][:, :, self.first_row :]))

    def layer_means(self, statistic: str) -> np.ndarray:
        """Per-layer mean of a row statistic over heads and the covered query rows."""
        return np.nanmean(self.stats[statistic][:, :, self.first_row :], axis=(1, 2))


class SignatureAccumulator:
    """Running sums, fed one layer's attention at a time (see :mod:`attncoda.engine.capture`)."""

    torch_reductions = False
    """Reduce scores with torch even on the CPU (the branch scores on a GPU take; tests hold the two branches together)."""

    def __init__(self, layers: int, heads: int, length: int, causal: bool, sink: tuple[int, ...], eps_values=EPS_SWEEP, stats_eps: float = DEFAULT_EPS,
                 virtual: int = 0):
        self.causal, self.eps_values, self.stats_eps = causal, tuple(eps_values), stats_eps
        self.length, self.virtual = length, virtual  # queries per window; learned-sink parts before key 0 (virtual_parts)
        self.parts = length + virtual
        self.sink = tuple(int(j) % self.parts for j in sink)  # part indices: the learned sink first, then keys from the window's start
        shape = (layers, heads, self.parts)
        self.log_sums = {e: np.zeros(shape) for e in self.eps_values}
        self.logit_sums = np.zeros(shape)
        self.sums = np.zeros(shape)
        self.rows = np.zeros(layers, dtype=np.int64)
        self.logit_rows = np.zeros(layers, dtype=np.int64)
        self.zeros = 0
        self.stat_sums = {s: np.zeros((layers, heads, length)) for s in STATISTICS}
        self.stat_counts = {s: np.zeros((layers, heads, length)) for s in STATISTICS}

    def _picked(self, maps: np.ndarray) -> np.ndarray:
        """The rows a signature averages, as ``(rows, heads, L)``: the last query (causal) or every query (encoders)."""
        return maps[:, :, -1, :] if self.causal else maps.transpose(0, 2, 1, 3).reshape(-1, maps.shape[1], maps.shape[-1])

    def update(self, layer: int, weights, log_weights=None) -> None:
        """Add one batch of one layer: ``(batch, heads, L, L)`` probabilities and (optionally) their log-probabilities,
        as torch tensors or numpy arrays, or a :class:`~attncoda.engine.capture.LogSoftmax` of the scores (reduced
        from the scores in two passes, :func:`~attncoda.math.rowstats.row_statistics_from_scores`)."""
        from ..math.rowstats import row_statistics, row_statistics_from_scores

        self._check_shape(weights.shape)
        maps = as_numpy(weights)  # a view: (batch, heads, L, L) float32
        heads = slice(None)
        self._add_probability_rows(layer, heads, self._picked(maps))
        scores = getattr(log_weights, "scores", None)
        if scores is not None:  # two float64 passes over the float32 scores, no log-softmax array
            z = as_numpy(scores)
            stats, lse = row_statistics_from_scores(z, self.sink, self.causal)
            self._add_logits(layer, heads, z, lse)
        elif log_weights is not None:
            logs = as_numpy(log_weights)
            self.logit_sums[layer] += self._picked(logs).sum(axis=0)
            self.logit_rows[layer] += maps.shape[0] * (1 if self.causal else maps.shape[2])
            stats = row_statistics(logs, self.sink, self.causal, self.stats_eps, logs=True)
        else:
            stats = row_statistics(maps, self.sink, self.causal, self.stats_eps)
        self._add_stats(layer, heads, stats)

    def update_scores(self, layer: int, heads: slice, queries: slice, scores) -> None:
        """Add one chunk of one layer from its scores alone (:func:`~attncoda.engine.score_capture.capture_scores`):
        ``scores`` is the softmax's float32 input ``(windows, len(heads), len(queries), keys)`` for the query positions
        ``queries``, ``−inf`` where a key is hidden, as a torch tensor on any device; a causal block may stop at the
        ``queries.stop`` keys its rows can see. The probability rows a signature averages are ``softmax(scores)`` in
        float32 (as eager attention computes them); the row statistics come from the compiled kernel on the CPU, or
        from :func:`~attncoda.engine.device_rowstats.row_statistics_torch` on the scores' own device, whose per-row
        results alone go to the host."""
        import torch

        from .device_rowstats import row_statistics_torch

        length = self.length
        queries = slice(*queries.indices(length))
        self._check_block(queries, scores.shape)
        sink = tuple(j for j in self.sink if j < scores.shape[-1])  # a causal block's rows cannot see a later sink key
        holds_last = queries.stop == length
        if not self.causal or holds_last:
            picked = scores[:, :, -1, :] if self.causal else scores.transpose(1, 2).reshape(-1, scores.shape[1], scores.shape[-1])
            self._add_probability_rows(layer, heads, as_numpy(torch.softmax(picked, dim=-1, dtype=torch.float32)))
        if scores.device.type == "cpu" and not self.torch_reductions:
            stats, lse = _kernel_statistics(scores, sink, self.causal)
            if not self.causal or holds_last:
                self._add_logits(layer, heads, as_numpy(scores), lse)
        else:
            stats, lse = row_statistics_torch(scores, sink, self.causal)
            if self.causal and holds_last:
                self._add_logit_sums(layer, heads, scores.shape[0], as_numpy((scores[:, :, -1, :].double() - lse[:, :, -1, None]).sum(dim=0)))
            elif not self.causal:
                sums = torch.where(torch.isfinite(scores), scores.double(), 0.0).sum(dim=(0, 2)) - lse.sum(dim=(0, 2))[:, None]
                self._add_logit_sums(layer, heads, scores.shape[0] * scores.shape[2], as_numpy(sums))
            stats = {k: as_numpy(v) for k, v in stats.items()}
        self._add_stats(layer, heads, stats, queries)

    def _check_block(self, queries: slice, shape) -> None:
        length, parts = self.length, self.parts
        keys = shape[-1]
        expected = queries.stop + self.virtual if self.causal and keys < parts else parts
        if shape[-2] != queries.stop - queries.start or keys != expected:
            learned = f" (the learned sink and {expected - self.virtual} keys)" if self.virtual else ""
            raise ValueError(f"expected scores of queries {queries.start}..{queries.stop - 1} over {expected} parts{learned} of a "
                             f"{length}-token window, got {tuple(shape[-2:])}")

    def _check_shape(self, shape) -> None:
        if self.virtual:
            raise ValueError("a model with learned sinks is measured from its scores (capture_scores); its eager weights drop the sink part")
        length = self.length
        if shape[-1] != length or shape[-2] != length:
            raise ValueError(f"expected {length}×{length} attention maps, got {tuple(shape[-2:])}")

    def _add_probability_rows(self, layer: int, heads: slice, picked: np.ndarray) -> None:
        """The probability path's sums from the picked float32 rows ``(rows, heads, L)``, re-closed in float64."""
        rows = picked.astype(np.float64)
        if not np.isfinite(rows).all():
            raise NonFiniteAttention(layer)
        rows = rows / rows.sum(axis=-1, keepdims=True)
        self.sums[layer, heads] += rows.sum(axis=0)
        self.zeros += int(np.count_nonzero(rows == 0))
        for e in self.eps_values:
            self.log_sums[e][layer, heads] += np.log(replace_zeros(rows, e)).sum(axis=0)
        if heads == slice(None) or heads.start == 0:  # each window's rows are counted once per layer
            self.rows[layer] += rows.shape[0]

    def _add_logits(self, layer: int, heads: slice, z: np.ndarray, lse: np.ndarray) -> None:
        """The log path's sums from the scores ``z`` ``(batch, heads, L, L)`` and their rows' log-sum-exp."""
        if self.causal:  # the last query spans every key
            sums = (z[:, :, -1, :].astype(np.float64) - lse[:, :, -1, None]).sum(axis=0)
        else:  # Σ_t (z_tj − lse_t), summed over windows and queries
            sums = z.sum(axis=(0, 2), dtype=np.float64) - lse.sum(axis=(0, 2))[:, None]
        self._add_logit_sums(layer, heads, z.shape[0] * (1 if self.causal else z.shape[2]), sums)

    def _add_logit_sums(self, layer: int, heads: slice, rows: int, sums: np.ndarray) -> None:
        self.logit_sums[layer, heads] += sums
        if heads == slice(None) or heads.start == 0:
            self.logit_rows[layer] += rows

    def _add_stats(self, layer: int, heads: slice, stats: dict, queries: slice = slice(None)) -> None:
        for name, v in stats.items():
            ok = np.isfinite(v)
            self.stat_sums[name][layer, heads, queries] += np.where(ok, v, 0.0).sum(axis=0)
            self.stat_counts[name][layer, heads, queries] += ok.sum(axis=0)

    def row_means(self) -> dict[str, np.ndarray]:
        """Each row statistic's mean over windows, ``(layer, head, query row)``: NaN where no row was seen, and at a
        causal row 0 (one key: nothing to split)."""
        with np.errstate(invalid="ignore"):
            stats = {k: np.where(self.stat_counts[k] > 0, self.stat_sums[k] / np.maximum(self.stat_counts[k], 1), np.nan) for k in STATISTICS}
        if self.causal:
            for v in stats.values():
                v[:, :, 0] = np.nan
        return stats

    def finish(self, meta: SignatureMeta) -> Signatures:
        if np.any(self.rows == 0):
            raise RuntimeError("some layers received no attention; capture failed")
        n = self.rows[:, None, None]

        def geometric(log_sum, count):
            m = log_sum / count
            return closure(np.exp(m - m.max(axis=-1, keepdims=True)))

        aitchison = {e: geometric(s, n) for e, s in self.log_sums.items()}
        logit = geometric(self.logit_sums, n) if np.array_equal(self.logit_rows, self.rows) else None
        stats = self.row_means()
        meta = replace(meta, log_path=logit is not None)
        return Signatures(meta=meta, aitchison=aitchison, arithmetic=self.sums / n, stats=stats, logit=logit, zeros=self.zeros)


def _kernel_statistics(scores, sink, causal: bool) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """:func:`~attncoda.math.rowstats.row_statistics_from_scores` of ``(windows, heads, Q, K)`` CPU scores, read in
    place when they are a head-major tensor seen window-first (as :mod:`~attncoda.engine.score_capture` hands them),
    so the kernel copies nothing."""
    from ..math.rowstats import row_statistics_from_scores

    head_major = scores.transpose(0, 1)
    if not head_major.is_contiguous():
        return row_statistics_from_scores(as_numpy(scores), sink, causal)
    stats, lse = row_statistics_from_scores(as_numpy(head_major), sink, causal)
    return {k: v.swapaxes(0, 1) for k, v in stats.items()}, lse.swapaxes(0, 1)


# --------------------------------------------------------------------------- cache




@dataclass(frozen=True)
class SignatureSpec:
    """How a model's signatures are measured, apart from the model and the seed: ``n`` windows of ``length`` tokens
    from ``split`` of ``corpus``, ``batch_size`` windows per forward pass (batching changes a pass's last bits), and
    the ε sweep of the probability path.

    Examples
    --------
    >>> SignatureSpec(n=4, length=24).key("m", "sha", "first", seed=0)["n"]
    4
    """

    n: int = N_WINDOWS
    length: int = WINDOW_LENGTH
    corpus: str = "wikipedia"
    split: str = "sample"
    batch_size: int = BATCH_SIZE
    eps_values: tuple = EPS_SWEEP

    def key(self, model: str, weights_sha256: str, default_sink: str, seed: int, n: int | None = None, length: int | None = None,
            corpus: str | None = None) -> dict:
        """The :data:`KEY_FIELDS` of one model's signatures for one seed (``n``, ``length`` and ``corpus`` as measured, when
        the model decides them: a vision model's length is its patch count, its corpus is images)."""
        values = (model, weights_sha256, default_sink, corpus or self.corpus, self.split, int(self.n if n is None else n),
                  int(self.length if length is None else length), seed, self.batch_size, [float(e) for e in self.eps_values], PROTOCOL_VERSION)
        return dict(zip(KEY_FIELDS, values))


def _arrays(sig: Signatures) -> dict[str, np.ndarray]:
    out = {f"aitchison_{e:g}": v for e, v in sig.aitchison.items()}
    out["arithmetic"] = sig.arithmetic
    if sig.logit is not None:
        out["logit"] = sig.logit
    out["zeros"] = np.array(sig.zeros, dtype=np.int64)
    out.update({f"stat_{k}": v for k, v in sig.stats.items()})
    return out


def cache_path(key: dict | SignatureMeta) -> Path:
    """Where a set of signatures is cached: a hash of its :data:`KEY_FIELDS` (``key``: those fields, or the whole
    :class:`SignatureMeta`)."""
    from .cache import key_path

    return key_path("signatures", key.key() if isinstance(key, SignatureMeta) else key, KEY_FIELDS)


def save(sig: Signatures, path: Path) -> None:
    save_arrays(path, _arrays(sig), {"meta": sig.meta.to_json(), "timings": sig.timings})


def load(path: Path) -> Signatures | None:
    """Read a cached file; None if it is missing, unreadable, its arrays do not match their hash, or the key stored in it
    is not the one its path names."""
    from .cache import holds_its_key

    found = load_arrays(path)
    if found is None:
        return None
    header, arrays = found
    if not holds_its_key(path, "signatures", header["meta"], KEY_FIELDS):
        return None
    meta = SignatureMeta.from_json(header["meta"])
    aitchison = {float(e): arrays[f"aitchison_{float(e):g}"] for e in meta.eps_values}
    stats = {k: arrays[f"stat_{k}"] for k in STATISTICS}
    return Signatures(meta=meta, aitchison=aitchison, arithmetic=arrays["arithmetic"], stats=stats, logit=arrays.get("logit"),
                      zeros=int(arrays["zeros"]), timings=header.get("timings", {}))


# --------------------------------------------------------------------------- computing


def compute(loaded, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, seed: int = 0, corpus: str = "wikipedia", split: str = "sample",
            batch_size: int = BATCH_SIZE, eps_values=EPS_SWEEP, progress: bool = False, images=None) -> Signatures:
    """Run the model's backbone over ``n`` windows and reduce every layer's attention as it is produced (the options are
    the fields of :class:`SignatureSpec`; :func:`compute_spec` takes one)."""
    return compute_spec(loaded, SignatureSpec(n, length, corpus, split, batch_size, tuple(eps_values)), seed, progress, images)


def compute_spec(loaded, spec: SignatureSpec, seed: int = 0, progress: bool = False, images=None, companion=None) -> Signatures:
    """:func:`compute` for one :class:`SignatureSpec`.

    ``companion`` shares the forward pass: ``companion.start(loaded, meta)`` returns a second accumulator (with
    ``update``, ``update_scores`` and an ``ids`` attribute set to each text batch) fed the same attention as the
    signatures, and ``companion.finish(loaded, meta, accumulator)`` is called after the last batch."""
    import torch

    from .corpus import ATTRIBUTION, sample_images, text_windows
    from .score_capture import score_path_reason

    info = loaded.info
    n, length, batch_size = spec.n, spec.length, spec.batch_size
    started = time.perf_counter()
    if info.vision:
        pixels = images if images is not None else sample_images(n, getattr(loaded.model.config, "image_size", 224), seed)
        batches_in = loaded.processor(images=list(pixels), return_tensors="pt")["pixel_values"]
        prefix = suffix = 0
        length = _vision_length(loaded, batches_in[:1])
        corpus_name = "images"
    else:
        from .models import check_length

        from .corpus import longest_window

        check_length(loaded, length, lambda usable: longest_window(loaded.processor, n, usable, spec.corpus, spec.split))
        if info.attention_window and length > info.attention_window:
            raise ValueError(
                f"L = {length} exceeds {info.name}'s sliding attention window of {info.attention_window} keys, so a row would not "
                f"span keys 0..t; use --length {info.attention_window} or less"
            )
        ids, layout = text_windows(loaded.processor, n, length, seed, spec.corpus, spec.split)
        batches_in = torch.as_tensor(ids)
        prefix, suffix = len(layout.prefix), len(layout.suffix)
        corpus_name = spec.corpus
    default = info.default_sink
    sink_sets = sink_sets_for(default, length, prefix, suffix)
    acc = SignatureAccumulator(info.layers, info.heads, length, info.causal, tuple(sink_sets[default]), spec.eps_values,
                               virtual=virtual_parts(default))
    backbone = loaded.backbone
    score_path = score_path_reason(backbone) is None
    meta = SignatureMeta(
        **spec.key(info.name, info.weights_sha256, default, seed, n=batches_in.shape[0], length=length, corpus=corpus_name),
        model_info=info.as_dict(), corpus_attribution=ATTRIBUTION.get(corpus_name, "images given by the caller"), sink_sets=sink_sets,
        layout=WindowLayout(prefix, suffix, bool(prefix) and info.causal), causal=info.causal,
        capture="scores beside sdpa" if score_path else "eager",
    )
    extra = companion.start(loaded, meta) if companion is not None else None
    chunks = range(0, batches_in.shape[0], batch_size)
    if progress:
        from tqdm.auto import tqdm

        from ..base.terminal import visible

        chunks = tqdm(chunks, desc=f"signatures {visible(info.name)}", unit="batch")  # a folder name may hold a newline or an escape
    steps = Steps(f"{info.name} seed {seed}: signatures, batches of {batch_size} windows", len(range(0, batches_in.shape[0], batch_size)))
    from .capture_check import check_capture

    check_capture(loaded, batches_in[:1])  # once per model: the capture path's forward is the model's own
    capture, _ = capture_into(backbone, acc, extra, model=loaded.info.name)
    with torch.inference_mode(), capture:
        for done, start in enumerate(chunks, 1):
            if extra is not None and not info.vision:
                extra.ids = batches_in[start : start + batch_size].numpy()
            try:
                loaded.forward(batches_in[start : start + batch_size])
            except NonFiniteAttention as bad:
                from ..base.errors import ModelError
                from .models import load_options

                raise ModelError(f"{info.name}: layer {bad.layer} gives NaN or infinite attention on seed {seed}'s windows (its weights hold "
                                 f"NaN or infinite values, or overflow in {load_options()[0]}); nothing is computed from it: "
                                 "check the weights, or load it in float32") from None
            steps.step(done)
    sig = acc.finish(meta)
    if extra is not None:
        companion.finish(loaded, meta, extra)
    sig.timings = {"compute_s": time.perf_counter() - started}
    return sig


def capture_into(backbone, acc, extra=None, model: str | None = None):
    """The capture that feeds ``acc`` (and ``extra``, when given, first: it must leave the tensors as it found them)
    during a forward pass of ``backbone``, and whether it is the score path: scores beside sdpa where the model's
    attention allows it, its eager weights otherwise. ``model`` names the model in a refusal of a layer's shape."""
    from .capture import CaptureError, capture_attention
    from .score_capture import capture_scores, learned_sinks, score_path_reason

    reason = score_path_reason(backbone)
    score_path = reason is None
    if not score_path and learned_sinks(backbone):
        raise CaptureError(f"{reason}; and its eager weights drop the learned sink's part, so no capture keeps its rows whole")
    name = "update_scores" if score_path else "update"
    feeds = [getattr(a, name) for a in (extra, acc) if a is not None]

    def feed(*args) -> None:
        _check_layer(acc, args[0], args[-1].shape if score_path else args[1].shape, score_path, model)
        for f in feeds:
            f(*args)

    return (capture_scores(backbone, feed, causal=getattr(acc, "causal", None)) if score_path else capture_attention(backbone, feed)), score_path


def _check_layer(acc, layer: int, shape, score_path: bool, model: str | None = None) -> None:
    """Stop, in one line, where a captured layer does not have the shape the model's config promised the accumulator:
    more attention modules than layers, or weights that are not ``(windows, heads, L, L)`` (a family whose attention is
    not one self-attention per layer in that form: cross-attention in a decoder, heads folded into the batch, a
    decoder's own head count, tokens added inside the model, local attention blocks)."""
    from .capture import CaptureError

    sums = getattr(acc, "sums", None)
    if sums is None:  # an accumulator without a layer grid checks its own input
        return
    layers, heads = sums.shape[:2]
    who = f"{model}: " if model else ""
    advice = "this family's attention is not the one self-attention per layer its config describes; report the model's family"
    if layer >= layers:
        raise CaptureError(f"{who}it has more attention modules than its config's {layers} layers (cross-attention, or attention "
                           f"outside the layer stack): {advice}")
    if score_path:
        if len(shape) != 4 or shape[-3] > heads:  # the score path may hand a layer's heads in blocks
            raise CaptureError(f"{who}attention layer {layer} gave scores of shape {tuple(shape)} where its config names {heads} heads: {advice}")
    elif len(shape) != 4 or shape[-3] != heads or (not getattr(acc, "virtual", 0) and tuple(shape[-2:]) != (acc.length, acc.length)):
        raise CaptureError(f"{who}attention layer {layer} gave weights of shape {tuple(shape)} where its config promises "
                           f"(windows, {heads}, {acc.length}, {acc.length}): {advice}")


def _vision_length(loaded, one) -> int:
    import torch

    with torch.inference_mode():
        return int(loaded.forward(one).last_hidden_state.shape[1])


def signature_sets(model: str, seeds=(0,), n: int = N_WINDOWS, length: int = WINDOW_LENGTH, corpus: str = "wikipedia", split: str = "sample",
                   batch_size: int = BATCH_SIZE, eps_values=EPS_SWEEP, progress: bool = False, loaded=None, refresh: bool = False,
                   spec: SignatureSpec | None = None, companion=None, ref=None) -> list[Signatures]:
    """One model's signatures for each seed, from the cache or computed (:func:`attncoda.engine.cache.cache_or_compute`:
    the model is loaded once, only when some seed is missing; a Hub id is always loaded, since its weights'
    identity is known only after the download). ``spec``, when given, replaces the options it holds; ``companion``
    shares each computed seed's forward pass (:func:`compute_spec`); ``ref`` is ``model`` already resolved."""
    from .cache import cache_or_compute

    spec = spec or SignatureSpec(n, length, corpus, split, batch_size, tuple(eps_values))

    def path_for(seed, sha, sink):
        return cache_path(spec.key(model, sha, sink, seed))

    def make(loaded_model, seed):
        return compute_spec(loaded_model, spec, seed, progress, companion=companion)

    return cache_or_compute(model, tuple(seeds), path_for, load, save, make, loaded, refresh, ref)


def get_signatures(model: str, seed: int = 0, **options) -> Signatures:
    """One seed's signatures (see :func:`signature_sets`, which takes the same options)."""
    return signature_sets(model, (seed,), **options)[0]
