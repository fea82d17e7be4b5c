"""Where attention goes, over every row: a planted sink at a fixed key, and one on a delimiter token at varying positions."""

import numpy as np
import pytest

from attncoda.engine.attention_map import MIN_OCCURRENCES, RECENT, AttentionMapAccumulator


def _causal_rows(length, rng, heads=2, batch=4):
    logits = rng.normal(size=(batch, heads, length, length))
    logits = np.where(np.tril(np.ones((length, length), bool)), logits, -np.inf)
    p = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def _plant(p, keys_per_window, mass=0.8):
    """Move ``mass`` of every row that can see them onto the keys given per window (spread evenly over those seen)."""
    out = p.copy()
    length = p.shape[-1]
    for b, keys in enumerate(keys_per_window):
        for t in range(length):
            seen = [k for k in keys if k <= t]
            if seen:
                out[b, :, t] *= 1 - mass
                out[b, :, t, seen] += mass / len(seen)
    return out


def test_a_sink_planted_at_key_5_is_found_by_position():
    rng = np.random.default_rng(0)
    p = _plant(_causal_rows(32, rng), [[5]] * 4)
    acc = AttentionMapAccumulator(1, 32, True, (0,))
    acc.ids = rng.integers(10, 50, size=(4, 32))
    acc.update(0, p)
    out = acc.finish()
    assert out["positions"][0]["key"] == 5 and out["positions"][0]["mean_attention"] > 0.5


def test_a_sink_on_a_delimiter_token_is_found_by_token_not_by_position():
    rng = np.random.default_rng(1)
    length, delimiter = 48, 7
    ids = rng.integers(10, 40, size=(8, length))
    keys = []
    for b in range(8):  # the delimiter at different positions in each window
        where = sorted(rng.choice(np.arange(1, length), size=4, replace=False).tolist())
        ids[b, where] = delimiter
        keys.append(where)
    p = _plant(_causal_rows(length, rng, batch=8), keys)
    acc = AttentionMapAccumulator(1, length, True, (0,))
    acc.ids = ids
    acc.update(0, p)
    out = acc.finish()
    assert out["tokens"][0]["id"] == delimiter and out["tokens"][0]["occurrences"] == 32 >= MIN_OCCURRENCES
    assert out["tokens"][0]["mean_attention"] > 3 * out["positions"][-1]["mean_attention"]


def test_recent_keys_are_set_apart_and_a_chosen_sink_gets_its_own_statistics():
    rng = np.random.default_rng(2)
    length = 24
    p = np.zeros((2, 1, length, length))
    for t in range(length):  # every row looks only at itself: all of it recent, nothing far
        p[:, :, t, t] = 1.0
    acc = AttentionMapAccumulator(2, length, True, (0, 1))
    acc.update(0, p)
    acc.update(1, _causal_rows(length, rng, heads=1, batch=2))
    out = acc.finish()
    assert RECENT >= 1 and out["recent_mass"] > 0.5
    assert out["chosen_sink"]["keys"] == [0, 1] and len(out["chosen_sink"]["layers"]["entropy"]) == 2
    assert out["chosen_sink"]["layers"]["entropy"][0] == 0.0  # one-hot rows have no entropy


# --------------------------------------------------------------------------- the torch reductions against their definition


def _reference(p, ids, sink, causal):
    """The definitions, on whole float64 maps with explicit L × L masks: far-key mass per position and per token,
    recent mass, and the chosen sink's entropy split (rows t ≥ 1 when causal)."""
    from attncoda.math.coda import entropy_split

    batch, heads, length, _ = p.shape
    t, j = np.arange(length)[:, None], np.arange(length)[None, :]
    visible = j <= t if causal else np.ones((length, length), bool)
    far, recent = visible & (np.abs(t - j) >= RECENT), visible & (np.abs(t - j) < RECENT)
    with np.errstate(invalid="ignore"):  # a key no row sees from afar has no mean
        position = (p * far).sum(axis=(0, 1, 2)) / (batch * heads * far.sum(axis=0))
    by_key = (p * far).sum(axis=(1, 2))
    tokens = {v: by_key[ids == v].sum() / (heads * np.broadcast_to(far.sum(axis=0), ids.shape)[ids == v].sum()) for v in np.unique(ids)}
    rows = p[:, :, 1 if causal else 0 :, :]
    split = entropy_split(rows / rows.sum(axis=-1, keepdims=True), sink)
    return position, tokens, (p * recent).sum() / (batch * heads * length), split


def _scores(rng, batch, heads, length, causal):
    z = rng.normal(scale=3.0, size=(batch, heads, length, length)).astype(np.float32)
    z[..., 0] += 4.0  # a sink at key 0
    return np.where(np.tril(np.ones((length, length), bool)) | (not causal), z, -np.inf).astype(np.float32)


