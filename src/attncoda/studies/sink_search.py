"""The search for a training recipe under which a first-token sink grows (the collapse chapter's suite).

Each :class:`Trial` is one small GPT-NeoX trained here (:func:`attncoda.engine.training.train`) and measured at
step 0 and at its last step: mean row sink mass on key 0, pooled over layers, heads and query rows
``t ≥ COLLAPSE_FIRST_ROW``; for the Bigram-Backcopy task also on trigger and non-trigger rows separately.

* Text runs are measured as the chapter measures its suite: 64 held-out windows of the corpus, ``[BOS]`` first.
* Task runs are measured on 64 held-out sequences of their task (a random stream no training batch uses).

:data:`TRIALS` lists every configuration in the order it was tried: natural text first (wider heads, weight
decay, one document per window, longer windows), then the synthetic task, and the SGD control. ``python -m
attncoda.studies.sink_search`` trains and measures whatever is missing and writes ``data/sink_search/trials.json``.
"""

from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np

from ..base.protocol import COLLAPSE_FIRST_ROW, N_WINDOWS
from ..engine.training import SuiteRun

HELDOUT_STREAM = 2**31 - 1
"""First entry of the random stream that draws a task run's held-out sequences (training batches use ``[seed, step]``, seed < it)."""
GROWN = 0.3
"""The issue's target: mean row sink mass above this on the measured rows."""


@dataclass(frozen=True)
class Trial:
    """One configuration of the search: a label, why it was tried, and the run it trains."""

    label: str
    why: str
    run: SuiteRun


def _text(label, why, hidden, layers, heads, **settings) -> Trial:
    base = dict(seed=0, steps=2000, precision="bf16" if hidden >= 128 else "float32")
    return Trial(label, why, SuiteRun(label, hidden, layers, heads, **(base | settings)))


def _task(label, why, hidden, layers, heads, **settings) -> Trial:
    base = dict(seed=0, steps=2000, task="backcopy", vocab=64, length=64, batch=32, learning_rate=1e-3, weight_decay=0.1,
                precision="bf16" if hidden >= 128 else "float32")
    return Trial(label, why, SuiteRun(label, hidden, layers, heads, **(base | settings)))


TRIALS = (
    _text("text-today", "the suite as it is (width 64, heads of 16, weight decay 0.01), for 2,000 steps", 64, 4, 4),
    _text("text-wide", "heads of width 64 instead of 16", 128, 4, 2),
    _text("text-wide-wd", "and weight decay 0.1 (Gu et al.: weight decay strengthens sinks)", 128, 4, 2, weight_decay=0.1),
    _text("text-wide-doc", "heads of 64, one document per window (no <|endoftext|> to park on)", 128, 4, 2, windows="documents"),
    _text("text-wide-doc-wd", "one document per window and weight decay 0.1", 128, 4, 2, windows="documents", weight_decay=0.1),
    _text("text-wide-doc-wd-L256", "the same with windows of 256 tokens (Barbero et al.: sinks grow with context)", 128, 4, 2,
          windows="documents", weight_decay=0.1, length=256, steps=1500),
    _text("text-wide-doc-wd-lr5e-3", "the same with a higher peak rate, 5e-3", 128, 4, 2, windows="documents", weight_decay=0.1, learning_rate=5e-3),
    _task("backcopy", "Bigram-Backcopy (Guo et al.): 64 tokens, 3 triggers, AdamW 1e-3, weight decay 0.1", 128, 2, 2),
    _task("backcopy-deep", "Bigram-Backcopy with 4 layers of 2 heads", 128, 4, 2),
    _task("backcopy-long", "Bigram-Backcopy trained 6,000 steps", 128, 2, 2, steps=6000),
    _task("backcopy-sgd", "control: Bigram-Backcopy under SGD (momentum 0.9, rate 0.1); Guo et al. saw no sink grow", 128, 2, 2,
          optimizer="sgd", learning_rate=0.1),
    _task("backcopy-float32", "Bigram-Backcopy in float32: does bf16 autocast move the reading?", 128, 2, 2, precision="float32"),
    _task("backcopy-lr3e-3", "Bigram-Backcopy at a peak rate of 3e-3 for 6,000 steps: its rows stayed near uniform at 1e-3", 128, 2, 2,
          learning_rate=3e-3, steps=6000),
    _task("backcopy-1layer-lr3e-3", "the same with one layer, as Guo et al. trained", 128, 1, 2, learning_rate=3e-3, steps=6000),
)


