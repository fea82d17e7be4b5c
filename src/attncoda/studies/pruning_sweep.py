"""The pruning chapter's sweep on one model, as a typed result (methods: :ref:`methods-pruning`; Tables 10 and 11).

:func:`plan` decides every prune set first (pure: signatures in, head sets out); :func:`sweep` then scores them all
on the same held-out windows, in one precision block, so bf16 weight casts are shared:

* each selection metric's keep-one set per seed and sparsity, under the protocol's tie-break (``first``), and on the
  first seed also under the other one (``last``): the tie-break spread;
* random sets of the same size: ``random_draws`` per sparsity, ``focus_draws`` at the focus sparsity (20 %, the
  paper's Table 11);
* a float32 check: the unpruned model and the first seed's metric sets at the focus sparsity, scored again in float32.

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


@dataclass(frozen=True)
class Scored(JsonRecord):
    """One prune set and its held-out score. ``kind`` is ``base`` (nothing pruned), ``metric`` or ``random``."""

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
    tie_break: str | None = None
    draw: int | None = None

    @property
    def log_perplexity(self) -> float:
        return math.log(self.perplexity)

    def label(self) -> str:
        if self.kind == "base":
            return f"base ({self.dtype})"
        what = pruning.SELECTION_NAMES.get(self.metric, "random") if self.kind == "metric" else f"random #{self.draw}"
        extra = f" seed {self.seed}, tie-break {self.tie_break}" if self.kind == "metric" else ""
        return f"{what} {100 * self.sparsity:.0f} %{extra} ({self.dtype})"


@dataclass(frozen=True)
class PruningResult:
    """Tables 10 and 11 for one model: every scored prune set, the float32 check, how many heads tie in each metric's
    redundancy, and Table 8's prune-set stakes (first seed)."""

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
    ties: dict  # metric -> [tied heads per seed]
    stakes: dict
    wall_time_s: float

    @property
    def base(self) -> Scored:
        return next(s for s in self.scored if s.kind == "base")

    @property
    def metrics(self) -> list[str]:
        return [m for m in pruning.SELECTION_METRICS if any(s.metric == m for s in self.scored)]

    def metric_sets(self, metric: str, sparsity: float, tie_break: str = "first") -> list[Scored]:
        """The metric's prune sets at one sparsity and tie-break, one per seed that has it, in seed order."""
        return [s for s in self.scored if s.kind == "metric" and s.metric == metric and s.sparsity == sparsity and s.tie_break == tie_break]

    def randoms(self, sparsity: float) -> list[Scored]:
        return [s for s in self.scored if s.kind == "random" and s.sparsity == sparsity]

    def to_json(self) -> dict:
        out = {k: getattr(self, k) for k in self.__dataclass_fields__}
        out["scored"] = [s.to_json() for s in self.scored]
        out["checks"] = [s.to_json() for s in self.checks]
        return out

    @classmethod
    def from_json(cls, data: dict) -> PruningResult:
        values = {k: data.get(k) for k in cls.__dataclass_fields__}
        values["scored"] = [Scored.from_json(s) for s in data["scored"]]
        values["checks"] = [Scored.from_json(s) for s in data["checks"]]
        return cls(**values)


def draw_counts(sparsities, focus: float, random_draws: int, focus_draws: int) -> dict[float, int]:
    """Random draws per sparsity: ``focus_draws`` at the focus sparsity, ``random_draws`` elsewhere."""
    return {s: focus_draws if s == focus else random_draws for s in sparsities}


