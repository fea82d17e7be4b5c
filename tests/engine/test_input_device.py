"""Every capture hands the backbone its inputs on the model's own device (``LoadedModel.input_device``): a device map
of one GPU moves the model whole, with no hook that would carry ids made on the CPU over. This machine has no second
device, so the tests say the model lives on ``meta`` and stop each forward pass at its first input."""

import pytest
import torch

from attncoda.engine import head_distances, models, signatures
from attncoda.engine.capture import capture_batches
from attncoda.engine.models import load_model
from tiny_models import save_tiny


class Stopped(Exception):
    """Raised by the pre-hook once it has seen where the inputs are."""


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("input_device")
    return {f: save_tiny(f, root / f) for f in ("llama", "bert", "vit")}


def _input_devices(loaded, monkeypatch, run) -> set[str]:
    """The devices of the tensors the backbone's forward pass receives while ``run()`` runs, with the model said to
    live on ``meta``."""
    monkeypatch.setattr(models.LoadedModel, "input_device", property(lambda self: torch.device("meta")))
    seen = set()

    def record(module, args, kwargs):
        seen.update(t.device.type for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor))
        raise Stopped

    handle = loaded.backbone.register_forward_pre_hook(record, with_kwargs=True)
    try:
        with pytest.raises(Stopped):
            run()
    finally:
        handle.remove()
    return seen


@pytest.mark.parametrize("family", ["llama", "bert", "vit"])
def test_signatures_hand_the_backbone_its_inputs_on_the_model_device(tiny, family, monkeypatch):
    loaded = load_model(str(tiny[family]))
    if family == "vit":  # the vision path first measures its token count with one image
        monkeypatch.setattr(signatures, "_vision_length", lambda loaded, one: 5)
    assert _input_devices(loaded, monkeypatch, lambda: signatures.compute(loaded, n=2, length=16, seed=0, batch_size=2)) == {"meta"}


def test_the_vision_length_is_measured_on_the_model_device(tiny, monkeypatch):
    loaded = load_model(str(tiny["vit"]))
    one = loaded.processor(images=[torch.zeros(32, 32, 3, dtype=torch.uint8).numpy()], return_tensors="pt")["pixel_values"]
    assert _input_devices(loaded, monkeypatch, lambda: signatures._vision_length(loaded, one)) == {"meta"}


def test_the_eager_capture_hands_the_backbone_its_inputs_on_the_model_device(tiny, monkeypatch):
    loaded = load_model(str(tiny["llama"]))
    ids = torch.randint(8, 60, (2, 12), generator=torch.Generator().manual_seed(0)).numpy()
    assert _input_devices(loaded, monkeypatch, lambda: capture_batches(loaded, ids, 2, lambda *a: None)) == {"meta"}


def test_head_distances_hand_the_backbone_its_inputs_on_the_model_device(tiny, monkeypatch):
    loaded = load_model(str(tiny["bert"]))
    assert _input_devices(loaded, monkeypatch, lambda: head_distances.compute(loaded, n=2, length=16, seed=0, batch_size=2)) == {"meta"}


def test_the_input_device_is_the_first_parameter_device(tiny):
    loaded = load_model(str(tiny["llama"]))
    assert loaded.input_device == next(loaded.backbone.parameters()).device == torch.device("cpu")


@pytest.mark.parametrize("family", ["llama", "masked-lm"])
def test_perplexity_hands_the_model_its_inputs_on_the_model_device(tiny, family, monkeypatch, tmp_path):
    """Perplexity runs where the model is (causal, and masked-LM pseudo-perplexity)."""
    from attncoda.engine.perplexity import perplexity
    from tiny_models import save_tiny_masked_lm

    loaded = load_model(str(tiny["llama"] if family == "llama" else save_tiny_masked_lm(tmp_path / "mlm")))
    ids = torch.randint(8, 60, (2, 12), generator=torch.Generator().manual_seed(0)).numpy()
    assert _input_devices(loaded, monkeypatch, lambda: perplexity(loaded, ids, use_cache=False, dtype="float32")) == {"meta"}


def test_perplexity_autocasts_on_the_model_device_and_keys_its_cache_by_it(tiny, monkeypatch):
    """bfloat16 is the device's own autocast (the CPU's for the CPU, as the record's was), and an evaluation off the CPU
    is cached apart from the CPU's, whose key is unchanged."""
    from attncoda.engine import perplexity as ppl

    seen = []
    real = torch.autocast

    def spy(kind, **kw):
        seen.append(kind)
        return real("cpu", **kw)

    monkeypatch.setattr(torch, "autocast", spy)
    for device in ("cpu", "cuda", "meta"):
        with ppl.precision("bfloat16", torch.device(device)):
            pass
    assert seen == ["cpu", "cuda", "cpu"]
    loaded = load_model(str(tiny["llama"]))
    ids = torch.randint(8, 60, (2, 12), generator=torch.Generator().manual_seed(0)).numpy()
    on_cpu = ppl._key(loaded, ids, [], "bfloat16")
    monkeypatch.setattr(models.LoadedModel, "input_device", property(lambda self: torch.device("cuda", 0)))
    assert ppl._key(loaded, ids, [], "bfloat16") != on_cpu
