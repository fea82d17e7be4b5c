"""The table of architecture families (engine/families.py, data/families/families.json, book/families.md): made by the
installed transformers, shown as generated, and each outcome reproduced when the family is tried again."""

import json
from pathlib import Path

import pytest
import transformers

from attncoda.engine import families
from attncoda.engine.models import LEARNED_SINK_TYPES

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def table():
    return json.loads((ROOT / families.TABLE).read_text())


def test_the_table_was_made_by_the_pinned_transformers(table):
    """A new transformers pin fails here until `python -m attncoda.engine.families` makes the table again."""
    assert table["transformers"] == transformers.__version__
    assert [r["family"] for r in table["families"]] == list(families.text_families())
    assert [r["kind"] for r in table["families"]] == list(families.text_families().values())


def test_the_counts_are_the_rows(table):
    rows = table["families"]
    assert table["tried"] == len(rows) and sum(table["counts"].values()) == len(rows)
    for outcome in families.OUTCOMES:
        assert table["counts"][outcome] == sum(r["outcome"] == outcome for r in rows)
    for r in rows:
        assert (r["outcome"] == "supported") == (r["reason"] == ""), r["family"]
        if r["outcome"] == "supported":
            assert r["largest_difference"] <= 1e-3, r["family"]


def test_the_book_page_is_the_table(table):
    assert (ROOT / families.PAGE).read_text() == families.page(table)


def test_the_learned_sink_families_are_those_that_pass_one():
    """LEARNED_SINK_TYPES is every model type whose modeling file hands the attention interface ``s_aux``."""
    models = Path(transformers.__file__).parent / "models"
    passing = {f.parent.name.replace("_", "-") if f.parent.name.replace("_", "-") in LEARNED_SINK_TYPES else f.parent.name
               for f in models.glob("*/modeling_*.py") if "s_aux" in f.read_text()}
    assert passing == LEARNED_SINK_TYPES


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gpt2", "gpt_oss", "granite_swa", "mpnet", "bart", "gemma2", "mimo_v2_flash"])
def test_a_family_tried_again_gives_its_row(table, family):
    row = next(r for r in table["families"] if r["family"] == family)
    again = families.try_family(family, row["kind"])
    assert (again["outcome"], again["reason"], again["path"], again["learned_sink"]) == (row["outcome"], row["reason"], row["path"], row["learned_sink"])
