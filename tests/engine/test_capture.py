"""The model path on tiny random models of every architecture family, loaded from a saved folder."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import attncoda as ac
from attncoda.engine.capture import CaptureError, capture_attention
from attncoda.math.rowstats import row_statistics, row_statistics_from_scores
from attncoda.engine.models import load_model
from attncoda.engine.signatures import SignatureAccumulator
from tiny_models import CAUSAL, FAMILIES, tiny_family_folders, tiny_inputs
from metas import signature_meta


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_family_folders(tmp_path_factory.mktemp("tiny"))



@pytest.mark.parametrize("family", FAMILIES)
def test_captured_rows_equal_output_attentions(tiny, family):
    loaded = load_model(str(tiny[family]))
    assert loaded.info.causal == (family in CAUSAL)
    assert loaded.info.architecture == family
    inputs = tiny_inputs(loaded)
    captured, logs = {}, {}

    def keep(i, w, lw):
        captured.setdefault(i, w.clone())
        logs.setdefault(i, torch.as_tensor(np.asarray(lw)))  # the lazy log-softmax, formed as an array

    with torch.inference_mode(), capture_attention(loaded.backbone, keep):
        loaded.backbone(**inputs)
    with torch.inference_mode():
        reference = loaded.backbone(**inputs, output_attentions=True).attentions
    assert len(captured) == len(reference) == loaded.info.layers
    for i, ref in enumerate(reference):
        assert captured[i].shape == ref.shape
        torch.testing.assert_close(captured[i], ref, atol=1e-6, rtol=0)
        # the log path: a float64 log-softmax of the very scores that produced the weights
        assert logs[i].dtype == torch.float64 and logs[i].shape == ref.shape
        torch.testing.assert_close(logs[i].exp(), ref.double(), atol=1e-6, rtol=0)
        torch.testing.assert_close(torch.logsumexp(logs[i], -1), torch.zeros(ref.shape[:-1], dtype=torch.float64), atol=1e-12, rtol=0)


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_row_statistics_match_the_numpy_math(tiny, family):
    loaded = load_model(str(tiny[family]))
    inputs = tiny_inputs(loaded, length=20)
    with torch.inference_mode():
        weights = loaded.backbone(**inputs, output_attentions=True).attentions[1]
    sink = (0,) if loaded.info.causal else (0, 19)
    stats = row_statistics(weights.numpy(), sink, loaded.info.causal, 1e-6)
    p = weights.double().numpy()
    for t in range(1, p.shape[-2]):
        width = t + 1 if loaded.info.causal else p.shape[-1]
        row = ac.closure(p[:, :, t, :width])
        split = ac.entropy_split(row, sink if width > 19 else (0,))
        if width <= max(sink):
            continue
        np.testing.assert_allclose(stats["sink_mass"][:, :, t], split.sink_mass, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(stats["entropy"][:, :, t], split.entropy, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(stats["content_entropy"][:, :, t], split.content_entropy, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(stats["concentration"][:, :, t], ac.content_concentration(row, sink), rtol=1e-6, atol=1e-6)


def test_row_statistics_from_logs_match_the_numpy_math_without_any_eps():
    rng = np.random.default_rng(1)
    length = 30
    scores = torch.tensor(rng.normal(0, 8, (2, 3, length, length)), dtype=torch.float64)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    logs = torch.log_softmax(scores.masked_fill(~causal, torch.finfo(torch.float64).min), -1).numpy()
    stats = row_statistics(logs, (0,), True, logs=True)
    for t in range(1, length):
        row = np.exp(logs[:, :, t, : t + 1])
        lx = logs[:, :, t, 1 : t + 1]
        expected = ((lx - lx.mean(axis=-1, keepdims=True)) ** 2).sum(axis=-1)  # C_A^⊥ straight from the logs
        np.testing.assert_allclose(stats["concentration"][:, :, t], expected, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(stats["entropy"][:, :, t], ac.entropy(ac.closure(row)), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(stats["content_entropy"][:, :, t], ac.content_entropy(ac.closure(row)), rtol=1e-9, atol=1e-9)


def test_row_statistics_with_exact_zeros_and_tiny_parts():
    """Synthetic causal rows with parts below ε and exact zeros inside the support."""
    rng = np.random.default_rng(0)
    length = 40
    scores = torch.tensor(rng.normal(0, 6, (2, 3, length, length)), dtype=torch.float32)
    causal = torch.ones(length, length, dtype=torch.bool).tril()
    weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), -1)
    weights[0, 0, -1, 5] = 0.0
    weights[0, 0, -1] /= weights[0, 0, -1].sum()
    stats = row_statistics(weights.numpy(), (0,), True, 1e-6)
    row = ac.closure(weights[:, :, -1].double().numpy())
    assert (row < 1e-6).sum() > 0
    np.testing.assert_allclose(stats["concentration"][:, :, -1], ac.content_concentration(row), rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(stats["entropy"][:, :, -1], ac.entropy(row), rtol=1e-6, atol=1e-6)


def test_signature_accumulator_equals_aitchison_mean_of_rows(tiny):
    loaded = load_model(str(tiny["qwen2"]))
    inputs = tiny_inputs(loaded, n=3, length=16)
    acc = SignatureAccumulator(loaded.info.layers, loaded.info.heads, 16, True, (0,))
    with torch.inference_mode(), capture_attention(loaded.backbone, acc.update):
        loaded.backbone(**inputs)
    sig = acc.finish(signature_meta(16))
    assert sig.meta.log_path and sig.default_kind == "logit"
    with torch.inference_mode():
        reference = loaded.backbone(**inputs, output_attentions=True).attentions
    logit = sig.logit
    for layer, att in enumerate(reference):
        last = ac.closure(att[:, :, -1, :].double().numpy())  # (n, heads, L)
        for eps in (1e-5, 1e-6, 1e-7):
            expected = ac.aitchison_mean(np.swapaxes(last, 0, 1), eps)
            np.testing.assert_allclose(sig.aitchison[eps][layer], expected, rtol=1e-9, atol=1e-12)
        np.testing.assert_allclose(sig.arithmetic[layer], last.mean(axis=0), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(logit[layer], ac.aitchison_mean(np.swapaxes(last, 0, 1)), rtol=1e-5)
    assert np.all(np.isnan(sig.stats["entropy"][:, :, 0]))


def test_an_architecture_without_attention_weights_is_refused():
    class NoAttention(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.config = type("C", (), {"_attn_implementation": "eager"})()
            self.proj = torch.nn.Linear(4, 4)

    with pytest.raises(CaptureError, match="cannot be captured"):
        with capture_attention(NoAttention(), lambda i, w, lw: None):
            pass

    class SilentAttention(torch.nn.Module):
        def forward(self, x):
            return x, None

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.config = type("C", (), {"_attn_implementation": "eager"})()
            self.attn = SilentAttention()

        def forward(self, x):
            return self.attn(x)

    model = Model()
    with pytest.raises(CaptureError, match="returned no attention weights"):
        with capture_attention(model, lambda i, w, lw: None):
            model(torch.zeros(2))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**16), length=st.integers(2, 40), scale=st.floats(0.1, 30.0), causal=st.booleans(),
       sink=st.sampled_from([(0,), (0, 1)]))
def test_statistics_from_scores_equal_those_from_the_float64_log_softmax(seed, length, scale, causal, sink):
    """The fused path (running sums of exp(z − max) inside the kernel) against the full float64 log-softmax, for any scores."""
    rng = np.random.default_rng(seed)
    scores = (rng.normal(0, scale, (2, 3, length, length)) + rng.normal(0, 50)).astype(np.float32)
    if causal:  # eager attention adds the dtype's minimum above the diagonal
        scores = np.where(np.tri(length, dtype=bool), scores, np.finfo(np.float32).min).astype(np.float32)
    logs = torch.log_softmax(torch.as_tensor(scores, dtype=torch.float64), -1).numpy()
    expected = row_statistics(logs, sink, causal, logs=True)
    stats, lse = row_statistics_from_scores(scores, sink, causal)
    for k, v in expected.items():
        np.testing.assert_allclose(stats[k], v, rtol=1e-10, atol=1e-11, equal_nan=True, err_msg=k)
    # rounding of ln Σe, absolute near lse = 0 (hypothesis found lse = −0.0026 off by 4e-16, a 1.5e-13 relative miss)
    np.testing.assert_allclose(lse, torch.logsumexp(torch.as_tensor(scores, dtype=torch.float64), -1).numpy(), rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("family", ["llama", "bert"])
def test_the_accumulator_reads_scores_as_it_reads_the_full_log_softmax(tiny, family):
    """Signatures and row statistics from the lazy log-softmax's scores equal those from the float64 array it stands for."""
    loaded = load_model(str(tiny[family]))
    inputs = tiny_inputs(loaded, n=3, length=16)
    info = loaded.info
    fused = SignatureAccumulator(info.layers, info.heads, 16, info.causal, (0,))
    full = SignatureAccumulator(info.layers, info.heads, 16, info.causal, (0,))

    def both(layer, weights, log_weights):
        assert log_weights.scores.dtype == torch.float32
        fused.update(layer, weights, log_weights)
        full.update(layer, weights, np.asarray(log_weights))

    with torch.inference_mode(), capture_attention(loaded.backbone, both):
        loaded.backbone(**inputs)
    a, b = fused.finish(signature_meta()), full.finish(signature_meta())
    np.testing.assert_allclose(a.logit, b.logit, rtol=1e-12, atol=1e-15)
    for k in a.stats:
        np.testing.assert_allclose(a.stats[k], b.stats[k], rtol=1e-10, atol=1e-11, equal_nan=True, err_msg=k)
