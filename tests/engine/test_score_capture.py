"""Scores beside an sdpa forward pass (engine/score_capture.py) and the row statistics on the scores' own device
(engine/device_rowstats.py), held against the eager capture and the compiled CPU kernel."""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from attncoda.engine import score_capture
from attncoda.engine.capture import CaptureError, capture_attention
from attncoda.engine.device_rowstats import row_statistics_torch
from attncoda.engine.models import load_model
from attncoda.engine.signatures import compute
from attncoda.math.rowstats import STATISTICS, row_statistics_from_scores
from tiny_models import save_tiny, tiny_inputs

SCORE_FAMILIES = ("gpt2", "gpt_neox", "llama", "qwen2", "gemma3_text", "bert", "vit")
"""The tiny families whose attention goes through transformers' interface; MPNet's does not."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("scores")
    return {f: save_tiny(f, root / f) for f in (*SCORE_FAMILIES, "mpnet")}


DEVICES = ("cpu", *(["cuda"] if torch.cuda.is_available() else []))
"""Where the torch reductions are held against the CPU kernel: the CPU, and a GPU where this machine has one."""


def both_kernels(z: np.ndarray, sink, causal: bool, device: str = "cpu"):
    kernel, lse = row_statistics_from_scores(z, sink, causal)
    stats, stats_lse = row_statistics_torch(torch.as_tensor(z, device=device), sink, causal, rows_per_chunk=5)
    assert stats_lse.device.type == device, "the reductions run where the scores are"
    return kernel, lse, {k: v.cpu().numpy() for k, v in stats.items()}, stats_lse.cpu().numpy()


def assert_agree(kernel, lse, device, device_lse, rtol=1e-10):
    np.testing.assert_allclose(device_lse, lse, rtol=rtol, atol=1e-12)
    for name in STATISTICS:
        np.testing.assert_allclose(device[name], kernel[name], rtol=rtol, atol=1e-11, equal_nan=True, err_msg=name)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31), offset=st.sampled_from([0.0, 50.0, -50.0]), scale=st.sampled_from([0.1, 1.0, 30.0]),
       causal=st.booleans(), window=st.sampled_from([None, 1, 3, 6]), hidden=st.floats(0.0, 0.5))
@pytest.mark.parametrize("device", DEVICES)
def test_device_statistics_agree_with_the_compiled_kernel(device, seed, offset, scale, causal, window, hidden):
    """Random scores with offsets and scales, masked keys (−inf) and sliding windows: the torch reductions (on each
    device of :data:`DEVICES`) and the compiled kernel give the same statistics and log-sum-exps to 1e-10."""
    rng = np.random.default_rng(seed)
    q = k = 11
    z = (offset + scale * rng.standard_normal((2, 3, q, k))).astype(np.float32)
    masked = rng.random(z.shape) < hidden
    t, j = np.arange(q)[:, None], np.arange(k)[None, :]
    if window is not None:
        masked |= j <= t - window  # a sliding window hides the keys more than `window` behind
    masked &= j != t  # the query's own key stays visible, so no row is empty
    z[masked] = -np.inf
    assert_agree(*both_kernels(z, (0, 4), causal, device))


def test_a_hidden_key_is_outside_the_support():
    """A row whose hidden keys are removed gives the statistics of the shorter row."""
    rng = np.random.default_rng(1)
    z = rng.standard_normal((1, 1, 6, 6)).astype(np.float32) * 3
    full, _ = row_statistics_from_scores(z[..., [0, 1, 3, 5]][..., [5], :], (0,), False)
    masked = z[..., [5], :].copy()
    masked[..., [2, 4]] = -np.inf
    for stats in (row_statistics_from_scores(masked, (0,), False)[0],
                  {k: v.numpy() for k, v in row_statistics_torch(torch.as_tensor(masked), (0,), False)[0].items()}):
        for name in STATISTICS:
            np.testing.assert_allclose(stats[name], full[name], rtol=1e-12, err_msg=name)


@pytest.mark.parametrize("family", [f for f in SCORE_FAMILIES if f != "vit"])
def test_scores_beside_sdpa_are_eager_attention_scores(tiny, family):
    """Layer 0's scores are eager attention's own to one float32 rounding (the same matmul, its scaling fused or not),
    with −inf where eager's mask hides a key; later layers agree to float32 rounding (their inputs come from sdpa's
    output, not eager's)."""
    loaded = load_model(str(tiny[family]))
    inputs = tiny_inputs(loaded, length=24)
    eager, ours = {}, {}
    with torch.inference_mode():
        with capture_attention(loaded.backbone, lambda layer, w, lw: eager.setdefault(layer, lw.scores.clone())):
            loaded.backbone(**inputs)
        with score_capture.capture_scores(loaded.backbone, lambda layer, heads, queries, z: ours.setdefault(layer, []).append(z.clone())):
            loaded.backbone(**inputs)
    assert loaded.backbone.config._attn_implementation == "eager"  # restored
    assert sorted(ours) == sorted(eager) == list(range(loaded.info.layers))
    for layer, reference in eager.items():
        z = torch.cat(ours[layer], dim=1)
        hidden = reference < torch.finfo(torch.float32).min / 2
        assert torch.isinf(z[hidden]).all() and torch.isfinite(z[~hidden]).all()
        if layer == 0:  # the same inputs: one float32 rounding of the largest score at most
            torch.testing.assert_close(z[~hidden], reference[~hidden], rtol=0, atol=2e-7 * float(reference[~hidden].abs().max()))
        else:
            torch.testing.assert_close(z[~hidden], reference[~hidden], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("family", SCORE_FAMILIES)
def test_signatures_from_the_score_path_agree_with_the_eager_path(tiny, family, monkeypatch):
    """Every array of the signatures: the score path against eager capture, to float32 rounding."""
    loaded = load_model(str(tiny[family]))
    ours = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    monkeypatch.setattr(score_capture, "score_path_reason", lambda model: "eager asked for")
    eager = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    assert ours.meta.capture == "scores beside sdpa" and eager.meta.capture == "eager"
    for a, b in ((ours.logit, eager.logit), (ours.arithmetic, eager.arithmetic), *((ours.aitchison[e], eager.aitchison[e]) for e in ours.aitchison)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-7)
    for name in STATISTICS:
        np.testing.assert_allclose(ours.stats[name], eager.stats[name], rtol=1e-4, atol=1e-6, equal_nan=True, err_msg=name)


def test_chunks_of_heads_give_the_same_signatures(tiny, monkeypatch):
    """One window of one head per chunk (a budget of one window's square) against the whole batch at once: the same
    numbers (GQA included)."""
    loaded = load_model(str(tiny["qwen2"]))
    whole = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    monkeypatch.setattr(score_capture, "CHUNK_BYTES", 20 * 20 * 4)
    seen = []
    original = score_capture._scores
    monkeypatch.setattr(score_capture, "_scores", lambda *a, **k: seen.append((a[2], a[3])) or original(*a, **k))
    chunked = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    assert {(windows.stop - windows.start, heads.stop - heads.start) for windows, heads in seen} == {(1, 1)}  # one window of one head
    np.testing.assert_allclose(chunked.logit, whole.logit, rtol=1e-12)
    for name in STATISTICS:
        np.testing.assert_allclose(chunked.stats[name], whole.stats[name], rtol=1e-12, equal_nan=True)


def test_device_path_of_the_accumulator_agrees_with_the_kernel_path(tiny, monkeypatch):
    """The accumulator's torch branch (taken for scores off the CPU) gives the kernel branch's signatures."""
    from attncoda.engine import signatures

    loaded = load_model(str(tiny["llama"]))
    kernel = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    monkeypatch.setattr(signatures.SignatureAccumulator, "torch_reductions", True)
    device = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    np.testing.assert_allclose(device.logit, kernel.logit, rtol=1e-10)
    for name in STATISTICS:
        np.testing.assert_allclose(device.stats[name], kernel.stats[name], rtol=1e-10, atol=1e-12, equal_nan=True)


def test_models_outside_the_interface_keep_the_eager_path(tiny):
    loaded = load_model(str(tiny["mpnet"]))
    assert "attention interface" in score_capture.score_path_reason(loaded.backbone)
    with pytest.raises(CaptureError, match="eager"):
        with score_capture.capture_scores(loaded.backbone, lambda *a: None):
            pass
    sig = compute(loaded, n=2, length=16, seed=0, batch_size=2)
    assert sig.meta.capture == "eager" and sig.logit is not None


def test_a_sliding_window_hides_keys_in_the_scores(tmp_path):
    """A layer whose sliding window is shorter than the window: its scores are −inf beyond the window, as eager's mask."""
    import transformers as tf

    from tiny_models import _tokenizer, config

    tok = _tokenizer("gemma3_text")
    cfg = config("gemma3_text", vocab=len(tok))
    cfg.sliding_window = 5
    cfg.layer_types = ["sliding_attention", "full_attention"]
    torch.manual_seed(0)
    model = tf.AutoModelForCausalLM.from_config(cfg, attn_implementation="eager").eval()
    ids = torch.randint(3, len(tok), (1, 12))
    got = {}
    with torch.inference_mode(), score_capture.capture_scores(model.model, lambda layer, heads, queries, z: got.setdefault(layer, z.clone())):
        model.model(input_ids=ids, attention_mask=torch.ones_like(ids))
    t, j = torch.arange(12)[:, None], torch.arange(12)[None, :]
    assert torch.isinf(got[0][..., (j > t) | (j <= t - 5)]).all() and torch.isfinite(got[0][..., (j <= t) & (j > t - 5)]).all()
    assert torch.isfinite(got[1][..., j <= t]).all() and torch.isinf(got[1][..., j > t]).all()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"])
def test_device_reductions_agree_with_the_kernel_on_each_default_model(name, monkeypatch):
    """On the real default models (those installed here), the accumulator's torch reductions give the compiled
    kernel's signatures to 1e-10; MPNet keeps the eager capture, whose reductions are the kernel's either way."""
    from attncoda.engine import registry, signatures

    if not registry.REGISTRY[name].installed():
        pytest.skip(f"{name} is not installed here (make models)")
    loaded = load_model(name)
    kernel = compute(loaded, n=4, length=48, seed=0, batch_size=4)
    monkeypatch.setattr(signatures.SignatureAccumulator, "torch_reductions", True)
    device = compute(loaded, n=4, length=48, seed=0, batch_size=4)
    assert kernel.meta.capture == ("eager" if name == "mpnet-base" else "scores beside sdpa")
    np.testing.assert_allclose(device.logit, kernel.logit, rtol=1e-10)
    for name_ in STATISTICS:
        np.testing.assert_allclose(device.stats[name_], kernel.stats[name_], rtol=1e-10, atol=1e-12, equal_nan=True, err_msg=name_)


@pytest.mark.parametrize("family", ["llama", "gemma3_text", "bert"])
def test_blocks_of_queries_give_the_same_signatures(tiny, family, monkeypatch):
    """Scores formed in blocks of queries (a causal block over the keys its rows can see, the hidden triangle never
    computed) give the whole square's signatures; each block reaches ``on_scores`` with its own rows and keys."""
    loaded = load_model(str(tiny[family]))
    whole = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    monkeypatch.setattr(score_capture, "CAUSAL_BLOCKS_FROM", 8)
    if not loaded.info.causal:
        monkeypatch.setattr(score_capture, "CHUNK_BYTES", 20 * 4 * 3)  # three rows of one window and one head
    blocks = []
    original = score_capture._scores
    monkeypatch.setattr(score_capture, "_scores", lambda *a, **k: (lambda z: blocks.append((a[4], z.shape[-2:])) or z)(original(*a, **k)))
    blocked = compute(loaded, n=3, length=20, seed=0, batch_size=2)
    rows = {(r.start, r.stop, tuple(shape)) for r, shape in blocks}
    if loaded.info.causal:
        assert rows == {(s, min(20, s + 3), (min(20, s + 3) - s, min(20, s + 3))) for s in range(0, 20, 3)}
    else:
        assert rows == {(s, min(20, s + 3), (min(20, s + 3) - s, 20)) for s in range(0, 20, 3)}
    np.testing.assert_allclose(blocked.logit, whole.logit, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(blocked.arithmetic, whole.arithmetic, rtol=1e-6, atol=1e-9)
    for name in STATISTICS:
        np.testing.assert_allclose(blocked.stats[name], whole.stats[name], rtol=1e-6, atol=1e-9, equal_nan=True, err_msg=name)


@settings(max_examples=60, deadline=None)
@given(queries=st.integers(1, 40), extra=st.integers(0, 8), cut=st.data())
def test_a_causal_block_is_the_whole_triangles_rows(queries, extra, cut):
    """The mask a causal block gets is, value for value, the rows of the whole ``(Q, K)`` matrix over the keys those rows
    can see, so the scores keep their bits while the capture never holds ``Q · K`` floats."""
    keys = queries + extra
    start = cut.draw(st.integers(0, queries - 1))
    rows = slice(start, cut.draw(st.integers(start + 1, queries)))
    whole = score_capture._causal_additive(queries, keys, torch.float32, "cpu")
    block = score_capture._causal_block(rows, queries, keys, torch.float32, "cpu")
    assert torch.equal(block, whole[rows, : rows.stop + keys - queries])
