"""Where attention goes, for ``attncoda audit``: by key position, by token, and to the most recent keys, over every
row of every layer and head; and the row statistics of any chosen sink set.

A signature holds the last row of each head, so a sink on a token type at varying positions (".", a newline, an
end-of-text) or on the most recent keys cannot be told apart from a fixed-position sink there. Here every row
``t`` counts, and keys within :data:`RECENT` of the query are set apart:

* ``positions``: the mean weight a key at position ``j`` receives from the rows that see it from afar;
* ``tokens``: the mean weight a key holding token ``v`` receives, per (row, occurrence), for tokens seen at least
  :data:`MIN_OCCURRENCES` times;
* ``recent_mass``: the mean total weight a row puts on its :data:`RECENT` nearest keys (itself included);
* ``chosen_sink``: mean row sink mass and per-layer mean ``H`` and ``H(π)`` for the sink keys given; None when they
  are the model's own sink set, whose row statistics the signatures already hold.
"""

from __future__ import annotations

import functools
import json

import numpy as np

from ..base.protocol import BATCH_SIZE

RECENT = 3
"""Keys within this many positions of the query (the query's own included) are the recent keys."""
MIN_OCCURRENCES = 20
"""A token is ranked only when it occurs at least this many times in the windows (rarer ones are noise)."""
TOP = 5
MAPS_VERSION = 3
"""Part of each cached map's key, raised when the sums change (3: far weights alone, in one product per block), so maps
cached before are not reused."""


