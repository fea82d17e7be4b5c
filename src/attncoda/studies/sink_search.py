"""The search for a training recipe under which a first-token sink grows, and the collapse chapter's suite it led to.

Each :class:`Trial` is one small model trained here (:func:`attncoda.engine.training.train`) and measured at
step 0 and at its last step: mean row sink mass on key 0, pooled over layers, heads and query rows
``t ≥ COLLAPSE_FIRST_ROW``; for a Bigram-Backcopy task also on trigger and non-trigger rows separately, and the share
of heads whose mean mass on key 0 over the non-trigger rows exceeds :data:`SINK_EPS` (Gu et al.'s Sink_ε).

* Text runs are measured as the chapter measures its suite: 64 held-out windows of the corpus, ``[BOS]`` first.
* Task runs are measured on 64 held-out sequences of their task (a random stream no training batch uses).

:data:`TRIALS` lists every configuration in the order it was tried: natural text first (wider heads, weight
decay, one document per window, longer windows), then the synthetic task, and the SGD control. ``python -m
attncoda.studies.sink_search`` trains and measures whatever is missing and writes ``data/sink_search/trials.json``
(``python -m attncoda.studies.sink_search LABEL …`` measures those trials and keeps the others' records).

The search ended on Guo et al.'s own task (:class:`attncoda.engine.tasks.CharacterBackcopy`) and GPT-2's block: the
collapse chapter's suite is that recipe at three sizes (:data:`LADDER`), each with every seed, and a control that
learns but has no reason to grow a sink: the random-table Backcopy on the same block and optimiser (:func:`control`).
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
GROWN = 0.5
"""The target: mean row sink mass above this, on the non-trigger rows of a task run (all measured rows of a text run)."""
SINK_EPS = 0.3
"""A head is a sink head where its mean attention on key 0 over the measured non-trigger rows exceeds this (Gu et al.'s Sink_ε)."""
CHARACTER_VOCAB = 89
"""Tokens of :class:`attncoda.engine.tasks.CharacterBackcopy` on the Shakespeare corpus: 88 characters and ``<bos>`` (a test
checks it against the task)."""


@dataclass(frozen=True)
class Trial:
    """One configuration of the search: a label, why it was tried, the run it trains, and the seeds it trains it with
    (the first seed's run is the trial's own; a recipe the ladder may take is trained with three)."""

    label: str
    why: str
    run: SuiteRun
    seeds: tuple = (0,)


def _text(label, why, hidden, layers, heads, **settings) -> Trial:
    base = dict(seed=0, steps=2000, precision="bf16" if hidden >= 128 else "float32")
    return Trial(label, why, SuiteRun(label, hidden, layers, heads, **(base | settings)))


def _task(label, why, hidden, layers, heads, **settings) -> Trial:
    base = dict(seed=0, steps=2000, task="backcopy", vocab=64, length=64, batch=32, learning_rate=1e-3, weight_decay=0.1,
                precision="bf16" if hidden >= 128 else "float32")
    return Trial(label, why, SuiteRun(label, hidden, layers, heads, **(base | settings)))


def _character(label, why, hidden, layers, heads, seeds=(0,), **settings) -> Trial:
    base = dict(seed=seeds[0], steps=CHARACTER_STEPS, every=CHARACTER_EVERY, task="character-backcopy", vocab=CHARACTER_VOCAB, length=128,
                batch=32, learning_rate=1e-3, weight_decay=0.1, arch="gpt2", precision="bf16")
    return Trial(label, why, SuiteRun(label, hidden, layers, heads, **(base | settings)), tuple(seeds))


CHARACTER_STEPS = 800
"""Training steps of a character-task run (Guo et al.'s probe here passed 0.5 by step 300 at 1 × 1)."""
CHARACTER_EVERY = 25
"""A character-task run keeps a checkpoint every this many steps, to follow the sink's rise."""

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
    _task("backcopy-sgd", "Bigram-Backcopy under SGD (momentum 0.9, rate 0.1), meant as a control: Guo et al. saw no sink grow under SGD. "
          "It learned no attention at all (its rows stay uniform), so it controls nothing", 128, 2, 2, optimizer="sgd", learning_rate=0.1),
    _task("backcopy-float32", "Bigram-Backcopy in float32: does bf16 autocast move the reading?", 128, 2, 2, precision="float32"),
    _task("backcopy-lr3e-3", "Bigram-Backcopy at a peak rate of 3e-3 for 6,000 steps: its rows stayed near uniform at 1e-3", 128, 2, 2,
          learning_rate=3e-3, steps=6000),
    _task("backcopy-1layer-lr3e-3", "the same with one layer, as Guo et al. trained", 128, 1, 2, learning_rate=3e-3, steps=6000),
    _character("char-gpt2-1x1", "Guo et al.'s task itself: a bigram table counted on Shakespeare's characters, its 3 most frequent characters "
               "(' ', 'e', 't': a quarter of all tokens) as triggers, on GPT-2's block with a ReLU MLP and an untied output, 1 layer × 1 head", 128, 1, 1),
    _character("char-gpt2-float32-1x1", "GPT-2's block in float32: does bf16 autocast move the reading?", 128, 1, 1, precision="float32"),
    _character("char-gpt2-constant-1x1", "GPT-2's block at a constant rate of 1e-3 (Guo et al.'s schedule) instead of warm-up and cosine decay",
               128, 1, 1, rates="constant"),
    _character("char-gpt2-emb1-1x1", "GPT-2's block with its token and position embeddings drawn with sd 1 (PyTorch's nn.Embedding default, "
               "which Guo et al.'s model keeps) instead of GPT-2's 0.02 (one trait changed); trained with three seeds, as a ladder recipe must be",
               128, 1, 1, embed_std=1.0, seeds=(0, 1, 2)),
    _character("char-neox-emb1-1x1", "GPT-NeoX with token embeddings of sd 1: does the block matter once the embeddings are large?", 128, 1, 1,
               arch="neox", embed_std=1.0),
    _character("char-gpt2-gelu-emb1-1x1", "embeddings of sd 1, GELU instead of ReLU", 128, 1, 1, arch="gpt2-gelu", embed_std=1.0),
    _character("char-gpt2-tied-emb1-1x1", "embeddings of sd 1, output tied to the input embedding", 128, 1, 1, arch="gpt2-tied", embed_std=1.0),
    _character("table-gpt2-emb1-1x1", "the random-table Backcopy (8 successors per token, rare triggers) with the same block, embeddings and "
               "optimiser: the control of the cosine recipe", 128, 1, 1, task="backcopy", vocab=64, embed_std=1.0),
    _character("char-gpt2-emb1-constant-1x1", "embeddings of sd 1 at a constant rate of 1e-3 from the first step (Guo et al.'s schedule): under "
               "warm-up and cosine decay to a tenth of the peak, one seed of three was still rising at step 800", 128, 1, 1, embed_std=1.0, rates="constant",
               seeds=(0, 1, 2)),
    _character("table-gpt2-emb1-constant-1x1", "the random-table Backcopy with the same block, embeddings and constant rate: the control's recipe",
               128, 1, 1, task="backcopy", vocab=64, embed_std=1.0, rates="constant"),
)


