"""The capture's check against the model's own forward pass (engine/capture_check.py): every tiny family and the
default models pass, a capture that computes one layer differently is refused in one line."""

import pytest

from attncoda.engine import capture_check, score_capture
from attncoda.engine.capture import CaptureError
from attncoda.engine.models import load_model
from attncoda.engine.signatures import compute
from tiny_models import FAMILIES, save_tiny, save_tiny_gguf, save_tiny_learned_sink, tiny_inputs


def _window(loaded):
    inputs = tiny_inputs(loaded, n=1)
    return inputs.get("input_ids", inputs.get("pixel_values"))


@pytest.mark.parametrize("family", FAMILIES)
def test_the_capture_equals_the_forward_on_each_tiny_family(family, tmp_path):
    loaded = load_model(str(save_tiny(family, tmp_path / family)))
    found = capture_check.compare(loaded, _window(loaded))
    print(family, found.largest)
    assert found.passed and found.largest < 1e-5 and found.first_layer is None


@pytest.mark.parametrize("build", [save_tiny_learned_sink, save_tiny_gguf])
def test_the_capture_equals_the_forward_with_a_learned_sink_and_from_a_gguf_file(build, tmp_path):
    target = build(tmp_path / ("model.gguf" if build is save_tiny_gguf else "model"))
    loaded = load_model(str(target))
    found = capture_check.compare(loaded, _window(loaded))
    assert found.passed and found.largest < 1e-5


@pytest.mark.slow
@pytest.mark.parametrize("name", ["minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"])
def test_the_capture_equals_the_forward_on_each_default_model(name):
    from attncoda.engine import registry

    if not registry.REGISTRY[name].installed():
        pytest.skip(f"{name} is not installed here (make models)")
    loaded = load_model(name)
    found = capture_check.compare(loaded, _window(loaded))
    print(name, found.largest)
    assert found.passed and found.first_layer is None


def test_a_capture_that_changes_a_layer_is_refused(tmp_path, monkeypatch):
    """One attention layer computed differently under the capture (its output scaled by 1.1): the check stops the run
    and names that layer; nothing is remembered, so the next run asks again."""
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    loaded = load_model(str(save_tiny("llama", tmp_path / "llama")))
    real = score_capture._attention

    def changed(module, *args, **kwargs):
        output, weights = real(module, *args, **kwargs)
        return (output * 1.1 if module.layer_idx == 1 else output), weights

    monkeypatch.setattr(score_capture, "_attention", changed)
    window = _window(loaded)
    with pytest.raises(CaptureError, match=r"differs from the model's own by 0\.\d+ .*from attention layer 1 \(layers\.1\.self_attn\)") as err:
        capture_check.check_capture(loaded, window)
    assert "\n" not in str(err.value)
    assert not (tmp_path / "cache" / "capture_checks").exists()
    with pytest.raises(CaptureError):
        compute(loaded, n=2, length=16, seed=0)
    monkeypatch.setattr(score_capture, "_attention", real)
    assert capture_check.check_capture(loaded, window).passed
    assert capture_check.check_capture(loaded, window) is None  # remembered under the weights' identity


def test_scores_that_differ_from_the_model_s_own_weights_are_refused(tmp_path, monkeypatch):
    """The scores the capture measures are held to the model's own weights, not only its outputs: scores scaled by 1.1
    leave every output as it was (the output comes from sdpa) and are refused at layer 0."""
    loaded = load_model(str(save_tiny("llama", tmp_path / "llama")))
    real = score_capture._scores
    monkeypatch.setattr(score_capture, "_scores", lambda *args: real(*args) * 1.1)
    found = capture_check.compare(loaded, _window(loaded))
    assert not found.passed and found.first_layer == 0


def test_a_learned_sink_logit_on_the_wrong_head_is_refused(tmp_path, monkeypatch):
    loaded = load_model(str(save_tiny_learned_sink(tmp_path / "oss")))
    real = score_capture._with_sink
    monkeypatch.setattr(score_capture, "_with_sink", lambda z, sink, heads: real(z, sink.flip(0), heads))
    found = capture_check.compare(loaded, _window(loaded))
    assert not found.passed and found.first_layer == 0


def test_outputs_alone_do_not_pass_on_the_score_path(tmp_path, monkeypatch):
    """A model whose own forward returns no attention weights: on the score path its outputs come from sdpa, not from
    the captured rows, so agreeing outputs vouch for nothing and the check refuses in one line; nothing is remembered."""
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    loaded = load_model(str(save_tiny("llama", tmp_path / "llama")))
    real = capture_check._outputs
    monkeypatch.setattr(capture_check, "_outputs", lambda *a, **k: (*real(*a, **k)[:2], None))
    found = capture_check.compare(loaded, _window(loaded))
    assert found.largest < 1e-5 and found.rows_compared == 0 and found.rows_needed and not found.passed
    with pytest.raises(CaptureError, match="returned no attention weights to compare the captured rows with") as err:
        capture_check.check_capture(loaded, _window(loaded))
    assert "\n" not in str(err.value) and not (tmp_path / "cache" / "capture_checks").exists()
    monkeypatch.setattr(capture_check, "_outputs", real)
    assert capture_check.compare(loaded, _window(loaded)).rows_compared == loaded.info.layers


def test_a_long_window_is_checked_on_its_first_tokens(monkeypatch, tmp_path):
    """The check runs the model's own eager forward, whose weights for every layer at once grow with L²: a window past
    CHECK_TOKENS is cut to its first tokens (audit --length 8192 was killed for memory)."""
    import torch

    from attncoda.engine import capture_check

    seen = []
    monkeypatch.setattr(capture_check, "_passed_path", lambda loaded: tmp_path / "no-pass-yet.json")
    monkeypatch.setattr(capture_check, "compare", lambda loaded, window: seen.append(tuple(window.shape)) or capture_check.CaptureCheck(0.0, None, None, 1e-3))
    loaded = type("Loaded", (), {"info": type("Info", (), {"vision": False, "name": "m", "weights_sha256": "x"})()})()
    capture_check.check_capture(loaded, torch.zeros(1, 8192, dtype=torch.long))
    assert seen == [(1, capture_check.CHECK_TOKENS)]
