"""The training monitor: the entropy decomposition of one forward pass on a probe batch, logged as JSON Lines."""

import json
from types import SimpleNamespace

import numpy as np
import pytest
import torch

from attncoda.engine import monitor as mon
from attncoda.engine.models import load_model
from attncoda.math.coda import entropy_split
from interruptions import train_until_interrupted
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
    monitor = mon.AttentionMonitor(tmp_path / "log.jsonl", probe=np.zeros((1, LENGTH), int), every=1)
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
        mon.AttentionMonitor(tmp_path / "x.jsonl", probe=np.zeros((1, LENGTH), int), every=0)
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


# --------------------------------------------------------------------------- the collapse suite, watched while it trains

TASK_RUN = dict(size="t", hidden=32, layers=2, heads=2, seed=1, steps=6, batch=4, length=24, task="backcopy", vocab=16, precision="bf16")


def _bits(folder):
    return (folder / "model.safetensors").read_bytes()


def test_a_watched_run_keeps_its_bits_and_its_log_equals_a_replay_of_its_checkpoints(tmp_path, monkeypatch):
    """The monitor draws no random number and leaves the model's mode: a run trained with it has the same checkpoints
    as one trained without; the log holds step 0 and every checkpoint, and replaying the saved checkpoints gives the
    same numbers (the same weights)."""
    from attncoda.engine import training
    from attncoda.studies.collapse_suite import Options, monitor_probe

    run = training.SuiteRun(**TASK_RUN)
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "plain"))
    plain = [_bits(f) for f in training.train(run)]
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "watched"))
    probe = monitor_probe(run, Options(n=4))
    log = tmp_path / "watched.jsonl"
    watched = training.train(run, monitor=mon.AttentionMonitor(log, probe, every=1, tags={"origin": "training"}))
    assert [_bits(f) for f in watched] == plain
    during = mon.read_log(log)
    assert [r["step"] for r in during] == run.schedule() and {r["origin"] for r in during} == {"training"}
    training.observe_checkpoints(run, mon.AttentionMonitor(tmp_path / "replayed.jsonl", probe, every=1))
    replayed = mon.read_log(tmp_path / "replayed.jsonl")
    for a, b in zip(during, replayed):
        for key in (*mon.MEANS, "sink_heads"):
            assert a[key] == pytest.approx(b[key], rel=1e-6, abs=1e-9), (a["step"], key)


def test_a_resumed_run_keeps_the_observations_up_to_its_checkpoint(tmp_path, monkeypatch):
    """An interruption after step 2 (with a line cut short in the log) resumes to the log an uninterrupted run writes."""
    from attncoda.engine import training
    from attncoda.studies.collapse_suite import Options, monitor_probe

    run = training.SuiteRun(**TASK_RUN)
    probe = monitor_probe(run, Options(n=4))
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "whole"))
    training.train(run, monitor=mon.AttentionMonitor(tmp_path / "whole.jsonl", probe, every=1))
    whole = mon.read_log(tmp_path / "whole.jsonl")

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cut"))
    log = tmp_path / "cut.jsonl"
    train_until_interrupted(monkeypatch, run, 4, monitor=mon.AttentionMonitor(log, probe, every=1))
    with open(log, "a") as f:
        f.write('{"step": 4, "entro')  # what an interruption mid-line leaves
    training.train(run, monitor=mon.AttentionMonitor(log, probe, every=1))
    resumed = mon.read_log(log)
    assert [r["step"] for r in resumed] == run.schedule()
    assert resumed == whole, "the same bits as the uninterrupted run's log"


def test_the_suite_s_log_is_what_its_walk_measures(tmp_path, monkeypatch):
    """Figure 5b's analogue is drawn from the monitor's log: at every checkpoint its H, H(π) and sink mass equal the
    walk's means on the same held-out sequences (float32 patterns against the float64 capture). A run trained before
    it was watched gets its log from its saved checkpoints, and says so."""
    from attncoda.engine import training
    from attncoda.studies import collapse_suite

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    run = training.SuiteRun(**TASK_RUN)
    options = collapse_suite.Options(n=4, n_triples=50, batch_size=2)
    series = collapse_suite.trained_series(run, "g", "ladder", options)
    assert [r["step"] for r in series.monitor] == [p["step"] for p in series.points]
    for observed, walked in zip(series.monitor, series.points):
        for key in mon.MEANS:
            assert observed[key] == pytest.approx(walked[key], rel=1e-4), (observed["step"], key)
    assert {r["origin"] for r in series.monitor} == {"training"}

    for log in (run.folder() / "monitor").iterdir():
        log.unlink()  # as a run trained before the monitor existed
    again = collapse_suite.trained_series(run, "g", "ladder", options)
    assert {r["origin"] for r in again.monitor} == {"saved checkpoints"}
    assert [r["entropy"] for r in again.monitor] == pytest.approx([r["entropy"] for r in series.monitor], rel=1e-6)
    [log] = (run.folder() / "monitor").glob("*.jsonl")
    log.write_text(log.read_text()[:-40])  # a replay interrupted mid-line: replayed again, not an error on every later run
    assert collapse_suite.trained_series(run, "g", "ladder", options).monitor == again.monitor
    edited = [json.loads(line) | {"entropy": 99, "sink_mass": 0.999} for line in log.read_text().splitlines()]
    log.write_text("".join(json.dumps(r) + "\n" for r in edited))  # N3: same steps, other values: the seal tells, and it is replayed
    assert collapse_suite.trained_series(run, "g", "ladder", options).monitor == again.monitor
    assert mon.log_intact(log) is True


