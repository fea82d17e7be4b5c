"""Capture benchmarks on smollm2-135m (needs `make models`). Each measurement runs in its own
process so that peak memory is its own; ratios are taken within this one run.

(a) signature extraction (eager attention, hooks, reductions) / plain backbone forward (sdpa,
    no attentions) on the same N windows — goal: ≤ 1.25x at L = 512; beside it, the same extraction
    fed the full float64 log-softmax array per layer (the path before the fused kernel), and eager
    attention with the hooks but no reduction (the part of the cost that capture itself needs);
(b) the naive way (full model with LM head, output_attentions=True, then the same reduction
    from the returned maps) against ours: time ratio and peak-memory ratio (target ≥ 3x less
    memory at L = 512, and no slower);
(c) loading the GGUF cold (dequantize and cache) against loading the cached safetensors.

Usage: python benchmarks/capture_overhead.py [--n 64] [--lengths 128 512 1024] [--batch-size 8]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

MODEL = "smollm2-135m"


def _peak_sampler():
    import psutil

    proc, peak, stop = psutil.Process(), [0], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.005)

    thread = threading.Thread(target=sample, daemon=True)
    return proc, peak, stop, thread


def measure(method: str, n: int, length: int, batch_size: int) -> dict:
    """Run one method in this process; returns wall time and peak RSS above the loaded-model baseline."""
    import numpy as np
    import torch
    import transformers as tf

    from attncoda.engine.corpus import text_windows
    from attncoda.engine.models import load_model
    from attncoda.engine.signatures import SignatureAccumulator, compute

    loaded = load_model(MODEL)
    ids = torch.as_tensor(text_windows(loaded.processor, n, length, 0)[0])
    if method == "sdpa":
        folder = loaded.model.name_or_path
        model = tf.AutoModelForCausalLM.from_pretrained(folder, attn_implementation="sdpa", dtype=torch.float32).eval()
        del loaded
    warm = ids[:1, :8]
    with torch.inference_mode():  # touch every weight page (safetensors are memory-mapped) before the baseline
        (model.model if method == "sdpa" else loaded.model)(input_ids=warm, attention_mask=torch.ones_like(warm))
    proc, peak, stop, thread = _peak_sampler()
    base = proc.memory_info().rss
    thread.start()
    start = time.perf_counter()
    with torch.inference_mode():
        if method == "sdpa":
            for s in range(0, n, batch_size):
                b = ids[s : s + batch_size]
                model.model(input_ids=b, attention_mask=torch.ones_like(b))
        elif method == "ours":
            compute(loaded, n=n, length=length, seed=0, batch_size=batch_size)
        elif method == "float64":  # the accumulator fed each layer's full float64 log-softmax array
            update = SignatureAccumulator.update
            SignatureAccumulator.update = lambda self, layer, w, lw=None: update(self, layer, w, None if lw is None else np.asarray(lw))
            compute(loaded, n=n, length=length, seed=0, batch_size=batch_size)
        elif method == "eager":  # eager attention under the capture hooks, nothing reduced: what capture itself needs
            from attncoda.engine.capture import capture_attention

            with capture_attention(loaded.backbone, lambda layer, w, lw: None):
                for s in range(0, n, batch_size):
                    b = ids[s : s + batch_size]
                    loaded.backbone(input_ids=b, attention_mask=torch.ones_like(b))
        elif method == "naive":
            info = loaded.info
            acc = SignatureAccumulator(info.layers, info.heads, length, True, (0,))
            for s in range(0, n, batch_size):
                b = ids[s : s + batch_size]
                out = loaded.model(input_ids=b, attention_mask=torch.ones_like(b), output_attentions=True)
                for layer, weights in enumerate(out.attentions):
                    acc.update(layer, weights)
                del out
    elapsed = time.perf_counter() - start
    stop.set()
    thread.join()
    return {"method": method, "length": length, "seconds": elapsed, "peak_extra_mb": (peak[0] - base) / 2**20}


def gguf_loads() -> dict:
    """Cold load (dequantize + cache) in a fresh cache folder, then the cached load."""
    from attncoda.engine.models import load_model
    from attncoda.engine.registry import locate

    locate(MODEL)  # the package file itself, outside the timing
    times = {}
    for label in ("cold", "cached"):
        start = time.perf_counter()
        load_model(MODEL)
        times[label] = time.perf_counter() - start
    return times


def child(args) -> None:
    if args.child == "gguf":
        print(json.dumps(gguf_loads()))
    else:
        print(json.dumps(measure(args.child, args.n, args.length, args.batch_size)))


def run_child(*extra, env=None) -> dict:
    out = subprocess.run([sys.executable, __file__, *extra], capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit(f"benchmark step {extra} failed:\n{out.stderr[-2000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=64)
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512, 1024])
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--child")
    parser.add_argument("--length", type=int)
    args = parser.parse_args()
    if args.child:
        return child(args)

    print(f"model {MODEL}, N = {args.n}, batch {args.batch_size}, torch threads as configured")
    run_child("--child", "ours", "--n", "2", "--length", "16", "--batch-size", "2")  # warm: cached weights, compiled kernel
    for length in args.lengths:
        common = ["--n", str(args.n), "--length", str(length), "--batch-size", str(args.batch_size)]
        r = {m: run_child("--child", m, *common) for m in ("sdpa", "eager", "ours", "float64", "naive")}
        print(f"L = {length}:")
        for m, v in r.items():
            print(f"  {m:<7} {v['seconds']:7.1f} s   peak +{v['peak_extra_mb']:7.0f} MB")
        sdpa = r["sdpa"]["seconds"]
        print(f"  (a) ours / plain sdpa forward: {r['ours']['seconds'] / sdpa:.2f}x time "
              f"(full float64 log-softmax: {r['float64']['seconds'] / sdpa:.2f}x; eager with hooks, nothing reduced: {r['eager']['seconds'] / sdpa:.2f}x)")
        print(f"  (b) naive / ours: {r['naive']['seconds'] / r['ours']['seconds']:.2f}x time, {r['naive']['peak_extra_mb'] / max(r['ours']['peak_extra_mb'], 1):.1f}x peak memory")
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "ATTNCODA_CACHE": cache}
        g = run_child("--child", "gguf", env=env)
    print(f"(c) GGUF load: cold {g['cold']:.1f} s, cached {g['cached']:.1f} s ({g['cold'] / g['cached']:.0f}x faster cached)")


if __name__ == "__main__":
    main()
