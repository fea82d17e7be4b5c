"""What capturing attention costs, beside a plain forward pass and beside the tools readers use (needs `make models`;
TransformerLens and nnsight run from `.venv-interop`, which `make test` builds).

Every method runs on smollm2-135m's backbone over the same windows (the Wikipedia sample, seed 0), each in its own
process so that its peak memory is its own; times and peaks are reported as ratios to the plain sdpa forward of the
same run, since this machine's speed drifts between runs.

Methods:
  sdpa       the backbone's plain forward, sdpa attention, nothing captured (the baseline);
  scores     sdpa's forward with each layer's scores formed beside it (`score_capture`), nothing reduced: what the extra
             q·kᵀ costs alone, so that ours − scores is what the reductions cost;
  ours       `signatures.compute`: the scores formed beside sdpa (`score_capture`) and every reduction of the record;
  ours-eager the same reductions fed by eager attention under hooks (the capture before this benchmark's protocol);
  eager      eager attention under the capture hooks, nothing reduced (what eager attention itself costs);
  output-attentions  transformers' `output_attentions=True`, every layer's maps returned, nothing reduced;
  transformerlens    TransformerLens `run_with_cache`, only the `hook_pattern` names kept, nothing reduced;
  nnsight    an nnsight trace that saves every layer's attention weights, nothing reduced.

The three outside methods stop at the maps: reducing them would add our kernel's cost on top, so their ratios are
lower bounds on what a reader pays for the same numbers. TransformerLens and nnsight run the whole model (the LM head
included), as a reader calls them; the others run the backbone.

Memory, in each method's own process: "peak extra" is the peak RSS during the measured run above the RSS after the
same warm-up for every method (two full windows), what the method adds to a loaded, warmed-up model; "peak total" is
the peak RSS itself, the model included. `ours` also tokenizes its windows inside the timed call (the others are
handed token ids), so its time is an upper bound.

Windows: n · L = 16,384 tokens at every L (128 windows of 128, 32 of 512, 16 of 1,024, 8 of 2,048), batches of
8, 8, 4 and 2 windows.

Repeats: with ``--repeats N`` every method runs N times per length, in an order shuffled per repeat; a repeat is the
unit, so each ratio to sdpa gets a 95 % t interval of its log over the repeats, and a length's target is met only when
the whole interval lies at or below it (``undecided`` when the interval straddles it). ``--once M ...`` runs the
methods M in the first repeat only (the outside tools, whose ratios no target reads).

Device: ``--device cuda`` runs the in-process methods on that device (``ours`` through ``--device-map``'s setting),
synchronizes before each clock reading, and reads peak memory from the device's allocator instead of the RSS; the
method ``sdpa-flash`` is the plain forward with torch's flash-attention kernel forced (CUDA only). No run on a GPU is
recorded yet: this machine has none, and ``benchmarks/gpu_check.sh`` runs it where one is lent.

Usage: python benchmarks/capture_overhead.py [--lengths 128 512 1024 2048] [--methods ...] [--repeats N] [--once M ...] [--out FILE.json] [--device cuda]
       python benchmarks/capture_overhead.py --blocks [--out benchmarks/results/causal_blocks.md]  (one layer's causal
       scores as one matmul against blocks of queries: where ``score_capture.CAUSAL_BLOCKS_FROM`` comes from)
       python benchmarks/capture_overhead.py --table FILE.json  (rewrite FILE.md from a run's JSON)
(--out also writes the Markdown table beside the JSON, as FILE.md, and keeps every finished child in FILE.partial.json
while the run lasts; benchmarks/results/ keeps the committed run)
"""

import argparse
import functools
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

from ratios import log_interval  # benchmarks/ratios.py, beside this script


