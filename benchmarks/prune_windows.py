"""How few held-out windows the pruning readings need: each reading recomputed from the first k windows of a record.

A window's negative log-likelihood does not depend on which windows share its batch (tests/studies/test_pruning_sweep.py),
so a sweep on the first k of the record's windows would score every set with exactly the record's first k per-window
values. This script forms those scores without running a model, recomputes every reading of the pruning chapter (metric
against random sets, metric against metric, their Holm adjustment) and prints, for each k, the readings that differ from
the record's own.

Usage: python benchmarks/prune_windows.py [--revision GIT_REV] [--counts 7 6 4]
(``--revision`` reads the pruning records as committed at that revision, e.g. one built on more windows.)
"""

import argparse
import json
import math
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np

from attncoda.studies import pruning_readings as pr
from attncoda.studies.pruning_sweep import PruningResult

MODELS = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b")


def first_windows(scored, k: int):
    """``scored`` on its first ``k`` windows: perplexity ``exp(Σ window_nll / Σ window_tokens)`` over them."""
    if scored.window_nll is None:
        return scored
    nll, tokens = np.array(scored.window_nll[:k]), np.array(scored.window_tokens[:k])
    return replace(scored, perplexity=math.exp(float(nll.sum()) / int(tokens.sum())), window_nll=nll.tolist(), window_tokens=tokens.tolist())


def record(model: str, revision: str | None) -> PruningResult:
    path = f"data/results/pruning/{model}.json"
    text = subprocess.run(["git", "show", f"{revision}:{path}"], check=True, capture_output=True, text=True).stdout if revision else Path(path).read_text()
    data = {k: v for k, v in json.loads(text)["results"].items() if k != "readings"}
    return PruningResult.from_json({**data, "wall_time_s": 0.0})


def readings(results) -> dict:
    cells = {(c.model, c.metric, c.sparsity): (c.reading, c.p_holm) for c in pr.metric_cells(results)}
    pairs = {(c.model, c.a, c.b, c.sparsity): (c.reading, c.p_holm) for c in pr.contrasts(results)}
    return {**cells, **pairs}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--revision", default=None)
    parser.add_argument("--counts", nargs="*", type=int, default=None)
    args = parser.parse_args()
    full = [record(m, args.revision) for m in MODELS]
    windows = full[0].heldout["windows"]
    base = readings(full)
    print(f"record: {windows} windows ({args.revision or 'working tree'}); {len(base)} readings "
          f"({sum(1 for r, _ in base.values() if not r.startswith('indistinguishable'))} of them decided)")
    for k in args.counts or range(windows - 1, 1, -1):
        cut = [replace(r, scored=[first_windows(s, k) for s in r.scored], heldout={**r.heldout, "windows": k}) for r in full]
        found = readings(cut)
        moved = {key: (base[key], now) for key, now in found.items() if now[0] != base[key][0]}
        print(f"first {k} windows: {len(moved)} readings move")
        for key, ((was, p_was), (now, p_now)) in moved.items():
            print(f"    {' / '.join(str(x) for x in key)}: {was} (Holm p {p_was:.4f}) -> {now} (Holm p {p_now:.4f})")
        for key, (was, p_was) in base.items():
            if not was.startswith("indistinguishable") and key not in moved:
                print(f"    kept: {' / '.join(str(x) for x in key)}: {was}, Holm p {p_was:.4f} -> {found[key][1]:.4f}")


if __name__ == "__main__":
    main()
