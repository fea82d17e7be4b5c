"""Whether the pruning chapter could score fewer sets: every reading recomputed from the record's first tie-break draws
and first random sets, without running a model (issue 63's first lever on the build's cost).

A metric's sets are drawn per seed in a fixed order (``tie_ranks(…, draw)``) and the random sets at each sparsity come
from one generator (``default_rng([RANDOM_SEED, j])``), so a sweep with fewer of either would score exactly the record's
first sets. This script keeps those, recomputes every reading of the chapter (metric against random sets, metric
against metric, their Holm adjustment) and prints the readings that differ from the record's own.

Usage: python benchmarks/prune_draws.py [--revision GIT_REV] [--cuts 6:40 4:40 8:30 8:20 4:20]
(each cut is DRAWS:RANDOM_SETS; the record holds 8 draws per seed and 40 random sets per sparsity.)
"""

import argparse
from dataclasses import replace

from prune_windows import MODELS, readings, record  # benchmarks/prune_windows.py, beside this script


def first_sets(result, draws: int, random_sets: int):
    """``result`` with each metric's first ``draws`` tie-break draws per seed and the first ``random_sets`` random sets."""
    keep = [s for s in result.scored if (s.kind != "metric" or s.draw < draws) and (s.kind != "random" or s.draw < random_sets)]
    return replace(result, scored=keep)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--revision", default=None)
    parser.add_argument("--cuts", nargs="*", default=["6:40", "4:40", "8:30", "8:20", "4:20"])
    args = parser.parse_args()
    full = [record(m, args.revision) for m in MODELS]
    base = readings(full)
    print(f"record ({args.revision or 'working tree'}): {full[0].tie_draws} draws per seed, {len(full[0].randoms(full[0].focus))} random sets "
          f"per sparsity; {len(base)} readings ({sum(1 for r, _ in base.values() if not r.startswith('indistinguishable'))} of them decided)")
    for cut in args.cuts:
        draws, random_sets = (int(x) for x in cut.split(":"))
        found = readings([first_sets(r, draws, random_sets) for r in full])
        moved = {key: (base[key], now) for key, now in found.items() if now[0] != base[key][0]}
        print(f"first {draws} draws, first {random_sets} random sets: {len(moved)} readings move")
        for key, ((was, p_was), (now, p_now)) in moved.items():
            print(f"    {' / '.join(str(x) for x in key)}: {was} (Holm p {p_was:.4f}) -> {now} (Holm p {p_now:.4f})")


if __name__ == "__main__":
    main()
