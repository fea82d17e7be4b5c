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

LEVEL = 0.95
"""The audit's overall confidence: its chance of advising the wrong side is at most ``1 − LEVEL``."""
STAGES = (N_WINDOWS // 4, N_WINDOWS)
"""Windows per seed at each look of the default sample."""


def look_level(looks: int) -> float:
    """Each look's confidence when ``1 − LEVEL`` is split evenly over ``looks`` planned looks.

    >>> look_level(1), look_level(2)
    (0.95, 0.975)
    """
    return 1 - (1 - LEVEL) / looks


def data_file(name: str) -> Path:
    from ..base.paths import data_dir

    return data_dir() / "audit" / name


BIAS_FILE = "stage_bias.json"
SIMULATION_FILE = "stopping_simulation.json"


def stage_margin(windows: int) -> float:
    """How far an early look's interval must clear the threshold: the largest absolute difference, over the default
    models measured in :data:`BIAS_FILE`, between the mean rate over seeds on ``windows`` windows and on the whole
    sample; 0 for the whole sample itself.

    Raises ValueError in one line when the measurement is missing (an early look without its margin decides nothing)."""
    if windows == STAGES[-1]:
        return 0.0
    path = data_file(BIAS_FILE)
    try:
        data = json.loads(path.read_text())
        return float(data["margin"][str(windows)])
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(f"{path} holds no margin for {windows} windows; run python -m attncoda.studies.audit_stages bias, "
                         "or pass --full") from None


def plan(n: int, length: int, seeds, full: bool) -> list[int]:
    """Windows per seed at each look: :data:`STAGES` for the default sample with two or more seeds, else ``[n]``.

    >>> plan(64, 128, [0, 1, 2], False), plan(64, 128, [0, 1, 2], True), plan(32, 128, [0, 1, 2], False), plan(64, 128, [0], False)
    ([16, 64], [64], [32], [64])
    """
    if full or (n, length) != (N_WINDOWS, WINDOW_LENGTH) or len(seeds) < 2:
        return [n]
    return list(STAGES)


def staged(inputs, stages: list[int], audit_args: dict):
    """Run :func:`attncoda.studies.audit.audit` at each look in turn and stop at the first whose advice takes a side
    (``matters`` or ``small``), or at the last. ``inputs(windows)`` gives ``(signatures, maps)`` of every seed on
    that many windows. The report says each look's interval and why it stopped."""
    from .audit import audit

    level = look_level(len(stages))
    looks = []
    for k, windows in enumerate(stages):
        sigs, maps = inputs(windows)
        margin = stage_margin(windows) if len(stages) > 1 else 0.0
        report = audit(sigs, maps=maps, level=level, margin=margin, **audit_args)
        looks.append({"windows": windows, "level": level, "margin": margin, "rate": report.reversal.rate,
                      "interval": list(report.reversal.interval), "advice": report.advice})
        if report.advice in ("matters", "small", "undefined") or k == len(stages) - 1:
            return replace(report, stages=looks, stopped=stop_reason(looks, len(stages)))
    raise AssertionError("unreachable: the last look always returns")


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
    return (f"read the whole sample at look {planned} ({sample}, {level}): look 1 ({first['windows']} windows per seed, interval "
            f"{100 * first['interval'][0]:.1f}-{100 * first['interval'][1]:.1f} %, margin {100 * first['margin']:.1f} points) could not decide")


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
    return {"level": LEVEL, "looks": len(STAGES), "look_level": level, "threshold": threshold, "seeds": seeds, "configs": out,
            "largest_error_rate": max(c["error_rate"] for c in out)}


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
    args = parser.parse_args(argv)
    from ..base.files import atomic_write_bytes

    if args.command == "bias":
        from ..engine.registry import REGISTRY

        models = args.models or [name for name, entry in REGISTRY.items() if entry.installed()]
        result = measure_bias(models)
        path = data_file(BIAS_FILE)
    else:
        result = simulate(SIMULATED, audits=args.audits)
        path = data_file(SIMULATION_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, (json.dumps(result, indent=1) + "\n").encode())
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
