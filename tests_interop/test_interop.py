"""Attention from the tools readers use: the real TransformerLens and nnsight, against the package's own capture.

These run in their own virtual environment (``make test`` makes ``.venv-interop`` from ``requirements.lock`` and
``requirements-interop.lock``), so the main environment stays lean. Every model is a tiny random one saved to a
local folder; the text is windows of the offline Wikipedia corpus, as the chapters use; nothing needs the Hub.
"""

import os
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).parents[1] / "tests" / "support"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from metas import signature_meta  # noqa: E402
from tiny_models import save_tiny  # noqa: E402

from attncoda.engine.capture import capture_attention  # noqa: E402
from attncoda.engine.corpus import text_windows  # noqa: E402
from attncoda.engine.models import load_model  # noqa: E402
from attncoda.engine.patterns import signatures_from_patterns  # noqa: E402
from attncoda.engine.signatures import SignatureAccumulator  # noqa: E402
from attncoda.studies.measurement import measure_signatures  # noqa: E402

N, L = 3, 16
FLOAT32 = dict(rtol=1e-5, atol=1e-7)
"""Two captures of the same float32 forward pass agree to float32 precision."""


def own_capture(folder: Path, ids: torch.Tensor):
    """The package's own signatures of ``folder`` on ``ids``: its hooks, its accumulator (probability path)."""
    loaded = load_model(str(folder))
    acc = SignatureAccumulator(loaded.info.layers, loaded.info.heads, ids.shape[1], loaded.info.causal, (0,))
    with torch.inference_mode(), capture_attention(loaded.backbone, acc.update, logits=False):
        loaded.backbone(input_ids=ids, attention_mask=torch.ones_like(ids))
    return acc.finish(signature_meta(ids.shape[1], loaded.info.causal)), loaded


def windows(folder: Path) -> torch.Tensor:
    from transformers import AutoTokenizer

    ids, _ = text_windows(AutoTokenizer.from_pretrained(folder), N, L, seed=0)
    return torch.as_tensor(ids)


def same_signatures(a, b, **tolerance) -> None:
    for e in a.aitchison:
        np.testing.assert_allclose(a.aitchison[e], b.aitchison[e], **tolerance)
    np.testing.assert_allclose(a.arithmetic, b.arithmetic, **tolerance)
    for k in ("sink_mass", "entropy", "content_entropy"):
        np.testing.assert_allclose(a.stats[k], b.stats[k], equal_nan=True, **tolerance)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("interop")
    return {family: save_tiny(family, root / family) for family in ("gpt2", "llama")}


def test_versions_are_the_locked_ones():
    from importlib.metadata import version

    locked = dict(line.split("==") for line in (Path(__file__).parents[1] / "requirements-interop.lock").read_text().splitlines()
                  if "==" in line and not line.startswith("#"))
    assert version("transformer-lens") == locked["transformer-lens"] and version("nnsight") == locked["nnsight"]
    assert version("torch").split("+")[0] == "2.13.0"


def test_transformer_lens_cache_gives_the_signatures_of_its_patterns_and_of_our_capture(folders):
    from transformer_lens.model_bridge import TransformerBridge

    folder = folders["gpt2"]
    ids = windows(folder)
    bridge = TransformerBridge.boot_transformers(str(folder), device="cpu")
    _, cache = bridge.run_with_cache(ids)  # the route the README names (attention you already have)
    from_cache = signatures_from_patterns(cache)
    patterns = np.stack([cache[f"blocks.{i}.attn.hook_pattern"].detach().numpy() for i in range(bridge.cfg.n_layers)], axis=1)
    from_arrays = signatures_from_patterns(patterns)
    same_signatures(from_cache, from_arrays, rtol=0, atol=0)  # the same patterns, bit for bit
    ours = measure_signatures(from_cache, 0, n_triples=500)
    theirs = measure_signatures(from_arrays, 0, n_triples=500)
    assert ours.reversal == theirs.reversal and ours.signature_sink_mass == theirs.signature_sink_mass
    captured, _ = own_capture(folder, ids)
    same_signatures(from_cache, captured, **FLOAT32)


def test_nnsight_trace_gives_the_signatures_of_our_capture(folders):
    from nnsight import TransformersModel

    folder = folders["llama"]
    ids = windows(folder)
    model = TransformersModel(str(folder), task="text-generation", attn_implementation="eager", dispatch=True)
    saved = []
    with model.trace(ids):  # the route the README names (attention you already have)
        for layer in model.model.layers:
            saved.append(layer.self_attn.output[1].save())  # eager attention returns (output, weights)
    from_nnsight = signatures_from_patterns(np.stack([s.detach().float().numpy() for s in saved], axis=1))
    captured, loaded = own_capture(folder, ids)
    assert from_nnsight.shape == captured.shape == (loaded.info.layers, loaded.info.heads, L)
    same_signatures(from_nnsight, captured, **FLOAT32)
