"""Where the capture's peak memory goes, beside the plain sdpa forward's (needs `make models`): the resident set (RSS)
of one process per method, read after each stage, under glibc's default allocator settings and under settings that
hand freed memory back to the system at once.

Stages, each read after the last has finished:
  libraries  torch and transformers imported (both methods), and for ``ours`` attncoda's signatures with the compiled
             row-statistics kernel called once on a tiny input (numba loads its cached machine code and LLVM);
  model      smollm2-135m loaded, and the windows tokenized;
  warm-up    two full windows run (every weight page touched, the allocator at its working size);
  peak       the highest RSS while every window runs, sampled every 2 ms (what ``capture_overhead.py`` calls peak total).

Allocator settings: ``default`` is glibc's; ``release`` sets ``MALLOC_TRIM_THRESHOLD_=0`` and ``MALLOC_TOP_PAD_=0``, so
freed heap memory goes back to the system when it is freed instead of staying in the process for reuse. The gap
between the two is memory the allocator kept, not memory either method holds.

Repeats alternate the methods; each stage's ratio ours / sdpa is the geometric mean over the repeats with its 95 % t
interval (a repeat is the unit).

Usage: python benchmarks/capture_memory.py [--lengths 512 2048] [--repeats 3] [--out benchmarks/results/capture_memory.md]
"""

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import capture_overhead as bench  # benchmarks/, beside this script
from ratios import log_interval

STAGES = ("libraries", "model", "warm-up", "peak")
RELEASE = {"MALLOC_TRIM_THRESHOLD_": "0", "MALLOC_TOP_PAD_": "0"}
SETTINGS = {"default": {}, "release": RELEASE}


def stages(method: str, length: int) -> dict:
    """One method's RSS (MB) after each of :data:`STAGES`, in this process, and the measured run's seconds."""
    import psutil
    import torch
    import transformers  # noqa: F401  (imported alike by both methods before the first reading)

    proc = psutil.Process()
    rss = {}
    if method == "ours":
        from attncoda.engine.signatures import _kernel_statistics

        _kernel_statistics(torch.zeros(1, 1, 4, 4), (0,), True)
    rss["libraries"] = proc.memory_info().rss
    ids = bench._windows(length)
    model, run = bench._runner(method, length)
    rss["model"] = proc.memory_info().rss
    bench.warm_up(method, run, ids)
    seconds, rss["warm-up"], rss["peak"] = bench.timed_run(method, run, ids, bench.BATCH.get(length, 2))
    return {"method": method, "length": length, "seconds": seconds, **{k: v / 2**20 for k, v in rss.items()}}


def child(method: str, length: int, setting: str) -> dict:
    env = {**os.environ, **SETTINGS[setting], "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(bench.ROOT / "src"), "BENCH_FOLDER": bench._folder()}
    out = subprocess.run([sys.executable, __file__, "--child", method, "--length", str(length)], capture_output=True, text=True, env=env, check=True)
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "setting": setting}


def stage_ratios(results: list[dict]) -> list[dict]:
    """Per length, allocator setting and stage (the last, ``seconds``, is the measured run's time): each method's mean
    (MB or s) and ours / sdpa as a geometric mean over the repeats, with its 95 % t interval (a repeat is the unit)."""
    rows = []
    for length in sorted({r["length"] for r in results}):
        for setting in SETTINGS:
            pairs = [(a, b) for a in results for b in results if a["method"] == "sdpa" and b["method"] == "ours"
                     and a["length"] == b["length"] == length and a["setting"] == b["setting"] == setting and a["repeat"] == b["repeat"]]
            for stage in (*STAGES, "seconds") if pairs else ():
                ratio, low, high = log_interval([b[stage] / a[stage] for a, b in pairs])
                sdpa, ours = (sum(p[i][stage] for p in pairs) / len(pairs) for i in (0, 1))
                rows.append({"length": length, "setting": setting, "stage": stage, "sdpa": sdpa, "ours": ours, "ratio": ratio,
                             "low": low, "high": high, "repeats": len(pairs)})
    return rows


def summary(results: list[dict]) -> str:
    """The Markdown table of :func:`stage_ratios`."""
    lines = ["| L | allocator | stage | sdpa | ours | ours / sdpa | 95 % interval |", "|---|---|---|---|---|---|---|"]
    for r in stage_ratios(results):
        name = "time (s)" if r["stage"] == "seconds" else r["stage"]
        interval = f"[{r['low']:.2f}, {r['high']:.2f}]" if r["repeats"] > 1 else "—"
        lines.append(f"| {r['length']:,} | {r['setting']} | {name} | {r['sdpa']:,.1f} | {r['ours']:,.1f} | {r['ratio']:.2f}× | {interval} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[512, 2048])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", help="write the table (and the raw results as JSON beside it) here")
    parser.add_argument("--child")
    parser.add_argument("--length", type=int)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(stages(args.child, args.length)))
        return
    results = []
    for repeat in range(args.repeats):
        for length in args.lengths:
            for setting in SETTINGS:
                for method in (("sdpa", "ours") if repeat % 2 == 0 else ("ours", "sdpa")):
                    r = {**child(method, length, setting), "repeat": repeat}
                    results.append(r)
                    print(f"repeat {repeat} L = {length:>5} {setting:<8} {method:<5} " + "  ".join(f"{s} {r[s]:,.0f}" for s in STAGES)
                          + f"  MB  {r['seconds']:.1f} s", flush=True)
    table = summary(results)
    print(table)
    if args.out:
        out = Path(args.out)
        out.with_suffix(".json").write_text(json.dumps(results, indent=1) + "\n")
        out.write_text(f"{bench._machine(0).split(';')[1].strip()}, smollm2-135m, {bench.TOKENS:,} tokens per length, "
                       f"{args.repeats} repeats\n\n{table}\n")


if __name__ == "__main__":
    main()
