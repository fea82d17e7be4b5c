"""The pruning sweep's perplexity evaluation before and after its two cost savers, in one process (needs `make models`).

* before: the forward pass under ``torch.inference_mode`` (autocast then casts every weight to bf16 again in every
  forward pass) and the negative log-likelihood of a whole batch's logits upcast at once;
* now: :func:`attncoda.engine.perplexity.precision` (``torch.no_grad``: each weight cast once per block) and the
  log-likelihood a few cached rows at a time (:data:`~attncoda.engine.perplexity.NLL_CHUNK_BYTES`).

For each causal default model, the sweep's held-out windows with a random 20 % of heads ablated, scored uncached,
alternating before and now ``--repeats`` times (so both see the same machine load), all inside one precision block as
the sweep's evaluations are (the before path's inference mode inside it still casts every weight in every pass). Prints the median seconds per
evaluation of each, the geometric mean of the per-repeat ratios now / before with a 95 % t interval of their log, and
whether every window's negative log-likelihood came out the same bits.

Usage: python benchmarks/perplexity_path.py [--windows 7] [--length 128] [--repeats 5] [--models smollm2-135m ...]
"""

import argparse
from contextlib import contextmanager

import numpy as np

from attncoda.engine import perplexity as ppl
from attncoda.engine.models import load_model
from attncoda.engine.registry import REGISTRY
from attncoda.studies.pruning import random_selection, target_count
from attncoda.studies.pruning_sweep import PRUNE_WINDOWS

from ratios import log_interval  # benchmarks/ratios.py, beside this script


@contextmanager
def _before_precision(dtype):
    import torch

    with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=dtype == "bfloat16"):
        yield


def _before_token_nll(logits, targets):
    import torch

    return torch.nn.functional.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), targets.reshape(-1), reduction="none")


@contextmanager
def before_path():
    """The evaluation as it was: the module's two pieces swapped back for the block."""
    saved = ppl.precision, ppl._token_nll
    ppl.precision, ppl._token_nll = _before_precision, _before_token_nll
    try:
        yield
    finally:
        ppl.precision, ppl._token_nll = saved


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--windows", type=int, default=PRUNE_WINDOWS)
    parser.add_argument("--length", type=int, default=128)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", nargs="*", default=[n for n, m in REGISTRY.items() if m.causal])
    args = parser.parse_args()
    print(f"{args.windows} windows x {args.length} tokens, a random 20 % of heads ablated, bf16; {args.repeats} alternating repeats")
    print(f"{'model':<20} {'before s':>8} {'now s':>7} {'now/before':>10} {'95 % interval':>15} {'same bits':>9}")
    for name in args.models:
        loaded = load_model(name)
        ids = ppl.heldout_windows(loaded.processor, args.windows, args.length)
        layers, heads = loaded.info.layers, loaded.info.heads
        pairs = [(i // heads, i % heads) for i in random_selection(np.random.default_rng(0), layers, heads, target_count(0.2, layers * heads))]
        times, nll = {"before": [], "now": []}, {}
        with ppl.precision("bfloat16"):  # one block around every evaluation, as the sweep has
            ppl.perplexity(loaded, ids[:1], pairs, use_cache=False)  # warm up (and cast the weights once)
            for _ in range(args.repeats):
                for path in ("before", "now"):
                    if path == "before":
                        with before_path():
                            result = ppl.perplexity(loaded, ids, pairs, use_cache=False)
                    else:
                        result = ppl.perplexity(loaded, ids, pairs, use_cache=False)
                    times[path].append(result["seconds"])
                    nll.setdefault(path, result["window_nll"])
                    assert nll[path] == result["window_nll"], "a rerun moved a bit"
        ratio, low, high = log_interval(np.array(times["now"]) / np.array(times["before"]))
        print(f"{name:<20} {np.median(times['before']):8.2f} {np.median(times['now']):7.2f} {ratio:9.2f}x  [{low:.2f}, {high:.2f}]"
              f" {str(nll['before'] == nll['now']):>9}", flush=True)


if __name__ == "__main__":
    main()
