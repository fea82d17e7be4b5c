"""What the four measurement pages (03, 03b, 03c, 03d) share: the protocol box's values and the measurement itself."""

from __future__ import annotations

from .report import glue, plural


def glue_protocol(params: dict, names: list[str]) -> tuple[dict, dict, dict]:
    """Hand the protocol box its values (the models ``names``; seeds and windows from the chapter's parameters
    ``params``, :func:`~attncoda.face.results.run_parameters`; ε, temperatures, sink sets, the frozen predictors'
    hashes) and return the frozen ``(curves, predictor v1, predictor v2)``."""
    from ..base import protocol
    from ..engine.signatures import ALTERNATIVE_SINK, SINK_SETS
    from ..studies import predictor

    curves, frozen = predictor.load_all(version=1)
    _, frozen_v2 = predictor.load_all(version=2)
    values = {
        "n_models": plural(len(names), "model"), "model_list": ", ".join(names), "n_seeds": plural(len(params["seeds"]), "seed"),
        "N": params["n"], "L": params["length"], "T": params["n_triples"], "eps": protocol.DEFAULT_EPS, "eps_sweep": ", ".join(f"{e:g}" for e in protocol.EPS_SWEEP),
        "temperatures": ", ".join(f"{t:g}" for t in protocol.TEMPERATURES), "taxonomy_ks": ", ".join(map(str, protocol.TAXONOMY_KS)),
        "prune_share": f"{100 * protocol.PRUNE_SHARE:.0f}", "small_part": f"{protocol.SMALL_PART:g}",
        "sink_first": SINK_SETS["first"], "sink_first_alt": SINK_SETS[ALTERNATIVE_SINK["first"]],
        "sink_cls_sep": SINK_SETS["cls_sep"], "sink_cls_sep_alt": SINK_SETS[ALTERNATIVE_SINK["cls_sep"]],
        "curves_sha": curves["sha256"][:12], "predictor_sha": frozen["sha256"][:12], "predictor_v2_sha": frozen_v2["sha256"][:12],
    }
    for name, value in values.items():
        glue(name, value)
    return curves, frozen, frozen_v2


def missing_sentence(missing: list[str]) -> str:
    """One sentence on the models that could not be measured here, each with its reason.

    Examples
    --------
    >>> missing_sentence([])
    'Every model asked for was measured.'
    >>> missing_sentence(["x: not installed"])
    'Not measured here, each for the reason given: x: not installed.'
    """
    if not missing:
        return "Every model asked for was measured."
    return "Not measured here, each for the reason given: " + " ".join(m if m.endswith(".") else m + "." for m in missing)


def measure_and_glue(model, seeds, n: int, length: int, n_triples: int, batch_size: int) -> tuple[dict, dict]:
    """:func:`attncoda.studies.measurement.measure_models`, with one printed line per model that cannot be had here
    and the page's ``measure_seconds`` and ``missing_sentence``; returns ``(results by label, seconds by label)``."""
    from ..studies.measurement import measure_models

    results, timings, missing = measure_models(model, seeds, n, length, n_triples, batch_size)
    for line in missing:  # the others are still measured
        print(f"not measured: {line}")
    glue("measure_seconds", sum(timings.values()))
    glue("missing_sentence", missing_sentence(missing))
    return results, timings
