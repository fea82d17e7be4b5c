"""``benchmarks/README.md`` is what ``benchmarks/readme.py`` writes from the committed JSON and the record's timings, and
each of its numbers is the file's: the build's costs, the capture's ratios and memory verdicts, the longest window."""

import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGE = ROOT / "benchmarks" / "README.md"


def test_the_committed_page_is_what_the_script_writes():
    import readme

    assert PAGE.read_text() == readme.page(), "benchmarks/README.md is stale: run python benchmarks/readme.py and commit it"


def test_the_page_states_the_recorded_build_costs():
    from attncoda.face.costs import costs_sentence

    sentence = costs_sentence()
    assert sentence in PAGE.read_text(), f"benchmarks/README.md's run times are not the record's; it should say:\n{sentence}"



LONGEST_ROW = re.compile(r"^\| (?P<name>[\w.-]+) \| (?P<longest>[\d,]+) \| [^|]+ \|$", flags=re.M)


def _longest_lengths() -> dict[str, int]:
    text = PAGE.read_text()
    section = text[text.index("## The longest window each default model can audit"):]
    found = {m["name"]: int(m["longest"].replace(",", "")) for m in LONGEST_ROW.finditer(section.split("\n## ")[0])}
    assert found, "benchmarks/README.md no longer states the longest --length the corpus gives each default model"
    return found


