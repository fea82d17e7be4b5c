"""What the collapse chapter measures, as typed results: its checkpoint series (trained here, or given), their shares,
and the endpoint shares of trained models.

* :func:`trained_series` trains one :class:`~attncoda.engine.training.SuiteRun` (or reads its cached checkpoints),
  with an :class:`~attncoda.engine.monitor.AttentionMonitor` watching it (:func:`monitored_training`), and walks them: text runs on held-out text windows, Bigram-Backcopy runs on held-out task sequences (with the share
  on trigger rows and on the other rows apart, and each checkpoint's sink mass per kind of row and per head).
* :func:`suite` is the chapter's default: the ladder of :data:`attncoda.studies.sink_search.LADDER` (Guo et al.'s task
  at three sizes) and its control (:func:`attncoda.studies.sink_search.control`), each with every seed; optionally
  the natural-text suite of :func:`attncoda.engine.training.suite`.
* :func:`size_shares` sums up each size over its seeds: the shares with a t interval.
* :func:`given_series` walks a checkpoint series a reader names (Hub revisions or folders).
* :func:`endpoints` measures the endpoint share of trained models, resampled, with the three entropy terms where
  the sink set has more than one key.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from ..base.protocol import BATCH_SIZE, N_TRIPLES, N_WINDOWS, WINDOW_LENGTH
from ..base.records import JsonRecord
from . import collapse

SINK_GROWTH = 0.05
"""A run's sink "grew" when its mean row sink mass rose by at least this much from step 0 to the end."""


@dataclass(frozen=True)
class Series(JsonRecord):
    """One checkpoint series: its points (:func:`attncoda.studies.collapse.walk`), shares (with the peak test), and,
    for a run trained here, its settings and training time; for a task run, the shares on trigger and other rows."""

    name: str
    group: str
    kind: str  # "ladder", "control", "text suite" or "checkpoints"
    points: list
    shares: dict
    training: dict | None = None
    rows: dict | None = None
    monitor: list | None = None  # a trained run's monitor log (attncoda.engine.monitor): Figure 5b's analogue is drawn from it

    @property
    def shown(self) -> tuple[str, float]:
        """Which share the chapter shows and its value (:func:`attncoda.studies.collapse.shown_share`)."""
        return collapse.shown_share(self.shares)

    @property
    def sink_growth(self) -> tuple[float, float]:
        """Mean row sink mass at the first and the last checkpoint."""
        return self.points[0]["sink_mass"], self.points[-1]["sink_mass"]

@dataclass(frozen=True)
class Endpoint(JsonRecord):
    """A trained model against its initialized twin: the seed-0 reading (:func:`attncoda.studies.collapse.endpoint`),
    the share resampled over window and initialization seeds, and the three entropy terms (multi-key sinks)."""

    model: str
    reading: dict
    spread: dict
    terms: dict | None = None

    @property
    def share(self) -> float:
        return self.reading["share"]

@dataclass(frozen=True)
class Options:
    """How every series is measured: window seed, text windows (``n`` × ``length``), triples and batch size."""

    seed: int = 0
    n: int = N_WINDOWS
    length: int = WINDOW_LENGTH
    n_triples: int = N_TRIPLES
    batch_size: int = BATCH_SIZE

    @property
    def spread_seeds(self) -> tuple[int, int]:
        """The two other window samples a peak's rise is held against (see :func:`attncoda.studies.collapse.window_spread`)."""
        return self.seed + 1, self.seed + 2


def training_facts(run) -> dict:
    """What the page and the results file say of a trained run: every setting, its size, its training time, its cache key
    and, for a bf16 run, how its products were computed (:func:`~attncoda.engine.bf16_products.products_path`)."""
    from ..engine import training
    from ..engine.bf16_products import products_path

    return {**asdict(run), "parameters": training.parameter_count(run), "training_seconds": training.training_seconds(run), "cache_key": run.key(),
            "bf16_products": products_path(run.device) if run.precision == "bf16" else None}


def monitor_probe(run, options: Options = Options()) -> np.ndarray:
    """The ids a run's monitor observes: the windows its walk measures at seed ``options.seed`` (held-out task
    sequences, or held-out text windows of the run's tokenizer)."""
    from ..engine import training
    from ..engine.corpus import text_windows
    from .sink_search import task_probe

    if run.task in training.TASKS:
        return task_probe(run, options.n, options.seed)
    return text_windows(training.run_tokenizer(run), options.n, options.length, options.seed, "wikipedia", "heldout")[0]


