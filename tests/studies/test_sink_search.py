"""The sink recipe search: the synthetic task, the training settings it varies, the three-term entropy split, the
peak test, and a tiny trial end to end."""

import hashlib
import json
from dataclasses import asdict, replace

import numpy as np
import pytest
from hypothesis import given, settings
from strategies import rows_with_sink

from attncoda.engine import training
from attncoda.engine.entropy_terms import TermAccumulator, row_terms
from attncoda.engine.tasks import Backcopy, character_backcopy
from attncoda.math import coda
from attncoda.studies import collapse, sink_search

# --------------------------------------------------------------------------- the task


def test_backcopy_copies_after_every_trigger_and_follows_its_table_elsewhere():
    task = Backcopy(vocab=32, triggers=3, successors=4)
    ids = task.sequences(64, 48, np.random.default_rng(5))
    assert (ids[:, 0] == 0).all() and not (ids[:, 1:] == 0).any()
    after_trigger = task.trigger_rows(ids)[:, 1:-1]
    assert after_trigger.any()
    assert np.array_equal(ids[:, 2:][after_trigger], ids[:, :-2][after_trigger])
    nxt, _ = task.table
    prev, this = ids[:, 1:-1][~after_trigger], ids[:, 2:][~after_trigger]
    assert all(t in nxt[p] for p, t in zip(prev, this))
    assert np.array_equal(ids, task.sequences(64, 48, np.random.default_rng(5)))


def test_the_character_task_is_guo_et_al_s_bigram_backcopy():
    """Triggers are the three most frequent characters, a quarter of all tokens; after a trigger the next token copies
    the one before it; elsewhere every transition is one the corpus's counts allow, at about their frequency; <bos> is
    first and never again; the first character is never a trigger."""
    task = character_backcopy()
    characters, counts = task.counts
    assert task.vocab == sink_search.CHARACTER_VOCAB == len(characters) + 1
    assert [characters[i - 1] for i in task.trigger_ids] == [" ", "e", "t"]
    ids = task.sequences(256, 128, np.random.default_rng(3))
    assert (ids[:, 0] == 0).all() and not (ids[:, 1:] == 0).any() and not np.isin(ids[:, 1], task.trigger_ids).any()
    trigger = task.trigger_rows(ids)
    assert 0.2 < trigger[:, 1:].mean() < 0.33
    after = trigger[:, 1:-1]
    assert np.array_equal(ids[:, 2:][after], ids[:, :-2][after])
    prev, this = ids[:, 1:-1][~after], ids[:, 2:][~after]
    assert (counts[prev - 1, this - 1] > 0).all(), "every bigram drawn has a count in the corpus"
    o = int(np.argsort(-task.unigram)[3])  # after the most frequent character that is no trigger, successors follow the counts
    assert o not in task.trigger_ids
    drawn = np.bincount(this[prev == o], minlength=task.vocab)[1:]
    expected = counts[o - 1] / counts[o - 1].sum()
    assert np.abs(drawn / drawn.sum() - expected).max() < 0.05
    assert np.allclose(task.table.sum(axis=1), 1) and (task.table[:, 0] == 0).all()


def test_a_task_that_cannot_exist_is_refused_in_one_line():
    with pytest.raises(ValueError, match="Backcopy needs"):
        Backcopy(vocab=4, triggers=3)


# --------------------------------------------------------------------------- training settings


def test_the_first_suite_keeps_its_cache_keys():
    """Fields added for the search are hashed only away from their defaults: today's checkpoints keep their folders."""
    import torch

    run = training.SuiteRun("s", 64, 4, 4, seed=0)
    old = {k: v for k, v in asdict(run).items() if k not in training.CHOICES and k not in training.LATE_DEFAULTS}
    text = json.dumps({**old, "version": training.TRAINING_VERSION, "torch": torch.__version__}, sort_keys=True)
    assert run.key() == hashlib.sha256(text.encode()).hexdigest()[:16]
    assert replace(run, windows="documents").key() != run.key()
    assert all(replace(run, **{k: v}).key() != run.key() for k, v in (("every", 25), ("embed_std", 1.0), ("arch", "gpt2"), ("rates", "constant")))