# --------------------------------------------------------------------------- measurement


def task_patterns(folder: Path, run: SuiteRun, n: int = N_WINDOWS, seed: int = 0):
    """``(ids, attentions)`` of a task run's checkpoint on ``n`` held-out task sequences; attentions is a list of
    ``(n, head, query, key)`` float32 arrays, one per layer."""
    import torch
    from transformers import GPTNeoXForCausalLM

    from ..engine.training import run_task

    ids = run_task(run).sequences(n, run.length, np.random.default_rng([HELDOUT_STREAM, seed]))
    model = GPTNeoXForCausalLM.from_pretrained(folder, attn_implementation="eager")
    model.eval()
    with torch.no_grad():
        out = model(input_ids=torch.as_tensor(ids), output_attentions=True)
    return ids, [a.float().numpy() for a in out.attentions]


def task_signatures(folder: Path, run: SuiteRun, n: int = N_WINDOWS, seed: int = 0, patterns=None):
    """Signatures of a task checkpoint (sink: key 0, the ``<bos>``), via :func:`attncoda.engine.patterns.signatures_from_patterns`;
    ``patterns`` (from :func:`task_patterns`) saves a second forward pass when the caller already holds them."""
    from ..engine.patterns import signatures_from_patterns

    _, layers = patterns or task_patterns(folder, run, n, seed)
    return signatures_from_patterns(layers, model=f"{run.name}@{folder.name}", sink=(0,), causal=True, bos_prepended=True, seed=seed)


def measure(run: SuiteRun, folder: Path) -> dict:
    """Sink mass and mean entropies (:func:`attncoda.studies.collapse.entropy_means`) of one checkpoint; trigger and
    non-trigger rows separately for the task."""
    from ..engine.signatures import get_signatures
    from .collapse import entropy_means

    if run.task == "backcopy":
        from ..engine.training import run_task

        patterns = ids, layers = task_patterns(folder, run)  # one forward pass serves the signatures and the row split
        trigger = run_task(run).trigger_rows(ids)
        means = entropy_means(task_signatures(folder, run, patterns=patterns))
        return {**_pooled(means), "trigger_sink_mass": row_group_means(layers, trigger)["sink_mass"],
                "other_sink_mass": row_group_means(layers, ~trigger)["sink_mass"]}
    return _pooled(entropy_means(get_signatures(str(folder), 0, n=N_WINDOWS, length=run.length, split="heldout")))


def row_group_means(layers: list[np.ndarray], rows: np.ndarray, first_row: int = COLLAPSE_FIRST_ROW) -> dict:
    """Mean ``H``, ``H(π)`` and sink mass (key 0) over layers, heads and the query rows ``t ≥ first_row`` selected by
    ``rows`` (``(n, L)`` bool), from attention patterns (:func:`attncoda.math.coda.entropy_split` of each row)."""
    from ..math.coda import entropy_split

    keep = rows.copy()
    keep[:, :first_row] = False
    if not keep.any():
        return {"entropy": float("nan"), "content_entropy": float("nan"), "sink_mass": float("nan")}
    picked = [a.astype(np.float64).transpose(0, 2, 1, 3)[keep] for a in layers]  # (rows, head, key) per layer, as the softmax gave them
    split = entropy_split(np.stack(picked), (0,))
    return {"entropy": float(split.entropy.mean()), "content_entropy": float(np.nanmean(split.content_entropy)),
            "sink_mass": float(split.sink_mass.mean())}


