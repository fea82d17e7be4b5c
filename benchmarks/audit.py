"""attncoda audit from scratch, against the cold signatures it needs, in one run (needs `make models`).

Each repeat times, in fresh cache folders that share only the model weights with the real cache:

* ``signatures``: `attncoda signatures --model M --seed s` for seeds 0, 1, 2, three processes (what the audit's
  signatures cost alone, computed from scratch, as the issue measured them);
* ``signatures, one process``: the same three seeds' signatures in one process (one import, one load), the baseline
  that leaves out the two extra processes' start-up;
* ``audit --full``: `attncoda audit --model M --format json --full`, one process, from scratch: the whole sample in
  one look, so it needs exactly those signatures (the issue's target: at most 1.15× them);
* ``audit``: the same without ``--full``, the default staged audit, from scratch (it may stop after a quarter of the
  windows);
* ``audit, cached``: the staged audit again, its signatures and maps now cached;
* ``baseline audit`` (with ``--baseline-src DIR``): the audit from scratch as the source tree DIR computes it (an
  older checkout's ``src``), so a change's gain is a ratio measured in the same run.

The order of the cold measurements alternates between repeats, so machine drift falls on all of them. Each ratio to
``signatures`` is a geometric mean over repeats with a 95 % t interval of its log (benchmarks/ratios.py); the issue's
target is audit --full / signatures at most 1.15. Writes ``benchmarks/results/audit.json``.

Usage: python benchmarks/audit.py [--models minilm-l6 ...] [--repeats 3] [--baseline-src /path/to/old/src]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ratios import log_interval  # benchmarks/ratios.py, beside this script

from attncoda.base.paths import cache_dir

HERE = Path(__file__).parent
SEEDS = (0, 1, 2)


def fresh_cache(tmp: Path) -> dict:
    """An environment whose cache shares only the model weights (and their checksums) with the real one."""
    real = cache_dir()
    tmp.mkdir(parents=True)
    for shared in ("models", "checksums.json"):
        if (real / shared).exists():
            os.symlink(real / shared, tmp / shared)
    return {**os.environ, "ATTNCODA_CACHE": str(tmp)}


def timed(commands, env: dict) -> float:
    """Seconds to run ``commands`` one after another, each its own process."""
    started = time.perf_counter()
    for command in commands:
        argv = [sys.executable, *command[1:]] if command[0] == "python" else [sys.executable, "-m", "attncoda.face.cli", *command]
        done = subprocess.run(argv, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else done.returncode}")
    return time.perf_counter() - started


def one_repeat(model: str, repeat: int, baseline_src: str | None) -> dict:
    audit = ["audit", "--model", model, "--format", "json"]
    one_process = ["python", "-c", f"from attncoda.engine.signatures import signature_sets; signature_sets({model!r}, {SEEDS!r})"]
    arms = [("signatures", [["signatures", "--model", model, "--seed", str(s)] for s in SEEDS]), ("signatures, one process", [one_process]),
            ("audit --full", [[*audit, "--full"]]), ("audit", [audit])]
    if baseline_src:
        arms.append(("baseline audit", [audit]))
    if repeat % 2:
        arms.reverse()
    seconds = {}
    with tempfile.TemporaryDirectory() as tmp:
        for k, (name, commands) in enumerate(arms):
            env = fresh_cache(Path(tmp) / str(k))
            if name == "baseline audit":
                env["PYTHONPATH"] = baseline_src  # ahead of the editable install's src
            seconds[name] = timed(commands, env)
            if name == "audit":
                seconds["audit, cached"] = timed([audit], env)
    return seconds


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=["minilm-l6"])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--baseline-src", help="also time the audit from this source tree (e.g. an older checkout's src)")
    args = parser.parse_args()
    out = {"repeats": args.repeats, "seeds": list(SEEDS), "baseline_src": args.baseline_src, "models": {}}
    for model in args.models:
        runs = []
        for repeat in range(args.repeats):
            runs.append(one_repeat(model, repeat, args.baseline_src))
            print(f"{model} repeat {repeat}: " + ", ".join(f"{k} {v:.1f} s" for k, v in runs[-1].items()), flush=True)
        ratios = {}
        for base in ("signatures", "signatures, one process"):
            ratios[base] = {}
            for name in runs[0]:
                if not name.startswith("signatures"):
                    ratio, low, high = log_interval([r[name] / r[base] for r in runs])
                    ratios[base][name] = {"ratio": ratio, "interval": [low, high]}
                    print(f"{model}: {name} / {base} = {ratio:.2f} [{low:.2f}, {high:.2f}]")
        out["models"][model] = {"runs": runs, "ratios": ratios}
    (HERE / "results" / "audit.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
