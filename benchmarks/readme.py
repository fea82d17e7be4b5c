"""Writes ``benchmarks/README.md`` from the committed benchmark JSON and the book's recorded timings.

Every number on that page comes from a file: the capture's cost from ``results/capture_overhead.json``, where its
memory goes from ``results/capture_memory.json``, and the first build's costs from ``data/results/*/timings/``
(:func:`attncoda.face.costs.costs_sentence`). ``python benchmarks/readme.py`` rewrites the page; a test
(``tests/book/test_benchmark_readme.py``) fails when the committed page is not what this script writes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))

import capture_memory  # noqa: E402
import capture_overhead  # noqa: E402

LENGTHS = (128, 512, 1024, 2048)

SCRIPTS = [
    ("calibration_grid.py", "the calibration grid's time"),
    ("capture_overhead.py", "the signatures' capture beside a plain sdpa forward pass, eager hooks, `output_attentions`, TransformerLens and nnsight"),
    ("capture_memory.py", "where the capture's peak memory goes, stage by stage, under two allocator settings"),
    ("head_distances.py", "the clustering chapter's head distances"),
    ("perplexity.py", "perplexity evaluations per minute in bf16 and float32"),
    ("perplexity_path.py", "the pruning sweep's evaluation before and after its cost savers"),
    ("prune_windows.py", "how many held-out windows the pruning readings need (from a record's first k windows)"),
    ("prune_draws.py", "whether the pruning readings hold with fewer tie-break draws or random sets (from a record's first sets)"),
    ("chapter_profile.py", "where the clustering and collapse chapters spend their time (pairwise sums, forward passes, loading, endpoints)"),
    ("pair_kernels.py", "the head-pair kernels against the previous protocol's; `--grouped`: eight JS sums side by side"),
    ("audit.py", "a cold `attncoda audit` against the cold signatures it needs (and an older source tree's audit, in the same run)"),
    ("audit_precision.py", "the audit's rates with the forward pass in bfloat16 against float32"),
    ("monitor_cost.py", "training steps with the attention monitor against the same steps without it"),
    ("gpu_check.sh", "the GPU tests and benchmarks, where a GPU is lent (results in `results/gpu/`)"),
    ("parallel_jobs.py", "the chapters' plans in 2 processes against one"),
    ("training_precision.py", "the collapse suite's training in float32 against bf16 autocast"),
    ("bf16_products.py", "bf16 passes on a CPU without bf16 instructions, natively and with float32 products"),
    ("cold_book.py", "a cold `make book`: a fresh clone, an empty cache, every step timed"),
    ("parallel_training.sh", "two of the collapse suite's runs trained at once against one after the other, and whether their weights agree"),
    ("batched_prune_sets.py", "several prune sets scored in one forward pass (a head mask per batch row) against one pass per set"),
    ("js_pairwise.py", "Jensen–Shannon's pairwise matrix, each pair once, against both orders as before"),
    ("long_audit.py", "`attncoda audit --full` at a long window against the signatures it needs, and an older source tree's audit"),
]


def _listing(values: list[float]) -> str:
    """``a, b, c and d``, each to two decimals with ×."""
    text = [f"{v:.2f}×" for v in values]
    return ", ".join(text[:-1]) + f" and {text[-1]}"


def capture_paragraph() -> str:
    results = json.loads((HERE / "results" / "capture_overhead.json").read_text())
    ratios = {(r["method"], r["length"]): r["ratio"] for r in capture_overhead.ratio_summary(results)}
    verdicts = {r["length"]: r["memory_verdict"] for r in capture_overhead.ratio_summary(results) if r["method"] == "ours"}
    outside = [v for (method, _), v in ratios.items() if method in ("transformerlens", "nnsight")]
    missed = [n for n in LENGTHS if verdicts[n] == "misses"]
    memory = (f"Its peak memory misses the {capture_overhead.MEMORY_TARGET}× target at "
              f"{', '.join(f'{n:,}' for n in missed)} and is undecided at the other lengths." if missed and
              all(verdicts[n] == "undecided" for n in LENGTHS if n not in missed) else
              "Its peak memory against the 1.2× target: " + ", ".join(f"{verdicts[n]} at {n:,}" for n in LENGTHS) + ".")
    return "\n".join([
        "The signatures keep the model's sdpa attention and form each layer's scores beside it, never a full eager map.",
        "One process per method, on smollm2-135m; sdpa, the scores and ours ran five repeats, each ratio a geometric mean:",
        "",
        f"- ours cost {_listing([ratios['ours', n] for n in LENGTHS])} a plain sdpa forward pass at L = 128, 512, 1,024 and 2,048;",
        f"- of that, the scores alone cost {_listing([ratios['scores', n] for n in LENGTHS[1:]])} at 512, 1,024 and 2,048;",
        f"- the eager capture it replaces, one run: {_listing([ratios['ours-eager', n] for n in LENGTHS])};",
        f"- TransformerLens and nnsight {min(outside):.1f}–{max(outside):.1f}×, one run each.",
        "",
        f"{memory} The intervals and verdicts are in `results/capture_overhead.md`.",
    ])


def memory_paragraph() -> str:
    rows = {(r["length"], r["setting"], r["stage"]): r
            for r in capture_memory.stage_ratios(json.loads((HERE / "results" / "capture_memory.json").read_text()))}
    lengths = sorted({length for length, _, _ in rows})
    apart = all(rows[n, "default", "warm-up"]["low"] > rows[n, "release", "warm-up"]["high"] for n in lengths)
    within = all(rows[n, "release", "peak"]["high"] <= capture_overhead.MEMORY_TARGET for n in lengths)
    overlap = all(rows[n, "default", "peak"]["low"] <= rows[n, "release", "peak"]["high"] for n in lengths)
    at = " and ".join(f"{n:,}" for n in lengths)
    lines = ["`capture_memory.py` reads the resident set stage by stage (`results/capture_memory.md`):", "",
             "- the compiled kernel's runtime (numba and LLVM) is resident before any window runs;"]
    if apart:
        lines.append("- after two warm-up windows, ours' process is larger under glibc's default allocator than with freed memory "
                     f"handed back at once (the two 95 % intervals apart at both lengths it reads, {at});")
    if within:
        lines.append("- handed back, the peak falls within the target at both, at a cost in time;")
    if overlap:
        lines.append("- whether the peak itself is lower that way is undecided over its three repeats.")
    return "\n".join(lines)


LONGEST = "\n".join([
    "The longest `--length` each default model can audit at the default 64 windows (`--n`) of the Wikipedia sample:",
    "",
    "| model | longest `--length` | what stops it |",
    "|---|---|---|",
    "| minilm-l6 | 251 | each window is one article's text |",
    "| mpnet-base | 251 | each window is one article's text |",
    "| gemma3-270m | 14,558 | the sample's text |",
    "| qwen2.5-coder-0.5b | 15,072 | the sample's text |",
    "| smollm2-135m | 8,192 | the model's positions |",
    "",
    "A longer `--length` is refused in one line that names the longest.",
])
"""Measured by ``tests/book/test_readme.py``'s slow test (each length works, one token more is refused), not by a script."""


