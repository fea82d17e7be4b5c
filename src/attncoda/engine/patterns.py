"""Attention patterns readers already hold, turned into the package's signatures and row statistics.

:func:`signatures_from_patterns` takes

* a plain array ``[layer, head, query, key]`` (one window) or ``[window, layer, head, query, key]``;
* the ``attentions`` that transformers returns with ``output_attentions=True`` (a tuple of
  ``(window, head, query, key)`` tensors, one per layer);
* a TransformerLens ``ActivationCache`` (or any mapping) holding ``blocks.{layer}.attn.hook_pattern``
  entries of shape ``(window, head, query, key)``; nnsight traces give tensors, which pass as arrays;

and returns :class:`~attncoda.engine.signatures.Signatures` built with the probability path
(the patterns are probabilities; exact zeros are replaced with each ε of the sweep), so every analysis
in the book (:func:`attncoda.studies.measurement.measure_signatures`, the audit, clustering of
signatures, pruning selection) runs on them. Neither TransformerLens nor nnsight is imported.
"""

from __future__ import annotations

import numpy as np

from ..base.arrays import as_numpy
from ..base.protocol import EPS_SWEEP
from .signatures import SignatureAccumulator, SignatureMeta, Signatures, WindowLayout, sink_positions

TL_KEY = "blocks.{}.attn.hook_pattern"


def _layers(patterns) -> list[np.ndarray]:
    """Per-layer ``(window, head, query, key)`` float arrays from any of the accepted inputs."""
    if hasattr(patterns, "keys") and TL_KEY.format(0) in patterns.keys():
        layers, i = [], 0
        while TL_KEY.format(i) in patterns.keys():
            layers.append(as_numpy(patterns[TL_KEY.format(i)]))
            i += 1
        return layers
    if isinstance(patterns, (list, tuple)):
        return [as_numpy(x) for x in patterns]
    a = as_numpy(patterns)
    if a.ndim == 4:
        a = a[None]
    if a.ndim != 5:
        raise ValueError(f"attention patterns must be [layer, head, query, key] or [window, layer, head, query, key]; got shape {a.shape}")
    return [a[:, i] for i in range(a.shape[1])]


def _is_causal(layer: np.ndarray) -> bool:
    """True when no query attends to a later key (every entry above the diagonal is zero)."""
    return bool(np.all(np.triu(layer, k=1) == 0))


def signatures_from_patterns(patterns, model: str = "patterns", sink=None, causal: bool | None = None, bos_prepended: bool = False,
                             eps_values=EPS_SWEEP, seed: int = 0) -> Signatures:
    """Signatures and row statistics of attention patterns a reader already holds (probability path).

    Every layer must have the same windows, heads and keys.

    Parameters
    ----------
    patterns : array_like, tuple of tensors, or mapping
        ``[layer, head, query, key]`` or ``[window, layer, head, query, key]`` probabilities; transformers'
        ``attentions`` (one ``(window, head, query, key)`` tensor per layer); or a TransformerLens cache holding
        ``blocks.{layer}.attn.hook_pattern``.
    model : str
        The name the signatures carry.
    sink : sequence of int, optional
        The default sink set as key indices (default ``(0,)``).
    causal : bool, optional
        Whether the rows are causal; inferred from the patterns (nothing above the diagonal) unless given.
    bos_prepended : bool
        Whether key 0 is a BOS token the windows were given (recorded for the audit's report).
    eps_values : sequence of float
        The ε sweep of the probability path.
    seed : int
        The seed the signatures are labelled with (their triples are drawn from it).

    Returns
    -------
    Signatures
        Per-head signatures ``(layers, heads, keys)`` and row statistics, ready for
        :func:`attncoda.studies.measurement.measure_signatures` and :func:`attncoda.studies.audit.audit`.
    """
    layers = _layers(patterns)
    if not layers:
        raise ValueError("no attention patterns were given")
    shapes = {x.shape for x in layers}
    if len(shapes) != 1:
        raise ValueError(f"every layer's pattern must have the same shape (window, head, query, key); got {sorted(shapes)}")
    windows, heads, queries, keys = layers[0].shape
    if queries != keys:
        raise ValueError(f"patterns must be square (query = key positions); got {queries} queries and {keys} keys")
    if np.any(~np.isfinite(layers[0])) or np.any(layers[0] < 0):
        raise ValueError("attention patterns must be finite and non-negative (probabilities, not scores)")
    if not np.allclose(layers[0].sum(axis=-1), 1.0, atol=1e-3):
        raise ValueError("attention rows must sum to 1 (pass the softmax output, not the scores)")
    causal = _is_causal(layers[0]) if causal is None else causal
    sink = tuple(sink) if sink is not None else (0,)
    acc = SignatureAccumulator(len(layers), heads, keys, causal, sink, eps_values)
    for i, layer in enumerate(layers):
        acc.update(i, layer.astype(np.float32))
    meta = SignatureMeta(model=model, weights_sha256="patterns", default_sink="given", corpus="given", split="given", n=int(windows),
                         length=int(keys), seed=int(seed), batch_size=int(windows), eps_values=[float(e) for e in eps_values], protocol="patterns",
                         model_info={"name": model, "architecture": "patterns", "causal": causal, "layers": len(layers), "heads": heads},
                         corpus_attribution="patterns given by the caller",
                         sink_sets={"given": list(sink), "first": [0], "first4": list(sink_positions("first4", keys))},
                         layout=WindowLayout(int(bos_prepended), 0, bool(bos_prepended)), causal=causal)
    return acc.finish(meta)
