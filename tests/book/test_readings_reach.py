"""No reading in the record comes from a test that cannot reach its level.

A rank test of 3 values against 10 draws cannot give p below 2 / C(13, 3) = 0.007, so inside a Holm family of 36 tests
(strictest threshold 0.05 / 36) it can never reject: a direction read from it would be noise. Every test the pruning
chapter reads stores its smallest attainable p; this test recomputes each family's threshold from the record."""

import json
from pathlib import Path

import pytest

from attncoda.studies import pruning_readings as pr

ROOT = Path(__file__).resolve().parents[2]
RECORD = sorted((ROOT / "data" / "results" / "pruning").glob("*.json"))


def _family(kind: str) -> list[dict]:
    return [t for path in RECORD for t in json.loads(path.read_text())["results"]["readings"][kind]]


@pytest.mark.parametrize("kind", ["cells", "contrasts"])
def test_every_decided_reading_could_reach_its_level(kind):
    family = _family(kind)
    assert family, f"the record holds no pruning {kind}"
    for test in family:
        decided = test["reading"] not in ("indistinguishable", "indistinguishable from random")
        if not pr.reachable(test["smallest_p"], len(family)):
            assert test["reading"] == pr.UNDECIDED, f"{test['model']} {test.get('metric', test.get('a'))} at {test['sparsity']}: read from a test that cannot reach its level"
        elif decided:
            assert test["p_holm"] < pr.LEVEL, f"{test['model']}: a direction without a significant Holm-adjusted p"


@pytest.mark.parametrize("kind", ["cells", "contrasts"])
def test_the_record_s_holm_adjustment_is_the_whole_family(kind):
    family = _family(kind)
    assert [t["p_holm"] for t in family] == pytest.approx(pr.holm([t["p"] for t in family]))
