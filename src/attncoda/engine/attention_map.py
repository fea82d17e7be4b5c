"""Where attention goes, for ``attncoda audit``: by key position, by token, and to the most recent keys, over every
row of every layer and head; and the row statistics of any chosen sink set.

A signature holds the last row of each head, so a sink on a token type at varying positions (".", a newline, an
end-of-text) or on the most recent keys cannot be told apart from a fixed-position sink there. Here every row
``t`` counts, and keys within :data:`RECENT` of the query are set apart:

* ``positions``: the mean weight a key at position ``j`` receives from the rows that see it from afar;
* ``tokens``: the mean weight a key holding token ``v`` receives, per (row, occurrence), for tokens seen at least
  :data:`MIN_OCCURRENCES` times;
* ``recent_mass``: the mean total weight a row puts on its :data:`RECENT` nearest keys (itself included);
* ``chosen_sink``: mean row sink mass and per-layer mean ``H`` and ``H(π)`` for the sink keys given.
"""

from __future__ import annotations

import json

import numpy as np

from ..base.protocol import BATCH_SIZE

RECENT = 3
"""Keys within this many positions of the query (the query's own included) are the recent keys."""
MIN_OCCURRENCES = 20
"""A token is ranked only when it occurs at least this many times in the windows (rarer ones are noise)."""
TOP = 5


class AttentionMapAccumulator:
    """Running sums over rows, fed one layer at a time; set :attr:`ids` to the batch's token ids before its forward pass."""

    def __init__(self, layers: int, length: int, causal: bool, sink):
        self.length, self.causal, self.sink = length, causal, tuple(sink)
        t, j = np.arange(length)[:, None], np.arange(length)[None, :]
        visible = j <= t if causal else np.ones((length, length), bool)
        self.far = visible & (np.abs(t - j) >= RECENT)
        self.recent = visible & (np.abs(t - j) < RECENT)
        self.first_row = 1 if causal else 0
        self.position_mass, self.position_rows = np.zeros(length), np.zeros(length)
        self.token_mass, self.token_rows, self.token_count = {}, {}, {}
        self.recent_sum, self.rows = 0.0, 0
        self.layer_sums = {k: np.zeros(layers) for k in ("entropy", "content_entropy", "sink_mass")}
        self.layer_rows = np.zeros(layers)
        self.ids = None

    def update(self, layer: int, weights, log_weights=None) -> None:
        from ..base.arrays import as_numpy
        from ..math.coda import entropy_split

        p = as_numpy(weights).astype(np.float64)  # (batch, heads, L, L)
        batch, heads = p.shape[:2]
        far = p * self.far
        self.position_mass += far.sum(axis=(0, 1, 2))
        self.position_rows += batch * heads * self.far.sum(axis=0)
        if self.ids is not None:
            by_key = far.sum(axis=(1, 2))  # (batch, L): weight each key received from afar
            seen = np.broadcast_to(heads * self.far.sum(axis=0), by_key.shape)
            uniq, inverse = np.unique(np.asarray(self.ids).ravel(), return_inverse=True)
            mass, rows = np.bincount(inverse, by_key.ravel()), np.bincount(inverse, seen.ravel())
            count = np.bincount(inverse) if layer == 0 else np.zeros(len(uniq))  # occurrences: counted once, not once per layer
            for v, m, r, c in zip(uniq.tolist(), mass, rows, count):
                self.token_mass[v] = self.token_mass.get(v, 0.0) + m
                self.token_rows[v] = self.token_rows.get(v, 0.0) + r
                self.token_count[v] = self.token_count.get(v, 0) + int(c)
        self.recent_sum += float((p * self.recent).sum())
        self.rows += batch * heads * self.length
        rows = p[:, :, self.first_row :, :]
        split = entropy_split(rows / rows.sum(axis=-1, keepdims=True), self.sink)
        self.layer_sums["entropy"][layer] += float(split.entropy.sum())
        self.layer_sums["content_entropy"][layer] += float(np.nansum(split.content_entropy))
        self.layer_sums["sink_mass"][layer] += float(split.sink_mass.sum())
        self.layer_rows[layer] += split.entropy.size

    def finish(self, token_names=None) -> dict:
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
            "chosen_sink": {"keys": list(self.sink), "row_sink_mass": float(self.layer_sums["sink_mass"].sum() / max(self.layer_rows.sum(), 1)),
                            "layers": {"entropy": layers["entropy"], "content_entropy": layers["content_entropy"]}},
        }


def attention_maps(model: str, seeds, n: int, length: int, sink, batch_size: int = BATCH_SIZE) -> list[dict]:
    """:class:`AttentionMapAccumulator`'s summary of ``model`` on the signatures' windows of each seed, cached by the
    model's weights, the windows and the sink keys (the model is loaded once, and only when some seed is missing)."""
    from .cache import KeyedJson, cache_or_compute
    from .capture import capture_batches
    from .corpus import text_windows
    from .signatures import KEY_FIELDS, SignatureSpec

    spec = SignatureSpec(n=n, length=length, batch_size=batch_size)
    sink = tuple(int(k) for k in sink)
    entries = KeyedJson("attention_map")

    def path_for(job, sha, default_sink):
        key = spec.key(f"{model}|sink{','.join(map(str, sink))}", sha, default_sink, job)
        return entries.path({k: key[k] for k in KEY_FIELDS})

    def make(loaded, job):
        ids, _ = text_windows(loaded.processor, spec.n, spec.length, job, spec.corpus, spec.split)
        from ..base.progress import Steps

        acc = AttentionMapAccumulator(loaded.info.layers, spec.length, loaded.info.causal, sink)
        steps = Steps(f"{loaded.info.name} seed {job}: where attention goes, batches of {spec.batch_size} windows", -(-len(ids) // spec.batch_size))
        done = []

        def on_batch(batch):
            if done:
                steps.step(len(done))
            done.append(1)
            acc.ids = batch

        capture_batches(loaded, ids, spec.batch_size, acc.update, on_batch=on_batch)
        steps.step(len(done))
        return json.loads(json.dumps(acc.finish(lambda v: loaded.processor.convert_ids_to_tokens(v))))

    return cache_or_compute(model, tuple(seeds), path_for, entries.read, entries.write, make)