def test_embeddings_drawn_at_a_chosen_scale(tmp_path, monkeypatch):
    import torch

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    run = training.SuiteRun("e", 64, 1, 1, seed=0, task="character-backcopy", vocab=sink_search.CHARACTER_VOCAB, length=32, arch="gpt2")
    torch.manual_seed(0)
    small = training.new_model(run, training.run_tokenizer(run))
    torch.manual_seed(0)
    large = training.new_model(replace(run, embed_std=1.0), training.run_tokenizer(run))
    assert abs(float(small.transformer.wte.weight.std()) - 0.02) < 0.005 and abs(float(large.transformer.wte.weight.std()) - 1.0) < 0.05
    assert abs(float(large.transformer.wpe.weight.std()) - 1.0) < 0.1
    assert small.config.activation_function == "relu" and not small.config.tie_word_embeddings


def test_an_unknown_setting_is_refused_in_one_line():
    with pytest.raises(ValueError, match="optimizer must be one of adamw, sgd"):
        training.SuiteRun("s", 64, 4, 4, seed=0, optimizer="lion")


@pytest.mark.slow  # over 3 s: make test runs it, make check leaves it (held under 120 s in CI)
def test_document_windows_hold_one_document_and_mask_what_follows(tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    tok = training.suite_tokenizer()
    stream = training.token_stream(tok)
    eos = tok.convert_tokens_to_ids(training.EOS)
    run = training.SuiteRun("t", 16, 1, 2, seed=0, batch=16, length=256, windows="documents")
    ids, labels = training.document_batch_at(stream, run, 3, tok.bos_token_id, eos)
    assert (ids[:, 0] == tok.bos_token_id).all()
    for row, lab in zip(ids, labels):
        ends = np.flatnonzero(row[1:] == eos)
        if len(ends):  # the document ended inside the window: everything after its <|endoftext|> is masked padding
            cut = ends[0] + 2
            assert (lab[cut:] == training.IGNORED).all() and (lab[:cut] == row[:cut]).all()
    short = [np.flatnonzero(row[1:] == eos) for row in ids]
    assert any(len(s) for s in short), "with windows of 256 tokens some Wikipedia leads end inside them"


@pytest.mark.parametrize("optimizer,precision", [("adamw", "bf16"), ("sgd", "float32")])
def test_a_tiny_task_run_trains_resumes_and_is_measured(tmp_path, monkeypatch, optimizer, precision):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path))
    run = training.SuiteRun("t", 32, 1, 2, seed=1, steps=4, batch=4, length=24, task="backcopy", vocab=16,
                            optimizer=optimizer, precision=precision, learning_rate=0.05 if optimizer == "sgd" else 1e-3)
    folders = training.train(run)
    first = (folders[-1] / "model.safetensors").read_bytes()
    again = training.train(run, retrain=True)
    assert (again[-1] / "model.safetensors").read_bytes() == first, "a rerun with the same seed gives the same bits"
    measured = sink_search.measure(run, folders[-1])
    assert 0 < measured["sink_mass"] < 1 and 0 <= measured["trigger_sink_mass"] <= 1
    shares = sink_search.task_row_shares(run, folders[0], folders[-1])
    assert set(shares) == {"trigger", "other"} and shares["trigger"]["rows"] + shares["other"]["rows"] == 64 * (24 - 8)  # 64 held-out sequences


# --------------------------------------------------------------------------- the three terms


@settings(max_examples=80, deadline=None)
@given(rows_with_sink())
def test_the_three_terms_add_up_to_the_entropy(data):
    rows, sink = data
    terms = row_terms(np.log(rows), sink)
    assert np.allclose(terms["binary"] + terms["within_sink"] + terms["content"], coda.entropy(rows), atol=1e-10)
    content = coda.entropy(coda.drop_sink(rows, sink)) if len(sink) < rows.shape[1] else np.zeros(len(rows))
    assert np.allclose(terms["content_entropy"], content, atol=1e-10)
    if len(sink) == 1:
        assert np.allclose(terms["within_sink"], 0.0, atol=1e-12)


def test_the_term_accumulator_skips_the_first_rows_and_masked_keys():
    causal = np.tril(np.ones((12, 12)))
    maps = (causal / causal.sum(axis=1, keepdims=True))[None, None]  # uniform causal rows
    acc = TermAccumulator((0,), first_row=8)
    acc.update(0, maps)
    assert acc.rows == 4
    assert acc.means()["entropy"] == pytest.approx(np.mean(np.log(np.arange(9, 13))))


