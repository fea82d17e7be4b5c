"""Head ablation on tiny models of every family, and perplexity with and without it."""

import math

import numpy as np
import pytest
import torch

from attncoda.base.errors import ModelError
from attncoda.engine.ablation import ablate_heads, output_projections
from attncoda.engine.models import load_model
from tiny_models import FAMILIES, save_tiny_masked_lm, tiny_family_folders, tiny_inputs


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_family_folders(tmp_path_factory.mktemp("tiny"))



def _out(model, inputs):
    with torch.inference_mode():
        out = model(**inputs)
    return out.logits if hasattr(out, "logits") else out.last_hidden_state


def _projection_io(model, layer, inputs):
    """The input and output of one layer's attention output projection in a forward pass."""
    seen = {}
    module = output_projections(model)[layer][1]
    handle = module.register_forward_hook(lambda m, a, o: seen.update(x=a[0].detach().clone(), y=o.detach().clone()))
    try:
        _out(model, inputs)
    finally:
        handle.remove()
    return module, seen["x"], seen["y"]


def _head_contribution(module, x, head, n_heads):
    width = x.shape[-1] // n_heads
    part = x[..., head * width : (head + 1) * width]
    w = module.weight.detach()
    if type(module).__name__ == "Conv1D":  # GPT-2 stores (in, out)
        return part @ w[head * width : (head + 1) * width, :]
    return part @ w[:, head * width : (head + 1) * width].T


@pytest.mark.parametrize("family", FAMILIES)
def test_no_ablation_is_bit_identical(tiny, family):
    loaded = load_model(str(tiny[family]))
    inputs = tiny_inputs(loaded, length=12)
    before = _out(loaded.model, inputs)
    with ablate_heads(loaded.model, [], loaded.info.heads):
        during = _out(loaded.model, inputs)
    assert torch.equal(before, during)
    assert len(output_projections(loaded.model)) == loaded.info.layers


@pytest.mark.parametrize("family", FAMILIES)
def test_one_head_equals_removing_its_output_by_hand(tiny, family):
    loaded = load_model(str(tiny[family]))
    inputs = tiny_inputs(loaded, length=12)
    layer, head = loaded.info.layers - 1, 1
    module, x, y = _projection_io(loaded.model, layer, inputs)
    expected = y - _head_contribution(module, x, head, loaded.info.heads)
    with ablate_heads(loaded.model, [(layer, head)], loaded.info.heads):
        _, _, y_ablated = _projection_io(loaded.model, layer, inputs)
    torch.testing.assert_close(y_ablated, expected, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_head_of_a_layer_removes_the_attention_contribution(tiny, family):
    loaded = load_model(str(tiny[family]))
    inputs = tiny_inputs(loaded, length=12)
    layer = 0
    with ablate_heads(loaded.model, [(layer, h) for h in range(loaded.info.heads)], loaded.info.heads):
        module, _, y = _projection_io(loaded.model, layer, inputs)
    bias = module.bias if module.bias is not None else torch.zeros(y.shape[-1])
    torch.testing.assert_close(y, bias.expand_as(y).detach(), atol=1e-6, rtol=0)


def test_hooks_are_gone_after_the_block_also_when_it_raises(tiny):
    loaded = load_model(str(tiny["llama"]))
    inputs = tiny_inputs(loaded, length=12)
    before = _out(loaded.model, inputs)
    with pytest.raises(RuntimeError, match="inside"):
        with ablate_heads(loaded.model, [(0, 0), (1, 3)], loaded.info.heads):
            raise RuntimeError("inside")
    assert all(not m._forward_pre_hooks for _, m in output_projections(loaded.model))
    assert torch.equal(_out(loaded.model, inputs), before)
    with pytest.raises(ValueError, match="does not exist"):
        with ablate_heads(loaded.model, [(5, 0)], loaded.info.heads):
            pass


def test_causal_perplexity_matches_the_loss_and_moves_under_ablation(tiny, tmp_path, monkeypatch):
    from attncoda.engine.perplexity import perplexity

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    loaded = load_model(str(tiny["gpt_neox"]))
    ids = np.random.default_rng(0).integers(8, len(loaded.processor), (3, 16))
    base = perplexity(loaded, ids, dtype="float32")
    with torch.inference_mode():
        loss = loaded.model(input_ids=torch.as_tensor(ids), labels=torch.as_tensor(ids)).loss
    assert base["perplexity"] == pytest.approx(math.exp(float(loss)), rel=1e-5)
    assert base["tokens"] == 3 * 15 and base["kind"] == "causal" and base["window_tokens"] == [15] * 3
    assert math.exp(sum(base["window_nll"]) / 45) == pytest.approx(base["perplexity"], rel=1e-12), "the per-window sums make up the perplexity"
    half = perplexity(loaded, ids)  # the default: bf16 autocast, cached apart from float32
    assert half["dtype"] == "bfloat16" and half["perplexity"] == pytest.approx(base["perplexity"], rel=0.02) and half != base
    with pytest.raises(ValueError, match="unknown dtype"):
        perplexity(loaded, ids, dtype="float16")
    pruned = perplexity(loaded, ids, [(0, 1), (1, 2)])
    assert pruned["perplexity"] != base["perplexity"]
    assert perplexity(loaded, ids, [(1, 2), (0, 1)]) == pruned, "the cached evaluation is found again whatever the order"


def test_masked_lm_pseudo_perplexity_and_a_model_without_head(tiny, tmp_path, monkeypatch):
    from attncoda.engine.perplexity import perplexity

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    loaded = load_model(str(save_tiny_masked_lm(tmp_path / "mlm")))
    assert loaded.has_lm_head and not loaded.info.causal
    ids = np.random.default_rng(0).integers(8, len(loaded.processor), (2, 10))
    ids[:, 0], ids[:, -1] = loaded.processor.cls_token_id, loaded.processor.sep_token_id
    result = perplexity(loaded, ids)
    assert result["kind"] == "pseudo" and result["tokens"] == 2 * 8 and np.isfinite(result["perplexity"])
    assert perplexity(loaded, ids, [(0, 0)])["perplexity"] != result["perplexity"]
    headless = load_model(str(tiny["bert"]))
    with pytest.raises(ModelError, match="without a language-modelling head"):
        perplexity(headless, ids)
