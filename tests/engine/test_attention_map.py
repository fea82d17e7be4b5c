"""Where attention goes, over every row: a planted sink at a fixed key, and one on a delimiter token at varying positions."""

import numpy as np

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
