"""The staged audit: look at a quarter of the windows first, and read the whole sample only when that look cannot
decide (methods: :ref:`methods-audit-stages`).

* **Looks.** The default sample (every seed, :data:`~attncoda.base.protocol.N_WINDOWS` windows of
  :data:`~attncoda.base.protocol.WINDOW_LENGTH` tokens) is read in :data:`STAGES`: first ``N/4`` windows per seed,
  then all ``N``. Each look's interval has confidence ``1 − (1 − 0.95)/2`` (the 5 % split evenly over the two
  planned looks, Bonferroni's bound), so the audit's chance of advising the wrong side stays at or below 5 % however
  the two looks depend on each other. Another sample (``--n``, ``--length``, one seed) is read whole, at 95 %.
* **Margin.** A rate measured on fewer windows is a rate of noisier signatures; the early look takes a side only when
  its interval clears the threshold by more than :func:`stage_margin`, the largest difference between the two
  samples' rates measured on the default models (``python -m attncoda.studies.audit_stages bias`` measures it and
  writes :data:`BIAS_FILE`).
* **Simulation.** ``python -m attncoda.studies.audit_stages simulate`` runs the rule on synthetic models of the
  calibration generator (:func:`attncoda.math.synthetic.calibration_heads`), whose true rates are known from many
  draws, and writes how often it advised the wrong side to :data:`SIMULATION_FILE`.
"""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import numpy as np

from ..base.protocol import N_TRIPLES, N_WINDOWS, WINDOW_LENGTH

CONFIDENCE = 0.95
"""The audit's overall confidence: its chance of advising the wrong side is at most ``1 − CONFIDENCE``."""
STAGES = (N_WINDOWS // 4, N_WINDOWS)
"""Windows per seed at each look of the default sample."""


def look_level(looks: int) -> float:
    """Each look's confidence when ``1 − CONFIDENCE`` is split evenly over ``looks`` planned looks.

    >>> look_level(1), look_level(2)
    (0.95, 0.975)
    """
    return 1 - (1 - CONFIDENCE) / looks


def data_file(name: str) -> Path:
    """``data/audit/<name>`` (:func:`~attncoda.base.paths.frozen_dir`)."""
    from ..base.paths import frozen_dir

    return frozen_dir() / "audit" / name


BIAS_FILE = "stage_bias.json"
SIMULATION_FILE = "stopping_simulation.json"


def stage_margin(windows: int) -> float:
    """How far an early look's interval must clear the threshold: the largest absolute difference, over the default
    models measured in :data:`BIAS_FILE`, between the mean rate over seeds on ``windows`` windows and on the whole
    sample; 0 for the whole sample itself.

    Raises ValueError in one line when the measurement is missing (an early look without its margin decides nothing)."""
    if windows == STAGES[-1]:
        return 0.0
    from ..base.files import read_regular

    path = data_file(BIAS_FILE)
    try:
        data = json.loads(read_regular(path, "the margin's record", "restore it with git checkout", cap=1 << 20))
        margin = data["margin"][str(windows)]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):
        raise ValueError(f"{path} holds no margin for {windows} windows; run python -m attncoda.studies.audit_stages bias, "
                         "or pass --full") from None
    if isinstance(margin, bool) or not isinstance(margin, (int, float)) or not math.isfinite(margin) or margin < 0:
        raise ValueError(f"{path} gives the margin for {windows} windows as {margin!r}, not a non-negative number (a difference of rates); "
                         "run python -m attncoda.studies.audit_stages bias again, or pass --full")
    return float(margin)


def plan(n: int, length: int, seeds, full: bool) -> list[int]:
    """Windows per seed at each look: :data:`STAGES` for the default sample with two or more seeds, else ``[n]``.

    >>> plan(64, 128, [0, 1, 2], False), plan(64, 128, [0, 1, 2], True), plan(32, 128, [0, 1, 2], False), plan(64, 128, [0], False)
    ([16, 64], [64], [32], [64])
    """
    if full or (n, length) != (N_WINDOWS, WINDOW_LENGTH) or len(seeds) < 2:
        return [n]
    return list(STAGES)


