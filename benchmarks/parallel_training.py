"""Two of the collapse suite's runs trained at once against one after the other, each with the suite's fixed thread count.

The collapse chapter trains its runs one after another. Each trains with ``training.TRAINING_THREADS`` torch threads
(a fixed count keeps a seed's bits the same everywhere), and the suite's models are small, so two cores may sit idle
much of a step. This script trains the same pair of runs (the ladder's character-task runs need no tokenizer
training), each time from an empty cache of its own, in two ways:

* one after the other, in one process per run;
* both at once, in two processes.

``--repeats`` rounds alternate the two orders. The ratio (together / one after the other) is a geometric mean with a
95 % t interval of its logs (``ratios.log_interval``). Every checkpoint's weights must be the same bytes both ways.

Usage: python benchmarks/parallel_training.py [--runs gpt2-1x1-seed0,gpt2-1x1-seed1] [--repeats 3]
"""

import argparse
import hashlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
from ratios import log_interval  # noqa: E402

OUT = HERE / "results" / "parallel_training.json"


CHAPTER_SEEDS = (0, 1, 2)
"""The collapse chapter's training seeds (its notebook's ``suite_seeds``)."""


def suite_run(name: str):
    from attncoda.studies.collapse_suite import suite_runs

    runs = {run.name: run for run, _, _ in suite_runs(CHAPTER_SEEDS)}
    if name not in runs:
        sys.exit(f"no suite run {name!r}; use one of {', '.join(runs)}")
    return runs[name]


def train_in(cache: str, name: str) -> None:
    """Train suite run ``name`` into the cache folder ``cache`` (the body of one process)."""
    os.environ["ATTNCODA_CACHE"] = cache
    from attncoda.engine import training

    training.train(suite_run(name))


def weights_digest(cache: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(cache.rglob("*.safetensors")):
        digest.update(str(path.relative_to(cache)).encode() + path.read_bytes())
    return digest.hexdigest()


def timed(names: list[str], together: bool, root: Path) -> tuple[float, str]:
    cache = Path(tempfile.mkdtemp(dir=root))
    context = multiprocessing.get_context("spawn")
    started = time.perf_counter()
    processes = [context.Process(target=train_in, args=(str(cache), name)) for name in names]
    if together:
        for p in processes:
            p.start()
        for p in processes:
            p.join()
    else:
        for p in processes:
            p.start()
            p.join()
    seconds = time.perf_counter() - started
    if any(p.exitcode for p in processes):
        sys.exit(f"a training process failed: exit codes {[p.exitcode for p in processes]}")
    return seconds, weights_digest(cache)


def main() -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", default="gpt2-1x1-seed0,gpt2-1x1-seed1")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    names = args.runs.split(",")
    for name in names:
        suite_run(name)
    seconds = {"one after the other": [], "together": []}
    digests = set()
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            for together in ((False, True) if r % 2 == 0 else (True, False)):
                s, digest = timed(names, together, Path(tmp))
                seconds["together" if together else "one after the other"].append(s)
                digests.add(digest)
            print(f"  round {r + 1}/{args.repeats}: one after the other {seconds['one after the other'][-1]:.1f} s, "
                  f"together {seconds['together'][-1]:.1f} s", flush=True)
    from attncoda.engine import training

    mean, lo, hi = log_interval([t / s for t, s in zip(seconds["together"], seconds["one after the other"])])
    out = {"runs": names, "threads_per_run": training.TRAINING_THREADS, "cores": os.cpu_count(), "repeats": args.repeats, "seconds": seconds,
           "ratio": {"together / one after the other": mean, "interval": [lo, hi]}, "same_weights": len(digests) == 1}
    print(f"together / one after the other: {mean:.2f}x [{lo:.2f}, {hi:.2f}]; the same weights both ways: {out['same_weights']}")
    OUT.write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