def plan(signatures, seeds, sparsities, draws: dict[float, int], focus: float, metrics=tuple(pruning.SELECTION_METRICS)) -> tuple[list[Scored], list[Scored], dict]:
    """Every prune set the sweep scores, unscored: ``(sets, float32 checks, ties)`` (see the module docstring)."""
    layers, heads, _ = signatures[0].shape
    sets = [Scored("base", [])]
    ties = {m: [] for m in metrics}
    for index, (seed, sig) in enumerate(zip(seeds, signatures)):
        rows = sig.heads()
        for metric in metrics:
            dist = pruning.selection_distances(rows, metric, sig.sink())
            ties[metric].append(pruning.tied_heads(dist, layers, heads))
            for sparsity in sparsities:
                for tie_break in pruning.TIE_BREAKS if index == 0 else ("first",):
                    chosen = pruning.keep_one_selection(dist, layers, heads, sparsity, tie_break)
                    sets.append(Scored("metric", chosen, metric=metric, seed=int(seed), sparsity=float(sparsity), tie_break=tie_break))
    for j, sparsity in enumerate(sparsities):
        rng = np.random.default_rng([RANDOM_SEED, j])
        count = pruning.target_count(sparsity, layers * heads)
        for draw in range(draws[sparsity]):
            sets.append(Scored("random", pruning.random_selection(rng, layers, heads, count), sparsity=float(sparsity), draw=draw))
    checked = [s for s in sets if s.kind == "base" or (s.kind == "metric" and s.seed == seeds[0] and s.sparsity == focus and s.tie_break == "first")]
    return sets, [replace(s, dtype="float32") for s in checked], ties


def score(loaded, ids: np.ndarray, sets: list[Scored], steps: Steps | None = None, done: int = 0) -> list[Scored]:
    """Each set scored by :func:`attncoda.engine.perplexity.perplexity` at its own dtype (one precision block per dtype)."""
    from ..engine.perplexity import perplexity, precision

    heads = loaded.info.heads
    out = list(sets)
    for dtype in dict.fromkeys(s.dtype for s in sets):
        with precision(dtype):
            for i, s in enumerate(sets):
                if s.dtype != dtype:
                    continue
                r = perplexity(loaded, ids, [(h // heads, h % heads) for h in s.heads], dtype=dtype)
                out[i] = replace(s, perplexity=r["perplexity"], window_nll=r["window_nll"], window_tokens=r["window_tokens"], seconds=r["seconds"])
                done += 1
                if steps:
                    steps.step(done)
    return out


def sweep(model: str, seeds=(0, 1, 2), sparsities=SPARSITIES, random_draws: int = 10, focus_draws: int = 20, focus: float = PRUNE_SHARE,
          n_windows: int = 32, length: int = WINDOW_LENGTH, signature_n: int = N_WINDOWS, dtype: str = "bfloat16") -> PruningResult:
    """Tables 10-11 for one model (see the module docstring). Every perplexity is cached, so a rerun or an interrupted
    sweep resumes."""
    from ..engine.models import load_model, resolve
    from ..engine.perplexity import heldout_windows
    from ..engine.signatures import signature_sets

    sparsities = tuple(float(s) for s in sparsities)
    if focus not in sparsities:
        raise ValueError(f"the focus sparsity {focus} must be one of the sparsities {sparsities}")
    started = time.perf_counter()
    loaded = load_model(model, resolve(model))  # needed for perplexity anyway: signatures reuse it instead of loading again
    sigs = signature_sets(model, tuple(seeds), n=signature_n, length=length, loaded=loaded)
    layers, heads, _ = sigs[0].shape
    ids = heldout_windows(loaded.processor, n_windows, length)
    sets, checks, ties = plan(sigs, seeds, sparsities, draw_counts(sparsities, focus, random_draws, focus_draws), focus)
    sets = [replace(s, dtype=dtype) for s in sets]
    steps = Steps(f"{model}: perplexity evaluations (cached ones are instant)", len(sets) + len(checks))
    scored = score(loaded, ids, sets, steps)
    checked = score(loaded, ids, checks, steps, len(sets))
    first = sigs[0]
    stakes = pruning.prune_set_stakes(first.heads(), layers, heads, first.sink(), first.sink(first.alternative_sink))
    return PruningResult(model, json.loads(json.dumps(loaded.info.as_dict())), layers, heads, [int(s) for s in seeds], list(sparsities), float(focus),
                         {"windows": n_windows, "length": length, "tokens": scored[0].window_tokens and int(sum(scored[0].window_tokens)),
                          "kind": "pseudo" if not loaded.info.causal else "causal", "dtype": dtype},
                         scored, checked, ties, {**stakes, "alternative_sink": first.alternative_sink}, time.perf_counter() - started)