@pytest.mark.slow
@pytest.mark.parametrize("name", ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"])
def test_the_page_states_the_longest_length_each_default_model_can_audit(name):
    """The page's longest L at the default 64 windows: that L works, one more token is refused in one line (by the
    corpus, or by the model's positions for smollm2-135m)."""
    from attncoda.base.protocol import N_WINDOWS
    from attncoda.engine import corpus, registry
    from attncoda.engine.models import ModelError, check_length, load_model

    if not registry.REGISTRY[name].installed():
        pytest.skip(f"{name} is not installed here (make models)")
    longest = _longest_lengths()[name]
    loaded = load_model(name)
    check_length(loaded, longest)
    corpus.text_windows(loaded.processor, N_WINDOWS, longest, seed=0)
    with pytest.raises((ValueError, ModelError)) as refused:
        check_length(loaded, longest + 1)
        corpus.text_windows(loaded.processor, N_WINDOWS, longest + 1, seed=0)
    assert "\n" not in str(refused.value)
    if not loaded.info.causal or name == "smollm2-135m":
        return
    assert f"at most {longest} tokens" in str(refused.value), str(refused.value)


def test_the_page_states_the_committed_capture_benchmark():
    """The capture's cost the page states is the committed benchmark's: each ``ours / sdpa`` ratio (the geometric mean
    over the run's repeats) at every length, and the scores-alone ratio it names."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import capture_overhead
    finally:
        sys.path.pop(0)
    import json

    results = json.loads((ROOT / "benchmarks" / "results" / "capture_overhead.json").read_text())
    ratios = {(r["method"], r["length"]): r["ratio"] for r in capture_overhead.ratio_summary(results)}
    readme = " ".join(PAGE.read_text().split())
    ours = ", ".join(f"{ratios['ours', n]:.2f}×" for n in (128, 512, 1024)) + f" and {ratios['ours', 2048]:.2f}×"
    assert f"cost {ours} a plain sdpa forward pass at L = 128, 512, 1,024 and 2,048" in readme
    scores = ", ".join(f"{ratios['scores', n]:.2f}×" for n in (512, 1024)) + f" and {ratios['scores', 2048]:.2f}×"
    assert f"the scores alone cost {scores}" in readme
    eager = ", ".join(f"{ratios['ours-eager', n]:.2f}×" for n in (128, 512, 1024)) + f" and {ratios['ours-eager', 2048]:.2f}×"
    assert f"the eager capture it replaces, one run: {eager}" in readme
    outside = [v for (method, _), v in ratios.items() if method in ("transformerlens", "nnsight")]
    assert f"TransformerLens and nnsight {min(outside):.1f}–{max(outside):.1f}×" in readme


def test_the_page_states_the_committed_memory_readings():
    """The page's memory sentences are the committed runs': each length's verdict on the 1.2× target in the capture
    benchmark; in the memory benchmark, at every length it reads, the RSS after the warm-up above under the default
    allocator what it is with freed memory handed back (the intervals apart), the peak then within the target (the whole
    95 % interval at or below 1.2×) and not within it under the default, and the peak's default-against-release
    difference undecided (the intervals overlap)."""
    import json

    import capture_memory
    import capture_overhead

    results = json.loads((ROOT / "benchmarks" / "results" / "capture_overhead.json").read_text())
    verdicts = {r["length"]: r["memory_verdict"] for r in capture_overhead.ratio_summary(results) if r["method"] == "ours"}
    readme = " ".join(PAGE.read_text().split())
    assert verdicts[2048] == "misses" and {verdicts[n] for n in (128, 512, 1024)} == {"undecided"}
    assert "Its peak memory misses the 1.2× target at 2,048 and is undecided at the other lengths" in readme
    rows = {(r["length"], r["setting"], r["stage"]): r
            for r in capture_memory.stage_ratios(json.loads((ROOT / "benchmarks" / "results" / "capture_memory.json").read_text()))}
    lengths = sorted({length for length, _, _ in rows})
    assert lengths == [512, 2048]
    assert "(the two 95 % intervals apart at both lengths it reads, 512 and 2,048); - handed back, the peak falls within the target at both" in readme
    assert "whether the peak itself is lower that way is undecided over its three repeats" in readme
    for length in lengths:
        assert rows[length, "default", "warm-up"]["low"] > rows[length, "release", "warm-up"]["high"], length
        assert rows[length, "release", "peak"]["high"] <= capture_overhead.MEMORY_TARGET, length
        assert rows[length, "default", "peak"]["high"] > capture_overhead.MEMORY_TARGET, length
        assert rows[length, "default", "peak"]["low"] <= rows[length, "release", "peak"]["high"], length
        assert rows[length, "default", "peak"]["repeats"] == 3


@pytest.mark.parametrize("page", ["benchmarks/README.md", "README.md", "ARCHITECTURE.md"])
def test_every_sentence_of_a_markdown_page_fits_in_one_breath(page):
    """Prose lines (tables and fenced code left out, inline code counted as one word) hold no sentence over 40 words."""
    from sentences import long_sentences

    prose = re.sub(r"^```.*?^```", "", (ROOT / page).read_text(), flags=re.M | re.S)
    blocks = [re.sub(r"`[^`]*`", "X", line) for line in prose.splitlines() if line.strip() and not line.startswith("|")]
    assert not long_sentences(blocks, 40), f"{page}: sentences over 40 words: {long_sentences(blocks, 40)}"


def test_the_cold_build_summary_reads_the_build_s_own_lines():
    """cold_book.py takes the wall time and peak from /usr/bin/time -v and each chapter's time from the build's lines."""
    import cold_book

    log = ("chapter theory: running 01_theory_witness\nchapter theory: done in 5 s\nchapter pruning-x: done in 2344 s\n"
           "\tElapsed (wall clock) time (h:mm:ss or m:ss): 1:20:22\n\tMaximum resident set size (kbytes): 4404019\n")
    assert cold_book.wall_seconds(log) == 4822.0
    assert {m["chapter"]: int(m["seconds"]) for m in cold_book.CHAPTER_DONE.finditer(log)} == {"theory": 5, "pruning-x": 2344}
    assert max(int(m["kb"]) for m in cold_book.PEAK.finditer(log)) == 4404019


def test_a_cold_build_replaces_only_the_run_of_its_own_cpu():
    """results/cold_book.json keeps one run per CPU model: a new run on a known CPU replaces that CPU's, a run on a new
    CPU is added, and the slowest build comes first."""
    import cold_book

    def run(model, seconds):
        return {"cpu": {"model": model}, "seconds": seconds}

    runs = cold_book.with_run([run("AMD EPYC", 5130.0)], run("Intel Xeon", 3600.0))
    assert [(r["cpu"]["model"], r["seconds"]) for r in runs] == [("AMD EPYC", 5130.0), ("Intel Xeon", 3600.0)]
    runs = cold_book.with_run(runs, run("AMD EPYC", 3000.0))
    assert [(r["cpu"]["model"], r["seconds"]) for r in runs] == [("Intel Xeon", 3600.0), ("AMD EPYC", 3000.0)]


def test_two_machines_of_one_model_name_with_different_bf16_units_are_two_kinds():
    """An "AMD EPYC" with avx512_bf16 and one with AVX2 only build at different speeds and with different last digits:
    a run on one keeps the other's."""
    import cold_book

    native = {"cpu": {"model": "AMD EPYC", "capability": "AVX512", "native_bf16": True}, "seconds": 5130.0}
    avx2 = {"cpu": {"model": "AMD EPYC", "capability": "AVX2", "native_bf16": False, "bf16_units": []}, "seconds": 6000.0}
    assert cold_book.with_run([native], avx2) == [avx2, native]
    faster = {**avx2, "seconds": 5900.0}
    assert cold_book.with_run([avx2, native], faster) == [faster, native]
