"""Perplexity on held-out text, with or without ablated heads (methods: :ref:`methods-pruning`).

Held-out windows come from the corpus's held-out split (documents no signature ever saw):
``n`` windows of ``length`` tokens, fixed by a seed, the same for every configuration.

* Causal LMs: ``exp`` of the mean next-token negative log-likelihood over every predicted token
  (the model's own LM head).
* Masked LMs: pseudo-perplexity, ``exp`` of the mean negative log-likelihood of each text token
  when it alone is masked (one forward pass per token).

Each evaluation keeps every window's summed negative log-likelihood, so prune sets scored on the same
windows can be compared window by window (a paired bootstrap). The forward pass runs in ``bfloat16``
(``torch.autocast``: matrix products in bf16, softmax and norms in float32) or in ``float32``; the
log-softmax of the logits is taken in float32 and the per-window sums in float64. On a CPU without bf16
instructions the bf16 products are computed in float32 on the bf16 operands (:mod:`.bf16_products`).

Each evaluation is cached on disk (a JSON file per model, windows, dtype and pruned-head set), so an
interrupted sweep resumes and a rerun reads its numbers back.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from contextlib import contextmanager

import numpy as np

from ..base.files import atomic_write_json
from ..base.paths import cache_dir, slug
from ..base.protocol import PERPLEXITY_DTYPES
from .ablation import ablate_heads
from .bf16_products import bf16_products, products_path

PROTOCOL = "ppl-2"
LOGITS_BUDGET = 256 * 2**20
"""Bytes of float32 logits one batch may hold (a Gemma vocabulary is 262k tokens)."""
AUTOCAST_DEVICES = ("cuda", "xpu", "mps", "hpu")
"""Device types with an autocast of their own; a model on any other runs its bfloat16 pass under the CPU's."""
NLL_CHUNK_BYTES = 8 * 2**20
"""Bytes of float32 logits the negative log-likelihood takes at once: rows that fit in a core's cache, rather than a
whole batch upcast at once (``benchmarks/perplexity_path.py`` measures it). Each token's value is the same bits either way."""


def heldout_windows(tokenizer, n: int, length: int, seed: int = 0, corpus: str = "wikipedia") -> np.ndarray:
    """``n`` held-out windows of ``length`` token ids (the tokenizer's own special tokens included)."""
    from .corpus import text_windows

    ids, _ = text_windows(tokenizer, n, length, seed, corpus, "heldout")
    return ids


