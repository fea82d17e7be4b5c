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


def test_perplexity_off_the_cpu_is_refused_in_one_line(tiny, monkeypatch):
    """Perplexity's bfloat16 pass is the CPU's autocast: on another device it would give other numbers, so it refuses."""
    from attncoda.base.errors import ModelError
    from attncoda.engine.perplexity import perplexity

    loaded = load_model(str(tiny["llama"]))
    monkeypatch.setattr(models.LoadedModel, "input_device", property(lambda self: torch.device("meta")))
    with pytest.raises(ModelError, match="runs on the CPU only") as refused:
        perplexity(loaded, torch.randint(8, 60, (2, 12)).numpy(), use_cache=False)
    assert "\n" not in str(refused.value)