def staged(inputs, stages: list[int], audit_args: dict, bound: float | None = None):
    """Run :func:`attncoda.studies.audit.audit` at each look in turn and stop at the first whose advice takes a side
    (``matters`` or ``small``), or at the last. ``inputs(windows)`` gives ``(signatures, maps)`` of every seed on
    that many windows. The report says each look's interval and why it stopped.

    With ``bound`` (``--fail-above``), an early look stops only when its interval also clears ``bound`` by the early
    look's margin (:func:`early_gate`); otherwise the audit reads on, and the whole sample's 95 % interval judges the
    bound, as ``--full`` does (:func:`final_gate`). ``ci`` says which look decided the gate and at which level."""
    from .audit import audit

    level = look_level(len(stages))
    looks = []
    for k, windows in enumerate(stages):
        last = k == len(stages) - 1
        sigs, maps = inputs(windows)
        margin = stage_margin(windows) if len(stages) > 1 else 0.0
        report = audit(sigs, maps=maps, level=level, margin=margin, **audit_args)
        looks.append({"windows": windows, "level": level, "margin": margin, "rate": report.reversal.rate,
                      "interval": list(report.reversal.interval), "advice": report.advice})
        gate = None if bound is None or last else early_gate(report.reversal, bound, margin, k + 1, len(stages))
        if bound is not None and gate is not None:
            looks[-1]["gate"] = "failed" if gate["failed"] else "passed"
        sided = report.advice in ("matters", "small", "undefined")
        if (sided and (bound is None or gate is not None or report.advice == "undefined")) or last:  # too few triples: undecided, read on
            if not last:
                report = replace(report, reversal=replace(report.reversal, estimate=early_estimate(windows, stages[-1])))
            if bound is not None:
                gate = gate or final_gate(report.reversal, bound, k + 1, len(stages), report.too_few)
            return replace(report, stages=looks, stopped=stop_reason(looks, len(stages)), ci=gate)
    raise AssertionError("unreachable: the last look always returns")


def early_estimate(windows: int, whole: int) -> str:
    """The label of a rate an early look stopped at: an estimate from fewer windows than the sample.

    >>> early_estimate(16, 64)
    "the early look's estimate on 16 of 64 windows per seed"
    """
    return f"the early look's estimate on {windows} of {whole} windows per seed"


def early_gate(reading, bound: float, margin: float, look: int, looks: int) -> dict | None:
    """``--fail-above``'s verdict at an early look, or None when it cannot decide: it fails when the interval's lower end
    exceeds ``bound`` by more than ``margin``, passes when its upper end lies below ``bound`` by more than ``margin``.

    >>> from attncoda.studies.audit import ReversalReading as R
    >>> early_gate(R(0.02, (0.0, 0.049), "", [], 1, 0.975), 0.005, 0.015, 1, 2) is None
    True
    >>> early_gate(R(0.02, (0.0, 0.049), "", [], 1, 0.975), 0.1, 0.015, 1, 2)["failed"]
    False
    """
    low, high = reading.interval
    if not (math.isfinite(low) and math.isfinite(high)):
        return None
    if low - margin > bound:
        failed, side = True, f"its lower end {low:.4f} exceeds {bound} by more than"
    elif high + margin < bound:
        failed, side = False, f"its upper end {high:.4f} lies below {bound} by more than"
    else:
        return None
    return {"fail_above": bound, "failed": failed, "look": look, "looks": looks, "level": reading.level, "margin": margin,
            "rule": f"the {100 * reading.level:g} % interval {low:.4f}-{high:.4f}: {side} the early look's margin {margin:.4f}",
            "decided": f"decided at look {look} of {looks}, at {100 * reading.level:g} %, with the early look's margin"}


def final_gate(reading, bound: float, look: int, looks: int, too_few: str | None = None) -> dict:
    """``--fail-above``'s verdict on the whole sample: its 95 % interval, as ``--full`` reads it (a staged audit's last
    look recomputes it from the per-seed rates; its own interval is at the split level). A sample that cannot decide
    (``too_few``, the audit's reason) fails, as an undefined rate does."""
    from .audit import fail_above_rule, t_interval

    if too_few:
        return {"fail_above": bound, "failed": True, "look": look, "looks": looks, "level": CONFIDENCE, "margin": 0.0,
                "rule": f"{too_few}, so the rate cannot be shown to stay at or below {bound}"}
    interval = reading.interval
    if reading.level != CONFIDENCE and len(reading.per_seed) > 1 and all(map(math.isfinite, reading.per_seed)):
        interval = t_interval(reading.per_seed, CONFIDENCE)
    where = "the whole sample" if looks == 1 else f"look {look} of {looks}" + (", the whole sample" if look == looks else "")
    return fail_above_rule(interval, bound) | {"look": look, "looks": looks, "level": CONFIDENCE, "margin": 0.0,
                                               "decided": f"decided at {where}, at {100 * CONFIDENCE:g} % as --full"}