class AttentionMapAccumulator:
    """Running sums over rows, fed one layer (or one block of a layer's heads and query rows) at a time; set
    :attr:`ids` to the batch's token ids before its forward pass.

    It takes whole maps (:meth:`update`, what an eager capture or a saved file gives) or the softmax's input in blocks
    (:meth:`update_scores`, what the signatures' score capture gives), so it can share the signatures' forward pass.
    Every reduction is a torch reduction on the block's own device; only per-key sums go to the host. The far and
    recent keys are never stored as ``L × L`` masks: a row's recent keys are three diagonals, and the far keys are
    everything else it sees (a causal row sees nothing later, so its hidden keys weigh 0)."""

    def __init__(self, layers: int, length: int, causal: bool, sink, chosen: bool = True, virtual: int = 0):
        self.layers, self.length, self.causal, self.sink = layers, length, causal, tuple(sink)
        self.virtual, self.learned_sum = virtual, 0.0  # a learned sink's part (part 0 of the scores) and the mass it took
        self.chosen = chosen  # whether to measure the chosen sink's row statistics (not needed for the signatures' own sink)
        self.offsets = range(RECENT) if causal else range(-(RECENT - 1), RECENT)  # key = query − d for d in offsets
        self.first_row = 1 if causal else 0
        self.position_mass, self.position_rows = np.zeros(length), np.zeros(length)
        self.token_mass, self.token_rows, self.token_count = {}, {}, {}
        self.recent_sum, self.rows = 0.0, 0
        self.layer_sums = {k: np.zeros(layers) for k in ("entropy", "content_entropy", "sink_mass")}
        self.layer_rows = np.zeros(layers)
        self._ids = None
        self._tokens = None  # the batch's distinct ids, each key's place among them, and their running sums
        self._windows = {}  # per block (layer, heads, first query): the batch's windows it has received so far

    @property
    def ids(self):
        return self._ids

    @ids.setter
    def ids(self, value) -> None:
        """A new batch's token ids ``(batch, L)``: its occurrences are counted once, whatever the layers and blocks."""
        self._flush_tokens()
        self._ids, self._tokens = (None if value is None else np.asarray(value)), None
        self._windows = {}
        if self._ids is None:
            return
        uniq, inverse = np.unique(self._ids.ravel(), return_inverse=True)
        ids = uniq.tolist()
        # this batch's running sums per distinct id, from the totals so far: each block adds to them in the order the
        # dictionaries would, so the totals are the same bits, without a Python loop over the ids per block
        mass = np.array([self.token_mass.get(v, 0.0) for v in ids])
        rows = np.array([self.token_rows.get(v, 0.0) for v in ids])
        self._tokens = (uniq, inverse.reshape(self._ids.shape), mass, rows)
        for v, c in zip(ids, np.bincount(inverse.ravel()).tolist()):
            self.token_count[v] = self.token_count.get(v, 0) + c

    def _flush_tokens(self) -> None:
        """The running batch's per-id sums into :attr:`token_mass` and :attr:`token_rows` (the batch's sums go on:
        a block added after :meth:`finish` still counts)."""
        if self._tokens is None:
            return
        uniq, _, mass, rows = self._tokens
        for v, m, r in zip(uniq.tolist(), mass.tolist(), rows.tolist()):
            self.token_mass[v], self.token_rows[v] = m, r

    def far_rows(self, queries: slice, keys: int) -> np.ndarray:
        """For each key ``j < keys``, how many rows ``t`` in ``queries`` see it from afar (``|t − j| ≥ RECENT``, and
        ``j ≤ t`` when causal).

        >>> AttentionMapAccumulator(1, 8, True, (0,)).far_rows(slice(0, 8), 8).tolist()
        [5.0, 4.0, 3.0, 2.0, 1.0, 0.0, 0.0, 0.0]
        """
        q0, q1 = queries.start, queries.stop
        j = np.arange(keys)
        if self.causal:
            return np.maximum(0, q1 - np.maximum(q0, j + RECENT)).astype(float)
        near = np.maximum(0, np.minimum(q1, j + RECENT) - np.maximum(q0, j - RECENT + 1))
        return (q1 - q0 - near).astype(float)

    def update(self, layer: int, weights, log_weights=None) -> None:
        """Add one layer's whole maps ``(batch, heads, L, L)`` (probabilities, torch or numpy)."""
        import torch

        p = torch.as_tensor(weights)
        self._add(layer, slice(0, p.shape[-2]), p, torch.log(p.to(torch.float64)) if self.chosen else None)

    def update_scores(self, layer: int, heads: slice, queries: slice, scores) -> None:
        """Add one block from the softmax's float32 input ``(windows, len(heads), len(queries), keys)``, ``−inf`` where
        a key is hidden (see :meth:`attncoda.engine.signatures.SignatureAccumulator.update_scores`); ``windows`` is the
        whole batch or the next consecutive slice of it."""
        import torch

        queries = slice(*queries.indices(self.length))
        block = (layer, heads.start, heads.stop, queries.start)
        first = self._windows.get(block, 0)  # the capture hands a batch's windows in consecutive slices (long windows)
        self._windows[block] = first + scores.shape[0]
        p = torch.softmax(scores, dim=-1, dtype=torch.float32)
        if self.virtual:  # the learned sink's part, then the keys' own mass (not renormalised)
            self.learned_sum += float(p[..., : self.virtual].sum(dtype=torch.float64))
            p = p[..., self.virtual :]
        self._add(layer, queries, p, scores if self.chosen else None, slice(first, first + scores.shape[0]), owned=True)

    def _add(self, layer: int, queries: slice, p, scores, windows: slice = slice(None), owned: bool = False) -> None:
        """Add one block of probabilities ``p`` ``(windows, heads, rows, keys)``; ``owned``: ``p`` may be overwritten."""
        import torch

        batch, heads, rows, keys = p.shape
        if p.dtype not in (torch.float32, torch.float64) or not owned:  # half precision would overflow a column's sum
            p = p.to(torch.float64 if p.dtype == torch.float64 else torch.float32, copy=True)
        recent = torch.zeros(batch, keys, dtype=torch.float64, device=p.device)
        for d in self.offsets:
            offset = queries.start - d  # block row i holds query start + i, whose key start + i − d is column i + offset
            diagonal = torch.diagonal(p, offset=offset, dim1=-2, dim2=-1)
            if diagonal.shape[-1]:
                first = max(offset, 0)
                recent[:, first : first + diagonal.shape[-1]] += diagonal.sum(dim=1, dtype=torch.float64)
                diagonal.zero_()  # what is left of the block is the far weight
        # (batch, keys): the far weight each key received from these rows, as one product with a row of ones (a BLAS
        # call, in p's precision: a float64 reduction took 72 % of the maps' time, and a float64 copy of every block
        # made the audit at 8,192 tokens 1.71x its signatures). Only far weights are summed, so nothing cancels.
        ones = torch.ones(batch, 1, heads * rows, dtype=p.dtype, device=p.device)
        far = torch.matmul(ones, p.reshape(batch, heads * rows, keys))[:, 0].to(torch.float64).cpu().numpy()
        seen = heads * self.far_rows(queries, keys)  # per window
        self.position_mass[:keys] += far.sum(axis=0)
        self.position_rows[:keys] += batch * seen
        if self._tokens is not None:
            uniq, inverse, token_mass, token_rows = self._tokens
            places = inverse[windows, :keys].ravel()
            token_mass += np.bincount(places, far.ravel(), minlength=len(uniq))
            token_rows += np.bincount(places, np.broadcast_to(seen, far.shape).ravel(), minlength=len(uniq))
        self.recent_sum += float(recent.sum())
        self.rows += batch * heads * rows
        if scores is not None:
            self._add_chosen(layer, queries, scores)

    def _add_chosen(self, layer: int, queries: slice, scores) -> None:
        """The chosen sink's row statistics (:func:`~attncoda.engine.device_rowstats.row_statistics_torch`) of the
        block's rows ``t ≥ first_row`` (a causal model's row 0 sees only key 0, so it has no content)."""
        from .device_rowstats import row_statistics_torch

        skip = max(self.first_row - queries.start, 0)
        z = scores[:, :, skip:, :]
        if not z.shape[2]:
            return
        sink = tuple(j for j in self.sink if j < z.shape[-1])
        stats, _ = row_statistics_torch(z, sink, self.causal)
        self.layer_sums["entropy"][layer] += float(stats["entropy"].sum())
        self.layer_sums["content_entropy"][layer] += float(stats["content_entropy"].nansum())
        self.layer_sums["sink_mass"][layer] += float(stats["sink_mass"].sum())
        self.layer_rows[layer] += stats["entropy"].numel()

    def finish(self, token_names=None) -> dict:
        self._flush_tokens()
        with np.errstate(invalid="ignore", divide="ignore"):
            per_position = self.position_mass / self.position_rows
        ranked = np.flatnonzero(np.isfinite(per_position))  # a key no far row reached has no mean: it is not ranked, not "nan"
        order = [int(k) for k in ranked[np.argsort(per_position[ranked])[::-1]][:TOP]]
        counted = {v: self.token_mass[v] / self.token_rows[v] for v in self.token_mass if self.token_rows[v] > 0}
        frequent = sorted((v for v in counted if self.token_count[v] >= MIN_OCCURRENCES), key=lambda v: -counted[v])
        names = token_names or (lambda ids: [str(i) for i in ids])
        top_tokens = frequent[:TOP]
        layers = {k: (v / np.maximum(self.layer_rows, 1)).tolist() for k, v in self.layer_sums.items()}
        return {
            "positions": [{"key": k, "mean_attention": float(per_position[k])} for k in order],
            "tokens": [{"id": int(v), "token": n, "mean_attention": float(counted[v]), "occurrences": self.token_count[v]}
                       for v, n in zip(top_tokens, names(top_tokens))],
            "recent_keys": RECENT, "recent_mass": self.recent_sum / self.rows if self.rows else float("nan"),
            **({"learned_sink_mass": self.learned_sum / self.rows if self.rows else float("nan")} if self.virtual else {}),
            "chosen_sink": None if not self.chosen else {"keys": list(self.sink), "row_sink_mass": float(self.layer_sums["sink_mass"].sum() / max(self.layer_rows.sum(), 1)),
                            "layers": {"entropy": layers["entropy"], "content_entropy": layers["content_entropy"]}},
        }