def audit_paragraph() -> str:
    """The audit's cost against the signatures it needs, from ``results/audit.json``."""
    data = json.loads((HERE / "results" / "audit.json").read_text())
    seeds = ", ".join(map(str, data["seeds"]))
    lines = [f"`audit.py` times each arm from scratch in a fresh cache, {data['repeats']} repeats. Each ratio is to the cold signatures of seeds "
             f"{seeds}, first computed in one process per seed, then in one process; 95 % intervals:", ""]
    names = {"audit --full": "a cold audit of the whole sample (`--full`)", "audit": "a cold staged audit (the default)",
             "audit, cached": "the staged audit again, cached", "baseline audit": "the audit before it read each window once (whole sample)"}
    for model, result in data["models"].items():
        per, one = result["ratios"]["signatures"], result["ratios"]["signatures, one process"]
        for name in per:
            lines.append(f"- {model}, {names.get(name, name)}: {per[name]['ratio']:.2f}× [{per[name]['interval'][0]:.2f}, {per[name]['interval'][1]:.2f}]"
                         f" and {one[name]['ratio']:.2f}× [{one[name]['interval'][0]:.2f}, {one[name]['interval'][1]:.2f}]")
    return "\n".join(lines)


def long_paragraph() -> str:
    """The capture at long windows, from ``results/capture_long.json``: time and peak memory as ratios to the sdpa
    forward of the same run, and how ours' peak above sdpa's grows with L."""
    results = [r for r in json.loads((HERE / "results" / "capture_long.json").read_text()) if r.get("repeat", 0) == 0]
    run = {(r["method"], r["length"]): r for r in results}
    lengths = sorted({r["length"] for r in results})
    lines = [f"`capture_overhead.py --lengths {' '.join(map(str, lengths))}` on smollm2-135m, one repeat, one window per batch "
             "(`results/capture_long.md`):", ""]
    above = {}
    for n in lengths:
        ours, sdpa = run["ours", n], run["sdpa", n]
        above[n] = ours["peak_total_mb"] - sdpa["peak_total_mb"]
        lines.append(f"- L = {n:,}: ours took {ours['seconds'] / sdpa['seconds']:.2f}× the sdpa forward's time, and its peak resident "
                     f"memory was {ours['peak_total_mb'] / sdpa['peak_total_mb']:.2f}× sdpa's ({ours['peak_total_mb']:,.0f} MB against "
                     f"{sdpa['peak_total_mb']:,.0f} MB)")
    if len(lengths) > 1:
        a, b = lengths[0], lengths[-1]
        lines += ["", f"Ours' peak above sdpa's grew {above[b] / above[a]:.2f}× from L = {a:,} to {b:,} ({above[a]:,.0f} MB to {above[b]:,.0f} MB), "
                  f"where memory linear in L grows {b / a:g}× and memory quadratic in L {(b / a) ** 2:g}×."]
    return "\n".join(lines)