def monitored_training(run, options: Options = Options(), retrain: bool = False) -> tuple[list[Path], list[dict]]:
    """Train (or reuse) ``run`` with an :class:`~attncoda.engine.monitor.AttentionMonitor` observing step 0 and every
    checkpoint on :func:`monitor_probe`; return the checkpoint folders and the monitor's log. Its records say where
    they come from (``origin``): ``training``, or ``saved checkpoints`` when the run was trained before it was watched
    and its checkpoints are replayed (the same weights)."""
    from ..engine import training
    from ..engine.monitor import AttentionMonitor, log_intact, read_log, seal_log

    probe = monitor_probe(run, options)
    log = run.folder() / "monitor" / f"n{options.n}-length{probe.shape[1]}-seed{options.seed}.jsonl"
    folders = training.train(run, retrain=retrain, monitor=AttentionMonitor(log, probe, every=1, tags={"origin": "training"}))
    try:
        observations = read_log(log)
    except (OSError, ValueError):  # none yet, or a line an interruption cut short: replayed below
        observations = []
    if [r["step"] for r in observations] != run.schedule() or log_intact(log) is False:  # edited since it was sealed: replayed
        training.observe_checkpoints(run, AttentionMonitor(log, probe, every=1, tags={"origin": "saved checkpoints"}))
        observations = read_log(log)
    if log_intact(log) is not True:  # a finished log is sealed with its hash; one from before seals is adopted as it reads
        seal_log(log)
    # the suite's sink is always key 0: a record's "sink" (which logs from before it do not hold) stays out of the results
    return folders, [{k: v for k, v in r.items() if k != "sink"} for r in observations]


def trained_series(run, group: str, kind: str, options: Options = Options(), retrain: bool = False) -> Series:
    """Train (or reuse) ``run``, watched by its monitor (:func:`monitored_training`), and walk its checkpoints."""
    from ..engine import training
    from ..engine.checkpoints import Checkpoint
    from .sink_search import task_patterns, task_point, task_row_shares, task_signatures

    folders, observations = monitored_training(run, options, retrain)
    chain = [Checkpoint(s, str(f)) for s, f in zip(run.schedule(), folders)]
    task = run.task in training.TASKS
    extras = {}  # a task checkpoint's row and head readings, from the forward pass its signatures take (seed options.seed)

    def task_checkpoint_signatures(model, seed):
        patterns = task_patterns(Path(model), run, options.n, seed)
        if seed == options.seed:
            extras[str(model)] = task_point(run, patterns)
        return task_signatures(Path(model), run, options.n, seed, patterns=patterns)

    signatures = task_checkpoint_signatures if task else collapse.text_signatures(options.n, options.length, "heldout", options.batch_size)
    points, shares = collapse.walk_with_shares(chain, options.seed, options.n_triples, run.name, signatures, options.spread_seeds)
    points = [{**p, "train_loss": training.checkpoint_loss(folder)} for p, folder in zip(points, folders)]
    if task:
        points = [{**p, **extras[str(folder)]} for p, folder in zip(points, folders)]
    rows = task_row_shares(run, folders[0], folders[-1]) if task else None
    return Series(run.name, group, kind, points, shares, training_facts(run), rows, observations)


def size_label(run) -> str:
    """A run's size as the page names it: ``1 × 1, width 128 (0.27 M parameters)``."""
    from ..engine import training

    return f"{run.layers} × {run.heads}, width {run.hidden} ({training.parameter_count(run) / 1e6:.2f} M parameters)"


