"""Attention patterns from the tools readers already use give the same signatures as the package's own capture."""

import numpy as np
import pytest
import torch

from attncoda.engine.capture import capture_attention
from attncoda.engine.models import load_model
from attncoda.engine.patterns import signatures_from_patterns
from attncoda.engine.signatures import SignatureAccumulator
from tiny_models import save_tiny, tiny_inputs
from metas import signature_meta


@pytest.fixture(scope="module")
def captured(tmp_path_factory):
    loaded = load_model(str(save_tiny("llama", tmp_path_factory.mktemp("p") / "tiny-llama")))
    inputs = tiny_inputs(loaded, n=3, length=16)
    acc = SignatureAccumulator(loaded.info.layers, loaded.info.heads, 16, True, (0,))
    with torch.inference_mode(), capture_attention(loaded.backbone, acc.update):
        loaded.backbone(**inputs)
    with torch.inference_mode():
        attentions = loaded.backbone(**inputs, output_attentions=True).attentions
    return acc.finish(signature_meta(16)), attentions


def _same(a, b):
    for e in a.aitchison:
        np.testing.assert_allclose(a.aitchison[e], b.aitchison[e], rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(a.arithmetic, b.arithmetic, rtol=1e-9, atol=1e-15)
    for k in ("sink_mass", "entropy", "content_entropy"):
        np.testing.assert_allclose(a.stats[k], b.stats[k], rtol=1e-6, atol=1e-9, equal_nan=True)


def test_transformers_output_attentions(captured):
    ours, attentions = captured
    sig = signatures_from_patterns(attentions, model="tiny")
    assert sig.meta.causal and sig.default_kind == "aitchison" and sig.shape == ours.shape
    _same(sig, ours)


def test_plain_arrays_and_a_transformer_lens_cache(captured):
    ours, attentions = captured
    stacked = np.stack([a.numpy() for a in attentions], axis=1)  # [window, layer, head, query, key]
    _same(signatures_from_patterns(stacked), ours)
    cache = {f"blocks.{i}.attn.hook_pattern": a for i, a in enumerate(attentions)}  # what an ActivationCache holds
    cache["blocks.0.hook_resid_pre"] = torch.zeros(1)
    _same(signatures_from_patterns(cache), ours)
    one = signatures_from_patterns(stacked[0])  # [layer, head, query, key]: one window
    assert one.meta.n == 1


def test_every_analysis_runs_on_imported_patterns(captured):
    from attncoda.studies.audit import audit
    from attncoda.studies.measurement import measure_signatures

    _, attentions = captured
    sig = signatures_from_patterns(attentions)
    entry = measure_signatures(sig, 0, n_triples=200)
    assert entry.reversal["content"].reversed == 0 and entry.signature_kind == "aitchison"
    assert audit([sig], "js", None, 200).sink["keys"] == [0]


@pytest.mark.parametrize("bad, message", [
    (np.ones((2, 3)), "must be \\[layer, head, query, key\\]"),
    (np.full((1, 1, 4, 5), 0.2), "must be square"),
    (np.full((1, 1, 4, 4), 2.0), "must sum to 1"),
    (-np.ones((1, 1, 4, 4)), "finite and non-negative"),
])
def test_bad_patterns_are_one_line(bad, message):
    with pytest.raises(ValueError, match=message):
        signatures_from_patterns(bad)
