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
TL_PATTERN = __import__("re").compile(r"blocks\.(\d+)\.attn\.hook_pattern")


LOW_PRECISION = ("torch.bfloat16", "torch.float16", "float16")
"""Pattern dtypes whose rows sum to 1 only to about 1 % (8 or 11 significant bits)."""
ROW_SUM_TOLERANCE = {False: 1e-3, True: 2e-2}
"""How far a row may sum from 1: float32 or wider, and low precision."""


def _float(x) -> np.ndarray:
    """A pattern as a float array; bfloat16 and float16 tensors are widened first (numpy has no bfloat16)."""
    if hasattr(x, "dtype") and str(x.dtype) in LOW_PRECISION[:2] and hasattr(x, "float"):
        x = x.float()
    return as_numpy(x)


def _low_precision(patterns) -> bool:
    """Whether the patterns were given in bfloat16 or float16."""
    if hasattr(patterns, "keys"):
        items = [patterns[k] for k in patterns.keys() if TL_PATTERN.fullmatch(str(k))]
    elif isinstance(patterns, (list, tuple)):
        items = list(patterns)
    else:
        items = [patterns]
    return any(str(getattr(x, "dtype", "")) in LOW_PRECISION for x in items)


def pattern_layers(patterns) -> list[np.ndarray]:
    """Per-layer ``(window, head, query, key)`` float arrays from any of the accepted inputs. A mapping must hold its
    blocks' patterns from block 0 without a gap (a cache with blocks 0 and 7 only would silently be one layer)."""
    if hasattr(patterns, "keys") and any(TL_PATTERN.fullmatch(str(k)) for k in patterns.keys()):
        names = {}
        for k in patterns.keys():
            match = TL_PATTERN.fullmatch(str(k))
            if match and str(int(match.group(1))) != match.group(1):
                raise ValueError(f"the patterns name a block {k}; number blocks as TransformerLens does, without leading zeros ({TL_KEY.format(int(match.group(1)))})")
            if match:
                names[int(match.group(1))] = k
        found = sorted(names)
        if found != list(range(len(found))):
            present = set(found)
            gaps = [i for i in range(len(found) + 5) if i not in present][:5]  # bounded by the file's own count, not its largest index
            shown = ", ".join(map(str, found[:8])) + (", …" if len(found) > 8 else "")
            raise ValueError(f"the patterns hold blocks {shown} but not {', '.join(map(str, gaps))}: give every "
                             f"block's {TL_KEY.format('{l}')} from block 0 on, or the layers would be misnumbered")
        return [_float(patterns[names[i]]) for i in found]
    if hasattr(patterns, "keys"):
        raise ValueError(f"a mapping of patterns must hold {TL_KEY.format('{l}')} entries (a TransformerLens cache); this one holds none")
    if isinstance(patterns, (list, tuple)):
        return [_float(x) for x in patterns]
    a = _float(patterns)
    if a.ndim == 4:
        a = a[None]
    if a.ndim != 5:
        raise ValueError(f"attention patterns must be [layer, head, query, key] or [window, layer, head, query, key]; got shape {a.shape}")
    return [a[:, i] for i in range(a.shape[1])]


def _is_causal(layer: np.ndarray) -> bool:
    """True when no query attends to a later key (every entry above the diagonal is zero)."""
    return bool(np.all(np.triu(layer, k=1) == 0))


def check_sink_keys(sink, keys: int) -> tuple[int, ...]:
    """A sink set given as key indices, checked: integers (not booleans, floats or text), each in ``0..keys − 1``, none
    repeated, and leaving at least two content keys (ValueError in one line).

    >>> check_sink_keys(None, 8), check_sink_keys([0, 1], 8)
    ((0,), (0, 1))
    >>> check_sink_keys((0.5,), 8)
    Traceback (most recent call last):
    ...
    ValueError: sink keys must be whole key indices in 0..7; got (0.5,)
    """
    sink = (0,) if sink is None else sink
    values = tuple(sink) if isinstance(sink, (list, tuple, np.ndarray)) else (sink,)
    if not values or not all(isinstance(k, (int, np.integer)) and not isinstance(k, (bool, np.bool_)) and 0 <= k < keys for k in values):
        raise ValueError(f"sink keys must be whole key indices in 0..{keys - 1}; got {values!r}")
    if len(set(values)) != len(values):
        raise ValueError(f"sink keys {values!r} repeat a key; name each once")
    if keys - len(values) < 2:
        raise ValueError(f"the sink keys {values!r} leave {keys - len(values)} of {keys} keys as content; a row needs at least two content keys")
    return tuple(int(k) for k in values)


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
    layers, low = pattern_layers(patterns), _low_precision(patterns)
    if not layers:
        raise ValueError("no attention patterns were given")
    shapes = {x.shape for x in layers}
    if len(shapes) != 1:
        raise ValueError(f"every layer's pattern must have the same shape (window, head, query, key); got {sorted(shapes)}")
    if len(layers[0].shape) != 4 or 0 in layers[0].shape:
        raise ValueError(f"each layer's pattern must be a non-empty (window, head, query, key) array; got shape {layers[0].shape}")
    windows, heads, queries, keys = layers[0].shape
    if queries != keys:
        raise ValueError(f"patterns must be square (query = key positions); got {queries} queries and {keys} keys")
    for i, layer in enumerate(layers):  # every layer, not only the first: a damaged later layer is as wrong
        if np.any(~np.isfinite(layer)) or np.any(layer < 0):
            raise ValueError(f"layer {i}'s attention patterns must be finite and non-negative (probabilities, not scores)")
        sums = layer.sum(axis=-1)
        if not np.allclose(sums, 1.0, atol=ROW_SUM_TOLERANCE[low]):
            if np.all(sums <= 1.0 + ROW_SUM_TOLERANCE[low]):
                raise ValueError(f"layer {i}'s attention rows sum to less than 1 (as low as {float(sums.min()):.3g}): a model with learned "
                                 "sinks (GPT-OSS) drops the sink's part from its weights, and the rows that are left are not compositions; "
                                 "measure such a model with --model, which keeps that part")
            raise ValueError(f"layer {i}'s attention rows must sum to 1 (pass the softmax output, not the scores)")
    causal = _is_causal(layers[0]) if causal is None else causal
    if causal:
        late = [i for i, layer in enumerate(layers) if not _is_causal(layer)]
        if late:
            raise ValueError(f"the patterns are causal, but layer {late[0]} attends to later keys; pass causal=False if the model is bidirectional")
    sink = check_sink_keys(sink, keys)
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
