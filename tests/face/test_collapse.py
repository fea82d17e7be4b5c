"""The collapse chapter's pieces: shares, checkpoint series (Hub and folders), the trained suite, initialization."""

import json
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from attncoda.base.errors import ModelError
from attncoda.engine import checkpoints, training
from attncoda.math import coda
from attncoda.studies import collapse
from interruptions import train_until_interrupted


# --------------------------------------------------------------------------- shares


def _means(rows, sink=(0,)):
    h, s, hc = coda.entropy(rows), coda.sink_mass(rows, sink), coda.entropy(coda.drop_sink(rows, sink))
    return {"entropy": float(np.mean(h)), "content_entropy": float(np.mean(hc)), "sink_mass": float(np.mean(s))}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.5, 0.7), st.floats(0.75, 0.99))
def test_a_sink_that_grows_over_unchanged_content_carries_the_whole_drop(seed, s0, s1):
    """Same content distributions, more mass on the sink (s ≥ 1/2, where h(s) falls): H falls, H(π) does not move, share = 1."""
    rng = np.random.default_rng(seed)
    content = rng.dirichlet(np.ones(7), size=5)
    start = _means(np.concatenate([np.full((5, 1), s0), (1 - s0) * content], axis=1))
    end = _means(np.concatenate([np.full((5, 1), s1), (1 - s1) * content], axis=1))
    assert end["entropy"] < start["entropy"]
    assert collapse.drop_share(start, end) == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.floats(0.01, 0.9))
def test_content_sharpening_under_a_fixed_sink_gives_the_identity_share(seed, s):
    """Fixed sink mass s: H = h(s) + (1 − s)·H(π), so ΔH = (1 − s)·ΔH(π) and the share is 1 − 1/(1 − s) = −s/(1 − s)."""
    rng = np.random.default_rng(seed)
    flat, sharp = np.full((1, 6), 1 / 6), rng.dirichlet(np.full(6, 0.3), size=1)
    start = _means(np.concatenate([[[s]], (1 - s) * flat], axis=1))
    end = _means(np.concatenate([[[s]], (1 - s) * sharp], axis=1))
    assert collapse.drop_share(start, end) == pytest.approx(-s / (1 - s), rel=1e-9, abs=1e-9)


def test_trajectory_shares_start_at_the_peak_after_step_zero():
    pts = [{"step": 0, "entropy": 5.0, "content_entropy": 4.0, "layers": {k: [0.0] for k in collapse.MEANS}},
           {"step": 1, "entropy": 4.5, "content_entropy": 4.0, "layers": {k: [0.0] for k in collapse.MEANS}},
           {"step": 2, "entropy": 4.8, "content_entropy": 4.2, "layers": {k: [0.0] for k in collapse.MEANS}},
           {"step": 4, "entropy": 3.8, "content_entropy": 3.95, "layers": {k: [0.0] for k in collapse.MEANS}}]
    out = collapse.trajectory_shares(pts)
    assert out["from_peak"]["start_step"] == 2 and out["from_peak"]["share"] == pytest.approx(1 - (3.95 - 4.2) / (3.8 - 4.8))
    assert out["from_step0"]["share"] == pytest.approx(1 - (3.95 - 4.0) / (3.8 - 5.0))
    with pytest.raises(ValueError, match="at least two"):
        collapse.trajectory_shares(pts[:1])


# --------------------------------------------------------------------------- checkpoint series


def test_a_hub_id_walks_the_pythia_revisions_or_the_ones_given():
    chain = checkpoints.series("EleutherAI/pythia-70m")
    assert [c.model for c in chain][:2] == ["EleutherAI/pythia-70m@step0", "EleutherAI/pythia-70m@step1"]
    assert [c.step for c in chain] == [int(r.removeprefix("step")) for r in checkpoints.PYTHIA_REVISIONS]
    assert chain[-1].step == 143000 and len(chain) == len(set(c.step for c in chain))
    assert [c.step for c in checkpoints.series("EleutherAI/pythia-70m", ["step0", "step512"])] == [0, 512]


