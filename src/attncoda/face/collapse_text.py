"""The collapse chapter's sentences, each computed from its numbers (so a rerun on another model rewrites them)."""

from __future__ import annotations

import numpy as np

PYTHIA_TOKENS_PER_STEP = 1024 * 2048
"""Pythia's batch: 1,024 sequences of 2,048 tokens per step (Biderman et al., 2023)."""
PYTHIA_STEPS = 143_000
PYTHIA_SMALLEST = 70e6
"""Parameters of the smallest Pythia model the paper measures (Pythia-70M)."""


def _span(values) -> str:
    lo, hi = float(np.min(values)), float(np.max(values))
    return f"{lo:.2f}" if f"{lo:.2f}" == f"{hi:.2f}" else f"{lo:.2f} to {hi:.2f}"


def trajectory_sentence(runs: dict[str, list[dict]], shares: dict[str, dict]) -> str:
    """How ``H``, ``H(π)`` and the sink mass moved from each run's entropy peak to its end, over all runs."""
    spans = [(name, s["from_peak"]) for name, s in shares.items() if "from_peak" in s]
    if not spans:
        return "No run has a checkpoint after step 0 before its last, so no peak-to-end change can be measured."
    dh = [s["delta_entropy"] for _, s in spans]
    dc = [s["delta_content_entropy"] for _, s in spans]
    sink = [(runs[name][0]["sink_mass"], runs[name][-1]["sink_mass"]) for name, _ in spans]
    fell = sum(1 for x in dh if x < 0)
    content_rose = sum(1 for x in dc if x > 0)
    text = (f"From the entropy peak to the last checkpoint, mean H changed by {_span(dh)} nats in {'the one run' if len(spans) == 1 else f'the {len(spans)} runs'} "
            f"({fell} of them fell) and mean H(π) by {_span(dc)} nats")
    text += f"; H(π) rose in {content_rose} of them" if content_rose else ""
    text += (f". The mean sink mass went from {_span([a for a, _ in sink])} at step 0 to {_span([b for _, b in sink])} at the end.")
    return text


def share_sentence(groups: dict[str, list[str]], shares: dict[str, dict]) -> str:
    """Each group's shares (from the peak, and from step 0), one clause per group."""
    parts = []
    for group, names in groups.items():
        peak = [shares[n]["from_peak"]["share"] for n in names if "from_peak" in shares[n]]
        zero = [shares[n]["from_step0"]["share"] for n in names if "from_step0" in shares[n]]
        finite = [x for x in peak if x == x]
        if not finite:
            parts.append(f"{group}: mean H did not fall after its peak, so there is no drop to share out")
            continue
        clause = f"{group}: {', '.join(f'{x:.2f}' for x in finite)} from the peak"
        finite_zero = [x for x in zero if x == x]
        if finite_zero:
            clause += f", {', '.join(f'{x:.2f}' for x in finite_zero)} from step 0"
        parts.append(clause)
    return "Shares of the drop carried by the sink, per run: " + "; ".join(parts) + "."


def endpoint_sentence(ends: dict[str, dict]) -> str:
    """What the endpoint shares of several trained models say, pooled over layers."""
    finite = {name: e["share"] for name, e in ends.items() if e["share"] == e["share"]}
    rose = [name for name, e in ends.items() if e["share"] != e["share"]]
    if not finite:
        return "Mean H did not fall from initialization to the trained weights on any of these models, so no share is defined."
    majority = [n for n, s in finite.items() if s > 0.5]
    over = [n for n, s in finite.items() if s > 1]
    text = (f"From initialization to the trained weights, the sink carries {_span(list(finite.values()))} of the fall in mean H "
            f"({', '.join(f'{n} {s:.2f}' for n, s in finite.items())}). ")
    if majority:
        text += f"It carries most of the fall on {', '.join(majority)}"
        text += (f"; on {', '.join(over)} the content entropy even rose, so the sink carries more than the whole fall. " if over else ". ")
    else:
        text += "On none of them does it carry most of the fall: the content distributions sharpened by more than the sink explains. "
    if rose:
        text += f"On {', '.join(rose)} mean H did not fall at all, so no share is defined. "
    return text.strip()


SINK_GROWTH = 0.05
"""A run's sink "grew" when its mean row sink mass rose by at least this much from step 0 to the end."""