@pytest.mark.parametrize("causal", [True, False])
def test_whole_maps_and_score_blocks_give_the_definitions(causal):
    """The accumulator fed whole maps, or the scores in slices of windows and blocks of heads and of query rows (a
    causal block stops at the keys its rows see, as the score capture hands them), gives the masked definitions'
    numbers."""
    import torch

    rng = np.random.default_rng(3)
    batch, heads, length, sink = 3, 4, 20, (0, 2)
    z = _scores(rng, batch, heads, length, causal)
    p = torch.softmax(torch.as_tensor(z), dim=-1, dtype=torch.float32).double().numpy()
    ids = rng.integers(5, 9, size=(batch, length))
    position, tokens, recent, split = _reference(p, ids, sink, causal)

    whole = AttentionMapAccumulator(1, length, causal, sink)
    whole.ids = ids
    whole.update(0, p)
    blocks = AttentionMapAccumulator(1, length, causal, sink)
    blocks.ids = ids
    for w in (slice(0, 1), slice(1, 3)):  # a batch's windows in consecutive slices, as the capture hands long windows
        for h in (slice(0, 1), slice(1, 4)):
            for q in (slice(0, 7), slice(7, 13), slice(13, 20)):
                keys = q.stop if causal else length
                blocks.update_scores(0, h, q, torch.as_tensor(z[w, h, q, :keys]))
    for acc in (whole, blocks):
        out = acc.finish()
        with np.errstate(invalid="ignore"):
            assert np.allclose(acc.position_mass / acc.position_rows, position, rtol=1e-6, equal_nan=True)
        assert all(acc.token_mass[v] / acc.token_rows[v] == pytest.approx(tokens[v], rel=1e-6) for v in tokens)
        assert out["recent_mass"] == pytest.approx(recent, rel=1e-6)
        chosen = out["chosen_sink"]
        assert chosen["layers"]["entropy"][0] == pytest.approx(split.entropy.mean(), rel=1e-6)
        assert chosen["layers"]["content_entropy"][0] == pytest.approx(np.nanmean(split.content_entropy), rel=1e-6)
        assert chosen["row_sink_mass"] == pytest.approx(split.sink_mass.mean(), rel=1e-6)
    assert whole.token_count == blocks.token_count == {v: int((ids == v).sum()) for v in np.unique(ids).tolist()}


def test_the_audit_s_maps_ride_on_the_signatures_pass(tmp_path, monkeypatch):
    """One forward pass per window: with the companion, the maps are cached by the signatures' pass, and
    :func:`attention_maps` then runs no pass at all; they equal the maps of a pass of their own."""
    from tiny_models import save_tiny

    from attncoda.engine import attention_map
    from attncoda.engine.models import load_model

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    folder = str(save_tiny("llama", tmp_path / "llama"))
    loaded = load_model(folder)
    passes = []
    real_forward = type(loaded).forward
    monkeypatch.setattr(type(loaded), "forward", lambda self, *a, **k: passes.append(1) or real_forward(self, *a, **k))
    monkeypatch.setattr("attncoda.engine.models.load_model", lambda *a, **k: loaded)
    for sink in (None, "0,1"):
        passes.clear()
        sigs, maps = attention_map.signatures_and_maps(folder, [0, 1], 4, 16, lambda meta: (0,) if sink is None else (0, 1), batch_size=2)
        assert len(passes) == 4, "two seeds of two batches each: one pass over every window"
        monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / f"alone-{sink}"))
        alone = attention_map.attention_maps(folder, [0, 1], 4, 16, (0,) if sink is None else (0, 1), batch_size=2)
        monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
        for a, b in zip(maps, alone):
            assert [k["key"] for k in a["positions"]] == [k["key"] for k in b["positions"]]
            assert a["recent_mass"] == pytest.approx(b["recent_mass"], rel=1e-9)
            assert (a["chosen_sink"] is None) == (sink is None) == (b["chosen_sink"] is None)


def test_half_precision_maps_are_summed_in_float64():
    """Saved float16 patterns (``audit --patterns``): a key's column over 2,048 rows of 32 heads would pass float16's
    largest value (65,504) if summed in the input's precision; the sink must still lead the ranking, at its mean."""
    length, heads = 2048, 32
    p = np.zeros((1, heads, length, length), np.float16)
    p[..., 0] = 1
    acc = AttentionMapAccumulator(1, length, True, (0,), chosen=False)
    acc.update(0, p)
    first = acc.finish()["positions"][0]
    assert first == {"key": 0, "mean_attention": 1.0}


def test_blocks_added_after_finish_still_count_by_token():
    """:meth:`finish` reads the running sums without ending the batch: a later block of the same batch counts for
    tokens as it does for positions, and the totals equal one pass that never stopped."""
    import torch

    rng = np.random.default_rng(5)
    z = np.where(np.tril(np.ones((24, 24), bool)), rng.normal(size=(2, 2, 24, 24)), -np.inf).astype(np.float32)
    ids = rng.integers(0, 3, size=(2, 24))
    once, twice = (AttentionMapAccumulator(2, 24, True, (0,), chosen=False) for _ in range(2))
    for acc in (once, twice):
        acc.ids = ids
        acc.update_scores(0, slice(0, 2), slice(0, 24), torch.as_tensor(z))
    twice.finish()
    for acc in (once, twice):
        acc.update_scores(1, slice(0, 2), slice(0, 24), torch.as_tensor(z))
    assert once.finish() == twice.finish()
    assert sum(twice.token_rows.values()) == twice.position_rows.sum()
