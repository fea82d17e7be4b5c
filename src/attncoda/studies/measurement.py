"""One model's numbers for the measurement chapter (methods: :ref:`methods-verdicts` to :ref:`methods-predictor`; Table 2, Figures 3, 4, 7, Tables 5-8).

:func:`measure` gets the model's signatures from the engine (cached, or computed once)
and hands them to the study modules: :mod:`.reversal`, :mod:`.profiles`,
:mod:`.taxonomy`, :mod:`.content_geometry` and :mod:`.redundancy`. The main numbers use the
log-softmax signatures (no ε); the probability path (the paper's protocol, with
its ε sweep) is measured beside them.
"""

from __future__ import annotations

import numpy as np

from ..base.protocol import BATCH_SIZE, DEFAULT_EPS, N_TRIPLES, N_WINDOWS, SEEDS, WINDOW_LENGTH
from ..math.verdicts import sample_triples
from .content_geometry import rival_geometry, small_part_share
from .profiles import collapse_disagreement, layer_profile
from .redundancy import sink_set_stakes, temperature_stakes
from ..math.verdicts import reversal_from_verdicts
from .reversal import (CLASSICAL, REVERSAL_METRICS, SWEEP_METRICS, eps_sweep, find_witness_triple, lemma1_residual, signature_sink_mass,
                       verdict_table)
from .measurement_results import (ContentAudit, EpsSweep, Measurement, MeanSd, PathReading, PathSummary, SeedMeasure, SinkSetStakes,
                                  Summary, TemperatureStakes, Witness)
from .taxonomy import taxonomy_stability

PROTOCOL_FIELDS = ("corpus", "corpus_attribution", "n", "length", "batch_size", "eps_values", "default_sink", "sink_sets", "layout", "causal", "log_path")


