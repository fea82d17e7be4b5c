"""The row statistics of ``softmax(z)`` in torch, on the device the scores live on: the running sums of
:func:`attncoda.math.rowstats.row_statistics_from_scores` as tensor reductions, so a model on a GPU hands only per-row
results to the host, never its ``L × L`` scores.

A row's support is its causal range (keys ``0..t + K − Q`` for query ``t`` when ``causal``, else every key) less the
keys whose score is ``−inf`` (hidden by a mask: a sliding window, padding). With ``m`` the support's maximum,
``y = z − m``, ``e = exp(y)`` and ``ℓ = ln Σ e`` over the support:

* ``lse = m + ℓ``;
* sink mass ``s = Σ_S e / Σ e``;
* entropy ``H = ℓ − Σ e·y / Σ e``;
* content entropy ``H(π) = ln c − (Σ_C e·y − ℓ·Σ_C e) / (c·Σ e)`` with ``c = Σ_C e / Σ e`` (NaN when ``c = 0``);
* content concentration ``C_A^⊥ = Σ_C y² − (Σ_C y)²/n`` over the ``n`` content keys of the support (NaN when ``n = 0``).

Everything is float64, in chunks of ``rows_per_chunk`` query rows so that a few float64 copies of one chunk are the
largest temporaries. The compiled CPU kernel computes the same sums element by element and stays the CPU's path; the
tests hold the two together.
"""

from __future__ import annotations

import torch

from ..math.rowstats import STATISTICS


def row_statistics_torch(scores: torch.Tensor, sink, causal: bool, rows_per_chunk: int = 256) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
    """The four statistics of every row of ``softmax(scores)`` and each row's log-sum-exp, on ``scores.device``.

    Parameters
    ----------
    scores : tensor, shape (..., Q, K)
        The softmax's input, ``−inf`` where a key is hidden.
    sink : sequence of int
        Key indices of the sink set S.
    causal : bool
        Whether query ``t`` sees only keys ``0..t + K − Q``.
    rows_per_chunk : int
        Query rows reduced at once.

    Returns
    -------
    stats : dict of str to tensor
        ``sink_mass``, ``entropy``, ``content_entropy``, ``concentration``, each float64 of shape (..., Q).
    lse : tensor, shape (..., Q)
        Each row's log-sum-exp over its support, float64.
    """
    queries, keys = scores.shape[-2:]
    device = scores.device
    is_sink = torch.zeros(keys, dtype=torch.bool, device=device)
    is_sink[list(sink)] = True
    parts = {name: [] for name in STATISTICS}
    lses = []
    for start in range(0, queries, rows_per_chunk):
        stop = min(queries, start + rows_per_chunk)
        z = scores[..., start:stop, :].to(torch.float64)
        support = torch.isfinite(z)
        if causal:
            t = torch.arange(start, stop, device=device)[:, None]
            support &= torch.arange(keys, device=device)[None, :] <= t + (keys - queries)
        top = torch.where(support, z, float("-inf")).amax(dim=-1, keepdim=True)
        y = torch.where(support, z - top, 0.0)
        e = torch.where(support, torch.exp(y), 0.0)
        content = support & ~is_sink
        total = e.sum(dim=-1)
        log_total = torch.log(total)
        content_e = torch.where(content, e, 0.0)
        content_mass = content_e.sum(dim=-1)
        content_y = torch.where(content, y, 0.0)
        n_content = content.sum(dim=-1)
        c = content_mass / total
        lses.append(top[..., 0] + log_total)
        parts["sink_mass"].append(torch.where(support & is_sink, e, 0.0).sum(dim=-1) / total)
        parts["entropy"].append(log_total - (e * y).sum(dim=-1) / total)
        h_content = torch.log(c) - ((content_e * y).sum(dim=-1) - log_total * content_mass) / (total * c)
        parts["content_entropy"].append(torch.where(content_mass > 0, h_content, float("nan")))
        spread = (content_y * content_y).sum(dim=-1) - content_y.sum(dim=-1) ** 2 / n_content.clamp_min(1)
        parts["concentration"].append(torch.where(n_content > 0, spread.clamp_min(0.0), float("nan")))
    return {name: torch.cat(v, dim=-1) for name, v in parts.items()}, torch.cat(lses, dim=-1)