def task_row_shares(run: SuiteRun, start: Path, end: Path) -> dict:
    """The share ``1 − ΔH(π)/ΔH`` between two checkpoints of a task run, on trigger rows and on the other rows apart
    (each with its start and end means)."""
    from ..engine.training import run_task
    from .collapse import drop_share

    out = {}
    ids_a, a = task_patterns(start, run)
    _, b = task_patterns(end, run)
    trigger = run_task(run).trigger_rows(ids_a)
    for name, rows in (("trigger", trigger), ("other", ~trigger)):
        first, last = row_group_means(a, rows), row_group_means(b, rows)
        out[name] = {"start": first, "end": last, "share": drop_share(first, last), "rows": int(rows[:, COLLAPSE_FIRST_ROW:].sum())}
    return out


def _pooled(means: dict) -> dict:
    return {k: means[k] for k in ("sink_mass", "entropy", "content_entropy")} | {"layer_sink_mass": means["layers"]["sink_mass"]}


def run_trial(trial: Trial) -> dict:
    """Train (or reuse) a trial's run and measure its first and last checkpoints."""
    from ..engine.training import parameter_count, train, training_seconds

    started = time.perf_counter()
    folders = train(trial.run)
    start, end = measure(trial.run, folders[0]), measure(trial.run, folders[-1])
    return {"label": trial.label, "why": trial.why, "run": asdict(trial.run), "cache_key": trial.run.key(),
            "parameters": parameter_count(trial.run), "training_seconds": training_seconds(trial.run),
            "wall_seconds": time.perf_counter() - started, "step0": start, "final": end, "grown": end["sink_mass"] > GROWN}


def search(trials=TRIALS, out: Path | None = None) -> list[dict]:
    """Every trial's record, written after each one (atomically) to ``out`` so that an interrupted search keeps what it measured."""
    from ..base.files import atomic_write_json

    out = out or trials_path()
    records = []
    for trial in trials:
        records.append(run_trial(trial))
        r = records[-1]
        print(f"{trial.label:<28} sink {r['step0']['sink_mass']:.3f} -> {r['final']['sink_mass']:.3f}   "
              f"{r['training_seconds'] / 60:5.1f} min", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_json(out, {"target": GROWN, "first_row": COLLAPSE_FIRST_ROW, "trials": records})
    return records


def with_seed(trial: Trial, seed: int) -> Trial:
    """The same trial trained with another seed."""
    return replace(trial, run=replace(trial.run, seed=seed))


def trial(label: str) -> Trial:
    """The trial of :data:`TRIALS` with this label."""
    return next(t for t in TRIALS if t.label == label)


def sgd_control(winner: Trial) -> Trial:
    """The winner's control: the same run under SGD (momentum 0.9, rate 0.1), on the same data."""
    run = replace(winner.run, size=f"{winner.label}-sgd", optimizer="sgd", learning_rate=0.1)
    return Trial(f"{winner.label}-sgd", "the winner under SGD, momentum 0.9, rate 0.1; Guo et al. saw no sink grow under SGD", run)


MIN_HEADS = 3
"""The winner must have at least this many heads: a head triple, so that Figure 5a and the frozen predictor can test its checkpoints."""
WINNER = "backcopy-long"
"""The trial whose final sink mass was largest in the search among those with :data:`MIN_HEADS` heads or more (a test
checks it against ``data/sink_search/trials.json``)."""
SUITE_TRIALS = {"search winner": trial(WINNER), "control": sgd_control(trial(WINNER))}
"""The collapse chapter's second suite: the search's winner and its control, each trained with every seed."""


def trials_path() -> Path:
    from ..base.paths import data_dir

    return data_dir() / "sink_search" / "trials.json"


def read_trials() -> dict:
    """The search's record (``data/sink_search/trials.json``): the target and every trial's record, in the order tried."""
    path = trials_path()
    if not path.exists():
        raise FileNotFoundError(f"{path} is missing; make it with: python -m attncoda.studies.sink_search")
    return json.loads(path.read_text())


if __name__ == "__main__":
    import sys

    chosen = [t for t in TRIALS if not sys.argv[1:] or t.label in sys.argv[1:]]
    search(chosen)