# --------------------------------------------------------------------------- measurement


def task_probe(run: SuiteRun, n: int = N_WINDOWS, seed: int = 0) -> np.ndarray:
    """``n`` held-out sequences of a task run's task, ``(n, length)`` ids, drawn by window seed ``seed`` from a stream no
    training batch uses."""
    from ..engine.training import run_task

    return run_task(run).sequences(n, run.length, np.random.default_rng([HELDOUT_STREAM, seed]))


def task_patterns(folder: Path, run: SuiteRun, n: int = N_WINDOWS, seed: int = 0):
    """``(ids, attentions)`` of a task run's checkpoint on ``n`` held-out task sequences; attentions is a list of
    ``(n, head, query, key)`` float32 arrays, one per layer."""
    import torch
    from transformers import AutoModelForCausalLM

    from ..engine.training import run_task

    ids = task_probe(run, n, seed)
    model = AutoModelForCausalLM.from_pretrained(folder, attn_implementation="eager")
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

    from ..engine.training import TASKS

    if run.task in TASKS:
        from ..engine.training import run_task

        patterns = ids, layers = task_patterns(folder, run)  # one forward pass serves the signatures and the row split
        trigger = run_task(run).trigger_rows(ids)
        means = entropy_means(task_signatures(folder, run, patterns=patterns))
        other = row_group_means(layers, ~trigger)
        return {**_pooled(means), "trigger_sink_mass": row_group_means(layers, trigger)["sink_mass"],
                "other_sink_mass": other["sink_mass"], "sink_heads": sink_head_share(other["head_sink_mass"])}
    return _pooled(entropy_means(get_signatures(str(folder), 0, n=N_WINDOWS, length=run.length, split="heldout")))


