"""What the training monitor costs: training steps of the collapse suite's models with an :class:`AttentionMonitor`
observing every ``--every`` steps, against the same steps without it, in one run.

For each suite size (1×1, 2×2, 3×3 GPT-2 blocks, seed 0, the suite's own batches, threads and precision), each repeat
trains ``--steps`` steps twice from the same initial weights: once plain, once observing (the order alternates between
repeats, so machine noise falls on both). The probe is the first eight windows of the suite's batch at step 0. Prints
seconds per step of each and the ratio monitored / plain as a geometric mean over repeats with a 95 % t interval of
its log, and writes ``benchmarks/results/monitor_cost.json``.

``--device cuda`` trains and observes there (synchronizing before each clock reading) and ``--out`` names the file.

Usage: python benchmarks/monitor_cost.py [--steps 300] [--every 100] [--repeats 5] [--device cuda] [--out FILE.json]
"""

import argparse
import copy
import json
import sys
import tempfile
import time
from pathlib import Path

import torch

from attncoda.engine import training
from attncoda.engine.monitor import AttentionMonitor
from attncoda.studies.collapse_suite import suite_runs

from ratios import log_interval  # benchmarks/ratios.py, beside this script

HERE = Path(__file__).parent


def train_seconds(model, run, batch, steps: int, monitor=None) -> float:
    """Seconds of ``steps`` training steps as the suite takes them (its rate schedule, clipping and precision)."""
    optimizer = training.make_optimizer(run, model.parameters())
    model.train()
    started = time.perf_counter()
    for step in range(steps):
        if monitor is not None:
            monitor.observe(model, step)
        training.train_step(model, optimizer, run, batch, step)
    if torch.cuda.is_available() and next(model.parameters()).is_cuda:
        torch.cuda.synchronize()
    return time.perf_counter() - started


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--every", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--out", default=str(HERE / "results" / "monitor_cost.json"))
    args = parser.parse_args(argv)
    torch.set_num_threads(training.TRAINING_THREADS)
    runs = [run for run, _, kind in suite_runs([0]) if kind == "ladder"]
    out = {"steps": args.steps, "every": args.every, "repeats": args.repeats, "threads": training.TRAINING_THREADS, "device": args.device, "sizes": {}}
    for run in runs:
        tokenizer = training.run_tokenizer(run)
        batch = training.batches(run, tokenizer)
        torch.manual_seed(run.seed)
        initial = training.new_model(run, tokenizer).to(args.device)
        probe = torch.as_tensor(batch(0)[0])[:8]
        plain, watched = [], []
        for repeat in range(args.repeats):
            with tempfile.TemporaryDirectory() as folder:
                monitor = AttentionMonitor(Path(folder) / "log.jsonl", probe=probe, every=args.every)
                arms = [("plain", None), ("watched", monitor)]
                for arm, m in (arms if repeat % 2 == 0 else arms[::-1]):
                    seconds = train_seconds(copy.deepcopy(initial), run, batch, args.steps, m)
                    (plain if arm == "plain" else watched).append(seconds)
        ratio, low, high = log_interval([w / p for w, p in zip(watched, plain)])
        out["sizes"][run.name] = {"plain_s_per_step": sorted(plain)[len(plain) // 2] / args.steps,
                                  "watched_s_per_step": sorted(watched)[len(watched) // 2] / args.steps,
                                  "ratio": ratio, "interval": [low, high]}
        print(f"{run.name}: {1000 * out['sizes'][run.name]['plain_s_per_step']:.1f} ms/step plain, "
              f"{1000 * out['sizes'][run.name]['watched_s_per_step']:.1f} ms/step observed every {args.every}; "
              f"ratio {ratio:.3f} [{low:.3f}, {high:.3f}]", flush=True)
    import platform

    out["machine"] = {"processor": platform.processor() or platform.machine(), "cores": __import__("os").cpu_count(), "torch": torch.__version__}
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    sys.exit(0 if main() else 1)