def stop_reason(looks: list[dict], planned: int) -> str:
    """One line: how many of the ``planned`` looks the audit took and why it stopped there."""
    look = looks[-1]
    lo, hi = look["interval"]
    sample, level = f"{look['windows']} windows per seed", f"{100 * look['level']:g} %"
    if planned == 1:
        return f"one look at the whole sample ({sample}), at {level}"
    if len(looks) < planned:
        return (f"stopped at look {len(looks)} of {planned} ({sample}): its {level} interval {100 * lo:.1f}-{100 * hi:.1f} % clears the "
                f"threshold by more than the early look's margin of {100 * look['margin']:.1f} points; --full reads the whole sample")
    first = looks[0]
    why = ("took a side on the advice, but its interval did not clear --fail-above's bound by the margin" if first["advice"] in ("matters", "small")
           else "could not decide")
    return (f"read the whole sample at look {planned} ({sample}, {level}): look 1 ({first['windows']} windows per seed, interval "
            f"{100 * first['interval'][0]:.1f}-{100 * first['interval'][1]:.1f} %, margin {100 * first['margin']:.1f} points) {why}")


# --------------------------------------------------------------------------- the margin, measured


def measure_bias(models, seeds=(0, 1, 2), metric: str = "js", n_triples: int = N_TRIPLES) -> dict:
    """For each model: the mean rate over ``seeds`` on each look's windows, and the difference from the whole
    sample's; the margin of each early look is the largest absolute difference over the models."""
    from ..engine.signatures import signature_sets
    from .audit import audit

    out = {"models": {}, "seeds": list(seeds), "metric": metric, "stages": list(STAGES)}
    for model in models:
        rates = {w: audit(signature_sets(model, tuple(seeds), n=w, length=WINDOW_LENGTH), metric, n_triples=n_triples).reversal.rate
                 for w in STAGES}
        out["models"][model] = {str(w): rates[w] for w in STAGES} | {"difference " + str(w): rates[w] - rates[STAGES[-1]] for w in STAGES[:-1]}
    out["margin"] = {str(w): max(abs(m["difference " + str(w)]) for m in out["models"].values()) for w in STAGES[:-1]}
    return out


# --------------------------------------------------------------------------- the error rate, simulated


SIMULATED_HEADS, SIMULATED_TRIPLES = 48, 2_000
"""Heads of each synthetic model and triples per simulated seed: fewer than a model's audit, so each seed is noisier
and the rule is tried where wrong advice is likelier."""


def synthetic_rates(sink_mass: float, alpha: float, draws: int, rng, n_heads: int = SIMULATED_HEADS,
                    n_triples: int = SIMULATED_TRIPLES) -> np.ndarray:
    """The JS keep-vs-drop reversal rate of ``draws`` synthetic models, one seed of an audit each: fresh heads of the
    calibration generator at ``sink_mass`` and content concentration ``alpha`` (rows of the calibration grid's 1 + 127
    parts), and fresh triples (:data:`SIMULATED_HEADS`, :data:`SIMULATED_TRIPLES`)."""
    from ..math.metrics import get_metric
    from ..math.synthetic import calibration_heads
    from ..math.verdicts import convention_verdicts, reversal_from_verdicts, sample_triples

    m = get_metric("js")
    rates = np.empty(draws)
    for i in range(draws):
        heads = calibration_heads(rng, n_heads, 127, alpha, sink_mass)
        triples = sample_triples(n_heads, n_triples, rng)
        v = convention_verdicts(m, heads, triples, (0,), 1e-6, method="gram")
        rates[i] = reversal_from_verdicts(m.name, v["keep"], v["drop"]).rate
    return rates


