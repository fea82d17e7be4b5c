"""The three terms of a row's entropy when the sink set has more than one key (methods: :ref:`methods-entropy`).

For a row ``p`` with sink mass ``s = Σ_S p`` and content mass ``c = 1 − s``:

    H(p) = h(s) + s·H(p_S / s) + c·H(p_C / c),    h(s) = −s ln s − c ln c.

With one sink key the middle term is 0. With two ({[CLS], [SEP]}) it is how the sink's own mass is spread
between its keys, which the share ``1 − ΔH(π)/ΔH`` counts as "sink". :func:`entropy_terms` gives the mean of
each term over layers, heads and query rows ``t ≥ first_row``, from the float64 log-softmax rows; the result is
cached by the same key as the model's signatures on the same windows.
"""

from __future__ import annotations


import numpy as np

from ..base.protocol import COLLAPSE_FIRST_ROW
from ..math.coda import entropy_split

TERMS = ("binary", "within_sink", "content", "entropy")
"""``h(s)``, ``s·H(p_S/s)``, ``c·H(π)`` and their sum ``H``."""


def row_terms(log_p: np.ndarray, sink) -> dict[str, np.ndarray]:
    """The three terms and ``H`` for rows given as logs, shape ``(..., keys)``, with the row's sink mass ``s`` and content
    entropy ``H(π)`` (NaN where ``c = 0``): :func:`attncoda.math.coda.entropy_split` of ``exp(log_p)`` in float64
    (a masked key's log is very negative, so its probability is 0 and adds nothing).

    Examples
    --------
    >>> p = np.array([[0.5, 0.2, 0.2, 0.1]])
    >>> t = row_terms(np.log(p), (0, 1))
    >>> bool(np.isclose(t["binary"] + t["within_sink"] + t["content"], t["entropy"]).all())
    True
    >>> round(float(row_terms(np.log(p), (0,))["within_sink"][0]), 12)
    0.0
    """
    split = entropy_split(np.exp(np.asarray(log_p, dtype=np.float64)), sink)
    return {"binary": split.binary, "within_sink": split.sink_term, "content": split.content_term, "entropy": split.entropy,
            "sink_mass": split.sink_mass, "content_entropy": split.content_entropy}


class TermAccumulator:
    """Running sums of :func:`row_terms` over the rows ``t ≥ first_row`` of every layer (a causal row's masked keys
    have probability 0 and add nothing)."""

    def __init__(self, sink, first_row: int = COLLAPSE_FIRST_ROW):
        self.sink, self.first_row = tuple(sink), first_row
        self.sums = dict.fromkeys(TERMS, 0.0)
        self.rows = 0

    def update(self, layer: int, weights, log_weights=None) -> None:
        from ..base.arrays import as_numpy

        logs = as_numpy(log_weights) if log_weights is not None else np.log(as_numpy(weights).astype(np.float64))
        logs = logs[:, :, self.first_row :, :]  # a causal row's masked keys have probability 0 and add nothing
        terms = row_terms(logs.astype(np.float64), self.sink)
        for k in TERMS:
            self.sums[k] += float(terms[k].sum())
        self.rows += int(np.prod(logs.shape[:-1]))

    def update_scores(self, layer: int, heads: slice, queries: slice, scores) -> None:
        """Add one block of the score capture (:func:`~attncoda.engine.score_capture.capture_scores`): the softmax's
        input ``(windows, heads, queries, parts)``, ``−inf`` where a key is hidden; a learned sink is part 0."""
        import torch

        skip = max(self.first_row - queries.start, 0)
        logs = torch.log_softmax(scores[:, :, skip:, :].to(torch.float64), dim=-1).cpu().numpy()
        if not logs.shape[2]:
            return
        terms = row_terms(logs, self.sink)
        for k in TERMS:
            self.sums[k] += float(terms[k].sum())
        self.rows += int(np.prod(logs.shape[:-1]))

    def means(self) -> dict[str, float]:
        return {k: v / self.rows for k, v in self.sums.items()}


def entropy_terms(model: str, seed: int = 0, init_seed: int | None = None, spec=None) -> dict[str, float]:
    """Mean of each of :data:`TERMS` for ``model`` (or its architecture at initialization with ``init_seed``) on the
    windows of ``spec`` (a :class:`~attncoda.engine.signatures.SignatureSpec`) and ``seed``, with the default sink set."""
    from .cache import KeyedJson, cache_or_compute
    from .capture import capture_batches
    from .corpus import text_windows
    from .initialization import initialized
    from .signatures import SignatureSpec, sink_sets_for, virtual_parts

    spec = spec or SignatureSpec()
    entries = KeyedJson("entropy_terms")

    def path_for(job, sha, sink):
        return _entry_path(entries, model, job, init_seed, spec, sha, sink)

    def make(loaded, job):
        if init_seed is not None:
            loaded = initialized(loaded, init_seed)
        ids, layout = text_windows(loaded.processor, spec.n, spec.length, job, spec.corpus, spec.split)
        sinks = sink_sets_for(loaded.info.default_sink, spec.length, len(layout.prefix), len(layout.suffix))
        acc = TermAccumulator(sinks[loaded.info.default_sink])
        if virtual_parts(loaded.info.default_sink):  # a learned sink is a part only the score capture keeps
            _score_batches(loaded, ids, spec.batch_size, acc)
        else:
            capture_batches(loaded, ids, spec.batch_size, acc.update)
        return {**acc.means(), "sink": list(sinks[loaded.info.default_sink])}

    return cache_or_compute(model, (seed,), path_for, entries.read, entries.write, make)[0]


def _score_batches(loaded, ids, batch_size: int, acc: TermAccumulator) -> None:
    """Feed ``acc`` the scores of ``loaded``'s backbone over the windows ``ids`` in batches (the score capture)."""
    import torch

    from .score_capture import capture_scores

    batches = torch.as_tensor(ids)
    with torch.inference_mode(), capture_scores(loaded.backbone, acc.update_scores):
        for start in range(0, len(batches), batch_size):
            loaded.forward(batches[start : start + batch_size])


def _entry_path(entries, model: str, seed: int, init_seed: int | None, spec, weights_sha256: str, default_sink: str):
    """The cache entry of one model's (or its initialized twin's) terms on the windows of ``seed``: the signatures' key
    fields, the model named ``model@init<seed>`` for a twin, whose identity is :func:`~.initialization.init_identity`."""
    from .initialization import init_identity
    from .signatures import KEY_FIELDS

    label = model if init_seed is None else f"{model}@init{init_seed}"
    identity = weights_sha256 if init_seed is None else init_identity(weights_sha256, init_seed)
    key = spec.key(label, identity, default_sink, seed)
    return entries.path({k: key[k] for k in KEY_FIELDS})


def cache_path(model: str, seed: int = 0, init_seed: int | None = None, spec=None):
    """Where :func:`entropy_terms` caches its result for these arguments (the model is loaded only when its weights'
    identity cannot be known otherwise, as for a Hub id)."""
    from .cache import KeyedJson, identity_without_loading
    from .models import load_model, resolve
    from .signatures import SignatureSpec

    ref = resolve(model)
    identity = identity_without_loading(ref)
    if identity is None:
        info = load_model(model, ref).info
        identity = (info.weights_sha256, info.default_sink)
    return _entry_path(KeyedJson("entropy_terms"), model, seed, init_seed, spec or SignatureSpec(), *identity)