def test_a_run_trains_on_the_device_its_settings_name(tmp_path, monkeypatch):
    """Training hands the model its batches on the model's device, and the suite trains where --device-map says. This
    machine has no second device: the run is said to live on ``meta`` and stops at its first forward pass."""
    from attncoda.engine import training
    from attncoda.base import run_setting
    from attncoda.studies.collapse_suite import suite_runs

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    run = training.SuiteRun(**{**TASK_RUN, "device": "meta", "precision": "float32"})  # autocast has no meta kernels
    assert run.key() != training.SuiteRun(**TASK_RUN).key(), "checkpoints trained elsewhere are cached apart"
    seen = []

    def record(module, args, kwargs):
        seen.extend(t.device.type for t in (*args, *kwargs.values()) if isinstance(t, torch.Tensor))
        raise KeyboardInterrupt

    real_new = training.new_model

    def hooked(run_, tokenizer):
        model = real_new(run_, tokenizer)
        model.register_forward_pre_hook(record, with_kwargs=True)
        return model

    monkeypatch.setattr(training, "new_model", hooked)
    monkeypatch.setattr(training, "_save_checkpoint", lambda *a, **k: None)
    with pytest.raises(KeyboardInterrupt):
        training.train(run)
    assert seen and set(seen) == {"meta"}

    assert {r.device for r, _, _ in suite_runs([0])} == {"cpu"}
    monkeypatch.setattr(run_setting, "_CURRENT", run_setting.RunSetting(device_map="auto"))
    assert training.training_device() == ("cuda" if torch.cuda.is_available() else "cpu")


def test_only_the_main_process_writes_and_every_process_measures(llama, tmp_path):
    """A process other than the main one of a distributed run measures (its forward may be needed by sharded
    weights) and writes nothing; the Trainer's next log receives the latest scalars once."""
    monitor = mon.AttentionMonitor(tmp_path / "log.jsonl", probe=_probe(llama), every=1)
    callback = monitor.callback()
    callback.on_step_end(args=None, state=SimpleNamespace(global_step=1, is_world_process_zero=False), control=None, model=llama.model)
    assert not (tmp_path / "log.jsonl").exists() and monitor.unlogged is not None
    logs = {"loss": 1.0}
    callback.on_log(args=None, state=None, control=None, logs=logs)
    assert set(logs) == {"loss", "attention/entropy", "attention/content_entropy", "attention/sink_mass", "attention/sink_heads"}
    again = {"loss": 0.9}
    callback.on_log(args=None, state=None, control=None, logs=again)
    assert again == {"loss": 0.9}  # each observation reaches the loggers once
    callback.on_step_end(args=None, state=SimpleNamespace(global_step=2, is_world_process_zero=True), control=None, model=llama.model)
    assert [r["step"] for r in mon.read_log(tmp_path / "log.jsonl")] == [2]


@pytest.mark.slow
def test_a_two_process_run_writes_one_log_and_its_tensorboard_scalars(tmp_path):
    """torchrun --nproc_per_node 2 on the CPU (gloo): one log with each step once, the Trainer's log history holds the
    monitor's scalars, and the TensorBoard event file reads back the same entropies."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    folder = save_tiny("gpt2", tmp_path / "gpt2")
    script = Path(__file__).resolve().parents[1] / "support" / "ddp_monitor.py"
    log, board, steps = tmp_path / "log.jsonl", tmp_path / "board", 4
    env = {**os.environ, "OMP_NUM_THREADS": "1", "CUDA_VISIBLE_DEVICES": ""}
    done = subprocess.run([sys.executable, "-m", "torch.distributed.run", "--nproc_per_node", "2", "--master_port", "29533", str(script),
                           str(folder), str(log), str(board), str(steps)], capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    records = mon.read_log(log)
    assert [r["step"] for r in records] == list(range(steps + 1))  # step 0, then each step once: one writer
    assert "LOGGED" in done.stdout and int(done.stdout.split("LOGGED")[1].split()[0]) >= steps  # the Trainer's log history
    assert done.stdout.count("'attention/entropy'") >= steps  # what its printing logger received
    events = EventAccumulator(str(board))
    events.Reload()
    entropy = [(e.step, e.value) for e in events.Scalars("attention/entropy")]
    assert [s for s, _ in entropy] == list(range(steps + 1))
    np.testing.assert_allclose([v for _, v in entropy], [r["entropy"] for r in records], rtol=1e-6)