@functools.cache
def _entries():
    """The maps' cache entries: one :class:`~attncoda.engine.cache.KeyedJson`, which remembers each path's key from
    :func:`_entry_path` until its entry is written."""
    from .cache import KeyedJson

    return KeyedJson("attention_map")


def _entry_path(model: str, spec, sink, job, sha, default_sink):
    """Where the map of ``model``'s windows of seed ``job`` for the sink keys ``sink`` is cached."""
    from .signatures import KEY_FIELDS

    key = spec.key(f"{model}|sink{','.join(map(str, sink))}|maps{MAPS_VERSION}", sha, default_sink, job)
    return _entries().path({k: key[k] for k in KEY_FIELDS})


def _summary(acc: AttentionMapAccumulator, loaded) -> dict:
    return json.loads(json.dumps(acc.finish(lambda v: loaded.processor.convert_ids_to_tokens(v))))


def attention_maps(model: str, seeds, n: int, length: int, sink, batch_size: int = BATCH_SIZE) -> list[dict]:
    """:class:`AttentionMapAccumulator`'s summary of ``model`` on the signatures' windows of each seed, cached by the
    model's weights, the windows and the sink keys (the model is loaded once, and only when some seed is missing).
    A seed whose signatures were computed with :class:`MapCompanion` for these keys is already cached. Each missing
    seed takes a forward pass of its own, through the same capture as the signatures (scores beside sdpa where the
    model allows it)."""
    from .cache import cache_or_compute
    from .corpus import text_windows
    from .signatures import SignatureSpec, capture_into, sink_positions, virtual_parts

    spec = SignatureSpec(n=n, length=length, batch_size=batch_size)
    sink = tuple(int(k) for k in sink)
    entries = _entries()

    def path_for(job, sha, default_sink):
        return _entry_path(model, spec, sink, job, sha, default_sink)

    def make(loaded, job):
        import torch

        from ..base.progress import Steps

        ids, layout = text_windows(loaded.processor, spec.n, spec.length, job, spec.corpus, spec.split)
        virtual = virtual_parts(loaded.info.default_sink)
        own = sink_positions(loaded.info.default_sink, spec.length, len(layout.prefix), len(layout.suffix), virtual)
        acc = AttentionMapAccumulator(loaded.info.layers, spec.length, loaded.info.causal, sink, chosen=tuple(own) != sink, virtual=virtual)
        batches = range(0, len(ids), spec.batch_size)
        steps = Steps(f"{loaded.info.name} seed {job}: where attention goes, batches of {spec.batch_size} windows", len(batches))
        capture, _ = capture_into(loaded.backbone, acc, model=loaded.info.name)
        with torch.inference_mode(), capture:
            for done, start in enumerate(batches, 1):
                acc.ids = ids[start : start + spec.batch_size]
                loaded.forward(torch.as_tensor(ids[start : start + spec.batch_size]))
                steps.step(done)
        return _summary(acc, loaded)

    return cache_or_compute(model, tuple(seeds), path_for, entries.read, entries.write, make)