def decide(rates, threshold: float, level: float, margin: float = 0.0) -> str:
    """The audit's advice from per-seed rates: its t interval at ``level`` against ``threshold`` (with ``margin``).

    >>> decide([0.20, 0.21, 0.22], 0.075, 0.975), decide([0.01, 0.02, 0.015], 0.075, 0.975), decide([0.05, 0.1, 0.07], 0.075, 0.975)
    ('matters', 'small', 'undecided')
    """
    from .audit import ReversalReading, advice_rule, t_95

    rates = np.asarray(rates, float)
    mean = float(rates.mean())
    half = t_95(len(rates) - 1, level) * float(rates.std(ddof=1)) / math.sqrt(len(rates))
    return advice_rule(ReversalReading(mean, (mean - half, mean + half), "", list(rates), 1), threshold, margin)


def simulate(configs, audits: int = 500, seeds: int = 3, threshold: float = 0.075, truth_draws: int = 2_000, rng_seed: int = 0) -> dict:
    """How often the two-look rule advises the wrong side, per synthetic model ``(sink_mass, alpha)``. Its true rate is
    the mean over ``truth_draws`` draws. Each simulated audit draws ``seeds`` fresh rates per look and stops at the
    first look that takes a side. The looks are independent here, a case Bonferroni's bound must also cover. The early
    look's margin is 0, since a synthetic seed has no windows to be fewer of; that only makes the early look bolder.
    Each configuration's error rate comes with its one-sided 95 % Wilson upper bound."""
    from .audit import wilson

    rng = np.random.default_rng(rng_seed)
    level = look_level(len(STAGES))
    out = []
    for sink_mass, alpha in configs:
        truth = float(synthetic_rates(sink_mass, alpha, truth_draws, rng).mean())
        wrong_side = "small" if truth > threshold else "matters"
        outcomes = []
        for _ in range(audits):
            for k in range(len(STAGES)):
                advice = decide(synthetic_rates(sink_mass, alpha, seeds, rng), threshold, level)
                if advice in ("matters", "small") or k == len(STAGES) - 1:
                    outcomes.append((k + 1, advice))
                    break
        wrong = sum(a == wrong_side for _, a in outcomes)
        out.append({"sink_mass": sink_mass, "alpha": alpha, "true_rate": truth, "wrong_side": wrong_side, "audits": audits, "wrong": wrong,
                    "error_rate": wrong / audits, "error_upper_95": wilson(wrong, audits, 1.645)[1],
                    "stopped_at_look_1": sum(k == 1 for k, _ in outcomes) / audits, "undecided": sum(a == "undecided" for _, a in outcomes) / audits})
    return {"level": CONFIDENCE, "looks": len(STAGES), "look_level": level, "threshold": threshold, "seeds": seeds, "configs": out,
            "largest_error_rate": max(c["error_rate"] for c in out)}


GATE_SIMULATED = ((0.02, 0.1), (0.02, 1.0), (0.1, 0.1), (0.3, 0.1))
"""Synthetic models for the gate: rates where the early look often takes a side (about 3 and 6 %) and where it
sometimes does (about 9 %), and one far above the threshold."""
GATE_OFFSETS = (-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0)
"""How far each simulated bound lies from the model's rate, in points: where the two gates are likeliest to differ."""
GATE_FILE = "gate_simulation.json"


def __getattr__(name: str):
    """``GATE_DISAGREEMENT`` and ``GATE_DISAGREEMENT_UPPER``: the committed simulation's largest disagreement between the
    staged and ``--full`` gates, and the largest one-sided 95 % upper bound (the methods page names them)."""
    fields = {"GATE_DISAGREEMENT": "largest_disagreement", "GATE_DISAGREEMENT_UPPER": "largest_disagreement_upper_95"}
    if name not in fields:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return round(json.loads(data_file(GATE_FILE).read_text())[fields[name]], 4)


def gate_verdicts(early, whole, bound: float, threshold: float = 0.075, margin: float = 0.0) -> tuple[bool, bool, bool]:
    """``--fail-above``'s verdict (True: failed) on one simulated audit, staged and ``--full``, from per-seed rates of the
    early look (``early``) and of the whole sample (``whole``); and whether the early look decided it.

    >>> gate_verdicts([0.20, 0.21, 0.22], [0.20, 0.21, 0.20], 0.05)
    (True, True, True)
    >>> gate_verdicts([0.20, 0.21, 0.22], [0.04, 0.05, 0.045], 0.05)
    (True, False, True)
    """
    from .audit import ReversalReading, fail_above_rule, t_interval

    level = look_level(len(STAGES))
    full = fail_above_rule(t_interval(whole, CONFIDENCE), bound)["failed"]
    if decide(early, threshold, level, margin) in ("matters", "small"):
        reading = ReversalReading(float(np.mean(early)), t_interval(early, level), "", list(early), 1, level)
        gate = early_gate(reading, bound, margin, 1, len(STAGES))
        if gate is not None:
            return gate["failed"], full, True
    return full, full, False


