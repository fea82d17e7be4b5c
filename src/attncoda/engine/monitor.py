"""The entropy decomposition during training: how much of the fall of attention entropy is the sink growing, and how
much the content sharpening (methods: :ref:`methods-collapse`).

Every ``every`` steps, :class:`AttentionMonitor` runs one forward pass of the model over a fixed probe batch (the
same windows each time, so observations compare), through the score capture the signatures use, and logs per layer:

* ``entropy``: mean row entropy ``H`` over heads and query rows ``t ≥ 8`` (earlier causal rows have too few keys);
* ``content_entropy``: mean ``H(π)``, the entropy of the row renormalized without the sink keys;
* ``sink_mass``: mean row mass ``s`` on the sink keys;
* ``sink_heads``: the share of heads whose mean sink mass exceeds :data:`SINK_HEAD_MASS` (Gu et al.'s Sink_ε);
* ``sink_share``: since the first logged step, ``1 − ΔH(π)/ΔH``, the part of the fall of ``H`` that the sink carries
  (:func:`attncoda.math.coda.drop_share`; null while ``H`` has not fallen).

The log is JSON Lines, one observation a line; with ``tensorboard`` installed, the same scalars go to a TensorBoard
folder too. ``observe`` is a plain call for one's own loop; :meth:`AttentionMonitor.callback` is a
``transformers.TrainerCallback``.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from ..base.protocol import COLLAPSE_FIRST_ROW

SINK_HEAD_MASS = 0.3
"""A head counts as a sink head when its mean sink mass exceeds this (Gu et al.'s Sink_ε, at their ε = 0.3)."""
MEANS = ("entropy", "content_entropy", "sink_mass")


def layer_means(stats: dict, first_row: int = COLLAPSE_FIRST_ROW) -> dict:
    """Per-layer means of :data:`MEANS` over heads and rows ``t ≥ first_row``, the share of sink heads per layer, and
    the same pooled over layers. ``stats`` holds ``(layer, head, row)`` arrays (a signature accumulator's row means).

    >>> s = {"entropy": np.ones((2, 2, 10)), "content_entropy": np.ones((2, 2, 10)), "sink_mass": np.full((2, 2, 10), 0.5)}
    >>> layer_means(s)["layers"]["sink_heads"], layer_means(s)["sink_mass"]
    ([1.0, 1.0], 0.5)
    """
    first = min(first_row, stats["entropy"].shape[-1] - 1)
    rows = {k: np.asarray(stats[k])[:, :, first:] for k in MEANS}
    head_sink = np.nanmean(rows["sink_mass"], axis=2)
    layers = {k: np.nanmean(v, axis=(1, 2)).tolist() for k, v in rows.items()}
    layers["sink_heads"] = np.mean(head_sink > SINK_HEAD_MASS, axis=1).tolist()
    pooled = {k: float(np.nanmean(v)) for k, v in rows.items()}
    pooled["sink_heads"] = float(np.mean(head_sink > SINK_HEAD_MASS))
    return {**pooled, "layers": layers}


def attention_statistics(model, ids, sink=(0,)) -> dict:
    """:func:`layer_means` of ``model`` (a transformers model, any head) on ``ids`` (windows × tokens), measured with
    the signatures' capture in one forward pass without gradients, on the model's own device. The model is put in
    eval mode for the pass (no dropout) and back in the mode it was in. A model with learned sinks
    (:func:`~attncoda.engine.score_capture.learned_sinks`) has rows of ``1 + tokens`` parts: the learned sink is part 0
    and joins the sink keys ``sink`` (key ``j`` is part ``j + 1``), since it holds no token's content."""
    import torch

    from .models import is_encoder
    from .score_capture import learned_sinks
    from .signatures import SignatureAccumulator, capture_into

    ids = torch.as_tensor(np.asarray(ids) if not isinstance(ids, torch.Tensor) else ids)
    if ids.ndim != 2 or ids.shape[1] < 2:
        raise ValueError(f"the probe batch must be token ids of shape (windows, tokens) with at least 2 tokens; got shape {tuple(ids.shape)}")
    backbone = getattr(model, "base_model", model)
    config = model.config.get_text_config() if hasattr(model.config, "get_text_config") else model.config
    layers, heads = config.num_hidden_layers, config.num_attention_heads
    causal = not is_encoder(getattr(config, "model_type", ""), config)  # as the loader decides it
    virtual = int(learned_sinks(backbone))
    parts = (0, *(virtual + int(k) for k in sink)) if virtual else tuple(sink)
    acc = SignatureAccumulator(layers, heads, ids.shape[1], causal, parts, eps_values=(), virtual=virtual)
    capture, _ = capture_into(backbone, acc)
    device = next(backbone.parameters()).device
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad(), capture:
            backbone(input_ids=ids.to(device), attention_mask=torch.ones_like(ids).to(device))
    finally:
        model.train(was_training)
    return {**layer_means(acc.row_means()), **({"learned_sink": True} if virtual else {})}


class AttentionMonitor:
    """Log the entropy decomposition every ``every`` steps to ``log`` (JSON Lines), on the fixed ``probe`` batch.

    Parameters
    ----------
    log : path
        The JSON Lines file; each observation appends one line ``{"step", "entropy", "content_entropy", "sink_mass",
        "sink_heads", "sink_share", "layers": {...}}``, with ``"learned_sink": true`` where the model's learned sink
        joins the sink keys.
    probe : array of token ids, (windows, tokens)
        The windows every observation measures (the same each time).
    every : int
        Observe at steps that are multiples of it (step 0 included).
    sink : tuple of int
        The sink keys (default key 0, the first token); a model's learned sink, where it has one, joins them.
    tensorboard : path, optional
        Also write the pooled scalars there (the ``monitor`` extra: ``pip install 'attncoda[monitor]'``).
    tags : dict, optional
        Fields written into every record as they are (a run's name, where the observations come from).

    Notes
    -----
    Cost: indistinguishable from none at one observation every 100 steps. A watched step over a plain one, with 95 %
    intervals, on the collapse suite's three GPT-2 sizes:

    - 0.97 [0.92, 1.02], 1.08 [0.96, 1.22] and 0.98 [0.91, 1.06];
    - measured by ``benchmarks/monitor_cost.py`` (``benchmarks/results/monitor_cost.json``): 300 steps, 5 repeats,
      2 CPU cores.

    Each observation is one forward pass of the probe without gradients.

    A new monitor appends to ``log`` and measures its shares from its own first observation; :meth:`restart` empties
    the log first, :meth:`resume` keeps a resumed run's earlier observations and measures from the log's first.
    """

    def __init__(self, log, probe, every: int = 100, sink=(0,), tensorboard=None, tags=None):
        from ..base.paths import writable_folder
        from .patterns import check_sink_keys

        if not isinstance(every, int) or isinstance(every, bool) or every < 1:
            raise ValueError(f"every = {every!r} must be a whole number of steps, 1 or more")
        tokens = check_probe(probe)
        try:
            sink = check_sink_keys(tuple(sink) if isinstance(sink, (list, tuple)) else sink, tokens)
        except ValueError as err:
            raise ValueError(f"sink = {sink!r}: {err} (the probe's windows have {tokens} tokens)") from None
        clash = sorted(set(tags or {}) & RECORD_FIELDS)
        if clash:
            raise ValueError(f"tags name {', '.join(clash)}, which every record holds already; give tags other names (e.g. run, origin)")
        self.log, self.probe, self.every, self.sink = Path(log), probe, every, sink
        writable_folder(self.log.parent, f"the monitor's log {self.log}", "choose a log path in a folder you can write", ValueError)
        if self.log.exists() and not self.log.is_file():
            raise ValueError(f"the monitor's log {self.log} is not a regular file; choose another log path")
        repair_log(self.log)  # a line a killed process cut short would glue itself to this monitor's first record
        self.tags = dict(tags or {})
        self.first = None
        self.unlogged = None  # the latest record's scalars, until the Trainer's loggers have had them (on_log)
        self.writer = None
        self.tensorboard = tensorboard
        if tensorboard is not None:
            import importlib.util

            if importlib.util.find_spec("tensorboard") is None:  # SummaryWriter imports it only when the first writer is made
                raise ValueError("tensorboard= needs the tensorboard package (pip install 'attncoda[monitor]'); or leave it out and keep the "
                                 "JSON Lines log")

    def observe(self, model, step: int, batch=None, write: bool = True) -> dict | None:
        """Measure and log at ``step`` when it is a multiple of ``every`` (returns the record), else None. ``batch``
        replaces the probe for this observation. ``write=False`` measures without writing (every process but the main
        one of a distributed run: each runs the probe's forward, which sharded weights need, and one writes)."""
        if step % self.every:
            return None
        ids = self.probe if batch is None else batch
        check_vocabulary(model, ids)
        means = attention_statistics(model, ids, self.sink)
        if self.first is None:
            self.first = means
        record = {"step": int(step), **self.tags, "sink": list(self.sink), **({"learned_sink": True} if means.get("learned_sink") else {}),
                  **{k: means[k] for k in (*MEANS, "sink_heads")},
                  "sink_share": _share(self.first, means), "layers": {**means["layers"], "sink_share": _layer_shares(self.first, means)}}
        self.unlogged = {f"attention/{k}": record[k] for k in (*MEANS, "sink_heads", "sink_share") if record[k] is not None}
        if not write:
            return record
        self.log.parent.mkdir(parents=True, exist_ok=True)
        unseal(self.log)
        with open(self.log, "a", encoding="utf-8") as f:
            f.write(json.dumps(record, allow_nan=False) + "\n")
            f.flush()
        if self.tensorboard is not None:
            if self.writer is None:
                from torch.utils.tensorboard import SummaryWriter

                self.writer = SummaryWriter(str(self.tensorboard))
            for k, v in self.unlogged.items():
                self.writer.add_scalar(k, v, step)
            self.writer.flush()
        return record

    def restart(self) -> None:
        """Empty the log and forget the first observation (a run trained from step 0 again)."""
        self.log.unlink(missing_ok=True)
        unseal(self.log)
        self.first = None

    def resume(self, step: int) -> None:
        """Keep the log's observations up to ``step`` (a run resumed from its checkpoint there; a line an interruption
        cut short is dropped) and measure shares from the log's first observation again."""
        kept = []
        if self.log.is_file():
            for line in self.log.read_text(encoding="utf-8").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue
                if isinstance(record, dict) and isinstance(record.get("step"), int) and record["step"] <= step:
                    kept.append(record)
        self.log.parent.mkdir(parents=True, exist_ok=True)
        unseal(self.log)
        self.log.write_text("".join(json.dumps(r, allow_nan=False) + "\n" for r in kept), encoding="utf-8")
        self.first = ({k: kept[0][k] for k in MEANS} | {"layers": {k: kept[0]["layers"][k] for k in MEANS}}) if kept else None

    def callback(self):
        """A ``transformers.TrainerCallback`` that observes the trained model after each optimizer step.

        Every process of a distributed run (torchrun, Accelerate, DeepSpeed) runs the probe's forward pass, and only
        the main one (``state.is_world_process_zero``) writes the log and TensorBoard. At the Trainer's next log the
        latest observation's scalars join its ``logs`` (``attention/entropy`` and the rest), so the loggers of
        ``report_to`` record them too, when the callback comes before them: :meth:`attach` puts it there."""
        from transformers import TrainerCallback

        monitor = self

        def main_process(state) -> bool:
            return bool(getattr(state, "is_world_process_zero", True))

        class AttentionMonitorCallback(TrainerCallback):
            def on_train_begin(self, args, state, control, model=None, **kwargs):
                if model is not None and state.global_step == 0:  # step 0, before the first update (a resumed run has it)
                    monitor.observe(model, 0, write=main_process(state))

            def on_step_end(self, args, state, control, model=None, **kwargs):
                if model is not None:
                    monitor.observe(model, state.global_step, write=main_process(state))

            def on_log(self, args, state, control, logs=None, **kwargs):
                if logs is not None and monitor.unlogged:
                    logs.update(monitor.unlogged)
                    history = getattr(state, "log_history", None)
                    if history:  # the Trainer appended its copy of these logs just before: it keeps them too
                        history[-1].update(monitor.unlogged)
                    monitor.unlogged = None

        return AttentionMonitorCallback()

    def attach(self, trainer):
        """Add :meth:`callback` to ``trainer`` ahead of its other callbacks, so that the loggers of ``report_to``
        (TensorBoard, W&B, MLflow, trackio) receive the monitor's scalars with the Trainer's own; returns the callback."""
        callback = self.callback()
        trainer.callback_handler.callbacks.insert(0, callback)
        return callback


def _share(start: dict, end: dict) -> float | None:
    from ..math.coda import drop_share

    value = drop_share(start, end)
    return value if math.isfinite(value) else None


def _layer_shares(start: dict, end: dict) -> list:
    a, b = start["layers"], end["layers"]
    return [_share({k: a[k][i] for k in MEANS}, {k: b[k][i] for k in MEANS}) for i in range(len(a["entropy"]))]


RECORD_FIELDS = frozenset({"step", "sink", "learned_sink", *MEANS, "sink_heads", "sink_share", "layers"})
"""The fields every record holds; tags may not reuse them."""
LOG_BYTES = 1 << 30
"""The largest log :func:`read_log` reads (a million observations take about a gigabyte)."""


def check_probe(probe) -> int:
    """The probe's tokens per window, after checking it is whole, non-negative token ids of shape (windows, tokens) with at
    least 2 tokens (ValueError in one line otherwise: found now, not at the first observation)."""
    shape = tuple(getattr(probe, "shape", np.shape(probe)))
    dtype = str(getattr(probe, "dtype", np.asarray(probe).dtype))
    if len(shape) != 2 or shape[1] < 2 or shape[0] < 1:
        raise ValueError(f"the probe batch must be token ids of shape (windows, tokens) with at least 2 tokens; got shape {shape}")
    if "int" not in dtype:
        raise ValueError(f"the probe batch must be whole token ids; got dtype {dtype}")
    low = int(np.asarray(probe.cpu() if hasattr(probe, "cpu") else probe).min())
    if low < 0:
        raise ValueError(f"the probe batch holds token id {low}; token ids are 0 or more")
    return shape[1]


def check_vocabulary(model, ids) -> None:
    """ValueError in one line when ``ids`` hold a token id past ``model``'s vocabulary (its embedding would index out of range)."""
    config = getattr(model, "config", None)
    config = config.get_text_config() if hasattr(config, "get_text_config") else config
    vocab = getattr(config, "vocab_size", None)
    if not isinstance(vocab, int):
        return
    high = int(np.asarray(ids.cpu() if hasattr(ids, "cpu") else ids).max())
    if high >= vocab:
        raise ValueError(f"the probe batch holds token id {high}, past the model's vocabulary of {vocab}; build the probe with the model's tokenizer")


def repair_log(path: Path) -> bool:
    """Drop a last line a killed process cut short (no newline at the end), so the next record starts a line of its own;
    True when there was one."""
    if not path.is_file() or path.stat().st_size == 0:
        return False
    with open(path, "rb+") as f:
        f.seek(-1, 2)
        if f.read(1) == b"\n":
            return False
        data = f.seek(0) or f.read()
        f.truncate(data.rfind(b"\n") + 1)
    return True


def share_since_first(points: list[dict]) -> float | None:
    """The sink's part of the fall of ``H`` from the log's first observation to its last (None while ``H`` has not
    fallen), whatever monitor wrote each line: a log a second monitor appended to measures from its own start."""
    return _share({k: points[0][k] for k in MEANS}, {k: points[-1][k] for k in MEANS})


def seal_log(path: Path) -> None:
    """Record the SHA-256 of a finished log beside it (``<log>.sha256``), as a cached JSON entry holds its content hash."""
    from ..base.files import atomic_write_bytes, content_sha256

    atomic_write_bytes(Path(str(path) + ".sha256"), (content_sha256(path) + "\n").encode())


def unseal(path: Path) -> None:
    """Forget a log's seal before the log changes (a monitor appends, restarts or resumes it)."""
    Path(str(path) + ".sha256").unlink(missing_ok=True)


def log_intact(path: Path) -> bool | None:
    """Whether a log still holds the bytes :func:`seal_log` recorded: True, False (edited or damaged since), or None when it
    was never sealed (a log written before seals were kept)."""
    from ..base.files import content_sha256

    seal = Path(str(path) + ".sha256")
    if not seal.is_file() or not Path(path).is_file():
        return None
    try:
        return seal.read_text().strip() == content_sha256(path)
    except (OSError, UnicodeDecodeError):
        return False


def _number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_log(path) -> list[dict]:
    """The observations of a monitor's JSON Lines log, in step order (ValueError in one line for a damaged line, a
    log that is not a regular file, or a step or statistic that is not a number)."""
    from ..base.files import read_regular

    data = read_regular(path, "the monitor's log", "pass the JSON Lines file an AttentionMonitor wrote", cap=LOG_BYTES)
    records = []
    for number, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not {"step", "entropy", "content_entropy", "sink_mass"} <= set(record):
                raise ValueError
        except (ValueError, RecursionError):
            raise ValueError(f"{path}, line {number}: not an observation of attncoda's monitor (a JSON object with step, entropy, "
                             "content_entropy and sink_mass)") from None
        step = record["step"]
        if isinstance(step, bool) or not isinstance(step, int) or step < 0:
            raise ValueError(f"{path}, line {number}: step {step!r} is not a whole number of steps; the log is damaged")
        bad = next((k for k in MEANS if not _number(record[k])), None)
        if bad:
            raise ValueError(f"{path}, line {number}: {bad} {record[bad]!r} is not a number; the log is damaged")
        records.append(record)
    if not records:
        raise ValueError(f"{path} holds no observation yet")
    return sorted(records, key=lambda r: r["step"])