def test_bad_series_are_one_clear_line(tmp_path):
    from tiny_models import save_tiny

    one = save_tiny("gpt_neox", tmp_path / "one")
    for model, message in [(str(one), "is one model, not a series"), ("EleutherAI/pythia-70m@step8", "names one revision"),
                           (f"{one},EleutherAI/pythia-70m", "is not a local folder"), (f"{one},{tmp_path / 'missing'}", "no such model folder")]:
        with pytest.raises(ModelError, match=message):
            checkpoints.series(model)


def test_an_unreachable_hub_fails_in_one_line_before_any_model_loads(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    with pytest.raises(ModelError, match="cannot reach the Hugging Face Hub to download EleutherAI/pythia-70m@step0"):
        checkpoints.check_reachable(checkpoints.series("EleutherAI/pythia-70m"))
    env = {**__import__("os").environ, "HF_ENDPOINT": "http://127.0.0.1:9", "HF_HUB_CACHE": str(tmp_path / "hub")}
    done = subprocess.run([sys.executable, "-m", "attncoda.face.cli", "run", "collapse", "--model", "EleutherAI/pythia-70m"],
                          capture_output=True, text=True, timeout=60, env=env)
    assert done.returncode == 1 and done.stderr.strip().count("\n") == 0 and "cannot reach the Hugging Face Hub" in done.stderr


def test_a_folder_list_is_walked_in_order_with_cached_statistics(tmp_path, monkeypatch):
    from tiny_models import save_tiny_series

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    folders = save_tiny_series("gpt_neox", tmp_path / "run")
    chain = checkpoints.series(",".join(map(str, folders)))
    assert [c.step for c in chain] == [0, 10, 20] and checkpoints.series_name(",".join(map(str, folders))) == "run"
    points = collapse.walk(chain, n=2, length=16, n_triples=200, batch_size=2)
    assert [p["checkpoint"] for p in points] == ["step0", "step10", "step20"]
    assert all(0 < p["sink_mass"] < 1 and p["entropy"] > 0 for p in points)
    import attncoda.engine.signatures as sigmod

    monkeypatch.setattr(sigmod, "compute", lambda *a, **k: pytest.fail("a cached checkpoint was computed again"))
    assert collapse.walk(chain, n=2, length=16, n_triples=200, batch_size=2) == points


# --------------------------------------------------------------------------- the suite


def test_log_spaced_schedule_and_learning_rate():
    assert training.log_spaced_steps(4000)[-3:] == [1024, 2048, 4000]
    run = training.SuiteRun("t", 16, 1, 2, seed=0, steps=200, warmup=10)
    rates = [training.learning_rate(k, run) for k in range(200)]
    assert rates[9] == pytest.approx(run.learning_rate) and max(rates) == pytest.approx(run.learning_rate)
    assert rates[-1] == pytest.approx(0.1 * run.learning_rate, rel=1e-3) and all(np.diff(rates[10:]) <= 0)


def _weights(folder):
    return (folder / "model.safetensors").read_bytes()


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_training_is_deterministic_and_an_interrupted_run_resumes_to_the_same_bits(tmp_path, monkeypatch):
    run = training.SuiteRun("t", 16, 1, 2, seed=3, steps=6, batch=2, length=16)
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "a"))
    whole = training.train(run)
    assert [f.name for f in whole] == ["step0", "step1", "step2", "step4", "step6"]
    final = _weights(whole[-1])

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "b"))
    train_until_interrupted(monkeypatch, run, 4)
    assert training._last_checkpoint(run) == 2
    assert not [p for p in run.folder().iterdir() if p.name.startswith(".")], "an interrupted checkpoint left a staging folder"
    resumed = training.train(run)
    assert _weights(resumed[-1]) == final
    info = json.loads((resumed[-1] / "training.json").read_text())
    assert info["step"] == 6 and info["run"]["seed"] == 3 and info["training_seconds"] > 0


