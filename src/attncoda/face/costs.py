"""What the book's first build costs, read from the run times the chapters recorded (``data/results/*/timings/``).

``benchmarks/README.md`` states these numbers (``benchmarks/readme.py`` writes it with :func:`costs_sentence`), so it never
carries a run time that no file of the record backs.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from ..base.paths import results_dir

CAUSAL_ORDER = ("smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b")
"""The pruning chapter's models, smallest first (the order the sentence gives their times in)."""


def _seconds(value, key: str) -> list[float]:
    """Every number stored under ``key`` in a timings file, in file order."""
    if isinstance(value, dict):
        return [x for k, v in value.items() for x in ([float(v)] if k == key else _seconds(v, key))]
    if isinstance(value, list):
        return [x for v in value for x in _seconds(v, key)]
    return []


def _commit(chapter: str, name: str, folder: Path) -> str:
    record = json.loads((folder / chapter / f"{name}.json").read_text())
    return record["provenance"]["code"].get("git_commit", "unknown")[:7]


def _pruning_evaluations(folder: Path, name: str) -> dict[tuple, float]:
    """Seconds of each distinct perplexity evaluation of one model's sweep, keyed by (pruned heads, dtype): a set the
    sweep scores twice (two metrics, or two tie-breaks, that prune the same heads) was evaluated once and read back."""
    results = json.loads((folder / "pruning" / f"{name}.json").read_text())["results"]
    timings = json.loads((folder / "pruning" / "timings" / f"{name}.json").read_text())["results"]
    out = {}
    for part in ("scored", "checks"):
        for scored, timed in zip(results[part], timings[part]):
            out.setdefault((tuple(scored["heads"]), scored["dtype"]), float(timed["seconds"]))
    return out


def build_costs(directory=None) -> dict:
    """The collapse suite's training time and the pruning sweep's perplexity evaluations (count, total, median per
    evaluation for each causal model), as the committed timings files record them, with the commit they ran at."""
    folder = results_dir(directory)
    suite = json.loads((folder / "collapse" / "timings" / "suite.json").read_text())
    training = _seconds(suite, "training_seconds")
    per_model = {}
    for name in CAUSAL_ORDER:
        evaluations = list(_pruning_evaluations(folder, name).values())
        per_model[name] = {"evaluations": len(evaluations), "total_s": sum(evaluations), "median_s": statistics.median(evaluations)}
    return {
        "suite_runs": len(training), "suite_training_min": sum(training) / 60, "suite_commit": _commit("collapse", "suite", folder),
        "pruning": per_model, "pruning_evaluations": sum(m["evaluations"] for m in per_model.values()),
        "pruning_min": sum(m["total_s"] for m in per_model.values()) / 60, "pruning_commit": _commit("pruning", CAUSAL_ORDER[0], folder),
    }


def costs_sentence(directory=None) -> str:
    """The paragraph on the first build's two long steps, computed by :func:`build_costs`: three sentences, each short
    enough to read in one breath."""
    c = build_costs(directory)
    medians = [f"{m['median_s']:.0f}" for m in c["pruning"].values()]
    per = f"{', '.join(medians[:-1])} and {medians[-1]} s"
    commits = " and ".join(sorted({c["pruning_commit"], c["suite_commit"]}))
    return (f"The pruning sweep's {c['pruning_evaluations']} distinct perplexity evaluations took {c['pruning_min']:.0f} minutes, "
            f"the median evaluation {per} on the three causal models ({', '.join(CAUSAL_ORDER)}). "
            f"Training the collapse chapter's {c['suite_runs']} small models took {c['suite_training_min']:.1f} minutes. "
            f"Both are the timings beside the results of commit {commits} "
            "(`data/results/pruning/timings/`, `data/results/collapse/timings/`).")
