"""Where the clustering and collapse chapters spend their time, from a profile of their measurement calls (issue 63).

* ``--chapter clustering``: each encoder's head distances on ``--samples`` window samples (the chapter takes 24 per
  encoder: 20 for Table 9's ranges and 4 held out), cold, and the share of their time in the pairwise Jensen–Shannon
  sums, the other pairwise sums, the forward pass and loading the model.
* ``--chapter collapse``: the endpoint shares of the default models (the chapter's other half, beside training the
  suite). The trained signatures the measurement chapter computes before it in a book build are computed first,
  untimed, so the cache holds what a build's holds; then the share of the endpoints' time in the initialization
  signatures, the three entropy terms and the reversal points.

Each run uses a cache folder of its own (``--cache``, emptied first) and prints seconds per model and the split.
Training the suite is timed by the chapter itself (its runs' ``train_seconds``).

Usage: python benchmarks/chapter_profile.py --chapter clustering [--samples 2]
       python benchmarks/chapter_profile.py --chapter collapse
"""

import argparse
import cProfile
import os
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path

PARTS = {
    "clustering": [
        ("pairwise JS sums", "pairdist.py", "_js_sums"),
        ("all pairwise sums (JS included)", "pairdist.py", "pair_distance_sums_of"),
        ("forward passes", "models.py", "forward"),
        ("loading the model", "models.py", "load_model"),
    ],
    "collapse": [
        ("initialization signatures", "initialization.py", "init_signatures"),
        ("three entropy terms", "entropy_terms.py", "entropy_terms"),
        ("reversal points", "collapse.py", "reversal_point"),
        ("trained signatures (cached)", "signatures.py", "get_signatures"),
    ],
}
"""Per chapter: (what, module file, function) whose cumulative time the split reports."""


def cumulative(stats: pstats.Stats, module: str, function: str) -> tuple[int, float]:
    """How often ``function`` of ``module`` was called from outside itself, and the seconds spent inside it (its
    cumulative time, over every call)."""
    found = [v for (path, _, name), v in stats.stats.items() if name == function and path.endswith(module)]
    return sum(v[0] for v in found), sum(v[3] for v in found)


def clustering(samples: int) -> dict:
    from attncoda.engine.selection import installed_names
    from attncoda.studies import clustering as study

    seconds = {}
    for name in installed_names("encoders"):
        started = time.perf_counter()
        study.measure_encoder(name, 32, 128, list(range(samples)), 4)
        seconds[name] = time.perf_counter() - started
    return seconds


def collapse() -> dict:
    from attncoda.base import protocol
    from attncoda.engine.signatures import get_signatures
    from attncoda.studies import collapse_suite

    models, _ = collapse_suite.endpoint_models("defaults")
    for name in models:  # what the measurement chapter leaves in a book build's cache
        for seed in protocol.SEEDS:
            get_signatures(name, seed, n=protocol.N_WINDOWS, length=protocol.WINDOW_LENGTH, batch_size=protocol.BATCH_SIZE)
    return {"models": models}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chapter", choices=sorted(PARTS), required=True)
    parser.add_argument("--samples", type=int, default=2, help="window samples per encoder (clustering)")
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "attncoda-chapter-profile")
    args = parser.parse_args()
    shutil.rmtree(args.cache, ignore_errors=True)
    os.environ["ATTNCODA_CACHE"] = str(args.cache)
    profile = cProfile.Profile()
    if args.chapter == "clustering":
        profile.enable()
        started = time.perf_counter()
        per_model = clustering(args.samples)
    else:
        from attncoda.base import protocol
        from attncoda.studies import collapse_suite

        models = collapse()["models"]
        options = collapse_suite.Options(0, protocol.N_WINDOWS, protocol.WINDOW_LENGTH, protocol.N_TRIPLES, protocol.BATCH_SIZE)
        per_model = {}
        profile.enable()
        started = time.perf_counter()
        for name in models:
            t = time.perf_counter()
            collapse_suite.endpoints([name], options)
            per_model[name] = time.perf_counter() - t
    total = time.perf_counter() - started
    profile.disable()
    stats = pstats.Stats(profile)
    print(f"# python benchmarks/chapter_profile.py --chapter {args.chapter}" + (f" --samples {args.samples}" if args.chapter == "clustering" else ""))
    print(f"total {total:.1f} s; " + ", ".join(f"{k} {v:.1f} s" for k, v in per_model.items()))
    for what, module, function in PARTS[args.chapter]:
        calls, spent = cumulative(stats, module, function)
        print(f"  {what:34s} {spent:8.1f} s  {100 * spent / total:5.1f} %  ({calls} calls)")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
