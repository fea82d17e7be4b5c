"""Learned attention sinks (GPT-OSS and its kin) as a part of their own (engine/score_capture.py, the signatures, the
audit, the monitor, --patterns)."""

import json

import numpy as np
import pytest
import torch

from attncoda.engine import score_capture
from attncoda.engine.capture import CaptureError, capture_attention
from attncoda.engine.models import LEARNED_SINK_TYPES, load_model
from attncoda.engine.corpus import text_windows
from attncoda.engine.signatures import SignatureAccumulator, compute, sink_positions, sink_sets_for
from tiny_models import save_tiny_learned_sink, tiny_inputs

SINK_LOGIT = 3.0


@pytest.fixture(scope="module")
def oss(tmp_path_factory):
    return save_tiny_learned_sink(tmp_path_factory.mktemp("oss") / "gpt_oss", sink=SINK_LOGIT)


@pytest.fixture(scope="module")
def loaded_oss(oss):
    return load_model(str(oss))


def test_a_learned_sink_model_gets_the_learned_sink_set(loaded_oss):
    assert loaded_oss.info.architecture in LEARNED_SINK_TYPES and loaded_oss.info.default_sink == "learned"
    assert score_capture.learned_sinks(loaded_oss.backbone) and score_capture.score_path_reason(loaded_oss.backbone) is None
    assert sink_sets_for("learned", 24, 0, 0) == {"learned": [0], "first": [0, 1]}  # key j is part j + 1, with the learned sink
    assert sink_positions("first4", 24, virtual=1) == (0, 1, 2, 3, 4)
    with pytest.raises(ValueError, match="needs a model with learned attention sinks"):
        sink_positions("learned", 24)


def test_rows_hold_the_learned_sink_as_part_0_and_sum_to_one(loaded_oss):
    """softmax over [sink logit, keys] is a composition of 1 + K parts; without part 0 it is the model's own eager
    weights (which drop the sink, so they sum to less than 1): the capture keeps the part the model's weights hide."""
    inputs = tiny_inputs(loaded_oss, n=2, length=20)
    eager = {}
    with torch.inference_mode():
        out = loaded_oss.backbone(**inputs, output_attentions=True)
    for layer, weights in enumerate(out.attentions):
        eager[layer] = weights
    parts = {}
    with torch.inference_mode(), score_capture.capture_scores(
            loaded_oss.backbone, lambda layer, heads, queries, z: parts.setdefault(layer, []).append(torch.softmax(z, dim=-1))):
        loaded_oss.backbone(**inputs)
    for layer, weights in eager.items():
        rows = torch.cat(parts[layer], dim=1)
        assert rows.shape[-1] == weights.shape[-1] + 1
        torch.testing.assert_close(rows.sum(-1), torch.ones_like(rows[..., 0]))
        assert float(weights.sum(-1).max()) < 0.99  # the sink logit takes a share of every row
        assert len({round(float(x), 4) for x in (1 - weights[0, :, -1].sum(-1))}) == weights.shape[1]  # a share of its own per head
        torch.testing.assert_close(rows[..., 1:], weights, rtol=1e-4, atol=1e-6)


def test_signatures_carry_the_learned_sink(loaded_oss):
    sig = compute(loaded_oss, n=3, length=20, seed=0, batch_size=2)
    assert sig.shape == (2, 4, 21) and sig.stats["sink_mass"].shape == (2, 4, 20)
    assert sig.meta.default_sink == "learned" and sig.sink() == (0,) and sig.sink("first") == (0, 1)
    np.testing.assert_allclose(sig.arithmetic.sum(-1), 1.0, rtol=1e-9)
    ids = torch.as_tensor(text_windows(loaded_oss.processor, 3, 20, 0)[0])
    with torch.inference_mode():
        own = loaded_oss.backbone(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True).attentions
    for layer, weights in enumerate(own):  # the learned sink's mass in each row is what the model's own weights leave out
        expected = (1.0 - weights.double().sum(-1))[:, :, 1:].mean(dim=(0, 2)).numpy()
        np.testing.assert_allclose(sig.stats["sink_mass"][layer, :, 1:].mean(-1), expected, rtol=1e-5)


