"""How a claim of the paper is judged: the verdict words, a unit's interval against the paper's range (one comparison
for every row), and a claim's premise, units and combined verdict. The rows themselves are :mod:`attncoda.studies.claims`.

Two kinds of row:

* a **check** (:data:`MATH`) tests mathematics that correct code cannot fail (an identity, an exact value, a Monte
  Carlo share of the simplex): *reproduced* when it holds, *differs* when it does not, which would be a bug;
* a **claim about models** (:data:`MODELS`) is judged in three steps. First its premise: can our evidence test it at
  all? If not, *not testable here*, with the reason. Then each independent unit (a model, a sample, a layer transition)
  gives an interval on the claim's scale, judged against the paper's range by :func:`unit_verdict`. Then
  :func:`combine` joins the units' verdicts.

The words, defined once (the methods page repeats them):

* **reproduced**: the paper's direction, decided by an interval or test, and (for a claim with a size) a reading that
  overlaps the paper's range;
* **differs**: the paper's direction, decided, but off the paper's range;
* **reversed**: the opposite direction, decided;
* **undecided**: our interval or test cannot decide: it straddles the null, or a reading of one seed lies off the
  paper's range (one seed cannot show a difference);
* **not testable here**: the premise fails: the claim needs models or data the record lacks.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

from .significance import t_interval

REPRODUCED, DIFFERS, REVERSED, UNDECIDED, NOT_TESTABLE = "reproduced", "differs", "reversed", "undecided", "not testable here"
VERDICTS = (REPRODUCED, DIFFERS, REVERSED, UNDECIDED, NOT_TESTABLE)

MATH, MODELS = "mathematics", "models"
"""The two groups of rows: checks of the mathematics, and claims about models."""

LEVEL = 0.05
"""Every test's two-sided significance level."""
CONFIDENCE = 1 - LEVEL
"""Every interval's confidence."""

@dataclass(frozen=True)
class Verdict:
    """One claim judged: its key, the verdict word, the numbers compared, the test, its level, the reason and scope."""

    claim: str
    verdict: str
    ours: dict = field(default_factory=dict)
    paper: dict = field(default_factory=dict)
    test: str = ""
    level: float | None = None
    why: str = ""
    scope: str = ""

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"a verdict is one of {VERDICTS}, not {self.verdict!r}")


# --- One comparison for every row -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Unit:
    """One independent unit's reading on a claim's scale: an interval (``low == high`` for a point) and, where a test
    rather than the interval decides the direction, that test's side (+1 the paper's, -1 the other, 0 undecided).
    ``resampled`` is False for a reading of one seed with no resample behind it: it can agree with the paper's range,
    but cannot show that it differs from it (the paper's own numbers are taken as stated)."""

    name: str
    low: float
    high: float
    side: int | None = None
    resampled: bool = True

    @property
    def value(self) -> float:
        return (self.low + self.high) / 2 if math.isfinite(self.low + self.high) else self.low


def overlaps(low: float, high: float, paper_low: float, paper_high: float) -> bool:
    """Whether a reading's interval meets the paper's range: the one range comparison of every row.

    >>> overlaps(0.2, 0.5, 0.3, 0.95), overlaps(0.03, 0.24, 0.3, 0.95)
    (True, False)
    """
    return high >= paper_low and low <= paper_high


def side_of(unit: Unit, null: float | None, direction: int = 1) -> int:
    """The side of ``null`` a unit's interval lies on, counted +1 on the paper's side (above ``null`` when
    ``direction`` is 1, below when -1), -1 on the other, 0 when it straddles ``null``; a test's side where it gave one.
    A claim without a null (a size only) is always on the paper's side.

    >>> side_of(Unit("a", 0.1, 0.2), 0.0), side_of(Unit("a", -0.2, 0.1), 0.0), side_of(Unit("a", 0.3, 0.4), 0.5, -1)
    (1, 0, 1)
    """
    if unit.side is not None:
        return unit.side
    if null is None:
        return 1
    if direction * (unit.low - null) > 0 and direction * (unit.high - null) > 0:
        return 1
    if direction * (unit.low - null) < 0 and direction * (unit.high - null) < 0:
        return -1
    return 0


def unit_verdict(unit: Unit, null: float | None, paper_range: tuple[float, float], direction: int = 1) -> str:
    """One unit against the paper: reversed on the other side of ``null``, undecided across it, else reproduced where
    the interval overlaps the paper's range (:func:`overlaps`) and differs where it does not.

    >>> [unit_verdict(Unit("u", *x), 0.0, (0.3, 0.95)) for x in ((0.2, 0.5), (0.03, 0.24), (-0.4, -0.1), (-0.01, 0.11))]
    ['reproduced', 'differs', 'reversed', 'undecided']
    """
    side = side_of(unit, null, direction)
    if side == 0:
        return UNDECIDED
    verdict = REVERSED if side < 0 else REPRODUCED if overlaps(unit.low, unit.high, *paper_range) else DIFFERS
    return verdict if verdict == REPRODUCED or unit.resampled else UNDECIDED  # one seed cannot show a difference


