"""What the benchmarks share: a ratio measured in repeats, read as a geometric mean with a t interval of its log."""

import math


def log_interval(ratios) -> tuple[float, float, float]:
    """Geometric mean of ``ratios`` and the 95 % t interval of their log (NaN bounds with one ratio)."""
    from scipy.stats import t as student

    logs = [math.log(r) for r in ratios]
    mean = sum(logs) / len(logs)
    if len(logs) < 2:
        return math.exp(mean), float("nan"), float("nan")
    sd = math.sqrt(sum((x - mean) ** 2 for x in logs) / (len(logs) - 1))
    half = student.ppf(0.975, len(logs) - 1) * sd / math.sqrt(len(logs))
    return math.exp(mean), math.exp(mean - half), math.exp(mean + half)
