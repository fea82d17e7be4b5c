"""Table 4, computed: which quantity has which invariance, by numeric checks.

Each check runs on random compositions (plus the witness rows) and reports
``holds`` with the worst deviation it saw. A property holds when no sample
violates it beyond rounding; it fails when a counterexample is found.

Subjects: Euclidean, cosine, JS, Shannon ``H``, ``d_A``, ``ρ_A``.
Properties (sink at index 0):

* ``perm``: ``f(σp, σq) = f(p, q)`` for a shared permutation ``σ``.
* ``perturb``: ``f(p⊕w, q⊕w) = f(p, q)`` for a shared logit bias.
* ``temp``: closer-head verdicts (for ``H``: the order of two rows' entropies)
  are unchanged when every row is tempered by one ``τ``.
* ``sink``: keep-vs-drop coherence: ``f(keep) − f(drop)`` (raw or squared)
  depends only on the rows' sink coordinate (sink mass, or the balance ``b``).
  True for ``d_A`` by Lemma 1: ``d_A²(p,q) − d_A²(p',q') = (b(p) − b(q))²``.
* ``dom``: subcompositional dominance ``f(p', q') ≤ f(p, q)`` (distances;
  similarities as ``1 − f``). Not defined for ``H``, a single-row quantity.

``ρ_A`` is a direction (an angle between clr vectors, undefined for a uniform
row), not a magnitude, so ``sink`` and ``dom`` are not defined for it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..math.coda import aitchison, balance, closure, drop_sink, entropy, ilr_cosine, perturb, temper
from ..math.metrics import cosine, euclidean, jensen_shannon
from ..math.synthetic import witness
from ..math.verdicts import verdict

@dataclass(frozen=True)
class Subject:
    name: str
    function: object
    pairwise: bool = True
    similarity: bool = False
    has_magnitude: bool = True

    def distance(self, p, q):
        value = self.function(p, q)
        return 1.0 - value if self.similarity else value


SUBJECTS = (
    Subject("Euclidean", euclidean),
    Subject("cosine", cosine, similarity=True),
    Subject("JS", jensen_shannon),
    Subject("Shannon H", entropy, pairwise=False),
    Subject("d_A", aitchison),
    Subject("ρ_A (ILR-cosine)", ilr_cosine, similarity=True, has_magnitude=False),
)


@dataclass(frozen=True)
class Check:
    holds: bool | None
    worst: float


def random_rows(rng, n: int, parts: int = 6) -> np.ndarray:
    """``n`` positive rows: half with log-normal parts, half with a dominant sink; all parts ≥ e⁻⁶ (so tempering by τ ≥ 0.5 stays above the zero-replacement ε)."""
    z = rng.normal(0.0, 1.5, (n, parts))
    z[n // 2 :, 0] += rng.uniform(1.0, 5.0, n - n // 2)
    z = np.clip(z - z.max(axis=1, keepdims=True), -6.0, 0.0)
    return closure(np.exp(z))


def _tol(values) -> float:
    return 1e-9 * (1.0 + float(np.max(np.abs(values))))


def _equal(a, b) -> Check:
    worst = float(np.max(np.abs(a - b)))
    return Check(worst <= _tol(np.concatenate([np.ravel(a), np.ravel(b)])), worst)


def _verdicts(s: Subject, p, q, r):
    """Closer-row verdicts; for the single-row ``H``, the order of two rows' entropies."""
    return verdict(s.distance(p, q), s.distance(p, r), False) if s.pairwise else verdict(s.function(r), s.function(q), False)


def _flips(before, after) -> Check:
    mask = (before != 0) & (after != 0)
    share = float(np.mean(before[mask] != after[mask])) if mask.any() else 0.0
    return Check(share == 0.0, share)


def _same_sink_coordinate(rng, p: np.ndarray, coordinate: str) -> np.ndarray:
    """Rows with fresh content but the same sink mass (``mass``) or balance (``balance``) as ``p``."""
    content = random_rows(rng, len(p), p.shape[1] - 1)
    if coordinate == "mass":
        s = p[:, :1]
        return np.concatenate([s, (1 - s) * content], axis=1)
    n = p.shape[1] - 1
    b = balance(p)
    lead = np.exp(b / np.sqrt(n / (1 + n)) + np.log(content).mean(axis=1))
    return closure(np.concatenate([lead[:, None], content], axis=1))


def _sink_coherence(s: Subject, rng, p, q) -> Check:
    def gap(x, y, square):
        if s.pairwise:
            keep, drop = s.distance(x, y), s.distance(drop_sink(x), drop_sink(y))
        else:
            keep, drop = s.function(x), s.function(drop_sink(x))
        return keep**2 - drop**2 if square else keep - drop

    best = None
    for coordinate in ("mass", "balance"):
        p2, q2 = _same_sink_coordinate(rng, p, coordinate), _same_sink_coordinate(rng, q, coordinate)
        for square in (False, True):
            check = _equal(gap(p, q, square), gap(p2, q2, square))
            if best is None or check.worst < best.worst or check.holds:
                best = check
            if check.holds:
                return check
    return best


def invariance_matrix(seed: int = 0, n: int = 2000, parts: int = 6, taus=(0.5, 2.0)) -> dict[str, dict[str, Check]]:
    """Run every check on ``n`` random triples of ``parts``-part rows (the witness rows included)."""
    rng = np.random.default_rng(seed)
    wp, wq, wr = witness()
    p, q, r = (random_rows(rng, n, parts) for _ in range(3))
    small = [np.concatenate([np.pad(w, (0, parts - 3), constant_values=1e-3)[None]]) for w in (wp, wq, wr)]
    p, q, r = (np.concatenate([closure(sm), x]) for sm, x in zip(small, (p, q, r)))
    perm = rng.permutation(parts)
    w = np.exp(rng.normal(0.0, 1.0, parts))
    out = {}
    for s in SUBJECTS:
        row = {}
        if s.pairwise:
            base = s.function(p, q)
            row["perm"] = _equal(s.function(p[:, perm], q[:, perm]), base)
            row["perturb"] = _equal(s.function(perturb(p, w), perturb(q, w)), base)
        else:
            base = s.function(p)
            row["perm"] = _equal(s.function(p[:, perm]), base)
            row["perturb"] = _equal(s.function(perturb(p, w)), base)
        before = _verdicts(s, p, q, r)
        checks = [_flips(before, _verdicts(s, temper(p, t), temper(q, t), temper(r, t))) for t in taus]
        row["temp"] = max(checks, key=lambda c: c.worst)
        row["sink"] = _sink_coherence(s, rng, p, q) if s.has_magnitude else Check(None, float("nan"))
        if s.pairwise and s.has_magnitude:
            excess = s.distance(drop_sink(p), drop_sink(q)) - s.distance(p, q)
            worst = float(np.max(excess))
            row["dom"] = Check(worst <= _tol(excess), worst)
        else:
            row["dom"] = Check(None, float("nan"))
        out[s.name] = row
    return out
