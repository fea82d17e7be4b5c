"""`attncoda book --jobs N`: the chapters' jobs in N processes against the same jobs one after another (needs `make models`).

Both runs start from an empty cache of their own (the dequantized GGUF folders are copied in first, so neither pays
for dequantizing) and compute the same jobs: by default every offline model's measurement signatures for one seed,
with the book's parameters. The ratio is taken within this run, and the two caches' arrays are compared bit for bit.

Usage: python benchmarks/parallel_jobs.py [--jobs 2] [--seeds 0] [--models minilm-l6,smollm2-135m]
"""

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from attncoda.base.arrays import load_arrays
from attncoda.base.paths import cache_dir
from attncoda.engine.registry import REGISTRY
from attncoda.face.plans import Lookup
from attncoda.face.precompute import run_all, run_lookup, store


def arrays_of(root: Path) -> dict[str, bytes]:
    out = {}
    for p in sorted((root / "signatures").rglob("*.npz")):
        _, arrays = load_arrays(p)
        out[str(p.relative_to(root))] = b"".join(k.encode() + arrays[k].tobytes() for k in sorted(arrays))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--models", default=",".join(REGISTRY))
    args = parser.parse_args()
    options = {"batch_size": 8, "length": 128, "n": 64}
    jobs = [Lookup.of("signatures", m, int(s), options) for m in args.models.split(",") for s in args.seeds.split(",")]
    models = cache_dir() / "models"
    with tempfile.TemporaryDirectory() as tmp:
        times = {}
        for label in ("serial", "parallel"):
            root = Path(tmp) / label
            if models.exists():
                shutil.copytree(models, root / "models")
            os.environ["ATTNCODA_CACHE"] = str(root)
            t0 = time.perf_counter()
            if label == "serial":
                for job in jobs:
                    store(run_lookup(job))
            else:
                run_all(jobs, workers=args.jobs)
            times[label] = time.perf_counter() - t0
        same = arrays_of(Path(tmp) / "serial") == arrays_of(Path(tmp) / "parallel")
    print(f"{len(jobs)} signature jobs ({args.models}; seeds {args.seeds}) on {os.cpu_count()} cores")
    print(f"  one after another   {times['serial']:7.1f} s")
    print(f"  {args.jobs} processes         {times['parallel']:7.1f} s")
    print(f"  ratio (serial / parallel): {times['serial'] / times['parallel']:.2f}; arrays bit-identical: {same}")


if __name__ == "__main__":
    main()