def row_group_means(layers: list[np.ndarray], rows: np.ndarray, first_row: int = COLLAPSE_FIRST_ROW) -> dict:
    """Mean ``H``, ``H(π)`` and sink mass (key 0) over layers, heads and the query rows ``t ≥ first_row`` selected by
    ``rows`` (``(n, L)`` bool), from attention patterns (:func:`attncoda.math.coda.entropy_split` of each row); and
    ``head_sink_mass``, each head's mean sink mass over those rows (layer-major)."""
    from ..math.coda import entropy_split

    keep = rows.copy()
    keep[:, :first_row] = False
    if not keep.any():
        return {"entropy": float("nan"), "content_entropy": float("nan"), "sink_mass": float("nan"), "head_sink_mass": []}
    picked = [a.astype(np.float64).transpose(0, 2, 1, 3)[keep] for a in layers]  # (rows, head, key) per layer, as the softmax gave them
    split = entropy_split(np.stack(picked), (0,))
    return {"entropy": float(split.entropy.mean()), "content_entropy": float(np.nanmean(split.content_entropy)),
            "sink_mass": float(split.sink_mass.mean()), "head_sink_mass": split.sink_mass.mean(axis=1).ravel().tolist()}


def sink_head_share(head_sink_mass, eps: float = SINK_EPS) -> float:
    """Share of heads whose mean sink mass exceeds ``eps`` (Gu et al.'s Sink_ε).

    Examples
    --------
    >>> sink_head_share([0.9, 0.1, 0.2, 0.6])
    0.5
    """
    values = np.asarray(head_sink_mass, dtype=float)
    return float(np.mean(values > eps)) if values.size else float("nan")


def task_point(run: SuiteRun, patterns) -> dict:
    """What a task checkpoint adds to its point, from its patterns (:func:`task_patterns`): sink mass on trigger and on
    non-trigger rows, each head's mass on the non-trigger rows, and the share of sink heads among them (:func:`sink_head_share`)."""
    from ..engine.training import run_task

    ids, layers = patterns
    trigger = run_task(run).trigger_rows(ids)
    other, triggered = row_group_means(layers, ~trigger), row_group_means(layers, trigger)
    return {"other_sink_mass": other["sink_mass"], "trigger_sink_mass": triggered["sink_mass"], "other_entropy": other["entropy"],
            "other_content_entropy": other["content_entropy"], "head_sink_mass": other["head_sink_mass"],
            "sink_heads": sink_head_share(other["head_sink_mass"])}


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
        first, last = ({k: v for k, v in row_group_means(x, rows).items() if k != "head_sink_mass"} for x in (a, b))
        out[name] = {"start": first, "end": last, "share": drop_share(first, last), "rows": int(rows[:, COLLAPSE_FIRST_ROW:].sum())}
    return out