def precision_paragraph() -> str:
    """The audit's rates in bfloat16 against float32, from ``results/audit_precision.json``."""
    data = json.loads((HERE / "results" / "audit_precision.json").read_text())
    lines = [f"`audit_precision.py`: JS rates with the forward pass in bfloat16 minus float32, mean over seeds "
             f"{', '.join(map(str, data['seeds']))} in points, with a 95 % t interval:", ""]
    for model, r in data["models"].items():
        low, high = r["interval_points"]
        lines.append(f"- {model}: {r['mean_points']:+.2f} [{low:+.2f}, {high:+.2f}]; advice {r['advice']['float32']} in both"
                     if r["advice"]["float32"] == r["advice"]["bfloat16"] else
                     f"- {model}: {r['mean_points']:+.2f} [{low:+.2f}, {high:+.2f}]; advice {r['advice']['float32']} in float32, "
                     f"{r['advice']['bfloat16']} in bfloat16")
    changed = data["advice_changed"]
    lines += ["", ("No advice changed on these models. The audit still defaults to float32, because no model of a billion parameters or "
                   "more has been measured this way yet." if not changed else f"The advice changed on {', '.join(changed)}: float32 stays the default.")]
    return "\n".join(lines)


def _ratio(r: dict) -> str:
    low, high = r["interval"]
    return f"{r['ratio']:.2f}× [{low:.2f}, {high:.2f}]"