def measure_signatures(sig, seed: int, n_triples: int = N_TRIPLES, details: bool = True) -> SeedMeasure:
    """Every number of one seed's signatures; ``details`` adds the seed-0 tables (5-8) and the witness triple.

    Parameters
    ----------
    sig : Signatures
        One seed's signatures of one model (from a model, or from patterns you hold:
        :func:`attncoda.engine.patterns.signatures_from_patterns`).
    seed : int
        Seed of the head triples (and the label of the entry).
    n_triples : int
        Head triples per reversal rate.
    details : bool
        Add Tables 5-8 (taxonomy, audits, temperature, sink set) and the witness triple.

    Returns
    -------
    SeedMeasure
        Sink masses, the keep-vs-drop reversal rate of each metric (log-softmax and probability paths), the ε sweep,
        Lemma 1's largest residual, the layer profile and, with ``details``, the tables.
    """
    layers, heads, _ = sig.shape
    sink, eps = sig.sink(), DEFAULT_EPS
    rows = sig.heads()
    triples = sample_triples(len(rows), n_triples, seed)
    verdicts = verdict_table(rows, REVERSAL_METRICS, triples, sink, eps)
    sweep_tables = {e: verdict_table(sig.heads("aitchison", e), SWEEP_METRICS, triples, sink, e) for e in sig.meta.eps_values}
    probability_rows = sig.heads("aitchison", eps)
    profile = layer_profile(sig)
    base = dict(
        seed=seed, signature_kind=sig.default_kind, row_sink_mass=sig.row_mean("sink_mass"), signature_sink_mass=signature_sink_mass(rows, sink),
        reversal=reversals(verdicts),
        probability_path=PathReading(signature_sink_mass(probability_rows, sink), float(np.max(np.abs(np.log(rows) - np.log(probability_rows)))),
                                     reversals(verdict_table(probability_rows, REVERSAL_METRICS, triples, sink, eps))),
        eps_sweep=EpsSweep(**eps_sweep(sweep_tables, sig.zeros, eps)),
        lemma1_max_relative_residual=lemma1_residual(rows, sink, eps, seed=seed),
        collapse_disagreement=collapse_disagreement(profile["entropy"], profile["content_entropy"]),
        layers=profile,
    )
    if not details:
        return SeedMeasure(**base)
    witness = find_witness_triple(rows, triples, verdicts, sink, eps)
    if witness is not None:
        witness = Witness(**witness, heads=[{"layer": int(i // heads), "head": int(i % heads)} for i in witness["triple"]],
                          rows=rows[witness["triple"]].tolist())
    return SeedMeasure(
        **base, details=True,
        arithmetic_reversal=reversals(verdict_table(sig.heads("arithmetic"), CLASSICAL, triples, sink, eps)),
        audit=ContentAudit(small_part_share(rows, sink, eps, seed=seed), small_part_share(probability_rows, sink, eps, seed=seed),
                           **rival_geometry(rows, sink, eps)),
        taxonomy_ari=taxonomy_stability(rows, sink, eps),
        temperature={m: TemperatureStakes(**t) for m, t in temperature_stakes(rows, layers, heads, triples, sink).items()},
        sink_set=SinkSetStakes(sig.meta.default_sink, sig.alternative_sink, **sink_set_stakes(rows, triples, sink, sig.sink(sig.alternative_sink), eps)),
        witness=witness,
    )


def reversals(verdicts: dict) -> dict:
    """Each metric's :class:`~attncoda.math.verdicts.Reversal` from a :func:`~attncoda.studies.reversal.verdict_table`."""
    return {name: reversal_from_verdicts(name, v["keep"], v["drop"]) for name, v in verdicts.items()}


def summarize(per_seed: list[SeedMeasure]) -> Summary:
    """Mean ± sd over seeds of the headline numbers."""
    return Summary(
        row_sink_mass=MeanSd.of([e.row_sink_mass for e in per_seed]),
        signature_sink_mass=MeanSd.of([e.signature_sink_mass for e in per_seed]),
        reversal={m: MeanSd.of([e.reversal[m].rate for e in per_seed]) for m in REVERSAL_METRICS},
        probability_path=PathSummary(MeanSd.of([e.probability_path.signature_sink_mass for e in per_seed]),
                                     {m: MeanSd.of([e.probability_path.reversal[m].rate for e in per_seed]) for m in REVERSAL_METRICS}),
        path_max_log_difference=max(e.probability_path.max_log_difference for e in per_seed),
        collapse_disagreement=MeanSd.of([e.collapse_disagreement for e in per_seed]),
        eps_bit_identical=all(e.eps_sweep.all_identical for e in per_seed),
        eps_exact_zeros=int(sum(e.eps_sweep.exact_zeros for e in per_seed)),
        lemma1_max_relative_residual=max(e.lemma1_max_relative_residual for e in per_seed),
    )


def measure(model: str, seeds=SEEDS, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, n_triples: int = N_TRIPLES,
            batch_size: int = BATCH_SIZE, progress: bool = False, ref=None) -> Measurement:
    """Every per-model number of the chapter (signatures from the cache, computed when missing).

    The result is cached too (``$ATTNCODA_CACHE/measurements``), keyed by its signatures' cache keys, ``n_triples``
    and the source of every package module this one can run (:func:`~attncoda.base.provenance.reachable_modules`), so
    the chapter's section pages share one computation. It is read back through
    its JSON, so it is the same whether computed or read.
    """
    import json

    from ..base.provenance import modules_sha256, reachable_modules
    from ..engine.cache import KeyedJson
    from ..engine.signatures import cache_path, signature_sets

    sigs = signature_sets(model, tuple(seeds), n=n, length=length, batch_size=batch_size, progress=progress, ref=ref)
    key = {"model": model, "signatures": [cache_path(s.meta).stem for s in sigs], "n_triples": int(n_triples),
           "source": modules_sha256(reachable_modules([__name__]))}
    entries = KeyedJson("measurements")
    path = entries.path(key)
    cached = entries.read(path)  # None when missing, damaged or another key's entry (named on stderr)
    if cached is not None:
        try:
            return Measurement.from_json(cached)
        except (ValueError, KeyError, TypeError):  # a damaged result: measure again
            pass
    per_seed = [measure_signatures(sig, seed, n_triples, details=(i == 0)) for i, (seed, sig) in enumerate(zip(seeds, sigs))]
    first = sigs[0]
    layers, heads, _ = first.shape
    result = Measurement(model, first.meta.model_info, {k: first.meta.to_json()[k] for k in PROTOCOL_FIELDS}, first.meta.weights_sha256, layers, heads,
                         list(first.sink()), list(seeds), n_triples, summarize(per_seed), per_seed)
    data = json.loads(json.dumps(result.to_json()))
    entries.write(data, path)
    return Measurement.from_json(data)


def measure_models(model, seeds=SEEDS, n: int = N_WINDOWS, length: int = WINDOW_LENGTH, n_triples: int = N_TRIPLES,
                   batch_size: int = BATCH_SIZE) -> tuple[dict[str, Measurement], dict, list[str]]:
    """:func:`measure` for every model ``model`` names (:func:`attncoda.engine.selection.choose`: a group word, a preset or one
    model; or the chosen models themselves, each resolved once): ``(results by label, seconds by label, missing)``.

    A model that cannot be had here (ModelError) is one line in ``missing`` and the others are still measured; each
    result carries its ``wall_time_s`` and the ``result_name`` its results file is written under.
    """
    import time
    from dataclasses import replace

    from ..base.errors import ModelError
    from ..engine.selection import choose

    results, timings, missing = {}, {}, []
    for choice in (choose(model) if isinstance(model, str) else model):
        label, t0 = choice.label, time.time()
        try:
            r = measure(choice.name, seeds=tuple(seeds), n=n, length=length, n_triples=n_triples, batch_size=batch_size, ref=choice.ref)
        except ModelError as err:
            missing.append(f"{label}: {err}")
            continue
        timings[label] = time.time() - t0
        results[label] = replace(r, wall_time_s=timings[label], result_name=choice.result_name)
    if not results:
        raise ModelError("no model could be measured: " + " | ".join(missing))
    return results, timings, missing