def _pooled(means: dict) -> dict:
    return {k: means[k] for k in ("sink_mass", "entropy", "content_entropy")} | {"layer_sink_mass": means["layers"]["sink_mass"]}


def run_trial(trial: Trial) -> dict:
    """Train (or reuse) a trial's run and measure its first and last checkpoints; with more than one seed, every seed's
    run, each under ``seeds`` (the first is the trial's own), and whether each of them grew a sink (``grown_every_seed``)."""
    from ..engine.training import parameter_count, train, training_seconds

    started = time.perf_counter()
    per_seed = []
    for seed in trial.seeds:
        run = replace(trial.run, seed=seed)
        folders = train(run)
        end = measure(run, folders[-1])
        per_seed.append({"seed": seed, "step0": measure(run, folders[0]), "final": end, "grown": grown(end),
                         "training_seconds": training_seconds(run), "cache_key": run.key()})
    first = per_seed[0]
    record = {"label": trial.label, "why": trial.why, "run": asdict(trial.run), "cache_key": first["cache_key"],
              "parameters": parameter_count(trial.run), "training_seconds": first["training_seconds"],
              "wall_seconds": time.perf_counter() - started, "step0": first["step0"], "final": first["final"], "grown": first["grown"]}
    if len(per_seed) > 1:
        record |= {"seeds": per_seed, "grown_every_seed": all(s["grown"] for s in per_seed)}
    return record


def grown(final: dict, target: float = GROWN) -> bool:
    """Whether a trial's final measurement passes the target: the non-trigger rows' sink mass for a task run, the pooled one
    for a text run."""
    return final.get("other_sink_mass", final["sink_mass"]) > target


def search(trials=TRIALS, out: Path | None = None) -> list[dict]:
    """Every trial's record, written after each one (atomically) to ``out`` so that an interrupted search keeps what it measured."""
    from ..base.files import atomic_write_json

    out = out or trials_path()
    kept = read_trials(out)["trials"] if out.exists() or out.is_symlink() else []  # checked as every reader checks it
    order = [t.label for t in TRIALS]
    records = {r["label"]: {**r, "grown": grown(r["final"])} for r in kept}
    for trial in trials:
        r = records[trial.label] = run_trial(trial)
        print(f"{trial.label:<28} sink {r['step0']['sink_mass']:.3f} -> {r['final']['sink_mass']:.3f}   "
              f"{r['training_seconds'] / 60:5.1f} min", flush=True)
        out.parent.mkdir(parents=True, exist_ok=True)
        ordered = sorted(records.values(), key=lambda x: order.index(x["label"]) if x["label"] in order else len(order))
        atomic_write_json(out, {"target": GROWN, "first_row": COLLAPSE_FIRST_ROW, "sink_eps": SINK_EPS, "trials": ordered})
    return [records[t.label] for t in trials]


def trial(label: str) -> Trial:
    """The trial of :data:`TRIALS` with this label."""
    return next(t for t in TRIALS if t.label == label)


LADDER = {"1x1": (128, 1, 1), "2x2": (96, 2, 2), "3x3": (96, 3, 3)}
"""The suite's sizes on Guo et al.'s task: ``name: (width, layers, heads)``, in growing parameter count. 1 × 1 has no head
triple (no reversal rate), 2 × 2 and 3 × 3 do. The two larger are 96 wide: at widths 128 and 192 their seeds took
4.9 and about 13 minutes to train here, beyond the suite's budget (:data:`attncoda.base.protocol.SUITE_BUDGET_MINUTES`)."""
LADDER_SHAPES = tuple(f"{layers} × {heads} (width {width})" for width, layers, heads in LADDER.values())
"""The ladder's sizes as a page names them (layers × heads)."""
CONTROL_SIZE = "1x1"
"""The control's size: the ladder's smallest, the size of the search's trials (and the cheapest to train three times)."""
LADDER_TRIAL = "char-gpt2-emb1-constant-1x1"
"""The trial whose recipe the ladder trains at every size: the search's first configuration whose non-trigger sink passed
:data:`GROWN` in each of its three seeds (a test checks it against ``data/sink_search/trials.json``)."""
CONTROL_TRIAL = "table-gpt2-emb1-constant-1x1"
"""The trial whose recipe the control trains: the ladder's recipe on the random-table task."""