def bf16_paragraph() -> str:
    """bf16 passes on a CPU without bf16 instructions, from ``results/bf16_products.json``."""
    data = json.loads((HERE / "results" / "bf16_products.json").read_text())
    cpu, ev, tr, ag = data["cpu"], data["evaluation"], data["training"], data["agreement"]
    has = "has" if cpu["avx512_bf16"] or cpu["amx_tile"] else "has no"
    here, spread = ag["against_record"]["log_perplexity"], ag["spread_between_native_cpus"][ag["model"]]["log_perplexity"]
    moved = len(ag["readings"]["cells"]["moved"]) + len(ag["readings"]["contrasts"]["moved"])
    compared = ag["readings"]["cells"]["compared"] + ag["readings"]["contrasts"]["compared"]
    return "\n".join([
        f"`bf16_products.py` on a CPU that {has} bf16 instructions (torch's capability: {cpu['capability']}; {cpu['threads']} threads).",
        "The pruning chapter scores its prune sets under bf16 autocast, and the collapse suite trains its bf16 runs the same way.",
        f"Ratios are geometric means over {ev['repeats']} repeats with 95 % t intervals:",
        "",
        "| | native bf16 / float32 | bf16 with float32 products / float32 |",
        "|---|---|---|",
        f"| one pruning evaluation ({ev['model']}, {ev['windows']} windows of {ev['length']} tokens) | "
        f"{_ratio(ev['ratios']['bf16 native / float32'])} | {_ratio(ev['ratios']['bf16 float32 products / float32'])} |",
        f"| one training step of a GPT-2 block shaped as the suite's first run (128 wide, batch 32 of 128 tokens) | {_ratio(tr['ratios']['bf16 native / float32'])} | "
        f"{_ratio(tr['ratios']['bf16 float32 products / float32'])} |",
        "",
        f"Float32 products make an evaluation {_ratio(ev['ratios']['bf16 native / bf16 float32 products'])} and a training step "
        f"{_ratio(tr['ratios']['bf16 native / bf16 float32 products'])} faster than native bf16 here.",
        "With float32 products, each bf16 matrix product is computed in float32 on its bf16 operands and rounded once to bf16.",
        "The products are exact in float32, so only the order of the sums differs from a native kernel.",
        f"All {ag['evaluations']:,} of {ag['model']}'s evaluations in the record, scored again this way, took {ag['seconds'] / 60:.0f} minutes.",
        "",
        "| \\|Δ log perplexity\\| per prune set | median | 95th percentile | max |",
        "|---|---|---|---|",
        f"| float32 products here against the record (native bf16) | {here['median']:.1e} | {here['p95']:.1e} | {here['max']:.1e} |",
        f"| the two native CPUs of the reproducibility page | {spread['median']:.1e} | {spread['p95']:.1e} | {spread['max']:.1e} |",
        "",
        f"{moved} of the {compared} pruning readings moved.",
        "On such a CPU the package takes this path (`attncoda.engine.bf16_products`), and caches its evaluations and checkpoints apart from native ones.",
    ])


def cold_book_paragraph() -> str:
    """The cold ``make book`` runs in ``results/cold_book.json`` (one per CPU model), side by side: the whole build, each
    chapter's time, and the record's agreement."""
    path = HERE / "results" / "cold_book.json"
    if not path.exists():
        return "`cold_book.py` has not been run for this page."
    import cold_book

    runs = cold_book.previous_runs()
    order = sorted(runs[0]["chapters_s"], key=lambda name: -runs[0]["chapters_s"][name])
    long = [name for name in order if any(r["chapters_s"].get(name, 0) >= 60 for r in runs)]
    short = [name for name in order if name not in long]

    def row(label, values):
        return f"| {label} | " + " | ".join(values) + " |"

    def minutes(seconds):
        return f"{seconds / 60:.1f}"

    def machine(r):
        return r["cpu"]["model"].replace("(R)", "").replace(" Processor", "")

    def cpu_label(r):
        units = r["cpu"].get("bf16_units") or (["avx512_bf16"] if r["cpu"]["native_bf16"] else [])
        return f"{machine(r)} ({', '.join(units) or 'no bf16 instructions'}), commit {r['commit'][:7]}"

    lines = [
        (f"`cold_book.py` ran once on each of {len(runs)} kinds of machine" if len(runs) > 1 else "`cold_book.py` ran once")
        + f", with {runs[0]['cpu']['cores']} cores. The times are minutes.",
        "",
        row("step", [cpu_label(r) for r in runs]),
        "|---|" + "---|" * len(runs),
        row("**whole build**", [f"**{minutes(r['seconds'])}**" for r in runs]),
        *(row(f"chapter {name}", [minutes(r["chapters_s"].get(name, 0)) for r in runs]) for name in long),
        row(f"the other {len(short)} chapters ({', '.join(short)})", [minutes(sum(r["chapters_s"].get(n, 0) for n in short)) for r in runs]),
        row("the environment, the models and the site", [minutes(r["rest_s"]) for r in runs]),
        row("peak memory (GB)", [f"{r['peak_rss_mb'] / 1024:.1f}" for r in runs]),
        row("numbers that differ from the record's", [agreement(r["record"]) for r in runs]),
        row("readings in words that moved", [f"{len(r['record']['readings_moved'])} of {r['record']['readings']}" for r in runs]),
        "",
        *(f"The {machine(r)}'s build gives the record's numbers to the bit." for r in runs if not r["record"]["differing"]),
        "A build on another CPU rounds its products differently. The float32 chapters then differ in their last digits. "
        "The bf16 chapters differ more: collapse trains its models in bf16, so its checkpoints and the readings on them can move.",
        *(f"On the {machine(r)}, the readings that moved are in {moved_files(r['record'])}." for r in runs if r["record"]["readings_moved"]),
        "The reproducibility page compares two such records chapter by chapter.",
    ]
    return "\n".join(lines)


