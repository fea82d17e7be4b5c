"""In Google Colab with a GPU attached, models load on the GPU unless a device map is asked for (engine/models.load_options)."""

import sys
import types

from attncoda.base import run_setting
from attncoda.engine import models


def test_colab_with_a_gpu_loads_on_it_and_a_device_map_still_wins(monkeypatch):
    monkeypatch.setattr(run_setting, "_CURRENT", run_setting.RunSetting())
    monkeypatch.setattr(models, "check_device_map", lambda device_map: None)  # this machine has no GPU to check against
    monkeypatch.setattr(models, "_gpu_attached", lambda: True)
    assert models.load_options() == ("float32", None)  # not in Colab: the CPU, as before
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    assert models.load_options() == ("float32", "cuda")
    with run_setting.using(device_map="cpu"):  # a chapter's device_map = "cpu"
        assert models.load_options() == ("float32", "cpu")
    monkeypatch.setattr(models, "_gpu_attached", lambda: False)
    assert models.load_options() == ("float32", None)  # Colab without a GPU: the CPU