@pytest.mark.slow  # over 2.5 s on a 2-core AVX2-only machine: make test runs it, make check leaves it (held under 120 s in CI)
def test_suite_windows_start_with_the_bos_token(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    tok = training.suite_tokenizer()
    stream = training.token_stream(tok)
    run = training.SuiteRun("t", 16, 1, 2, seed=0, batch=4, length=32)
    batch = training.batch_at(stream, run, 5, tok.bos_token_id)
    assert batch.shape == (4, 32) and (batch[:, 0] == tok.bos_token_id).all() and not (batch[:, 1:] == tok.bos_token_id).any()
    assert np.array_equal(batch, training.batch_at(stream, run, 5, tok.bos_token_id))
    assert tok("attention")["input_ids"][0] == tok.bos_token_id  # so the measured windows start with it too


# --------------------------------------------------------------------------- initialization


def test_the_initialized_twin_is_the_same_architecture_with_seeded_fresh_weights(tmp_path, monkeypatch):
    import torch
    from tiny_models import save_tiny

    from attncoda.engine import initialization
    from attncoda.engine.models import load_model

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    folder = str(save_tiny("llama", tmp_path / "llama"))
    loaded = load_model(folder)
    a, b = initialization.initialized(loaded, 1), initialization.initialized(load_model(folder), 1)
    assert type(a.model) is type(loaded.model) and a.info.weights_sha256.startswith("init:") and a.info.name.endswith("@init1")
    for (name, p), q in zip(a.model.named_parameters(), b.model.parameters()):
        assert torch.equal(p, q), name
    ends = collapse.endpoint(folder, n=2, length=16, n_triples=200, batch_size=2)
    assert ends["init"]["entropy"] > 0 and len(ends["layer_shares"]) == loaded.info.layers
    monkeypatch.setattr(initialization, "initialized", lambda *a, **k: pytest.fail("the cached initialization was built again"))
    again = collapse.endpoint(folder, n=2, length=16, n_triples=200, batch_size=2)
    assert again["init"] == ends["init"]


def test_an_encoder_loaded_without_its_head_is_initialized_as_its_config_declares(tmp_path):
    """A sentence-embedding folder loads as its encoder (its weights hold no masked-LM head), but its initialized twin
    is built as the config's declared class, whose initializer draws in that class's order; a class from another
    family, or none, leaves the loaded class."""
    from transformers import BertConfig, BertForMaskedLM, BertModel, LlamaConfig, LlamaForCausalLM

    from attncoda.engine.initialization import architecture

    bert = BertModel(BertConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8, vocab_size=20,
                                architectures=["BertForMaskedLM"]))
    assert architecture(bert) is BertForMaskedLM
    bert.config.architectures = ["LlamaForCausalLM"]
    assert architecture(bert) is BertModel
    bert.config.architectures = None
    assert architecture(bert) is BertModel
    llama = LlamaForCausalLM(LlamaConfig(hidden_size=8, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8, vocab_size=20,
                                         architectures=["LlamaForCausalLM"]))
    assert architecture(llama) is LlamaForCausalLM


def test_the_chapter_defaults_are_the_protocol_constants():
    from pathlib import Path

    from attncoda.base.protocol import SEEDS, SUITE_STEPS
    from attncoda.face.parameters import notebook_parameters
    from attncoda.studies import sink_search

    params = notebook_parameters(Path(__file__).parents[2] / "notebooks" / "04_collapse.ipynb")
    assert params["steps"] == 0 and params["text_steps"] == 0 and params["suite_seeds"] == list(SEEDS)  # 0: the recipe's own steps; no text suite
    assert sink_search.trial(sink_search.LADDER_TRIAL).run.steps == sink_search.CHARACTER_STEPS
    assert training.SuiteRun("s", 1, 1, 1, 0).steps == SUITE_STEPS