def test_the_eager_path_refuses_learned_sinks(loaded_oss):
    with pytest.raises(CaptureError, match="learned attention sinks"):
        with capture_attention(loaded_oss.backbone, lambda *a: None):
            pass
    with pytest.raises(ValueError, match="learned sinks"):
        SignatureAccumulator(1, 4, 8, True, (0,), virtual=1).update(0, np.full((1, 4, 8, 8), 1 / 8, np.float32))


def test_layers_that_differ_in_their_parts_are_refused(oss):
    loaded = load_model(str(oss))
    loaded.backbone.layers[1].self_attn.sinks = None
    assert "some attention layers and none in others" in score_capture.score_path_reason(loaded.backbone)


def test_the_audit_names_the_learned_sink(oss, tmp_path, monkeypatch, capsys):
    from attncoda.face.cli import main

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    main(["audit", "--model", str(oss), "--n", "4", "--length", "24", "--triples", "500", "--seeds", "0", "1", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert report["sink"] == {"name": "learned", "keys": [], "learned": True} and report["length"] == 24
    assert 0 < report["learned_sink_mass"] < 1 and report["row_sink_mass"] > 0
    main(["audit", "--model", str(oss), "--n", "4", "--length", "24", "--triples", "500", "--seeds", "0", "1", "--sink", "learned"])
    text = capsys.readouterr().out
    assert "learned: the model's learned sink logit, part 0 of each row" in text and "the learned sink: 0." in text
    main(["audit", "--model", str(oss), "--n", "4", "--length", "24", "--triples", "500", "--seeds", "0", "1", "--sink", "0,1", "--format", "json"])
    keys = json.loads(capsys.readouterr().out)
    assert keys["sink"] == {"name": "keys 0,1", "keys": [0, 1], "learned": True} and keys["row_sink_mass"] > report["row_sink_mass"]


def test_the_monitor_counts_the_learned_sink_as_sink(loaded_oss):
    from attncoda.engine.monitor import attention_statistics

    from attncoda.base.protocol import COLLAPSE_FIRST_ROW

    ids = tiny_inputs(loaded_oss, n=2, length=16)["input_ids"]
    means = attention_statistics(loaded_oss.model, ids)
    with torch.inference_mode():
        own = loaded_oss.backbone(input_ids=ids, attention_mask=torch.ones_like(ids), output_attentions=True).attentions
    # the sink is the learned part (what the model's weights leave out) and key 0
    expected = np.mean([(1.0 - w.double().sum(-1) + w.double()[..., 0])[:, :, COLLAPSE_FIRST_ROW:].mean().item() for w in own])
    assert means["sink_mass"] == pytest.approx(expected, rel=1e-5)


def test_patterns_without_the_learned_sink_part_are_refused_with_the_reason(loaded_oss):
    from attncoda.engine.patterns import signatures_from_patterns

    inputs = tiny_inputs(loaded_oss, n=2, length=16)
    with torch.inference_mode():
        weights = loaded_oss.backbone(**inputs, output_attentions=True).attentions
    with pytest.raises(ValueError, match="sum to less than 1 .*learned sinks"):
        signatures_from_patterns([w.numpy() for w in weights])


def test_the_entropy_terms_split_rows_with_the_learned_sink(oss, tmp_path, monkeypatch):
    """The collapse split's terms on a learned-sink model: h(s) + s·0 + c·H(π) = H over rows of 1 + K parts."""
    from attncoda.engine.entropy_terms import entropy_terms
    from attncoda.engine.signatures import SignatureSpec

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    terms = entropy_terms(str(oss), seed=0, spec=SignatureSpec(n=2, length=20, batch_size=2))
    assert terms["sink"] == [0] and abs(terms["within_sink"]) < 1e-15  # one sink part: no spread within the sink
    assert terms["binary"] + terms["content"] == pytest.approx(terms["entropy"], rel=1e-12)
