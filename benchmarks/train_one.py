"""Train one of the collapse suite's runs into a cache folder and print its wall time (the body of parallel_training.sh).

Usage: python benchmarks/train_one.py RUN CACHE
"""

import os
import sys
import time

os.environ["ATTNCODA_CACHE"] = sys.argv[2]

from attncoda.engine import training  # noqa: E402
from attncoda.studies.collapse_suite import suite_runs  # noqa: E402

runs = {run.name: run for run, _, _ in suite_runs((0, 1, 2))}
started = time.perf_counter()
training.train(runs[sys.argv[1]])
print(sys.argv[1], f"{time.perf_counter() - started:.1f}", flush=True)
