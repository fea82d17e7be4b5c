"""Several prune sets scored in one forward pass (a head mask per batch row) against one pass per set, in one run.

Issue 63's first idea for the pruning chapter: stack the held-out windows of ``--sets`` random prune sets (20 % of the
heads each) into one batch, zero each row's own heads before the output projection, and score them all at once, so
the matrix products run at a size two cores use better. The baseline scores the same sets one after another, as the
sweep does (:func:`attncoda.engine.perplexity.perplexity`'s batches). Both run in one bf16 precision block, after one
warm-up pass; the per-window negative log-likelihoods must agree bit for bit.

Prints and writes (``benchmarks/results/batched_prune_sets.json``) the seconds of each arm, their ratio and the largest
difference, per model. Needs `make models`.

Usage: python benchmarks/batched_prune_sets.py [--models smollm2-135m gemma3-270m] [--sets 6] [--windows 7] [--length 128]
"""

import argparse
import json
import time
from pathlib import Path

import numpy as np
import torch

HERE = Path(__file__).parent


def window_nll(model, ids, masks, layers_heads, projections):
    """Per-window summed negative log-likelihood of ``ids`` (rows), row ``b`` with the heads ``masks[b] == 0`` zeroed."""
    from attncoda.engine.perplexity import _token_nll

    heads = layers_heads[1]
    handles = []

    def hook_for(layer):
        def hook(module, args):
            x = args[0]
            width = x.shape[-1] // heads
            keep = masks[:, layer].repeat_interleave(width, dim=-1)[:, None, :].to(x.dtype)
            return (x * keep, *args[1:])
        return hook

    try:
        handles = [p.register_forward_pre_hook(hook_for(i)) for i, (_, p) in enumerate(projections)]
        logits = model(input_ids=ids, attention_mask=torch.ones_like(ids)).logits[:, :-1]
        return _token_nll(logits, ids[:, 1:]).view(ids.shape[0], -1).double().sum(dim=1)
    finally:
        for h in handles:
            h.remove()


def one_model(name: str, sets: int, windows: int, length: int) -> dict:
    from attncoda.engine.ablation import output_projections
    from attncoda.engine.models import load_model
    from attncoda.engine.perplexity import LOGITS_BUDGET, heldout_windows, precision
    from attncoda.studies.pruning import random_selection, target_count

    loaded = load_model(name)
    model, layers, heads = loaded.model, loaded.info.layers, loaded.info.heads
    ids = torch.as_tensor(heldout_windows(loaded.processor, windows, length))
    projections = output_projections(model)
    rng = np.random.default_rng(0)
    masks = torch.ones(sets, layers, heads)
    for s in range(sets):
        for h in random_selection(rng, layers, heads, target_count(0.2, layers * heads)):
            masks[s, h // heads, h % heads] = 0
    vocab = model.config.get_text_config().vocab_size
    rows_per_pass = max(1, LOGITS_BUDGET // (length * vocab * 4))  # the sweep's own logits budget
    with precision("bfloat16"):
        window_nll(model, ids, masks[:1].expand(windows, layers, heads), (layers, heads), projections)  # warm-up
        started = time.perf_counter()
        one_by_one = torch.cat([torch.cat([window_nll(model, ids[i : i + rows_per_pass], masks[s : s + 1].expand(len(ids[i : i + rows_per_pass]), layers, heads),
                                                      (layers, heads), projections) for i in range(0, windows, rows_per_pass)]) for s in range(sets)])
        sequential = time.perf_counter() - started
        stacked_ids, stacked_masks = ids.repeat(sets, 1), masks.repeat_interleave(windows, dim=0)
        started = time.perf_counter()
        batched = torch.cat([window_nll(model, stacked_ids[i : i + rows_per_pass], stacked_masks[i : i + rows_per_pass], (layers, heads), projections)
                             for i in range(0, len(stacked_ids), rows_per_pass)])
        together = time.perf_counter() - started
    return {"sets": sets, "windows": windows, "length": length, "rows_per_pass": rows_per_pass, "one_set_per_pass_s": sequential,
            "sets_batched_s": together, "speedup": sequential / together, "largest_difference": float((one_by_one - batched).abs().max())}


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=["smollm2-135m", "gemma3-270m"])
    parser.add_argument("--sets", type=int, default=6)
    parser.add_argument("--windows", type=int, default=7)
    parser.add_argument("--length", type=int, default=128)
    args = parser.parse_args()
    torch.manual_seed(0)
    out = {}
    for name in args.models:
        out[name] = one_model(name, args.sets, args.windows, args.length)
        r = out[name]
        print(f"{name}: one set per pass {r['one_set_per_pass_s']:.2f} s, {args.sets} sets batched {r['sets_batched_s']:.2f} s, "
              f"speedup {r['speedup']:.2f}x (batches of {r['rows_per_pass']} rows), largest difference {r['largest_difference']:g}", flush=True)
    (HERE / "results" / "batched_prune_sets.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
