"""attncoda audit: time from scratch (signatures not cached) and from cached signatures (needs `make models`).

The cold run uses a fresh cache folder that shares only the dequantized model weights with the real one,
so it computes every seed's signatures; the warm run repeats the same command. Each run is its own
process (`attncoda audit ...`), timed from outside; the ratio is taken within this run.

Usage: python benchmarks/audit.py [--models smollm2-135m ...]
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from attncoda.base.paths import cache_dir


def timed(model: str, env: dict) -> float:
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "audit", "--model", model, "--format", "json"], env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr)
    return time.perf_counter() - t0


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--models", nargs="*", default=["smollm2-135m"])
    args = parser.parse_args()
    real = cache_dir()
    for model in args.models:
        with tempfile.TemporaryDirectory() as tmp:
            fresh = Path(tmp)
            for shared in ("models", "checksums.json"):
                if (real / shared).exists():
                    os.symlink(real / shared, fresh / shared)
            env = {**os.environ, "ATTNCODA_CACHE": str(fresh)}
            cold = timed(model, env)
            warm = timed(model, env)
        print(f"{model:<20} from scratch {cold:6.1f} s   cached signatures {warm:5.1f} s   ratio {cold / warm:.1f}x  (3 seeds x 64 windows x 128 tokens, 50,000 triples per seed)")


if __name__ == "__main__":
    main()