def test_term_fractions_add_up_to_one_when_h_fell():
    a = {"binary": 0.1, "within_sink": 0.02, "content": 4.0, "entropy": 4.12}
    b = {"binary": 0.4, "within_sink": 0.05, "content": 2.0, "entropy": 2.45}
    assert sum(collapse.term_fractions(a, b).values()) == pytest.approx(1.0)
    assert all(v != v for v in collapse.term_fractions(b, a).values())


# --------------------------------------------------------------------------- the peak


def _points(hs):
    return [{"step": s, "entropy": h, "content_entropy": h, "layers": {k: [h] for k in collapse.MEANS}} for s, h in zip((0, 16, 32, 100), hs)]


@pytest.mark.parametrize("spread,used", [(0.01, False), (1e-5, True)])
def test_a_peak_counts_only_when_h_rose_above_its_window_spread(spread, used):
    shares = collapse.trajectory_shares(_points([4.0, 4.001, 4.0, 3.0]), spread)
    assert shares["peak"]["used"] is used and ("from_peak" in shares) is used
    assert collapse.shown_share(shares)[0] == ("from_peak" if used else "from_step0")


# --------------------------------------------------------------------------- the chapter's typed results


def test_the_ladder_trains_the_first_recipe_that_grew_a_sink_in_every_seed_and_the_control_changes_only_the_task():
    """The ladder's recipe is the first configuration, in the order tried, whose non-trigger sink passed the target in
    each of its three seeds in the committed search; the control is that recipe on the random-table task."""
    trials = sink_search.read_trials()
    first = next(t for t in trials["trials"] if len(t.get("seeds", [])) >= 3 and t["grown_every_seed"])
    assert trials["target"] == sink_search.GROWN and sink_search.LADDER_TRIAL == first["label"]
    assert all(t["grown"] == sink_search.grown(t["final"]) for t in trials["trials"])
    assert all(s["grown"] == sink_search.grown(s["final"]) for t in trials["trials"] for s in t.get("seeds", []))
    assert all(t["grown_every_seed"] == all(s["grown"] for s in t["seeds"]) for t in trials["trials"] if "seeds" in t)
    recipe, control = asdict(sink_search.trial(sink_search.LADDER_TRIAL).run), asdict(sink_search.trial(sink_search.CONTROL_TRIAL).run)
    assert {k for k, v in control.items() if recipe[k] != v} == {"size", "task", "vocab"}
    runs = sink_search.ladder([0, 1]) + sink_search.control([0, 1])
    assert len({r.key() for r in runs}) == len(runs) == 2 * (len(sink_search.LADDER) + 1)
    assert all(r.every and r.embed_std == 1.0 and r.arch == "gpt2" for r in runs)


def test_every_trial_of_the_search_is_recorded():
    recorded = [t["label"] for t in sink_search.read_trials()["trials"]]
    assert recorded == [t.label for t in sink_search.TRIALS]


def test_collapse_results_round_trip_through_json():
    from attncoda.studies.collapse_suite import CollapseResult, Endpoint, Series

    pts = _points([4.0, 4.001, 4.0, 3.0])
    s = Series("r", "g", "ladder", pts, collapse.trajectory_shares(pts, 0.01), {"seed": 0, "parameters": 10}, None)
    e = Endpoint("m", {"share": 0.3}, {"median": 0.3, "low": 0.2, "high": 0.4, "samples": []})
    r = CollapseResult("suite", 8, [s], {"m": e})
    again = CollapseResult.from_json(json.loads(json.dumps(r.to_json())))
    assert again == r and again.series[0].shown == ("from_step0", s.shares["from_step0"]["share"]) and again.endpoints["m"].share == 0.3


def test_d27_the_search_command_names_its_labels_and_a_damaged_record_is_one_line(tmp_path, monkeypatch, capsys):
    """D27: --help and an unknown label say what the labels are (exit 0 and 2), and a damaged trials.json is named,
    not a TypeError."""
    import pytest

    from attncoda.studies import sink_search

    assert sink_search.main(["--help"]) == 0 and sink_search.TRIALS[0].label in capsys.readouterr().out
    assert sink_search.main(["bogus-label"]) == 2 and "unknown trial 'bogus-label'; the labels are:" in capsys.readouterr().err
    for damaged in ('{"trials": 5, "target": 0.5}', "[1, 2]", "{", '{"trials": [{"label": "x"}], "target": 0.5}'):
        path = tmp_path / "trials.json"
        path.write_text(damaged)
        monkeypatch.setattr(sink_search, "trials_path", lambda: path)
        with pytest.raises(ValueError, match="is damaged"):
            sink_search.read_trials()
