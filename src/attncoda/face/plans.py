"""Each chapter's plan: the cache lookups its notebook makes for its parameters, listed before it runs.

A plan is what ``attncoda book --jobs N`` (or ``--scheduler``) computes in parallel before the chapters run
(:mod:`attncoda.face.precompute`), so the chapters then find every lookup cached. Each function takes a chapter's
parameters (its notebook's parameter cell with a run's values over it) and chooses its models as the notebook does
(:func:`attncoda.engine.selection.choose`), with the options the notebook passes.

What a plan leaves to its chapter: the pruning chapter's perplexity evaluations (their prune sets are chosen from the
signatures the plan computes), and the walk over the collapse suite's checkpoints (the windows each checkpoint is
read on follow from the walk itself).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..base.protocol import BATCH_SIZE

LOOKUP_KINDS = ("signatures", "init_signatures", "head_distances", "entropy_terms", "suite_run")


@dataclass(frozen=True)
class Lookup:
    """One cache lookup a chapter makes: ``kind`` (one of :data:`LOOKUP_KINDS`) of ``model`` on the windows of ``seed``,
    with ``options`` as sorted ``(name, value)`` pairs (a suite run's are its :class:`~attncoda.engine.training.SuiteRun` fields)."""

    kind: str
    model: str
    seed: int = 0
    options: tuple = ()

    @classmethod
    def of(cls, kind: str, model: str, seed: int, options: dict) -> Lookup:
        if kind not in LOOKUP_KINDS:
            raise ValueError(f"unknown lookup kind {kind!r}; use one of {', '.join(LOOKUP_KINDS)}")
        return cls(kind, model, int(seed), tuple(sorted(options.items())))

    def label(self) -> str:
        return f"{self.kind} {self.model} seed {self.seed}"


def measurement(params: dict) -> list[Lookup]:
    """The measurement pages: signatures of every chosen model on every seed."""
    from ..engine.selection import installed_names as names  # a plan looks up only what the run can measure

    options = {"n": params["n"], "length": params["length"], "batch_size": params["batch_size"]}
    return [Lookup.of("signatures", name, seed, options) for name in names(params["model"]) for seed in params["seeds"]]


def collapse(params: dict) -> list[Lookup]:
    """The collapse chapter: the suite's training runs (for the ``suite``), each watched by its monitor on the chapter's
    windows, and for each endpoint model the signatures
    of it and its initialized twin (:func:`~attncoda.studies.collapse_suite.endpoints`: the reading on window seed
    ``seed`` against initialization 0, and every resample of :func:`~attncoda.studies.collapse.endpoint_samples`),
    with both states' entropy terms where its default sink set has more than one key (every model whose sink set is
    not known without loading it)."""
    from dataclasses import asdict

    from ..studies import collapse as collapse_study
    from ..studies.collapse_suite import endpoint_models, suite_runs

    out = []
    if params["model"] == "suite":
        for run, _, _ in suite_runs(params["suite_seeds"], params.get("steps") or None, params.get("text_steps") or 0, params["length"]):
            watch = {"monitor_n": params["n"], "monitor_length": params["length"], "monitor_seed": params["seed"]}  # its monitor's probe
            out.append(Lookup.of("suite_run", run.name, run.seed, {**asdict(run), **watch}))
    options = {"n": params["n"], "length": params["length"], "batch_size": params["batch_size"]}
    for name in endpoint_models(params["endpoints"])[0]:
        for window_seed, init_seed in [(params["seed"], 0), *collapse_study.endpoint_samples()]:
            out.append(Lookup.of("signatures", name, window_seed, options))
            out.append(Lookup.of("init_signatures", name, window_seed, {**options, "init_seed": init_seed}))
        if _sink_keys(name) != 1:
            out.append(Lookup.of("entropy_terms", name, params["seed"], options))
            out.append(Lookup.of("entropy_terms", name, params["seed"], {**options, "init_seed": 0}))
    return list(dict.fromkeys(out))


def _sink_keys(model: str) -> int | None:
    """How many keys ``model``'s default sink set holds, when that is known without loading it (None otherwise)."""
    from ..engine.cache import identity_without_loading
    from ..engine.models import resolve

    identity = identity_without_loading(resolve(model))
    return None if identity is None else (1 if identity[1] == "first" else 2)


def clustering(params: dict) -> list[Lookup]:
    """The clustering chapter: head distances of each clustered model on every window sample (held-out ones too), and the seed-0
    signatures (``signature_n`` windows) of each Table 5 model."""
    from ..engine.selection import installed_names as names  # a plan looks up only what the run can measure
    from ..studies.clustering import holdout_seeds, sample_seeds, table5_group

    hd = {"n": params["n"], "length": params["length"], "batch_size": params["batch_size"]}
    sig = {"n": params["signature_n"], "length": params["length"], "batch_size": BATCH_SIZE}
    seeds = sample_seeds(params["seed"], params["samples"]) + holdout_seeds(params["seed"], params["samples"], params["holdout"])
    return ([Lookup.of("head_distances", name, s, hd) for name in names(params["model"]) for s in seeds]
            + [Lookup.of("signatures", name, 0, sig) for name in names(table5_group(params["model"]))])


def pruning(params: dict) -> list[Lookup]:
    """The pruning chapter: signatures (``signature_n`` windows) of every chosen model on every seed; the perplexity
    evaluations stay in the chapter."""
    from ..engine.selection import installed_names as names  # a plan looks up only what the run can measure

    options = {"n": params["signature_n"], "length": params["length"], "batch_size": BATCH_SIZE}
    return [Lookup.of("signatures", name, seed, options) for name in names(params["model"]) for seed in params["seeds"]]
