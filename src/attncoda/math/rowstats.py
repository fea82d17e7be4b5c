"""Row statistics of attention maps in one pass: the hot path's compiled mirror of
``coda.entropy_split`` and ``coda.content_concentration`` (tested against them).

For each row ``p`` (its support: keys ``0..t`` for causal query ``t``, all keys otherwise):

* sink mass ``s = Σ_S p``;
* entropy ``H = −Σ p ln p``;
* content entropy ``H(π) = ln c − (1/c) Σ_C p ln p``, ``c = Σ_C p`` summed over the
  content parts themselves (NaN when ``c = 0``, never ``1 − s``);
* content concentration ``C_A^⊥ = Σ_C z² − (Σ_C z)²/n`` where ``z`` are the logs of
  the row after multiplicative zero replacement with ``ε`` on its support: parts
  ``≥ ε`` keep ``ln p + ln((1 − mε)/Σ_{p≥ε} p)``, the ``m`` parts below ``ε`` get ``ln ε``.

Every element is read once, in float64, with one logarithm; rows run in parallel.
Only supports are visited, so a causal map costs half a dense pass.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

STATISTICS = ("sink_mass", "entropy", "content_entropy", "concentration")


@njit(parallel=True, cache=True)
def _kernel(p, is_sink, causal, eps, out):  # pragma: no cover - compiled
    rows, queries, keys = p.shape
    log_eps = math.log(eps)
    for r in prange(rows):
        for t in range(queries):
            width = t + 1 + (keys - queries) if causal else keys
            s = 0.0
            h = 0.0
            content_mass = 0.0
            content_plogp = 0.0
            kept_total = 0.0
            n_small = 0
            a = 0.0
            b = 0.0
            n_kept = 0
            n_content = 0
            for j in range(width):
                x = np.float64(p[r, t, j])
                lx = math.log(x) if x > 0.0 else 0.0
                plogp = x * lx
                h -= plogp
                if x >= eps:
                    kept_total += x
                else:
                    n_small += 1
                if is_sink[j]:
                    s += x
                else:
                    n_content += 1
                    content_mass += x
                    content_plogp += plogp
                    if x >= eps:
                        a += lx
                        b += lx * lx
                        n_kept += 1
            out[0, r, t] = s
            out[1, r, t] = h
            out[2, r, t] = math.log(content_mass) - content_plogp / content_mass if content_mass > 0.0 else np.nan
            if n_content > 0 and kept_total > 0.0:
                shift = math.log1p(-n_small * eps) - math.log(kept_total)
                n_replaced = n_content - n_kept
                s1 = a + n_kept * shift + n_replaced * log_eps
                s2 = b + 2.0 * shift * a + n_kept * shift * shift + n_replaced * log_eps * log_eps
                out[3, r, t] = max(s2 - s1 * s1 / n_content, 0.0)
            else:
                out[3, r, t] = np.nan


def row_statistics(weights: np.ndarray, sink, causal: bool, eps: float = 1e-6) -> dict[str, np.ndarray]:
    """Statistics of every row of ``weights`` (shape ``(..., Q, K)``); each result has shape ``(..., Q)``.

    ``sink`` is a sequence of key indices; ``causal`` restricts query ``t`` to keys
    ``0..t + K − Q``. Rows are taken as they come (float32 softmax output sums to 1
    within about 1e-6); nothing is re-closed.
    """
    a = np.asarray(weights)
    if a.ndim < 2:
        raise ValueError("weights must have at least two axes (queries, keys)")
    if a.dtype not in (np.float32, np.float64):
        a = a.astype(np.float64)
    queries, keys = a.shape[-2:]
    flat = np.ascontiguousarray(a).reshape(-1, queries, keys)
    is_sink = np.zeros(keys, dtype=np.bool_)
    is_sink[list(sink)] = True
    out = np.empty((4, flat.shape[0], queries))
    _kernel(flat, is_sink, bool(causal), float(eps), out)
    return {name: out[i].reshape(a.shape[:-1]) for i, name in enumerate(STATISTICS)}
