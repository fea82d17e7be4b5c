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


def _rows(layers=2, heads=3, keys=6, windows=1, seed=0):
    rng = np.random.default_rng(seed)
    p = np.tril(rng.random((windows, layers, heads, keys, keys))) + 1e-3 * np.tril(np.ones((keys, keys)))
    return p / p.sum(-1, keepdims=True)


def test_every_layer_is_checked_not_only_the_first():
    """D2: a later layer scaled, holding NaN or attending to future keys is refused, naming the layer."""
    import pytest

    from attncoda.engine.patterns import signatures_from_patterns

    good = _rows()
    scaled, nan, future = good.copy(), good.copy(), good.copy()
    scaled[:, 1] *= 2
    nan[:, 1, 0, 3, 0] = np.nan
    future[:, 1, 0, 0] = 1 / 6
    for bad, said in ((scaled, "layer 1's attention rows must sum to 1"), (nan, "layer 1's attention patterns must be finite"),
                      (future, "layer 1 attends to later keys")):
        with pytest.raises(ValueError, match=said):
            signatures_from_patterns(bad)


def test_a_mapping_with_a_gap_in_its_blocks_is_refused():
    """D3: a TransformerLens-style mapping with blocks 0 and 7 only is not one layer."""
    import pytest

    from attncoda.engine.patterns import signatures_from_patterns

    good = _rows(layers=1)[:, 0]
    with pytest.raises(ValueError, match="hold blocks 0, 7 but not 1, 2, 3, 4, 5"):
        signatures_from_patterns({"blocks.0.attn.hook_pattern": good, "blocks.7.attn.hook_pattern": good})
    with pytest.raises(ValueError, match="holds none"):
        signatures_from_patterns({"layer0": good})


def test_bad_sinks_and_empty_patterns_are_one_line_and_bf16_is_accepted():
    """D26: a sink of (0.5,), "0" or True, an empty pattern, and bf16 rows (which sum to 1 only to bf16's precision)."""
    import pytest
    import torch

    from attncoda.engine.patterns import signatures_from_patterns

    good = _rows()
    for sink in ((0.5,), "0", True, (0, 0), (9,)):
        with pytest.raises(ValueError, match="sink keys"):
            signatures_from_patterns(good, sink=sink)
    with pytest.raises(ValueError, match="non-empty"):
        signatures_from_patterns(np.zeros((1, 2, 0, 0)))
    sig = signatures_from_patterns(torch.tensor(_rows(keys=64)).to(torch.bfloat16))
    assert sig.shape[-1] == 64