MODEL = "smollm2-135m"
ROOT = Path(__file__).resolve().parents[1]
INTEROP = ROOT / ".venv-interop" / "bin" / "python"
METHODS = ("sdpa", "scores", "ours", "ours-eager", "eager", "output-attentions", "transformerlens", "nnsight", "sdpa-flash")
OUTSIDE = ("transformerlens", "nnsight")
TOKENS = 16_384
BATCH = {128: 8, 512: 8, 1024: 4, 2048: 2, 4096: 1, 8192: 1}
TARGETS = {512: 1.10, 1024: 1.25, 2048: 1.5}
"""The time ratio ours / sdpa each length should reach; peak memory ≤ 1.2× sdpa's at every length."""
MEMORY_TARGET = 1.2


def _peak_sampler():
    import psutil

    proc, peak, stop = psutil.Process(), [0], threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], proc.memory_info().rss)
            time.sleep(0.002)

    return proc, peak, stop, threading.Thread(target=sample, daemon=True)


def _windows(length: int, tokens: int = TOKENS):
    import torch
    from transformers import AutoTokenizer

    from attncoda.engine.corpus import text_windows

    folder = _folder()
    ids, _ = text_windows(AutoTokenizer.from_pretrained(folder), max(2, tokens // length), length, 0)
    return torch.as_tensor(ids)


@functools.cache
def _folder() -> str:
    """The model's cached weights folder (the parent resolves it; `.venv-interop` does not hold the model packages)."""
    if os.environ.get("BENCH_FOLDER"):
        return os.environ["BENCH_FOLDER"]
    from attncoda.engine.models import load_model

    return load_model(MODEL).model.name_or_path


def _device() -> str:
    """Where the in-process methods run (``BENCH_DEVICE``, set by ``--device``; the CPU by default)."""
    return os.environ.get("BENCH_DEVICE", "cpu")


def _runner(method: str, length: int):
    """The model for ``method`` and a function that runs the method on one batch (or on all windows, for ``ours``)."""
    model, run = _runner_on_cpu_ids(method, length)
    if _device() == "cpu" or method in ("ours", "ours-eager"):
        return model, run  # ours hands the model its inputs on the model's own device itself
    return model, lambda batch: run(batch.to(_device()))


def _runner_on_cpu_ids(method: str, length: int):
    import torch
    import transformers as tf

    folder = _folder()
    if method in ("ours", "ours-eager"):
        from attncoda.engine import score_capture
        from attncoda.engine.models import load_model
        from attncoda.engine.signatures import compute

        if method == "ours-eager":
            score_capture.score_path_reason = lambda model: "eager capture asked for"
        from attncoda.base import run_setting

        run_setting.use(run_setting.RunSetting(device_map=None if _device() == "cpu" else _device()))
        loaded = load_model(MODEL)
        return loaded.backbone, lambda ids, b: compute(loaded, n=len(ids), length=length, seed=0, batch_size=b)
    if method == "transformerlens":
        from transformer_lens.model_bridge import TransformerBridge

        bridge = TransformerBridge.boot_transformers(folder, device="cpu")
        keep = lambda name: name.endswith("hook_pattern")  # noqa: E731
        return bridge, lambda batch: bridge.run_with_cache(batch, names_filter=keep)
    if method == "nnsight":
        from nnsight import TransformersModel

        model = TransformersModel(folder, task="text-generation", attn_implementation="eager", dispatch=True, dtype=torch.float32)

        def trace(batch):
            saved = []
            with model.trace(batch):
                for layer in model.model.layers:
                    saved.append(layer.self_attn.output[1].save())
            return saved

        return model, trace
    implementation = "sdpa" if method in ("sdpa", "scores", "sdpa-flash") else "eager"
    dtype = torch.bfloat16 if method == "sdpa-flash" else torch.float32  # the flash kernel takes half precision only
    model = tf.AutoModel.from_pretrained(folder, attn_implementation=implementation, dtype=dtype).eval().to(_device())
    if method == "sdpa":
        return model, lambda batch: model(input_ids=batch, attention_mask=torch.ones_like(batch))
    if method == "sdpa-flash":
        from torch.nn.attention import SDPBackend, sdpa_kernel

        def flash(batch):
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return model(input_ids=batch)  # no mask: the flash kernel takes the causal flag, not a mask

        return model, flash
    if method == "scores":
        from attncoda.engine.score_capture import capture_scores

        def scored(batch):
            with capture_scores(model, lambda layer, heads, queries, z: None):
                return model(input_ids=batch, attention_mask=torch.ones_like(batch))

        return model, scored
    if method == "output-attentions":
        return model, lambda batch: model(input_ids=batch, attention_mask=torch.ones_like(batch), output_attentions=True)
    from attncoda.engine.capture import capture_attention

    def hooked(batch):
        with capture_attention(model, lambda layer, w, lw: None):
            return model(input_ids=batch, attention_mask=torch.ones_like(batch))

    return model, hooked


def warm_up(method: str, run, ids) -> None:
    """Warm up alike for every method, on two full windows: touch every weight page, compile the kernels, and let the
    allocator reach its working size before the baseline memory is read."""
    import torch

    with torch.inference_mode():
        run(ids[:2], 2) if method in ("ours", "ours-eager") else run(ids[:2])


def timed_run(method: str, run, ids, batch_size: int) -> tuple[float, int, int]:
    """``(seconds, rss_before, peak_rss)`` of one run over every window, the RSS sampled every 2 ms (bytes)."""
    import torch

    on_gpu = _device().startswith("cuda")
    proc, peak, stop, thread = _peak_sampler()
    base = proc.memory_info().rss
    if on_gpu:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    thread.start()
    start = time.perf_counter()
    with torch.inference_mode():
        if method in ("ours", "ours-eager"):
            run(ids, batch_size)
        else:
            for s in range(0, len(ids), batch_size):
                out = run(ids[s : s + batch_size])
                del out
    if on_gpu:
        torch.cuda.synchronize()
    elapsed = time.perf_counter() - start
    stop.set()
    thread.join()
    return elapsed, base, (torch.cuda.max_memory_allocated() if on_gpu else peak[0])


def measure(method: str, length: int, tokens: int = TOKENS) -> dict:
    """Run one method in this process: wall time over all windows, the peak RSS during the run above the RSS after
    the warm-up (what the method adds to a loaded, warmed-up model), and the peak RSS itself."""
    import torch

    ids = _windows(length, tokens)
    batch_size = BATCH.get(length, 2)
    model, run = _runner(method, length)
    warm_up(method, run, ids)
    elapsed, base, peak = timed_run(method, run, ids, batch_size)
    return {"method": method, "length": length, "windows": len(ids), "batch": batch_size, "seconds": elapsed,
            "peak_extra_mb": (peak - base) / 2**20, "peak_total_mb": peak / 2**20, "threads": torch.get_num_threads(), "device": _device()}


def run_child(method: str, length: int, tokens: int = TOKENS) -> dict:
    python = str(INTEROP) if method in OUTSIDE else sys.executable
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(ROOT / "src"), "BENCH_FOLDER": _folder()}
    out = subprocess.run([python, __file__, "--child", method, "--length", str(length), "--tokens", str(tokens), "--device", _device()],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        return {"method": method, "length": length, "error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}
    return json.loads(out.stdout.strip().splitlines()[-1])


def _machine(tokens: int) -> str:
    """One line on what ran: model, tokens per length, cores, CPU and library versions."""
    import platform

    import torch
    import transformers

    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines() if line.startswith("model name")),
               platform.processor()) if Path("/proc/cpuinfo").exists() else platform.processor()
    return (f"{MODEL}, {tokens:,} tokens per length, one process per method; {os.cpu_count()} cores ({cpu}), "
            f"torch {torch.__version__}, transformers {transformers.__version__}")


def table(results: list[dict]) -> str:
    """The Markdown table of the run: time and peak memory of each method as ratios to sdpa's."""
    lines = ["| L | method | time (s) | time / sdpa | peak extra (MB) | extra / sdpa | peak total (MB) | total / sdpa |",
             "|---|---|---|---|---|---|---|---|"]
    for length in sorted({r["length"] for r in results}):
        rows = [r for r in results if r["length"] == length]
        base = next((r for r in rows if r["method"] == "sdpa" and "error" not in r), None)
        for r in rows:
            if "error" in r:
                lines.append(f"| {length:,} | {r['method']} | failed: {r['error'][:80]} | | | | | |")
                continue
            ratio_t = f"{r['seconds'] / base['seconds']:.2f}×" if base else "—"
            ratio_m = f"{r['peak_extra_mb'] / max(base['peak_extra_mb'], 1):.2f}×" if base else "—"
            ratio_total = f"{r['peak_total_mb'] / base['peak_total_mb']:.2f}×" if base else "—"
            lines.append(f"| {length:,} | {r['method']} | {r['seconds']:.1f} | {ratio_t} | {r['peak_extra_mb']:,.0f} | {ratio_m} "
                         f"| {r['peak_total_mb']:,.0f} | {ratio_total} |")
    return "\n".join(lines)


def _verdict(target, repeats: int, low: float, high: float):
    """``meets`` when the whole interval lies at or below ``target``, ``misses`` when above it, ``undecided`` otherwise."""
    if target is None:
        return None
    return "undecided" if repeats < 2 else "meets" if high <= target else "misses" if low > target else "undecided"


def _warm_mb(run: dict) -> float:
    """The RSS after the warm-up, before the measured run: the peak total less the peak extra (the model, the libraries
    the method imports, and what the allocator kept from the warm-up)."""
    return run["peak_total_mb"] - run["peak_extra_mb"]


def ratio_summary(results: list[dict]) -> list[dict]:
    """Each method's time and peak-total-memory ratios to sdpa over the repeats: every repeat runs every method once, so a
    repeat is the unit (the machine's drift between repeats cancels in its own ratio). Geometric mean and a 95 % t
    interval of the log ratio over the repeats (``warm_ratio``: the geometric mean of the RSS after the warm-up, the
    part of the peak that was there before the measured run began); ``verdict`` holds a length's time target (:data:`TARGETS`) against the
    time interval and ``memory_verdict`` :data:`MEMORY_TARGET` against the memory interval: ``meets`` when the whole
    interval lies at or below the target, ``misses`` when it lies above, ``undecided`` otherwise (and with one repeat)."""
    out = []
    for length in sorted({r["length"] for r in results}):
        for method in dict.fromkeys(r["method"] for r in results if r["length"] == length):
            times, memory, warm = [], [], []
            for rep in sorted({r.get("repeat", 0) for r in results}):
                cell = {r["method"]: r for r in results if r["length"] == length and r.get("repeat", 0) == rep and "error" not in r}
                if method in cell and "sdpa" in cell:
                    times.append(cell[method]["seconds"] / cell["sdpa"]["seconds"])
                    memory.append(cell[method]["peak_total_mb"] / cell["sdpa"]["peak_total_mb"])
                    warm.append(_warm_mb(cell[method]) / _warm_mb(cell["sdpa"]) if "peak_extra_mb" in cell[method] else float("nan"))
            if not times:
                continue
            ratio, low, high = log_interval(times)
            memory_ratio, memory_low, memory_high = log_interval(memory)
            warm_ratio = log_interval(warm)[0]
            target = TARGETS.get(length) if method == "ours" else None
            out.append({"length": length, "method": method, "repeats": len(times), "ratio": ratio, "low": low, "high": high,
                        "target": target, "verdict": _verdict(target, len(times), low, high),
                        "memory_ratio": memory_ratio, "memory_low": memory_low, "memory_high": memory_high, "warm_ratio": warm_ratio,
                        "memory_verdict": _verdict(MEMORY_TARGET if method == "ours" else None, len(memory), memory_low, memory_high)})
    return out


def summary_table(rows: list[dict]) -> str:
    """The Markdown table of :func:`ratio_summary`."""
    lines = ["| L | method | repeats | time / sdpa (geometric mean) | 95 % interval | target | verdict "
             "| peak total / sdpa (geometric mean) | 95 % interval | target | verdict | of which after warm-up / sdpa |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        interval = f"[{r['low']:.2f}, {r['high']:.2f}]" if r["repeats"] > 1 else "—"
        memory = f"[{r['memory_low']:.2f}, {r['memory_high']:.2f}]" if r["repeats"] > 1 else "—"
        target = f"≤ {r['target']:.2f}×" if r["target"] else ""
        memory_target = f"≤ {MEMORY_TARGET:.2f}×" if r["memory_verdict"] else ""
        lines.append(f"| {r['length']:,} | {r['method']} | {r['repeats']} | {r['ratio']:.2f}× | {interval} | {target} | {r['verdict'] or ''} "
                     f"| {r['memory_ratio']:.2f}× | {memory} | {memory_target} | {r['memory_verdict'] or ''} | {r['warm_ratio']:.2f}× |")
    return "\n".join(lines)


def block_timing(lengths, repeats: int = 20) -> str:
    """``--blocks``: one layer's causal scores (smollm2-135m's shapes: 9 query heads on 3 key heads of 64 dimensions, the
    batch of :data:`BATCH`) formed by ``score_capture`` as one matmul over the square against blocks of ``Q/8`` queries
    over the keys they see (``CAUSAL_BLOCKS_FROM`` set to 1), alternating, so drift falls on both alike. The ratio is
    the median of the per-pair ratios, blocks / square; below 1 the blocks are faster. The threshold
    ``CAUSAL_BLOCKS_FROM`` rests on this table."""
    import statistics

    import torch

    from attncoda.engine import score_capture as sc

    lines = ["| L | square (ms) | blocks (ms) | blocks / square (median of pairs) |", "|---|---|---|---|"]
    threshold = sc.CAUSAL_BLOCKS_FROM
    for length in lengths:
        batch = BATCH.get(length, 2)
        generator = torch.Generator().manual_seed(0)
        query = torch.randn(batch, 9, length, 64, generator=generator)
        key = torch.randn(batch, 3, length, 64, generator=generator)

        def form():
            q_heads, k_heads = sc._head_major(query, key, 3)
            for windows, heads, rows in sc._chunks(batch, 9, length, length, True):
                sc._scores(q_heads, k_heads, windows, heads, rows, 0.125, None, True, None)

        times = {"square": [], "blocks": []}
        try:
            for i in range(repeats + 1):
                for name, first in (("square", 10**9), ("blocks", 1)):
                    sc.CAUSAL_BLOCKS_FROM = first
                    start = time.perf_counter()
                    form()
                    if i:  # the first pair warms up
                        times[name].append(time.perf_counter() - start)
        finally:
            sc.CAUSAL_BLOCKS_FROM = threshold
        ratio = statistics.median(b / a for a, b in zip(times["square"], times["blocks"]))
        lines.append(f"| {length:,} | {1e3 * statistics.median(times['square']):.1f} | {1e3 * statistics.median(times['blocks']):.1f} | {ratio:.2f} |")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lengths", type=int, nargs="+", default=[128, 512, 1024, 2048])
    parser.add_argument("--methods", nargs="+", default=[m for m in METHODS if m != "sdpa-flash"], choices=METHODS)
    parser.add_argument("--out", help="also write the results as JSON here")
    parser.add_argument("--tokens", type=int, default=TOKENS, help="tokens per length (n · L); smaller for a smoke run")
    parser.add_argument("--repeats", type=int, default=1, help="run every method this many times per length, in a shuffled order per "
                        "repeat; the summary gives each ratio's 95 %% interval over the repeats")
    parser.add_argument("--once", nargs="+", default=[], choices=METHODS, help="methods run in the first repeat only (the outside "
                        "tools, whose ratios no target reads); the others run in every repeat")
    parser.add_argument("--blocks", action="store_true", help="only time one layer's causal scores as one square matmul against "
                        "blocks of Q/8 queries (the threshold CAUSAL_BLOCKS_FROM rests on it); with --out, write the table there")
    parser.add_argument("--table", metavar="FILE.json", help="only rewrite FILE.md's tables from FILE.json (a finished run, or the "
                        "FILE.partial.json an interrupted one left), keeping its first line: the machine it ran on")
    parser.add_argument("--device", default="cpu", help="run the in-process methods there (e.g. cuda); memory is then the device's")
    parser.add_argument("--child")
    parser.add_argument("--length", type=int)
    args = parser.parse_args()
    os.environ["BENCH_DEVICE"] = args.device  # the children inherit it
    if args.child:
        print(json.dumps(measure(args.child, args.length, args.tokens)))
        return
    if args.table:
        source = Path(args.table)
        target = Path(str(source).removesuffix(".partial.json").removesuffix(".json") + ".md")
        machine = target.read_text().splitlines()[0] if target.exists() else "(machine not recorded)"
        _write(target, machine, json.loads(source.read_text()))
        print(target.read_text())
        return
    if args.blocks:
        text = f"{_machine(0).split(';')[1].strip()}\n\n{block_timing([n for n in args.lengths if n > 128])}\n"
        print(text)
        if args.out:
            Path(args.out).write_text(text)
        return
    if any(m in OUTSIDE for m in args.methods) and not INTEROP.exists():
        sys.exit(f"{INTEROP} is missing; run `make test` once (it builds .venv-interop) or leave out {', '.join(OUTSIDE)}")
    print(f"model {MODEL}, {args.tokens:,} tokens per length, one process per method")
    import random

    results = []
    partial = Path(args.out).with_suffix(".partial.json") if args.out else None
    for repeat in range(args.repeats):
        for length in args.lengths:
            order = [m for m in args.methods if repeat == 0 or m not in args.once]
            if args.repeats > 1:
                random.Random(repeat).shuffle(order)  # no method always runs first (or right after another) in a drifting machine
            for method in order:
                r = {**run_child(method, length, args.tokens), "repeat": repeat}
                results.append(r)
                print(f"repeat {repeat} L = {length:>5} {method:<18} " + (f"{r['seconds']:8.1f} s  peak +{r['peak_extra_mb']:8.0f} MB" if "error" not in r
                                                                          else f"failed: {r['error']}"), flush=True)
                if partial:  # an interrupted run keeps what it measured, beside (never over) the committed run
                    partial.parent.mkdir(parents=True, exist_ok=True)
                    partial.write_text(json.dumps(results, indent=1) + "\n")
    print(table([r for r in results if r["repeat"] == 0]))
    print(summary_table(ratio_summary(results)))
    if args.out:
        out = Path(args.out)
        out.write_text(json.dumps(results, indent=1) + "\n")
        _write(out.with_suffix(".md"), _machine(args.tokens), results)
        partial.unlink()


def _write(path: Path, machine: str, results: list[dict]) -> None:
    """The Markdown record of a run: the machine line, the first repeat's table, and the summary over the repeats."""
    repeats = len({r.get("repeat", 0) for r in results})
    path.write_text(f"{machine}\n\nFirst repeat:\n\n{table([r for r in results if r.get('repeat', 0) == 0])}\n\n"
                    f"Over {repeats} repeat{'s' if repeats > 1 else ''}:\n\n{summary_table(ratio_summary(results))}\n")


if __name__ == "__main__":
    main()
