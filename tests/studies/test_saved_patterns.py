"""``attncoda audit --patterns``: attention a reader saved gives the audit a model gives on the same windows."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from attncoda.face.cli import main
from tiny_models import save_tiny

N, LENGTH = 8, 16


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    """A tiny llama, and its attention on the audit's own windows of seeds 0 and 1, as [window, layer, head, query, key]."""
    from attncoda.engine.corpus import text_windows
    from attncoda.engine.models import load_model

    root = tmp_path_factory.mktemp("saved")
    model = save_tiny("llama", root / "llama")
    loaded = load_model(str(model))
    patterns = {}
    for seed in (0, 1):
        ids, _ = text_windows(loaded.processor, N, LENGTH, seed, "wikipedia", "sample")
        with torch.inference_mode():
            attentions = loaded.backbone(input_ids=torch.as_tensor(np.asarray(ids)), output_attentions=True).attentions
        patterns[seed] = torch.stack(attentions, 1).float().numpy()
    return model, patterns, root


def _report(argv, capsys) -> dict:
    capsys.readouterr()
    assert main([*argv, "--format", "json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_patterns_saved_from_the_audit_s_windows_give_its_rate(saved, tmp_path, capsys, monkeypatch):
    """The rate, the triples compared, the top keys and the sink masses of a model audit on seed 0, from the attention
    saved on the same windows, in each format a reader may have: an .npz array, a .safetensors array, and a
    TransformerLens cache's blocks (to float32 precision: the model path reduces scores, this one probabilities)."""
    from safetensors.torch import save_file

    model, patterns, _ = saved
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    ours = _report(["audit", "--model", str(model), "--n", str(N), "--length", str(LENGTH), "--seeds", "0"], capsys)
    p = patterns[0]
    np.savez(tmp_path / "array.npz", patterns=p, tokens=np.zeros(3))
    save_file({"attention": torch.from_numpy(p)}, str(tmp_path / "array.safetensors"))
    np.savez(tmp_path / "blocks.npz", **{f"blocks.{l}.attn.hook_pattern": p[:, l] for l in range(p.shape[1])})
    for name in ("array.npz", "array.safetensors", "blocks.npz"):
        theirs = _report(["audit", "--patterns", str(tmp_path / name)], capsys)
        assert theirs["reversal"]["rate"] == ours["reversal"]["rate"] and theirs["reversal"]["compared"] == ours["reversal"]["compared"], name
        assert [k["key"] for k in theirs["top_keys"]] == [k["key"] for k in ours["top_keys"]]
        for field in ("row_sink_mass", "signature_sink_mass", "recent_mass"):
            assert theirs[field] == pytest.approx(ours[field], rel=1e-6), (name, field)
        assert theirs["top_tokens"] is None and "saved patterns" in theirs["where_from"]


def test_two_files_are_two_samples(saved, tmp_path, capsys):
    """Each file is a sample of its own, as a seed is: two files give a t-interval over files."""
    _, patterns, _ = saved
    for seed in (0, 1):
        np.savez(tmp_path / f"s{seed}.npz", patterns[seed])
    report = _report(["audit", "--patterns", str(tmp_path / "s0.npz"), str(tmp_path / "s1.npz")], capsys)
    assert len(report["reversal"]["per_seed"]) == 2 and "over 2 files" in report["reversal"]["interval_kind"]
    assert main(["audit", "--patterns", str(tmp_path / "s0.npz")]) == 0
    text = capsys.readouterr().out
    assert "8 windows of 16 keys in 1 saved file" in text and "not measured (patterns given without their tokens)" in text