def _batch_size(n: int, length: int, vocab: int) -> int:
    return max(1, min(n, LOGITS_BUDGET // max(1, length * vocab * 4)))


def _token_nll(logits, targets):
    """Negative log-likelihood of each target under float32 logits: ``logsumexp(z) − z[target]``, a few rows at a time
    (:data:`NLL_CHUNK_BYTES`)."""
    import torch

    vocab = logits.shape[-1]
    rows, targets = logits.reshape(-1, vocab), targets.reshape(-1)
    step = max(1, NLL_CHUNK_BYTES // (4 * vocab))
    return torch.cat([torch.nn.functional.cross_entropy(rows[i : i + step].float(), targets[i : i + step], reduction="none")
                      for i in range(0, rows.shape[0], step)])


def _causal_nll(model, ids, progress_label=None, device="cpu") -> tuple[np.ndarray, np.ndarray]:
    import torch

    n, length = ids.shape
    size = _batch_size(n, length, model.config.get_text_config().vocab_size)
    sums = []
    starts = range(0, n, size)
    if progress_label:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=progress_label, unit="batch", leave=False)
    for start in starts:
        batch = torch.as_tensor(ids[start : start + size]).to(device)
        logits = model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits[:, :-1]
        sums.append(_token_nll(logits, batch[:, 1:]).view(batch.shape[0], -1).double().sum(dim=1).cpu().numpy())
    return np.concatenate(sums), np.full(n, length - 1)


def _masked_nll(model, tokenizer, ids, progress_label=None, device="cpu") -> tuple[np.ndarray, np.ndarray]:
    import torch

    special = set(tokenizer.all_special_ids)
    sums, counts = np.zeros(ids.shape[0]), np.zeros(ids.shape[0], dtype=np.int64)
    rows = range(ids.shape[0])
    if progress_label:
        from tqdm.auto import tqdm

        rows = tqdm(rows, desc=progress_label, unit="window", leave=False)
    for r in rows:
        positions = [i for i, t in enumerate(ids[r]) if int(t) not in special]
        batch = torch.as_tensor(np.repeat(ids[r : r + 1], len(positions), axis=0))
        targets = batch[torch.arange(len(positions)), positions].clone()
        batch[torch.arange(len(positions)), positions] = tokenizer.mask_token_id
        batch, targets = batch.to(device), targets.to(device)
        logits = model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits[torch.arange(len(positions)), positions]
        sums[r] = float(_token_nll(logits, targets).double().sum())
        counts[r] = len(positions)
    return sums, counts


def _key(loaded, ids: np.ndarray, heads, dtype: str) -> str:
    """The cache key of one evaluation. A model off the CPU adds its device type: another device's kernels (and its
    own bfloat16 autocast) give other bits, which must not be read back as the CPU's. So does a bf16 pass whose products
    are computed in float32 (:func:`~.bf16_products.products_path`)."""
    body = {"model": loaded.info.name, "weights": loaded.info.weights_sha256, "ids": hashlib.sha256(np.ascontiguousarray(ids).tobytes()).hexdigest(),
            "heads": sorted([int(layer), int(h)] for layer, h in heads), "protocol": PROTOCOL, "dtype": dtype}
    if loaded.input_device.type != "cpu":
        body["device"] = loaded.input_device.type
    if dtype == "bfloat16" and products_path(loaded.input_device) != "native":
        body["products"] = products_path(loaded.input_device)
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


@contextmanager
def precision(dtype: str, device="cpu", products: str | None = None):
    """The forward passes inside run at ``dtype`` (see :data:`PERPLEXITY_DTYPES`), without gradients, on ``device``: bfloat16 is
    autocast on that device's type (a CUDA or XPU device's own autocast; the CPU's for the CPU and any other), its
    matrix products on ``products`` (:func:`~.bf16_products.bf16_products`: by default native where the device has
    bf16 instructions, else in float32).

    One block around many evaluations casts each weight to bf16 once: autocast caches the casts of
    parameters that require grad until the block ends. It does not under ``torch.inference_mode`` (every
    forward pass would cast every weight again), so the block is ``torch.no_grad``.
    """
    import torch

    if dtype not in PERPLEXITY_DTYPES:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {', '.join(PERPLEXITY_DTYPES)}")
    kind = torch.device(device).type
    with (torch.no_grad(), torch.autocast(kind if kind in AUTOCAST_DEVICES else "cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16"),
          bf16_products(device, products) if dtype == "bfloat16" else contextlib.nullcontext()):
        yield


def perplexity(loaded, ids: np.ndarray, heads=(), progress: str | None = None, use_cache: bool = True, dtype: str = "bfloat16") -> dict:
    """Perplexity of ``loaded`` on ``ids`` with the ``(layer, head)`` pairs in ``heads`` ablated, forward pass at ``dtype``.

    Returns ``{"perplexity", "nll", "tokens", "window_nll", "window_tokens", "seconds", "kind", "dtype"}``:
    ``perplexity = exp(Σ window_nll / Σ window_tokens)``; ``kind`` is ``causal`` or ``pseudo`` (masked LM).
    Call it inside :func:`precision` to share weight casts between evaluations.
    """
    from ..base.errors import ModelError

    heads = [tuple(h) for h in heads]
    path = cache_dir() / "perplexity" / slug(loaded.info.name) / f"{_key(loaded, ids, heads, dtype)[:24]}.json"
    if use_cache and path.exists():
        try:
            return json.loads(path.read_text())
        except (OSError, ValueError):
            pass
    if not loaded.has_lm_head:
        raise ModelError(f"{loaded.info.name} was loaded without a language-modelling head (its packaged weights have none), so it has no "
                         "perplexity; pass a model saved with its training head (e.g. a *ForMaskedLM or *ForCausalLM folder)")
    masked = not loaded.info.causal
    if masked and getattr(loaded.processor, "mask_token_id", None) is None:
        raise ModelError(f"{loaded.info.name} has no mask token, so no pseudo-perplexity can be computed")
    started = time.perf_counter()
    device = loaded.input_device
    with precision(dtype, device), ablate_heads(loaded.model, heads, loaded.info.heads):
        sums, counts = (_masked_nll(loaded.model, loaded.processor, ids, progress, device) if masked else
                        _causal_nll(loaded.model, ids, progress, device))
    total, count = float(sums.sum()), int(counts.sum())
    result = {"perplexity": math.exp(total / count), "nll": total / count, "tokens": count, "window_nll": sums.tolist(),
              "window_tokens": counts.tolist(), "seconds": time.perf_counter() - started, "kind": "pseudo" if masked else "causal", "dtype": dtype}
    atomic_write_json(path, result)
    return result