def combine(verdicts) -> str:
    """One verdict from the units': reversed if any unit is reversed (one counterexample reverses a claim about every
    model); reproduced if all are; else differs if any differs; else undecided.

    >>> combine([REPRODUCED, REPRODUCED]), combine([REPRODUCED, DIFFERS, UNDECIDED]), combine([REPRODUCED, UNDECIDED])
    ('reproduced', 'differs', 'undecided')
    """
    verdicts = list(verdicts)
    if not verdicts:
        return NOT_TESTABLE
    if REVERSED in verdicts:
        return REVERSED
    if all(v == REPRODUCED for v in verdicts):
        return REPRODUCED
    return DIFFERS if DIFFERS in verdicts else UNDECIDED


def seed_interval(name: str, values) -> Unit:
    """A unit from its seeds' values: the t interval of their mean (:data:`CONFIDENCE`), or the value itself as a
    point where only one seed carries it."""
    values = [float(v) for v in values if v is not None and v == v]
    if len(values) < 2:
        return Unit(name, values[0], values[0], resampled=False)
    _, low, high = t_interval(values, LEVEL)
    return Unit(name, low, high)


def paper_interval(name: str, mean: float, sd: float, n: int = 3, scale: float = 1.0) -> Unit:
    """A unit from a printed mean ± sd over ``n`` seeds: the same t interval as ours."""
    from scipy.stats import t

    half = float(t.ppf(1 - LEVEL / 2, n - 1)) * sd / math.sqrt(n)
    return Unit(name, (mean - half) * scale, (mean + half) * scale)


# --- Claims ---------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Claim:
    """A claim of the paper about models, and how our record and the paper's numbers are read for it.

    ``units(record)`` and ``paper_units(paper)`` return the independent units on the claim's scale; ``premise(record)``
    returns the reason the record cannot test the claim, or ''. ``null`` is the no-effect value (None for a claim of
    size only); the paper's side of it is above when ``direction`` is 1, below when -1. ``paper_range(paper)`` is the
    range the paper states, (low, high), with an infinite end for a claim of direction only.
    """

    key: str
    quote: str
    place: str
    chapter: str
    needs: str
    units: Callable[[dict], list]
    paper_units: Callable[[dict], list] | None
    paper_range: Callable[[dict], tuple]
    null: float | None
    test: str
    scope: Callable[[dict], str]
    premise: Callable[[dict], str] = lambda record: ""
    direction: int = 1
    level: float | None = LEVEL
    group: str = MODELS
    no_paper_numbers: str = ""  # why the paper's own numbers cannot be put to the rule (a plot with no printed values)
    detail: Callable[[dict], dict] | None = None  # numbers the page shows beside the units


@dataclass(frozen=True)
class Check:
    """A check of the mathematics: ``holds(record, paper)`` returns (passed, the numbers behind it), or None when the record
    lacks the chapter it reads."""

    key: str
    quote: str
    place: str
    chapter: str
    needs: str
    holds: Callable[[dict], tuple | None]
    test: str
    level: float | None = None
    group: str = MATH
    scope: str = "synthetic rows"


def judge_units(units: list[Unit], claim: Claim, paper: dict) -> tuple[str, dict]:
    """A claim's verdict on some units, with each unit's verdict."""
    paper_range = claim.paper_range(paper)
    each = {u.name: unit_verdict(u, claim.null, paper_range, claim.direction) for u in units}
    return combine(each.values()), each


def judge_claim(claim, record: dict, paper: dict) -> Verdict:
    """One row's verdict: a check's pass or fail, or a claim's premise, units and combined verdict."""
    if claim.needs and not record.get(claim.needs):
        return Verdict(claim.key, NOT_TESTABLE, test=claim.test, level=claim.level,
                       why=f"the record holds no {claim.needs} results")
    if isinstance(claim, Check):
        result = claim.holds(record, paper)
        if result is None:
            return Verdict(claim.key, NOT_TESTABLE, test=claim.test, why=f"the record holds no {claim.needs} results")
        passed, ours = result
        return Verdict(claim.key, REPRODUCED if passed else DIFFERS, ours=ours, test=claim.test, level=claim.level, scope=claim.scope)
    scope = claim.scope(record)
    why = claim.premise(record)
    if why:
        return Verdict(claim.key, NOT_TESTABLE, test=claim.test, level=claim.level, why=why, scope=scope)
    units = claim.units(record)
    if not units:
        return Verdict(claim.key, NOT_TESTABLE, test=claim.test, level=claim.level, why="no unit of the record carries this reading",
                       scope=scope)
    verdict, each = judge_units(units, claim, paper)
    low, high = claim.paper_range(paper)
    ours = {"units": [(u.name, u.low, u.high, each[u.name]) for u in units]}
    if claim.detail:
        ours["detail"] = claim.detail(record)
    return Verdict(claim.key, verdict, ours=ours,
                   paper={"low": low, "high": high}, test=claim.test, level=claim.level, scope=scope)


def judge_paper(claim: Claim, paper: dict, units: list[Unit] | None = None) -> str:
    """The verdict a claim's rule gives the paper's own numbers (or ``units`` made from them)."""
    return judge_units(units if units is not None else claim.paper_units(paper), claim, paper)[0]
