"""Train one of the collapse suite's runs into a cache folder and print its wall time (the body of parallel_training.sh).

Usage: python benchmarks/train_one.py RUN CACHE
"""

import os
import sys
import time


def main(name: str, cache: str) -> None:
    os.environ["ATTNCODA_CACHE"] = cache  # before the package is imported, so every cache path is under it
    from attncoda.engine import training
    from attncoda.studies.collapse_suite import suite_runs

    runs = {run.name: run for run, _, _ in suite_runs((0, 1, 2))}
    started = time.perf_counter()
    training.train(runs[name])
    print(name, f"{time.perf_counter() - started:.1f}", flush=True)


if __name__ == "__main__":
    main(*sys.argv[1:3])
