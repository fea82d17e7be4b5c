"""Perplexity on held-out text, with or without ablated heads (MATH.md section 10).

Held-out windows come from the corpus's held-out split (documents no signature ever saw):
``n`` windows of ``length`` tokens, fixed by a seed, the same for every configuration.

* Causal LMs: ``exp`` of the mean next-token negative log-likelihood over every predicted token
  (the model's own LM head).
* Masked LMs: pseudo-perplexity, ``exp`` of the mean negative log-likelihood of each text token
  when it alone is masked (one forward pass per token).

Each evaluation is cached on disk (a JSON file per model, windows and pruned-head set), so an
interrupted sweep resumes and a rerun reads its numbers back.
"""

from __future__ import annotations

import hashlib
import json
import math
import time
from pathlib import Path

import numpy as np

from ..base.files import atomic_write_json
from ..base.paths import cache_dir, slug
from .ablation import ablate_heads

PROTOCOL = "ppl-1"
LOGITS_BUDGET = 256 * 2**20
"""Bytes of float32 logits one batch may hold (a Gemma vocabulary is 262k tokens)."""


def heldout_windows(tokenizer, n: int, length: int, seed: int = 0, corpus: str = "wikipedia") -> np.ndarray:
    """``n`` held-out windows of ``length`` token ids (the tokenizer's own special tokens included)."""
    from .corpus import text_windows

    ids, _ = text_windows(tokenizer, n, length, seed, corpus, "heldout")
    return ids


def _batch_size(n: int, length: int, vocab: int) -> int:
    return max(1, min(n, LOGITS_BUDGET // max(1, length * vocab * 4)))


def _causal_nll(model, ids, progress_label=None) -> tuple[float, int]:
    import torch

    n, length = ids.shape
    size = _batch_size(n, length, model.config.get_text_config().vocab_size)
    total, count = 0.0, 0
    starts = range(0, n, size)
    if progress_label:
        from tqdm.auto import tqdm

        starts = tqdm(starts, desc=progress_label, unit="batch", leave=False)
    with torch.inference_mode():
        for start in starts:
            batch = torch.as_tensor(ids[start : start + size])
            logits = model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits[:, :-1].double()
            nll = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]), batch[:, 1:].reshape(-1), reduction="sum")
            total += float(nll)
            count += batch[:, 1:].numel()
    return total, count


def _masked_nll(model, tokenizer, ids, progress_label=None) -> tuple[float, int]:
    import torch

    special = set(tokenizer.all_special_ids)
    total, count = 0.0, 0
    rows = range(ids.shape[0])
    if progress_label:
        from tqdm.auto import tqdm

        rows = tqdm(rows, desc=progress_label, unit="window", leave=False)
    with torch.inference_mode():
        for r in rows:
            positions = [i for i, t in enumerate(ids[r]) if int(t) not in special]
            batch = torch.as_tensor(np.repeat(ids[r : r + 1], len(positions), axis=0))
            targets = batch[torch.arange(len(positions)), positions].clone()
            batch[torch.arange(len(positions)), positions] = tokenizer.mask_token_id
            logits = model(input_ids=batch, attention_mask=torch.ones_like(batch)).logits[torch.arange(len(positions)), positions].double()
            total += float(torch.nn.functional.cross_entropy(logits, targets, reduction="sum"))
            count += len(positions)
    return total, count


def _key(loaded, ids: np.ndarray, heads) -> str:
    body = {"model": loaded.info.name, "weights": loaded.info.weights_sha256, "ids": hashlib.sha256(np.ascontiguousarray(ids).tobytes()).hexdigest(),
            "heads": sorted([int(layer), int(h)] for layer, h in heads), "protocol": PROTOCOL}
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()


def perplexity(loaded, ids: np.ndarray, heads=(), progress: str | None = None, use_cache: bool = True) -> dict:
    """Perplexity of ``loaded`` on ``ids`` with the ``(layer, head)`` pairs in ``heads`` ablated.

    Returns ``{"perplexity", "nll", "tokens", "seconds", "kind"}``; ``kind`` is ``causal`` or ``pseudo`` (masked LM).
    """
    from ..base.errors import ModelError

    heads = [tuple(h) for h in heads]
    path = cache_dir() / "perplexity" / slug(loaded.info.name) / f"{_key(loaded, ids, heads)[:24]}.json"
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
    with ablate_heads(loaded.model, heads, loaded.info.heads):
        total, count = _masked_nll(loaded.model, loaded.processor, ids, progress) if masked else _causal_nll(loaded.model, ids, progress)
    result = {"perplexity": math.exp(total / count), "nll": total / count, "tokens": count, "seconds": time.perf_counter() - started,
              "kind": "pseudo" if masked else "causal"}
    atomic_write_json(path, result)
    return result
