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


def test_every_refusal_is_the_capture_s_own_one_line_reason(table):
    """A refused family stops with a designed reason (the capture's CaptureError), never numpy's or torch's error from
    inside the accumulator."""
    raw = {r["family"]: r["reason"] for r in table["families"] if r["outcome"] == "refused" and not r["reason"].startswith("CaptureError: ")}
    assert not raw


def test_every_refusal_falls_in_one_of_the_page_s_named_groups(table):
    """A new kind of refusal shows on the page under "other" until REFUSAL_GROUPS names it."""
    groups = families.refusal_groups([r for r in table["families"] if r["outcome"] == "refused"])
    assert "other" not in groups and sum(map(len, groups.values())) == table["counts"]["refused"]


def test_the_book_page_is_the_table(table):
    assert (ROOT / families.PAGE).read_text() == families.page(table)


def test_the_learned_sink_families_are_those_that_pass_one():
    """LEARNED_SINK_TYPES is every model type whose modeling file hands the attention interface ``s_aux``."""
    models = Path(transformers.__file__).parent / "models"
    passing = {f.parent.name.replace("_", "-") if f.parent.name.replace("_", "-") in LEARNED_SINK_TYPES else f.parent.name
               for f in models.glob("*/modeling_*.py") if "s_aux" in f.read_text()}
    assert passing == LEARNED_SINK_TYPES


@pytest.mark.slow
@pytest.mark.parametrize("family", ["gpt2", "gpt_oss", "granite_swa", "mpnet", "bart", "gemma2", "mimo_v2_flash", "pegasus", "funnel", "trocr"])
def test_a_family_tried_again_gives_its_row(table, family):
    row = next(r for r in table["families"] if r["family"] == family)
    again = families.try_family(family, row["kind"])
    assert (again["outcome"], again["reason"], again["path"], again["learned_sink"]) == (row["outcome"], row["reason"], row["path"], row["learned_sink"])


@pytest.mark.parametrize("layer, shape, words", [
    (2, (3, 4, 8, 8), "more attention modules than its config's 2 layers"),
    (0, (12, 8, 8), "shape (12, 8, 8) where its config promises (windows, 4, 8, 8)"),
    (0, (3, 16, 8, 8), "shape (3, 16, 8, 8)"),
    (1, (3, 4, 16, 16), "layer 1 gave weights of shape (3, 4, 16, 16)"),
])
def test_a_layer_of_another_shape_stops_in_one_line(layer, shape, words):
    import re

    from attncoda.engine.capture import CaptureError
    from attncoda.engine.signatures import SignatureAccumulator, _check_layer

    acc = SignatureAccumulator(2, 4, 8, True, (0,), eps_values=())
    _check_layer(acc, 1, (3, 4, 8, 8), False)  # the promised shape passes
    with pytest.raises(CaptureError, match=re.escape(words)) as err:
        _check_layer(acc, layer, shape, False)
    assert "\n" not in str(err.value) and "report the model's family" in str(err.value)
    with pytest.raises(CaptureError, match="^org/model: "):
        _check_layer(acc, layer, shape, False, "org/model")


def test_the_score_path_may_hand_a_layer_s_heads_in_blocks_but_not_more_heads():
    from attncoda.engine.capture import CaptureError
    from attncoda.engine.signatures import SignatureAccumulator, _check_layer

    acc = SignatureAccumulator(2, 4, 8, True, (0,), eps_values=())
    _check_layer(acc, 0, (3, 2, 8, 8), True)  # two of its four heads
    with pytest.raises(CaptureError, match=r"layer 0 gave scores of shape \(3, 6, 8, 8\) where its config names 4 heads"):
        _check_layer(acc, 0, (3, 6, 8, 8), True)
