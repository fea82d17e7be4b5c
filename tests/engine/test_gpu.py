"""The GPU path, on a real CUDA device: every test here is marked ``gpu`` and skipped without one (this project's CI
machines have none; ``benchmarks/gpu_check.sh`` runs them where a GPU is lent). Each compares the device's reading
with the CPU's on the same tiny model, within a tolerance that float32 kernels on two devices can meet."""

import numpy as np
import pytest
import torch

from attncoda.base import run_setting
from attncoda.engine.models import load_model
from tiny_models import save_tiny

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")]


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("gpu")
    return {f: str(save_tiny(f, root / f)) for f in ("llama", "bert")}


def _on(folder, device, monkeypatch):
    with run_setting.using(device_map=None if device == "cpu" else device):
        return load_model(folder)


def test_signatures_on_the_gpu_equal_the_cpu_s(folders, monkeypatch, tmp_path):
    from attncoda.engine import signatures

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    cpu = signatures.compute(_on(folders["llama"], "cpu", monkeypatch), n=4, length=32, seed=0, batch_size=2)
    gpu = signatures.compute(_on(folders["llama"], "cuda", monkeypatch), n=4, length=32, seed=0, batch_size=2)
    assert np.allclose(cpu.arithmetic, gpu.arithmetic, rtol=1e-4, atol=1e-6)
    for name, values in cpu.stats.items():
        assert np.allclose(values, gpu.stats[name], rtol=1e-4, atol=1e-6, equal_nan=True), name


def test_perplexity_on_the_gpu_equals_the_cpu_s(folders, monkeypatch, tmp_path):
    from attncoda.engine.perplexity import perplexity

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    ids = torch.randint(8, 60, (4, 24), generator=torch.Generator().manual_seed(0)).numpy()
    cpu = perplexity(_on(folders["llama"], "cpu", monkeypatch), ids, [(0, 1)], use_cache=False, dtype="float32")
    gpu = perplexity(_on(folders["llama"], "cuda", monkeypatch), ids, [(0, 1)], use_cache=False, dtype="float32")
    assert abs(np.log(gpu["perplexity"] / cpu["perplexity"])) < 1e-4


def test_head_distances_on_the_gpu_equal_the_cpu_s(folders, monkeypatch, tmp_path):
    from attncoda.engine import head_distances

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    cpu = head_distances.compute(_on(folders["bert"], "cpu", monkeypatch), n=2, length=16, seed=0, batch_size=2)
    gpu = head_distances.compute(_on(folders["bert"], "cuda", monkeypatch), n=2, length=16, seed=0, batch_size=2)
    for metric, per in cpu.distances.items():
        for convention, values in per.items():
            assert np.allclose(values, gpu.distances[metric][convention], rtol=1e-4, atol=1e-6), (metric, convention)


def test_a_suite_run_trains_and_is_watched_on_the_gpu(monkeypatch, tmp_path):
    """A tiny task run trains on the GPU (bf16 autocast there), its monitor observes it there, and its checkpoints
    load on the CPU and give the log's numbers."""
    from attncoda.engine import monitor as mon
    from attncoda.engine import training
    from attncoda.studies.collapse_suite import Options, monitor_probe

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    run = training.SuiteRun("t", 32, 2, 2, seed=1, steps=6, batch=4, length=24, task="backcopy", vocab=16, precision="bf16", device="cuda")
    probe = monitor_probe(run, Options(n=4))
    training.train(run, monitor=mon.AttentionMonitor(tmp_path / "gpu.jsonl", probe, every=1))
    during = mon.read_log(tmp_path / "gpu.jsonl")
    assert [r["step"] for r in during] == run.schedule()
    training.observe_checkpoints(run, mon.AttentionMonitor(tmp_path / "again.jsonl", probe, every=1))
    again = mon.read_log(tmp_path / "again.jsonl")
    assert [r["entropy"] for r in again] == pytest.approx([r["entropy"] for r in during], rel=1e-5)
    from transformers import AutoModelForCausalLM

    on_cpu = mon.attention_statistics(AutoModelForCausalLM.from_pretrained(run.checkpoint(run.steps)), probe)
    assert on_cpu["entropy"] == pytest.approx(during[-1]["entropy"], rel=1e-4)
