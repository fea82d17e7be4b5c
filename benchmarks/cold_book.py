"""A cold `make book`: a fresh clone of this commit, an empty cache, the README's first command, timed end to end.

It clones the repository's HEAD into a temporary folder, runs `make book` there under `/usr/bin/time -v` with
`ATTNCODA_CACHE` pointing at an empty folder of its own (so the virtual environment, the five models, every chapter
and the site are built from nothing), and records:

* the wall time and the peak resident memory of the largest process;
* each chapter's time, as the build prints it (`chapter X: done in N s`), and what is left (environment, models, site);
* how many numbers of the results files it wrote differ from the committed record's, the largest relative difference,
  and which readings in words moved (`attncoda.face.cross_machine`);
* the CPU (its bf16 instructions decide the pruning and collapse chapters' path).

Writes `benchmarks/results/cold_book.json`: one run per CPU model (a new run replaces the same CPU's, so machines of
different kinds stay side by side). One run takes about an hour or more on a 2-core machine; run it alone.

Usage: python benchmarks/cold_book.py [--keep]
       python benchmarks/cold_book.py --summarize LOG CLONE   (a build run by hand the same way: `/usr/bin/time -v make
       book > LOG 2>&1` in CLONE, a fresh clone, with an empty ATTNCODA_CACHE)
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
ROOT = HERE.parent
OUT = HERE / "results" / "cold_book.json"
CHAPTER_DONE = re.compile(r"^chapter (?P<chapter>[\w-]+): done in (?P<seconds>\d+) s$", flags=re.M)
PEAK = re.compile(r"Maximum resident set size \(kbytes\): (?P<kb>\d+)")
WALL = re.compile(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?P<clock>[\d:.]+)")


def wall_seconds(log: str) -> float:
    """The wall time ``/usr/bin/time -v`` printed (``h:mm:ss`` or ``m:ss.ss``)."""
    seconds = 0.0
    for part in WALL.search(log)["clock"].split(":"):
        seconds = seconds * 60 + float(part)
    return seconds


def summary(log: str, clone: Path, seconds: float) -> dict:
    """What one build's log and the results files it wrote say (see the module docstring)."""
    commit = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    chapters = {m["chapter"]: int(m["seconds"]) for m in CHAPTER_DONE.finditer(log)}
    return {"commit": commit, "cpu": cpu(), "seconds": seconds, "chapters_s": chapters, "rest_s": seconds - sum(chapters.values()),
            "peak_rss_mb": max((int(m["kb"]) for m in PEAK.finditer(log)), default=0) / 1024, "record": record_agreement(clone)}


def cpu() -> dict:
    import torch

    from attncoda.engine.bf16_products import native_bf16_cpu

    info = Path("/proc/cpuinfo").read_text().splitlines() if Path("/proc/cpuinfo").exists() else []
    model = next((line.split(":", 1)[1].strip() for line in info if line.startswith("model name")), "?")
    flags = next((set(line.split(":", 1)[1].split()) for line in info if line.startswith("flags")), set())
    return {"model": model, "cores": os.cpu_count(), "capability": torch.backends.cpu.get_cpu_capability(), "native_bf16": native_bf16_cpu(),
            "bf16_units": [unit for unit in BF16_UNITS if unit in flags]}


BF16_UNITS = ("amx_bf16", "avx512_bf16")
"""The CPU flags of bf16 matrix units (AMX tiles, AVX-512 dot products): they set the speed of the bf16 chapters, and
their rounding is one source of a record's cross-CPU differences."""


def record_agreement(built: Path) -> dict:
    """Numbers and readings in words of the results files the build wrote, against the committed record's."""
    from attncoda.face.cross_machine import number_changes, reading_changes

    out = {"files": 0, "compared": 0, "differing": 0, "largest_relative": 0.0, "readings": 0, "readings_moved": []}
    for ours in sorted((built / "data" / "results").glob("*/*.json")):
        theirs = ROOT / "data" / "results" / ours.parent.name / ours.name
        if not theirs.exists():
            continue
        before, after = json.loads(theirs.read_text())["results"], json.loads(ours.read_text())["results"]
        n, r = number_changes(before, after), reading_changes(before, after)
        out["files"] += 1
        out["compared"] += n["compared"]
        out["differing"] += n["differing"]
        out["largest_relative"] = max(out["largest_relative"], n["largest_relative"])
        out["readings"] += r["compared"]
        out["readings_moved"] += [{**m, "file": f"{ours.parent.name}/{ours.name}"} for m in r["moved"]]
    return out


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--keep", action="store_true", help="keep the clone and its cache (printed) instead of removing them")
    parser.add_argument("--summarize", nargs=2, metavar=("LOG", "CLONE"), help="summarize a build run by hand instead of running one")
    args = parser.parse_args()
    if args.summarize:
        log, clone = Path(args.summarize[0]).read_text(), Path(args.summarize[1])
        out = summary(log, clone, wall_seconds(log))
    else:
        out = build(keep=args.keep)
    OUT.write_text(json.dumps({"runs": with_run(previous_runs(), out)}, indent=1) + "\n")
    print(json.dumps(out, indent=1), flush=True)
    return out


def previous_runs() -> list[dict]:
    """The runs already in ``results/cold_book.json`` (a file of one run, as the script first wrote it, is a list of one)."""
    if not OUT.exists():
        return []
    data = json.loads(OUT.read_text())
    return data["runs"] if "runs" in data else [data]


def cpu_kind(run: dict) -> tuple:
    """What sets a build's speed and last digits: the CPU model, its kernel capability and its bf16 units (two
    "AMD EPYC" machines, one with avx512_bf16 and one with AVX2 only, are two kinds)."""
    cpu = run["cpu"]
    return cpu["model"], cpu.get("capability"), tuple(cpu.get("bf16_units", ())), cpu.get("native_bf16")


def with_run(runs: list[dict], run: dict) -> list[dict]:
    """``runs`` with ``run`` in place of any run on the same kind of CPU (:func:`cpu_kind`), slowest CPU first."""
    kept = [r for r in runs if cpu_kind(r) != cpu_kind(run)]
    return sorted(kept + [run], key=lambda r: -r["seconds"])


def build(keep: bool) -> dict:
    """`make book` in a fresh clone of HEAD with an empty cache, timed."""
    tmp = Path(tempfile.mkdtemp(prefix="cold-book-"))
    clone, cache = tmp / "clone", tmp / "cache"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    env = {**os.environ, "ATTNCODA_CACHE": str(cache)}
    env.pop("ATTNCODA_OUTPUT", None)
    print(f"make book in a fresh clone ({clone}), cache {cache}", flush=True)
    done = subprocess.run(["/usr/bin/time", "-v", "make", "book"], cwd=clone, env=env, capture_output=True, text=True)
    log = done.stdout + done.stderr
    (tmp / "build.log").write_text(log)
    if done.returncode:
        sys.exit(f"make book failed (exit {done.returncode}); its log is {tmp / 'build.log'}")
    out = summary(log, clone, wall_seconds(log))
    if not keep:
        shutil.rmtree(tmp)
    return out


if __name__ == "__main__":
    main()