def moved_files(record: dict) -> str:
    """Which results files a cold build's moved readings are in, with how many in each."""
    counts: dict[str, int] = {}
    for moved in record["readings_moved"]:
        counts[moved["file"]] = counts.get(moved["file"], 0) + 1
    return ", ".join(f"`{file}` ({n})" for file, n in counts.items())


def agreement(record: dict) -> str:
    """How many of a cold build's numbers differ from the committed record's, and by how much at most."""
    differing = f"{record['differing']:,} of {record['compared']:,}"
    return differing + (f" (at most {record['largest_relative']:.1e} relative)" if record["differing"] else "")


BATCHING_PAYS = 1.2
"""The speed-up at which batching prune sets would be worth a change to the sweep (one run each: a smaller gain is noise)."""


def batched_paragraph() -> str:
    """What ``batched_prune_sets.py`` measured: one forward pass per prune set against several sets per pass."""
    path = HERE / "results" / "batched_prune_sets.json"
    if not path.exists():
        return "Not measured yet: run `python benchmarks/batched_prune_sets.py`."
    runs = json.loads(path.read_text())
    lines = [f"- {name}: {r['sets']} sets of {r['windows']} windows, {r['speedup']:.2f}× the speed of one set per pass "
             f"(passes of at most {r['rows_per_pass']} rows, the sweep's logits budget); largest difference {r['largest_difference']:g}."
             for name, r in runs.items()]
    faster = [name for name, r in runs.items() if r["speedup"] >= BATCHING_PAYS]
    verdict = (f"Batching pays on {', '.join(faster)} (at least {BATCHING_PAYS:g}× faster)." if faster else
               f"On no model was it {BATCHING_PAYS:g}× faster, so the pruning chapter keeps one set per pass.")
    return "\n".join(["Scoring several prune sets in one forward pass, each batch row with its own heads zeroed, one run on this CPU:", "", *lines, "", verdict])


def long_audit_paragraph() -> str:
    """What ``long_audit.py`` measured: the audit at a long window against its signatures."""
    path = HERE / "results" / "long_audit.json"
    if not path.exists():
        return "Not measured yet: run `python benchmarks/long_audit.py`."
    r = json.loads(path.read_text())
    lines = [f"- {name}: {r['seconds'][name]:.0f} s, {r['ratios'][name]:.2f}× the signatures' {r['seconds']['signatures']:.0f} s" for name in r["ratios"]]
    return "\n".join([f"`{r['command']}` on {r['model']}, one run of each, one after another (target: at most {r['target']:g}× the signatures):",
                      "", *lines])


def page() -> str:
    from attncoda.face.costs import costs_sentence

    scripts = "\n".join(f"| `{name}` | {what} |" for name, what in SCRIPTS)
    return "\n".join([
        "# Benchmarks",
        "",
        "Written by `python benchmarks/readme.py` from the JSON in `results/` and the book's timings; do not edit by hand.",
        "Each script prints ratios against a baseline measured in the same run (`make bench` runs them all).",
        "",
        "| script | what it times |",
        "|---|---|",
        scripts,
        "",
        "## The book's first build",
        "",
        costs_sentence(),
        "",
        "## A cold build",
        "",
        cold_book_paragraph(),
        "",
        "## The capture's cost",
        "",
        capture_paragraph(),
        "",
        "## Where its memory goes",
        "",
        memory_paragraph(),
        "",
        "## The longest window each default model can audit",
        "",
        LONGEST,
        "",
        "## Long windows",
        "",
        long_paragraph(),
        "",
        "## The audit's cost",
        "",
        audit_paragraph(),
        "",
        "## The audit at a long window",
        "",
        long_audit_paragraph(),
        "",
        "## Prune sets in one pass",
        "",
        batched_paragraph(),
        "",
        "## The audit in bfloat16",
        "",
        precision_paragraph(),
        "",
        "## bf16 without bf16 instructions",
        "",
        bf16_paragraph(),
        "",
    ])


if __name__ == "__main__":
    (HERE / "README.md").write_text(page())
    print(f"wrote {HERE / 'README.md'}")
