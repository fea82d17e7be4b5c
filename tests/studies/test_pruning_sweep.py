"""The pruning sweep's cost savers change no bit: a window's score does not depend on its batch neighbours (so the
window study reuses the sweep's windows), the chunked log-likelihood equals the whole-batch one, and one precision
block casts each weight once."""

import numpy as np
import pytest
import torch

from attncoda.engine import perplexity as ppl
from attncoda.engine.models import load_model
from attncoda.studies.pruning_sweep import Scored, extend
from tiny_models import tiny_family_folders


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_family_folders(tmp_path_factory.mktemp("tiny"))


@pytest.mark.parametrize("dtype", ppl.PERPLEXITY_DTYPES)
@pytest.mark.parametrize("family", ["gpt_neox", "llama"])
def test_a_windows_score_does_not_depend_on_its_batch(tiny, tmp_path, monkeypatch, family, dtype):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(ppl, "LOGITS_BUDGET", 3 * 16 * len(load_model(str(tiny[family])).processor) * 4)  # batches of 3 windows
    loaded = load_model(str(tiny[family]))
    ids = np.random.default_rng(1).integers(8, len(loaded.processor), (7, 16))
    heads = [(0, 1), (1, 0)]
    whole = ppl.perplexity(loaded, ids, heads, dtype=dtype)
    first = ppl.perplexity(loaded, ids[:2], heads, dtype=dtype)  # one batch of 2, where the whole run had 3
    rest = ppl.perplexity(loaded, ids[2:], heads, dtype=dtype)
    assert first["window_nll"] + rest["window_nll"] == whole["window_nll"]
    joined = extend(*(Scored("metric", [1, 4], r["perplexity"], r["window_nll"], r["window_tokens"], r["seconds"], dtype) for r in (first, rest)))
    assert joined.perplexity == whole["perplexity"] and joined.window_tokens == whole["window_tokens"]


def test_extend_refuses_two_different_sets():
    a = Scored("metric", [1], 2.0, [1.0], [3], 0.1, metric="js", seed=0, sparsity=0.1, draw=0)
    with pytest.raises(ValueError, match="two different sets"):
        extend(a, Scored("random", [2], 2.0, [1.0], [3], 0.1, sparsity=0.1, draw=0))


@pytest.mark.parametrize("vocab", [5, 97, 4099])
def test_chunked_token_nll_is_the_whole_batch_cross_entropy_bit_for_bit(monkeypatch, vocab):
    generator = torch.Generator().manual_seed(vocab)
    logits = (torch.randn(3, 11, vocab, generator=generator) * 4).bfloat16()
    targets = torch.randint(0, vocab, (3, 11), generator=generator)
    whole = torch.nn.functional.cross_entropy(logits.float().reshape(-1, vocab), targets.reshape(-1), reduction="none")
    monkeypatch.setattr(ppl, "NLL_CHUNK_BYTES", 4 * vocab * 4)  # four rows at a time: 33 rows make 9 chunks
    assert torch.equal(ppl._token_nll(logits, targets), whole)


def test_one_precision_block_casts_each_weight_once():
    """A weight is cast once per precision block, however many calls it serves; an input once per call. Counted by
    shape, for 3 calls and for 6: a CPU without bf16 instructions takes the float32-products path, which rounds the weight
    to bf16 and widens it back (two casts, each once per block) and does the same to each input, so the counts differ
    between paths while the property holds on both."""
    from torch.profiler import profile

    def casts(calls: int) -> dict:
        layer, x = torch.nn.Linear(64, 256, bias=False), torch.randn(8, 64)
        with ppl.precision("bfloat16"):
            with profile(record_shapes=True) as run:
                for _ in range(calls):
                    layer(x)
        return {tuple(e.input_shapes[0]): e.count for e in run.key_averages(group_by_input_shape=True) if e.key == "aten::_to_copy"}

    three, six = casts(3), casts(6)
    assert three.get((256, 64)) == six.get((256, 64)) in (1, 2), f"the weight was cast {three.get((256, 64))} and {six.get((256, 64))} times (autocast caches weight casts only outside inference_mode)"
    assert six.get((8, 64)) == 2 * three.get((8, 64)) and three.get((8, 64)) in (3, 6, 9), f"input casts {three.get((8, 64))} and {six.get((8, 64))}: a fixed number per call expected"
