"""The audit's reversal rate with the forward pass in bfloat16 against float32, on each installed default model (needs
`make models`).

For each model and each seed 0, 1, 2, the JS keep-vs-drop rate of the audit's whole sample (64 windows of 128 tokens,
50,000 triples) from float32 signatures and from signatures whose forward pass ran in bfloat16 (the run setting's ``load_dtype``,
as ``--dtype bfloat16`` sets it), in one run. Prints the per-seed differences in points, their mean with a 95 % t
interval over the seeds (the seed is the unit: it resamples text and triples), each precision's advice against the
frozen predictor's tolerance, and the seconds each precision's signatures took. Writes
``benchmarks/results/audit_precision.json``. bfloat16 would become the audit's default only if no advice changed.

Usage: python benchmarks/audit_precision.py [--models smollm2-135m ...]
"""

import argparse
import json
import math
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).parent
SEEDS = (0, 1, 2)


def rates(model: str, dtype: str) -> tuple[list[float], str, float]:
    """Per-seed JS rates, the audit's advice and the seconds the signatures took, with the forward pass at ``dtype``."""
    from attncoda.base.run_setting import using
    from attncoda.engine.signatures import signature_sets
    from attncoda.studies import predictor
    from attncoda.studies.audit import audit

    with using(load_dtype=dtype):
        started = time.perf_counter()
        sigs = signature_sets(model, SEEDS)
        seconds = time.perf_counter() - started
        curves, spec = predictor.load_all(version=2)
        report = audit(sigs, "js", curves=curves, spec=spec)
    return list(report.reversal.per_seed), report.advice, seconds


def main() -> dict:
    from attncoda.engine.registry import REGISTRY
    from attncoda.studies.audit import t_95

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="*", default=[n for n, e in REGISTRY.items() if e.installed()])
    args = parser.parse_args()
    out = {"seeds": list(SEEDS), "metric": "js", "models": {}}
    for model in args.models:
        f32, f32_advice, f32_s = rates(model, "float32")
        b16, b16_advice, b16_s = rates(model, "bfloat16")
        diff = 100 * (np.array(b16) - np.array(f32))
        half = t_95(len(diff) - 1) * float(diff.std(ddof=1)) / math.sqrt(len(diff))
        out["models"][model] = {"float32": f32, "bfloat16": b16, "difference_points": diff.tolist(), "mean_points": float(diff.mean()),
                                "interval_points": [float(diff.mean() - half), float(diff.mean() + half)],
                                "advice": {"float32": f32_advice, "bfloat16": b16_advice}, "seconds": {"float32": f32_s, "bfloat16": b16_s}}
        r = out["models"][model]
        print(f"{model:<20} bf16 − fp32: {r['mean_points']:+.2f} points [{r['interval_points'][0]:+.2f}, {r['interval_points'][1]:+.2f}]; "
              f"advice {f32_advice} / {b16_advice}", flush=True)
    out["advice_changed"] = [m for m, r in out["models"].items() if r["advice"]["float32"] != r["advice"]["bfloat16"]]
    (HERE / "results" / "audit_precision.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


if __name__ == "__main__":
    main()
