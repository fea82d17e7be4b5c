"""The training monitor: the entropy decomposition of one forward pass on a probe batch, logged as JSON Lines."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attncoda.engine import monitor as mon
from attncoda.engine.models import load_model
from attncoda.math.coda import entropy_split
from tiny_models import save_tiny

LENGTH = 16


@pytest.fixture(scope="module")
def llama(tmp_path_factory):
    return load_model(str(save_tiny("llama", tmp_path_factory.mktemp("monitor") / "llama")))


def _probe(loaded):
    return torch.randint(8, 60, (3, LENGTH), generator=torch.Generator().manual_seed(0))


def test_the_statistics_are_the_entropy_split_of_the_model_s_own_attention(llama):
    """Per layer, H, H(π) and s over heads and rows t ≥ 8 equal the entropy split of output_attentions' rows."""
    ids = _probe(llama)
    got = mon.attention_statistics(llama.model, ids)
    with torch.inference_mode():
        attentions = llama.backbone(input_ids=ids, output_attentions=True).attentions
    for layer, p in enumerate(attentions):
        rows = p.double().numpy()[:, :, 8:, :]
        split = entropy_split(rows / rows.sum(-1, keepdims=True), (0,))
        assert got["layers"]["entropy"][layer] == pytest.approx(split.entropy.mean(), rel=1e-5)
        assert got["layers"]["content_entropy"][layer] == pytest.approx(np.nanmean(split.content_entropy), rel=1e-5)
        assert got["layers"]["sink_mass"][layer] == pytest.approx(split.sink_mass.mean(), rel=1e-5)
    assert 0 <= got["sink_heads"] <= 1 and len(got["layers"]["sink_heads"]) == len(attentions)


def test_observe_logs_every_n_steps_and_leaves_the_model_as_it_was(llama, tmp_path):
    log = tmp_path / "attention.jsonl"
    monitor = mon.AttentionMonitor(log, probe=_probe(llama), every=50)
    llama.model.train()
    before = {k: v.clone() for k, v in llama.model.state_dict().items()}
    logged = [monitor.observe(llama.model, step) for step in range(0, 101)]
    assert [r["step"] for r in logged if r] == [0, 50, 100] and llama.model.training
    assert all(torch.equal(before[k], v) for k, v in llama.model.state_dict().items())
    assert all(p.grad is None for p in llama.model.parameters())
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["step"] for r in lines] == [0, 50, 100] and lines[0]["sink_share"] is None, "no fall of H yet: no share"
    assert mon.read_log(log) == lines
    llama.model.eval()


def test_the_share_is_the_sink_s_part_of_the_fall_since_the_first_observation(monkeypatch, tmp_path):
    """H falls by 1 while H(π) stays: the sink carries all of it (share 1); then H(π) falls as much as H: share 0."""
    states = iter([{"entropy": 3.0, "content_entropy": 2.0}, {"entropy": 2.0, "content_entropy": 2.0}, {"entropy": 2.0, "content_entropy": 1.0}])

    def fake(model, ids, sink):
        state = next(states)
        return {**state, "sink_mass": 0.5, "sink_heads": 0.0, "layers": {k: [v] for k, v in {**state, "sink_mass": 0.5, "sink_heads": 0.0}.items()}}

    monkeypatch.setattr(mon, "attention_statistics", fake)
    monitor = mon.AttentionMonitor(tmp_path / "log.jsonl", probe=None, every=1)
    shares = [monitor.observe(None, step)["sink_share"] for step in range(3)]
    assert shares == [None, 1.0, 0.0]


def test_the_trainer_callback_observes_at_the_global_step(llama, tmp_path):
    monitor = mon.AttentionMonitor(tmp_path / "log.jsonl", probe=_probe(llama), every=10)
    callback = monitor.callback()
    from transformers import TrainerCallback

    assert isinstance(callback, TrainerCallback)
    for step in (5, 10):
        callback.on_step_end(args=None, state=SimpleNamespace(global_step=step), control=None, model=llama.model)
    assert [r["step"] for r in mon.read_log(tmp_path / "log.jsonl")] == [10]


def test_bad_settings_and_logs_are_one_line(tmp_path):
    with pytest.raises(ValueError, match="every = 0 must be a whole number of steps"):
        mon.AttentionMonitor(tmp_path / "x.jsonl", probe=None, every=0)
    with pytest.raises(ValueError, match=r"probe batch must be token ids of shape \(windows, tokens\)"):
        mon.attention_statistics(SimpleNamespace(config=None), np.zeros(4, dtype=int))
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"step": 0, "entropy": 1, "content_entropy": 1, "sink_mass": 0.1}\nnot json\n')
    with pytest.raises(ValueError, match="line 2: not an observation of attncoda's monitor"):
        mon.read_log(bad)


def test_the_plot_command_draws_a_log(llama, tmp_path, capsys):
    """attncoda monitor plot LOG writes Figure 5b's panel beside the log and says where the last step stands."""
    from attncoda.face.cli import main

    log = tmp_path / "run.jsonl"
    monitor = mon.AttentionMonitor(log, probe=_probe(llama), every=1)
    for step in range(3):
        monitor.observe(llama.model, step)
    assert main(["monitor", "plot", str(log)]) == 0
    assert (tmp_path / "run.png").stat().st_size > 0 and "at step 2, H " in capsys.readouterr().out
    assert main(["monitor", "plot", str(tmp_path / "none.jsonl")]) == 1
    assert "no such log file" in capsys.readouterr().err