def paper_comparison(shares: dict[str, dict], trained: dict[str, dict], pythia: dict[str, float], runs: dict[str, list[dict]],
                     ends: dict[str, dict] | None = None) -> str:
    """Our shares beside the paper's Pythia shares, with what the scale of our models allows us to conclude; ``ends``
    (endpoint results) adds the fully trained models' shares from initialization."""
    ours = {n: s["from_peak"]["share"] for n, s in shares.items() if "from_peak" in s and s["from_peak"]["share"] == s["from_peak"]["share"]}
    paper_lo, paper_hi = min(pythia.values()), max(pythia.values())
    text = f"The paper's shares on Pythia's checkpoints run from {paper_lo:.2f} to {paper_hi:.2f} ({', '.join(f'{k} {v:.2f}' for k, v in pythia.items())}). "
    text += _endpoint_comparison(ends or {}, paper_lo, paper_hi)
    if not ours:
        return (text + "None of our checkpoint series has a defined share to set beside them.").strip()
    lo, hi = min(ours.values()), max(ours.values())
    where = "inside" if paper_lo <= lo and hi <= paper_hi else ("below" if hi < paper_lo else ("above" if lo > paper_hi else "overlapping"))
    text += f"Our suite's shares, from the peak, run from {lo:.2f} to {hi:.2f}: {where} the paper's range. "
    if trained:
        params = [t["parameters"] for t in trained.values()]
        tokens = [t["steps"] * t["batch"] * t["length"] for t in trained.values()]
        text += (f"Our models have {min(params) / 1e6:.2f} to {max(params) / 1e6:.2f} M parameters, at least {PYTHIA_SMALLEST / max(params):.0f}× fewer than "
                 f"Pythia-70M, and saw {max(tokens):,} tokens each, {PYTHIA_STEPS * PYTHIA_TOKENS_PER_STEP / max(tokens):,.0f}× fewer than a Pythia run "
                 f"({PYTHIA_STEPS:,} steps of {PYTHIA_TOKENS_PER_STEP:,} tokens). ")
        growth = {n: runs[n][-1]["sink_mass"] - runs[n][0]["sink_mass"] for n in trained}
        grew = [n for n, g in growth.items() if g >= SINK_GROWTH]
        if not grew:
            text += (f"In none of our runs did the mean sink mass rise by {SINK_GROWTH} or more (largest rise {max(growth.values()):.3f}), so their "
                     "entropy fell through the content distribution: they show what a collapse looks like before a sink has formed, a regime "
                     "below the paper's models, and they cannot confirm or refute the paper's shares. ")
        else:
            text += (f"The sink grew in {len(grew)} of {len(growth)} runs (mean sink mass up by {_span([growth[n] for n in grew])}); these runs test "
                     "the mechanism (a sink on a constant first token carrying part of the collapse), not the paper's numbers. ")
        by_size: dict[str, list[float]] = {}
        for name, t in trained.items():
            if name in ours:
                by_size.setdefault(t["size"], []).append(ours[name])
        sizes = sorted(by_size, key=lambda k: np.mean([trained[n]["parameters"] for n in trained if trained[n]["size"] == k]))
        if len(sizes) >= 2 and not grew:
            small, large = by_size[sizes[0]], by_size[sizes[-1]]
            text += (f"The sizes' shares ({_span(large)} for the larger, {_span(small)} for the smaller) are both near zero: with no sink grown, "
                     "they measure content sharpening and say nothing about the paper's trend with size. ")
        elif len(sizes) >= 2:
            small, large = by_size[sizes[0]], by_size[sizes[-1]]
            if min(large) > max(small):
                text += (f"Every seed of the larger size has a higher share than every seed of the smaller ({_span(large)} against {_span(small)}), "
                         "the direction the paper reports from 70M to 1B; two sizes show a direction, not a trend.")
            elif max(large) < min(small):
                text += (f"Every seed of the larger size has a lower share than every seed of the smaller ({_span(large)} against {_span(small)}), "
                         "the opposite of the direction the paper reports from 70M to 1B.")
            else:
                text += f"The two sizes' shares overlap across seeds ({_span(large)} against {_span(small)}): no size effect is visible at this scale."
    return text.strip()


def _endpoint_comparison(ends: dict[str, dict], paper_lo: float, paper_hi: float) -> str:
    finite = {n: e["share"] for n, e in ends.items() if e["share"] == e["share"]}
    if not finite:
        return ""
    lo, hi = min(finite.values()), max(finite.values())
    where = "inside" if paper_lo <= lo and hi <= paper_hi else ("below" if hi < paper_lo else ("above" if lo > paper_hi else "overlapping"))
    return (f"The fully trained defaults give endpoint shares from {lo:.2f} to {hi:.2f}, {where} that range. An endpoint share starts at "
            "initialization, like the paper's share from step 0, but these are other models (sentence encoders, quantized and instruction-tuned "
            "variants) with one endpoint each, not Pythia's series, so the difference is a different measurement, not a failed reproduction. ")
