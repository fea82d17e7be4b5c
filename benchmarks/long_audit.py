"""`attncoda audit --full` at a long window against the signatures it needs, and an older source tree's audit, in one run.

Issue 63's target: at ``--length 8192`` with ``--n 2 --seeds 0 1`` on smollm2-135m, the audit costs at most 1.5× the
signatures it needs. Each arm runs from scratch in a cache folder of its own that shares only the model weights
(:func:`audit.fresh_cache`):

* ``signatures``: the seeds' signatures at that length, one process (what the audit cannot avoid);
* ``audit --full``: `attncoda audit --model M --length L --n N --seeds ... --format json --full`, this tree;
* ``baseline audit --full`` (with ``--baseline-src DIR``): the same command from an older checkout's ``src``.

Every arm is one process, run once, one after another (run it alone: two cores). Writes
``benchmarks/results/long_audit.json``.

Usage: python benchmarks/long_audit.py [--model smollm2-135m] [--length 8192] [--n 2] [--seeds 0 1] [--baseline-src DIR]
"""

import argparse
import json
import tempfile
from pathlib import Path

import subprocess
import sys
import time

from audit import fresh_cache  # benchmarks/audit.py, beside this script

HERE = Path(__file__).parent


def timed(commands, env: dict) -> float:
    """Seconds to run ``commands`` one after another, each its own process; a failure names its exit status and its last
    line that is not a progress bar (a process killed for memory prints none)."""
    started = time.perf_counter()
    for command in commands:
        argv = [sys.executable, *command[1:]] if command[0] == "python" else [sys.executable, "-m", "attncoda.face.cli", *command]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            lines = [line for line in done.stderr.splitlines() if line.strip() and "it/s]" not in line and "%|" not in line]
            raise SystemExit(f"{' '.join(command)}: exit {done.returncode}" + (f": {lines[-1]}" if lines else " (no message: killed?)"))
    return time.perf_counter() - started


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="smollm2-135m")
    parser.add_argument("--length", type=int, default=8192)
    parser.add_argument("--n", type=int, default=2)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--baseline-src", help="also time the audit from this source tree (e.g. an older checkout's src)")
    args = parser.parse_args()
    seeds = " ".join(map(str, args.seeds))
    audit = ["audit", "--model", args.model, "--length", str(args.length), "--n", str(args.n), "--seeds", *map(str, args.seeds),
             "--format", "json", "--full"]
    signatures = ["python", "-c", f"from attncoda.engine.signatures import signature_sets; "
                                   f"signature_sets({args.model!r}, {tuple(args.seeds)!r}, n={args.n}, length={args.length})"]
    arms = [("signatures", [signatures]), ("audit --full", [audit])] + ([("baseline audit --full", [audit])] if args.baseline_src else [])
    seconds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, commands) in enumerate(arms):
            env = fresh_cache(Path(tmp) / str(k))
            if name.startswith("baseline"):
                env["PYTHONPATH"] = args.baseline_src  # ahead of the editable install's src
            seconds[name] = timed(commands, env)
            print(f"{name}: {seconds[name]:.1f} s", flush=True)
    ratios = {name: seconds[name] / seconds["signatures"] for name in seconds if name != "signatures"}
    for name, ratio in ratios.items():
        print(f"{name} / signatures = {ratio:.2f}")
    out = {"model": args.model, "length": args.length, "n": args.n, "seeds": args.seeds, "baseline_src": args.baseline_src,
           "seconds": seconds, "ratios": ratios, "target": 1.5, "command": f"attncoda audit --length {args.length} --n {args.n} --seeds {seeds} --full"}
    (HERE / "results" / "long_audit.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