def suite_runs(seeds, steps: int | None = None, text_steps: int = 0, length: int = WINDOW_LENGTH) -> list[tuple]:
    """``(run, group, kind)`` of every run of the chapter's suite, each with every one of ``seeds``: the ladder (Guo et
    al.'s task at each size; ``steps`` each, or the recipe's own count), its control, and, when ``text_steps`` is set,
    the natural-text suite (``text_steps`` each, windows of ``length``). Each trains on
    :func:`attncoda.engine.training.training_device` (the CPU unless ``--device-map`` names a device)."""
    from dataclasses import replace

    from ..engine import training
    from . import sink_search

    out = [(run, f"size {size_label(run)}", "ladder") for run in sink_search.ladder(seeds, steps)]
    out += [(run, f"control: random-table Backcopy, {size_label(run)}", "control") for run in sink_search.control(seeds, steps)]
    if text_steps:
        out += [(run, f"text, size {run.size} ({training.parameter_count(run) / 1e6:.2f} M parameters)", "text suite")
                for run in training.suite(text_steps, seeds, length)]
    device = training.training_device()
    return [(replace(run, device=device), group, kind) for run, group, kind in out]


def suite(seeds, options: Options = Options(), steps: int | None = None, text_steps: int = 0, retrain: bool = False) -> list[Series]:
    """Every series of :func:`suite_runs`, trained (or read from the cache) and walked."""
    return [trained_series(run, group, kind, options, retrain) for run, group, kind in suite_runs(seeds, steps, text_steps, options.length)]


@dataclass(frozen=True)
class SizeShares(JsonRecord):
    """One group of runs (a size of the ladder, or the control) over its seeds: the final non-trigger sink mass and share
    of sink heads per seed, and each share (pooled rows, shown from a real peak or from step 0; non-trigger rows and
    trigger rows, from step 0) as its per-seed values, mean and t interval (:func:`seed_interval`)."""

    group: str
    kind: str
    seeds: list
    final_other_sink: list
    final_sink_heads: list
    shares: dict  # name -> {"values", "mean", "low", "high"}

    @property
    def grew(self) -> bool:
        """Every seed's non-trigger sink mass ends above the target (:data:`attncoda.studies.sink_search.GROWN`)."""
        from .sink_search import GROWN

        return bool(self.final_other_sink) and all(v > GROWN for v in self.final_other_sink)


def seed_interval(values) -> dict:
    """``{"values", "mean", "low", "high"}``: the mean over seeds with its two-sided 95 % t interval,
    ``mean ± t(0.975, n − 1) · sd / √n`` (undefined values left out; no interval below two values).

    Examples
    --------
    >>> r = seed_interval([0.5, 0.6, 0.7])
    >>> round(r["mean"], 3), round(r["low"], 3), round(r["high"], 3)
    (0.6, 0.352, 0.848)
    """
    from .significance import t_interval

    kept = [float(v) for v in values if v is not None and v == v]
    if len(kept) < 2:
        return {"values": list(values), "mean": kept[0] if kept else float("nan"), "low": float("nan"), "high": float("nan")}
    mean, low, high = t_interval(kept, 0.05)
    return {"values": list(values), "mean": mean, "low": low, "high": high}


def size_shares(series) -> list[SizeShares]:
    """:class:`SizeShares` of every group of task runs, in the order the groups first appear."""
    out = []
    for group in dict.fromkeys(s.group for s in series if s.rows):
        runs = [s for s in series if s.group == group]
        shares = {"pooled (shown)": seed_interval([s.shown[1] for s in runs]),
                  "non-trigger rows": seed_interval([s.rows["other"]["share"] for s in runs]),
                  "trigger rows": seed_interval([s.rows["trigger"]["share"] for s in runs])}
        out.append(SizeShares(group, runs[0].kind, [s.training["seed"] for s in runs], [s.points[-1]["other_sink_mass"] for s in runs],
                              [s.points[-1]["sink_heads"] for s in runs], shares))
    return out


def given_series(model: str, revisions=None, options: Options = Options()) -> Series:
    """A checkpoint series named on the command line: a Hub id (its revisions) or comma-separated folders."""
    from ..engine import checkpoints

    chain = checkpoints.series(model, revisions or None)
    checkpoints.check_reachable(chain)
    label = checkpoints.series_name(model)
    signatures = collapse.text_signatures(options.n, options.length, "heldout", options.batch_size)
    points, shares = collapse.walk_with_shares(chain, options.seed, options.n_triples, label, signatures, options.spread_seeds)
    return Series(label, label, "checkpoints", points, shares)


