"""Seconds per training step of the collapse suite's GPT-NeoX, float32 against bfloat16 autocast, in one run.

For each shape: a few warm-up steps, then ``--steps`` timed steps of each precision, alternating blocks so that
machine noise falls on both; prints seconds per step and the float32 / bf16 ratio. Threads: the suite's
(``training.TRAINING_THREADS``).

Usage: python benchmarks/training_precision.py [--steps 20] [--batch 16]
"""

import argparse
import contextlib
import time

import torch
from transformers import GPTNeoXForCausalLM

from attncoda.engine import training

SHAPES = [  # (hidden, layers, heads, length)
    (64, 4, 4, 128),
    (128, 4, 4, 128),
    (256, 4, 4, 128),
    (256, 6, 4, 256),
    (384, 6, 6, 256),
]


def step_seconds(model, optimizer, ids, precision: str, steps: int) -> float:
    autocast = torch.autocast("cpu", dtype=torch.bfloat16) if precision == "bf16" else contextlib.nullcontext()
    t0 = time.perf_counter()
    for _ in range(steps):
        with autocast:
            loss = model(input_ids=ids, labels=ids).loss
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
    return (time.perf_counter() - t0) / steps


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--batch", type=int, default=16)
    args = parser.parse_args()
    torch.set_num_threads(training.TRAINING_THREADS)
    print(f"{'hidden':>6} {'layers':>6} {'heads':>5} {'L':>5} {'params (M)':>10} {'float32 s/step':>14} {'bf16 s/step':>11} {'ratio':>6}")
    for hidden, layers, heads, length in SHAPES:
        run = training.SuiteRun("bench", hidden, layers, heads, seed=0, length=length, batch=args.batch)
        tok = training.run_tokenizer(run)
        torch.manual_seed(0)
        model = GPTNeoXForCausalLM(training.neox_config(run, tok))
        optimizer = training.make_optimizer(run, model.parameters())
        ids = torch.randint(0, len(tok), (args.batch, length))
        times = {"float32": [], "bf16": []}
        for precision in times:
            step_seconds(model, optimizer, ids, precision, 2)
        for _ in range(2):
            for precision in times:
                times[precision].append(step_seconds(model, optimizer, ids, precision, args.steps // 2))
        f32, bf = (sum(times[p]) / 2 for p in ("float32", "bf16"))
        params = sum(p.numel() for p in model.parameters()) / 1e6
        print(f"{hidden:>6} {layers:>6} {heads:>5} {length:>5} {params:>10.2f} {f32:>14.4f} {bf:>11.4f} {f32 / bf:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
