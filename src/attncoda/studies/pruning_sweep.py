"""The pruning chapter's sweep on one model, as a typed result (methods: :ref:`methods-pruning`; Tables 10 and 11).

:func:`plan` decides every prune set first (pure: signatures in, head sets out); :func:`sweep` then scores them all
on the same held-out windows, in one precision block, so bf16 weight casts are shared. A metric's prune set is not one
set but a distribution over the protocol's arbitrary choices, so the plan holds:

* each selection metric's keep-one sets, per seed (its own text sample) and per random tie-break draw
  (:func:`~.pruning.tie_ranks`; one walk order per seed and draw, cut at each sparsity). The Table 10 metrics at every
  sparsity, JS′ (Table 11) at the focus sparsity;
* ``random_sets`` random sets of the same size at every sparsity;
* a float32 check: the unpruned model and each metric's first set (seed 0, draw 0) at the focus sparsity;
* a window study: the unpruned model, those metric sets and the first :data:`CALIBRATION_RANDOM` random sets at the
  focus sparsity, scored on ``calibration_windows`` windows, whose first ``n_windows`` are the sweep's own windows
  (:func:`window_study` asks whether the shorter sample ranks the sets as the longer one does). Those first windows'
  scores are the sweep's own (:func:`extend`): only the further windows are scored again.

Every evaluation keeps its per-window negative log-likelihoods (:mod:`attncoda.engine.perplexity`), which the
readings (:mod:`.pruning_readings`) resample.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass, replace

import numpy as np

from ..base.progress import Steps
from ..base.protocol import N_WINDOWS, PRUNE_SHARE, SPARSITIES, WINDOW_LENGTH
from ..base.records import JsonRecord
from . import pruning

RANDOM_SEED = 12345
"""Random prune sets at the ``j``-th sparsity come from ``default_rng([RANDOM_SEED, j])``: a larger draw count extends the
same sequence."""
TIE_DRAWS = 8
"""Random tie-break draws per seed and metric."""
RANDOM_SETS = 40
"""Random prune sets per sparsity."""
PRUNE_WINDOWS = 7
"""Held-out windows per evaluation; :func:`window_study` checks them against :data:`CALIBRATION_WINDOWS`. The fewest at
which no reading of the record built on more windows moved (``benchmarks/prune_windows.py`` recomputes every reading
from a record's first k windows)."""
CALIBRATION_WINDOWS = 32
"""Windows of the window study (the sweep's earlier default)."""
CALIBRATION_RANDOM = 8
"""Random sets of the window study, beside the unpruned model and each metric's first set."""
STUDY_COUNTS = (2, 4, 8, 16)
"""Window counts the window study compares with all its windows."""
STABLE_SHARE = 0.1
"""The window study counts order flips among pairs of sets that differ by more than this share in perplexity."""


@dataclass(frozen=True)
class Scored(JsonRecord):
    """One prune set and its held-out score. ``kind`` is ``base`` (nothing pruned), ``metric`` or ``random``; ``draw`` is
    a metric set's tie-break draw, or a random set's number."""

    kind: str
    heads: list
    perplexity: float | None = None
    window_nll: list | None = None
    window_tokens: list | None = None
    seconds: float | None = None
    dtype: str = "bfloat16"
    metric: str | None = None
    seed: int | None = None
    sparsity: float | None = None
    draw: int | None = None

    @property
    def log_perplexity(self) -> float:
        return math.log(self.perplexity)

    def label(self) -> str:
        if self.kind == "base":
            return "unpruned"
        if self.kind == "random":
            return f"random #{self.draw}"
        return f"{pruning.SELECTION_NAMES[self.metric]} (seed {self.seed}, draw {self.draw})"


@dataclass(frozen=True)
class PruningResult:
    """Tables 10 and 11 for one model: every scored prune set, the float32 check, the window study's sets, how many heads
    tie in each metric's redundancy (per seed), and Table 8's prune-set stakes (first seed)."""

    model: str
    model_info: dict
    layers: int
    heads: int
    seeds: list
    sparsities: list
    focus: float
    heldout: dict
    scored: list  # of Scored, bf16 (or the sweep's dtype)
    checks: list  # of Scored, float32
    calibration: list  # of Scored, on the window study's windows
    ties: dict  # metric -> [tied heads per seed]
    stakes: dict
    wall_time_s: float

    @property
    def base(self) -> Scored:
        return next(s for s in self.scored if s.kind == "base")

    @property
    def metrics(self) -> list[str]:
        return [m for m in pruning.SELECTION_METRICS if any(s.metric == m for s in self.scored)]

    def metrics_at(self, sparsity: float) -> list[str]:
        """The selection metrics scored at one sparsity."""
        return [m for m in self.metrics if self.metric_sets(m, sparsity)]

    @property
    def tie_draws(self) -> int:
        return 1 + max((s.draw for s in self.scored if s.kind == "metric"), default=-1)

    def metric_sets(self, metric: str, sparsity: float, seed: int | None = None) -> list[Scored]:
        """The metric's prune sets at one sparsity (one seed's, or every seed's), in seed and draw order."""
        return [s for s in self.scored if s.kind == "metric" and s.metric == metric and s.sparsity == sparsity and (seed is None or s.seed == seed)]

    def by_seed(self, metric: str, sparsity: float) -> list[list[Scored]]:
        """The metric's prune sets at one sparsity grouped by seed: one list of tie-break draws per seed, in seed order."""
        return [self.metric_sets(metric, sparsity, seed) for seed in self.seeds]

    def randoms(self, sparsity: float) -> list[Scored]:
        return [s for s in self.scored if s.kind == "random" and s.sparsity == sparsity]

    def to_json(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        for name in ("scored", "checks", "calibration"):
            out[name] = [s.to_json() for s in getattr(self, name)]
        return out

    @classmethod
    def from_json(cls, data: dict) -> PruningResult:
        values = {k: data.get(k) for k in cls.__dataclass_fields__}
        for name in ("scored", "checks", "calibration"):
            values[name] = [Scored.from_json(s) for s in data.get(name) or []]
        return cls(**values)


def metrics_at(sparsity: float, focus: float) -> tuple[str, ...]:
    """The metrics pruned at one sparsity: the paper's Table 10 metrics everywhere, and JS′ (Table 11) at the focus."""
    return tuple(m for m in pruning.SELECTION_METRICS if m in pruning.TABLE10_METRICS or sparsity == focus)


@dataclass(frozen=True)
class Plan:
    """Every prune set the sweep scores, unscored (see the module docstring)."""

    sets: list
    checks: list
    calibration: list
    ties: dict


def plan(signatures, seeds, sparsities, focus: float, tie_draws: int = TIE_DRAWS, random_sets: int = RANDOM_SETS,
         calibration_random: int = CALIBRATION_RANDOM) -> Plan:
    """Every prune set of the sweep, decided from the signatures alone."""
    layers, heads, _ = signatures[0].shape
    sets = [Scored("base", [])]
    ties = {m: [] for m in pruning.SELECTION_METRICS}
    for seed, sig in zip(seeds, signatures):
        rows = sig.heads()
        for metric in pruning.SELECTION_METRICS:
            at = [sp for sp in sparsities if metric in metrics_at(sp, focus)]
            if not at:
                continue
            dist = pruning.selection_distances(rows, metric, sig.sink())
            ties[metric].append(pruning.tied_heads(dist, layers, heads))
            for draw in range(tie_draws):
                ranks = pruning.tie_ranks(layers * heads, seed, metric, draw)
                for sparsity in at:
                    chosen = pruning.keep_one_selection(dist, layers, heads, sparsity, ranks)
                    sets.append(Scored("metric", chosen, metric=metric, seed=int(seed), sparsity=float(sparsity), draw=draw))
    for j, sparsity in enumerate(sparsities):
        rng = np.random.default_rng([RANDOM_SEED, j])
        count = pruning.target_count(sparsity, layers * heads)
        for draw in range(random_sets):
            sets.append(Scored("random", pruning.random_selection(rng, layers, heads, count), sparsity=float(sparsity), draw=draw))
    firsts = [s for s in sets if s.kind == "base" or (s.kind == "metric" and s.seed == seeds[0] and s.sparsity == focus and s.draw == 0)]
    study = firsts + [s for s in sets if s.kind == "random" and s.sparsity == focus and s.draw < calibration_random]
    return Plan(sets, [replace(s, dtype="float32") for s in firsts], study, {m: v for m, v in ties.items() if v})


def score(loaded, ids: np.ndarray, sets: list[Scored], steps: Steps | None = None, done: int = 0) -> list[Scored]:
    """Each set scored by :func:`attncoda.engine.perplexity.perplexity` at its own dtype (one precision block per dtype)."""
    from ..engine.perplexity import perplexity, precision

    heads = loaded.info.heads
    out = list(sets)
    for dtype in dict.fromkeys(s.dtype for s in sets):
        with precision(dtype, loaded.input_device):
            for i, s in enumerate(sets):
                if s.dtype != dtype:
                    continue
                r = perplexity(loaded, ids, [(h // heads, h % heads) for h in s.heads], dtype=dtype)
                out[i] = replace(s, perplexity=r["perplexity"], window_nll=r["window_nll"], window_tokens=r["window_tokens"], seconds=r["seconds"])
                done += 1
                if steps:
                    steps.step(done)
    return out


def extend(first: Scored, rest: Scored) -> Scored:
    """One set's score on ``first``'s windows followed by ``rest``'s: the per-window lists joined and the perplexity
    formed from them as :func:`attncoda.engine.perplexity.perplexity` forms it, ``exp(Σ window_nll / Σ window_tokens)``.

    A window's negative log-likelihood does not depend on which windows share its batch (an 8-window record's scores
    equal the first 8 of its 32-window study, bit for bit, on the three causal defaults; tests/studies/test_pruning_sweep.py
    checks it on tiny models, in bf16 and float32), so this is the set's score on all the windows at once, without
    scoring the first ones twice."""
    if (first.kind, first.heads, first.dtype) != (rest.kind, rest.heads, rest.dtype):
        raise ValueError(f"cannot join the scores of two different sets: {first.label()} and {rest.label()}")
    nll, tokens = np.array(first.window_nll + rest.window_nll), np.array(first.window_tokens + rest.window_tokens)
    return replace(rest, perplexity=math.exp(float(nll.sum()) / int(tokens.sum())), window_nll=nll.tolist(), window_tokens=tokens.tolist(),
                   seconds=first.seconds + rest.seconds)


def sweep(model: str, seeds=(0, 1, 2), sparsities=SPARSITIES, tie_draws: int = TIE_DRAWS, random_sets: int = RANDOM_SETS, focus: float = PRUNE_SHARE,
          n_windows: int = PRUNE_WINDOWS, calibration_windows: int = CALIBRATION_WINDOWS, length: int = WINDOW_LENGTH,
          signature_n: int = N_WINDOWS, dtype: str = "bfloat16", ref=None) -> PruningResult:
    """Tables 10-11 for one model (see the module docstring; ``ref``: ``model`` already resolved). Every perplexity is
    cached, so a rerun or an interrupted sweep resumes."""
    from ..engine.models import load_model, resolve
    from ..engine.bf16_products import products_path
    from ..engine.perplexity import heldout_windows
    from ..engine.signatures import signature_sets

    sparsities = tuple(float(s) for s in sparsities)
    if focus not in sparsities:
        raise ValueError(f"the focus sparsity {focus} must be one of the sparsities {sparsities}")
    if calibration_windows < n_windows:
        raise ValueError(f"the window study needs at least the sweep's windows: calibration_windows {calibration_windows} < n_windows {n_windows}")
    if tie_draws < 1 or random_sets < 1:
        raise ValueError(f"need at least one tie-break draw and one random set, got tie_draws={tie_draws}, random_sets={random_sets}")
    started = time.perf_counter()
    loaded = load_model(model, ref or resolve(model))  # needed for perplexity anyway: signatures reuse it instead of loading again
    sigs = signature_sets(model, tuple(seeds), n=signature_n, length=length, loaded=loaded)
    layers, heads, _ = sigs[0].shape
    long_ids = heldout_windows(loaded.processor, calibration_windows, length)
    ids = long_ids[:n_windows]  # the same windows as heldout_windows(n_windows): windows are consecutive chunks of one shuffled stream
    todo = plan(sigs, seeds, sparsities, focus, tie_draws, random_sets)
    sets = [replace(s, dtype=dtype) for s in todo.sets]
    steps = Steps(f"{model}: perplexity evaluations (cached ones are instant)", len(sets) + len(todo.checks) + len(todo.calibration))
    scored = score(loaded, ids, sets, steps)
    checked = score(loaded, ids, todo.checks, steps, len(sets))
    first_scores = {(s.kind, tuple(s.heads)): s for s in scored}
    study = [first_scores[s.kind, tuple(s.heads)] for s in todo.calibration]
    if calibration_windows > n_windows:
        further = score(loaded, long_ids[n_windows:], [replace(s, dtype=dtype) for s in todo.calibration], steps, len(sets) + len(todo.checks))
        study = [extend(first, rest) for first, rest in zip(study, further)]
    first = sigs[0]
    stakes = pruning.prune_set_stakes(first.heads(), layers, heads, first.sink(), first.sink(first.alternative_sink))
    return PruningResult(model, json.loads(json.dumps(loaded.info.as_dict())), layers, heads, [int(s) for s in seeds], list(sparsities), float(focus),
                         {"windows": n_windows, "calibration_windows": calibration_windows, "length": length,
                          "tokens": scored[0].window_tokens and int(sum(scored[0].window_tokens)),
                          "kind": "pseudo" if not loaded.info.causal else "causal", "dtype": dtype,
                          "bf16_products": products_path(loaded.input_device)},
                         scored, checked, study, todo.ties, {**stakes, "alternative_sink": first.alternative_sink}, time.perf_counter() - started)