def simulate_gate(configs, offsets=GATE_OFFSETS, audits: int = 200, seeds: int = 3, threshold: float = 0.075, rng_seed: int = 1) -> dict:
    """How often ``--fail-above`` decides differently staged and with ``--full``, per synthetic model and bound. Each
    simulated seed draws four rates, one per quarter of its windows: the early look reads the first quarter, the whole
    sample their mean (a rate averaged over windows, the early look's included). Each quarter varies as a whole seed
    does, and the early look's margin is 0: both make the early look bolder than on a model. The bounds lie
    ``offsets`` (in points) from the model's rate, the mean of every draw. Each disagreement rate comes with its
    one-sided 95 % Wilson upper bound."""
    from .audit import wilson

    rng = np.random.default_rng(rng_seed)
    parts = STAGES[-1] // STAGES[0]
    out = []
    for sink_mass, alpha in configs:
        quarters = synthetic_rates(sink_mass, alpha, audits * seeds * parts, rng).reshape(audits, seeds, parts)
        early, whole = quarters[:, :, 0], quarters.mean(axis=2)
        rate = float(quarters.mean())
        for offset in offsets:
            bound = max(0.0, rate + offset / 100)
            verdicts = [gate_verdicts(e, w, bound, threshold) for e, w in zip(early, whole)]
            differ = sum(s != f for s, f, _ in verdicts)
            out.append({"sink_mass": sink_mass, "alpha": alpha, "rate": rate, "bound": bound, "audits": audits, "differ": differ,
                        "disagreement": differ / audits, "disagreement_upper_95": wilson(differ, audits, 1.645)[1],
                        "decided_at_look_1": sum(early_decided for *_, early_decided in verdicts) / audits,
                        "failed_full": sum(f for _, f, _ in verdicts) / audits})
    return {"level": CONFIDENCE, "look_level": look_level(len(STAGES)), "threshold": threshold, "seeds": seeds, "offsets_points": list(offsets),
            "cells": out, "largest_disagreement": max(c["disagreement"] for c in out),
            "largest_disagreement_upper_95": max(c["disagreement_upper_95"] for c in out)}




SIMULATED = ((0.02, 0.1), (0.02, 1.0), (0.03, 1.0), (0.08, 0.1), (0.05, 1.0), (0.1, 0.1))
"""Synthetic models whose true JS rates lie just below and just above the 7.5 % threshold (about 3, 6, 6.6, 7.7, 7.7
and 8.8 %), where wrong advice is likeliest."""


def main(argv=None) -> None:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m attncoda.studies.audit_stages", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    bias = sub.add_parser("bias", help="measure the early look's margin on the installed default models")
    bias.add_argument("--models", nargs="*")
    sim = sub.add_parser("simulate", help="the two-look rule's error rate on synthetic models")
    sim.add_argument("--audits", type=int, default=500)
    gate = sub.add_parser("gate", help="how often --fail-above decides differently staged and with --full, on synthetic models")
    gate.add_argument("--audits", type=int, default=200)
    args = parser.parse_args(argv)
    from ..base.files import atomic_write_bytes

    if args.command == "bias":
        from ..engine.registry import REGISTRY

        models = args.models or [name for name, entry in REGISTRY.items() if entry.installed()]
        result = measure_bias(models)
        path = data_file(BIAS_FILE)
    elif args.command == "gate":
        result = simulate_gate(GATE_SIMULATED, audits=args.audits)
        path = data_file(GATE_FILE)
    else:
        result = simulate(SIMULATED, audits=args.audits)
        path = data_file(SIMULATION_FILE)
    from ..base.paths import project_path

    path = project_path(path)  # the project's data/audit, never the package's copy
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(result, indent=1) + "\n").encode())
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