class MapCompanion:
    """Where attention goes, measured in the signatures' own forward pass (``signature_sets(..., companion=...)``) and
    cached as :func:`attention_maps` caches it: an audit passes over each window once. ``sink_for(meta)`` gives the
    sink keys from the signatures' meta (the audit's ``--sink``, resolved against the model's sink sets)."""

    def __init__(self, model: str, spec, sink_for):
        self.model, self.spec, self.sink_for = model, spec, sink_for

    def start(self, loaded, meta) -> AttentionMapAccumulator:
        from .signatures import virtual_parts

        sink = tuple(int(k) for k in self.sink_for(meta))
        own = tuple(meta.sink_sets[meta.default_sink])
        return AttentionMapAccumulator(loaded.info.layers, meta.length, loaded.info.causal, sink, chosen=own != sink,
                                       virtual=virtual_parts(meta.default_sink))

    def finish(self, loaded, meta, acc: AttentionMapAccumulator) -> None:
        path = _entry_path(self.model, self.spec, acc.sink, meta.seed, loaded.info.weights_sha256, loaded.info.default_sink)
        _entries().write(_summary(acc, loaded), path)


def signatures_and_maps(model: str, seeds, n: int, length: int, sink_for, batch_size: int = BATCH_SIZE):
    """``(signatures, maps)`` of each seed, as :func:`attncoda.engine.signatures.signature_sets` and
    :func:`attention_maps` give them, in one forward pass per window wherever neither is cached: the maps ride on
    the signatures' pass (:class:`MapCompanion`). ``sink_for(meta)`` resolves the sink keys of the maps."""
    from .signatures import SignatureSpec, signature_sets

    spec = SignatureSpec(n=n, length=length, batch_size=batch_size)
    sigs = signature_sets(model, tuple(seeds), spec=spec, companion=MapCompanion(model, spec, sink_for))
    return sigs, attention_maps(model, seeds, n, length, sink_for(sigs[0].meta), batch_size)