def ladder(seeds, steps: int | None = None) -> list[SuiteRun]:
    """Every run of the ladder: the recipe of :data:`LADDER_TRIAL` (Guo et al.'s task on GPT-2's block) at each size of
    :data:`LADDER`, with each seed (``steps``: the recipe's own count unless given)."""
    recipe = trial(LADDER_TRIAL).run
    return [replace(recipe, size=size, hidden=h, layers=l, heads=a, seed=seed, steps=steps or recipe.steps)
            for size, (h, l, a) in LADDER.items() for seed in seeds]


def control(seeds, steps: int | None = None) -> list[SuiteRun]:
    """The control, with each seed: the same block, optimiser and size (:data:`CONTROL_SIZE`) on the random-table Backcopy,
    a task it learns (its loss falls and H moves) with rare triggers, so no head has reason to go dormant."""
    recipe = trial(CONTROL_TRIAL).run
    h, l, a = LADDER[CONTROL_SIZE]
    return [replace(recipe, size=f"table-{CONTROL_SIZE}", hidden=h, layers=l, heads=a, seed=seed, steps=steps or recipe.steps) for seed in seeds]


def trials_path() -> Path:
    from ..base.paths import data_dir

    return data_dir() / "sink_search" / "trials.json"


def read_trials(path: Path | None = None) -> dict:
    """The search's record (``data/sink_search/trials.json`` unless ``path``): the target and every trial's record, in
    the order tried (ValueError in one line for a damaged one)."""
    from ..base.files import read_regular

    path = path or trials_path()
    if not path.exists() and not path.is_symlink():
        raise FileNotFoundError(f"{path} is missing; make it with: python -m attncoda.studies.sink_search")
    damaged = f"{path} is damaged (not the search's record); restore it with git checkout, or make it again with: python -m attncoda.studies.sink_search"
    data = read_regular(path, "the search's record", "restore it with git checkout", cap=64 << 20)
    try:
        record = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError, UnicodeDecodeError):
        raise ValueError(damaged) from None
    keys = ("label", "step0", "final", "training_seconds")
    if not (isinstance(record, dict) and isinstance(record.get("trials"), list) and isinstance(record.get("target"), (int, float))
            and all(isinstance(t, dict) and all(k in t for k in keys) for t in record["trials"])):
        raise ValueError(damaged)
    return record


USAGE = """usage: python -m attncoda.studies.sink_search [LABEL ...]

Run the search for a sink again (its checkpoints are cached) and rewrite data/sink_search/trials.json.
With labels, only those trials run; the labels are:
  {labels}"""


def main(argv=None) -> int:
    """The search's command line: every trial, or the labels named; an unknown label or --help says what the labels are."""
    import sys

    args = list(sys.argv[1:] if argv is None else argv)
    labels = [t.label for t in TRIALS]
    if any(a in ("-h", "--help") for a in args):
        print(USAGE.format(labels="\n  ".join(labels)))
        return 0
    unknown = [a for a in args if a not in labels]
    if unknown:
        print(f"sink_search: error: unknown trial {unknown[0]!r}; the labels are: {', '.join(labels)}", file=sys.stderr)
        return 2
    try:
        search([t for t in TRIALS if not args or t.label in args])
    except ValueError as err:  # a damaged record, before any trial trains
        print(f"sink_search: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