def endpoints(models, options: Options = Options()) -> dict[str, Endpoint]:
    """Each model's :class:`Endpoint` (the three terms only where its sink set has more than one key)."""
    out = {}
    for name in models:
        reading = collapse.endpoint(name, 0, options.seed, n=options.n, length=options.length, n_triples=options.n_triples,
                                    batch_size=options.batch_size)
        spread = collapse.endpoint_spread(name, n=options.n, length=options.length, batch_size=options.batch_size)
        terms = None
        if reading["facts"]["sink_size"] > 1:
            terms = collapse.endpoint_terms(name, 0, options.seed, n=options.n, length=options.length, batch_size=options.batch_size)
        out[name] = Endpoint(name, reading, spread, terms)
    return out


@dataclass(frozen=True)
class CollapseResult:
    """The chapter's results file: its series, endpoints, the predictor's outcomes and Figure 5a's other points."""

    mode: str
    first_row: int
    series: list
    endpoints: dict
    predictor_v2: list = field(default_factory=list)
    figure5a_measurement: dict = field(default_factory=dict)
    paper_pythia_shares: dict = field(default_factory=dict)

    @property
    def sizes(self) -> list[SizeShares]:
        return size_shares(self.series)

    def to_json(self) -> dict:
        return {"mode": self.mode, "first_row": self.first_row, "split": "heldout",
                "series": [s.to_json() for s in self.series], "sizes": [z.to_json() for z in self.sizes],
                "endpoints": {k: e.to_json() for k, e in self.endpoints.items()},
                "predictor_v2": self.predictor_v2, "figure5a_measurement": self.figure5a_measurement,
                "paper_pythia_shares": self.paper_pythia_shares}

    @classmethod
    def from_json(cls, data: dict) -> CollapseResult:
        return cls(data["mode"], data["first_row"], [Series.from_json(s) for s in data["series"]],
                   {k: Endpoint.from_json(e) for k, e in data["endpoints"].items()}, data.get("predictor_v2", []),
                   data.get("figure5a_measurement", {}), data.get("paper_pythia_shares", {}))


def endpoint_models(endpoints: str) -> tuple[list[str], list[str]]:
    """The chapter's ``endpoints`` parameter as ``(models to measure, defaults not installed here)``: ``defaults`` means
    the offline defaults that are installed (in Colab: none, unless installed), else a comma-separated list."""
    from ..engine.registry import REGISTRY

    if endpoints == "defaults":
        installed = [name for name, entry in REGISTRY.items() if entry.installed()]
        return installed, [name for name in REGISTRY if name not in installed]
    return [m.strip() for m in endpoints.split(",") if m.strip()], []


def predictor_outcomes(series, curves: dict, spec: dict) -> list[dict]:
    """The frozen predictor's verdict (:func:`attncoda.studies.collapse.predictor_outcome`) on every checkpoint of every
    series that has a reversal rate (at least 3 heads)."""
    from .predictor import explain

    out = []
    for s in series:
        for p in s.points:
            if p["heads"] < 3:  # no head triple, so no reversal rate to predict
                continue
            r = collapse.predictor_outcome(p, p["facts"], curves, spec)
            out.append({"run": s.name, "step": p["step"], "signature sink mass": p["signature_sink_mass"], "outcome": r["outcome"],
                        "mean |dev.| (points)": r["mean_abs_deviation_points"], "why": explain(r, spec)})
    return out


def figure5a_points(series, ends: dict, measured: dict) -> dict[str, list[tuple[float, float]]]:
    """Figure 5a's groups of ``(signature sink mass, JS reversal rate)``: each kind of series, the endpoints at
    initialization and trained, and the measurement chapter's models (``measured``: name → its two means)."""
    points: dict[str, list] = {}
    for s in series:
        size = f" {s.training['layers']} × {s.training['heads']}" if s.training and s.kind in ("ladder", "control") else ""
        points.setdefault(f"{s.kind}{size}, checkpoints", []).extend((p["signature_sink_mass"], p["reversal"]["js"]) for p in s.points if p["heads"] >= 3)
    if ends:
        points["defaults at initialization"] = [(e.reading["init"]["signature_sink_mass"], e.reading["init"]["reversal"]["js"]) for e in ends.values()]
        points["defaults trained (seed 0)"] = [(e.reading["trained"]["signature_sink_mass"], e.reading["trained"]["reversal"]["js"]) for e in ends.values()]
    if measured:
        points["measurement chapter (mean of 3 seeds)"] = [(v["signature_sink_mass"], v["js"]) for v in measured.values()]
    return points
