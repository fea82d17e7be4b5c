"""A chapter run as one object: its plan holds every cache lookup the chapter makes, and a run reads its notebook twice."""

import builtins
from dataclasses import replace
import io
from pathlib import Path

import pytest

from attncoda.base.errors import CacheError, ChapterError
from attncoda.face.chapter_run import ChapterRun
from attncoda.face.precompute import run_lookup, store, union

PLANNED = {"measurement": "llama", "clustering": "bert", "pruning": "llama"}
"""The model chapters whose plan is the whole of their cache lookups, and the tiny family each is run on here (the
collapse chapter's walk over a series' checkpoints is left to the chapter: :mod:`attncoda.face.plans`)."""


@pytest.fixture
def tiny(tmp_path_factory):
    from tiny_models import save_tiny

    root = tmp_path_factory.mktemp("tiny")
    return {family: str(save_tiny(family, root / family)) for family in set(PLANNED.values())}


def _runs(tiny, out: Path) -> dict:
    return {key: ChapterRun.prepare(key, model=tiny[family], parameters={"results_dir": str(out / key)}, output=out / f"{key}.ipynb",
                                    profile="small")
            for key, family in PLANNED.items()}


@pytest.mark.slow
def test_after_its_plan_a_chapter_finds_every_lookup_cached(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    runs = _runs(tiny, tmp_path / "planned")
    for lookup in union(r.plan() for r in runs.values()):
        store(run_lookup(lookup))
    for key, run in runs.items():
        run = replace(run, cache_only=True)  # a miss now fails the chapter instead of computing
        assert run.execute(progress=False).exists(), key
        assert any((run.results / key).glob("*.json")), f"{key} wrote its results where the run said"


@pytest.mark.slow
def test_a_lookup_left_out_of_the_plan_fails_the_cache_only_run(tiny, tmp_path, monkeypatch):
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    run = replace(_runs(tiny, tmp_path / "unplanned")["measurement"], cache_only=True)
    with pytest.raises(ChapterError, match="not in the cache"):
        run.execute(progress=False)


def test_the_cache_only_switch_refuses_a_computation_in_one_line():
    from attncoda.base.run_setting import using
    from attncoda.engine.cache import refuse_when_cache_only

    refuse_when_cache_only("anything")  # unset: nothing happens
    with using(cache_only=True), pytest.raises(CacheError, match=r"x: signatures of seed 0 is not in the cache.*attncoda book --jobs"):
        refuse_when_cache_only("x: signatures of seed 0")


@pytest.mark.slow
def test_a_run_reads_its_notebook_twice_and_never_reads_back_what_it_wrote(tmp_path, monkeypatch):
    reads = []
    real_open = builtins.open

    def counting_open(file, mode="r", *args, **kwargs):
        if str(file).endswith(".ipynb") and "r" in mode and "+" not in mode:
            reads.append(Path(file).name)
        return real_open(file, mode, *args, **kwargs)

    run = ChapterRun.prepare("theory", parameters={"results_dir": str(tmp_path / "results")}, output=tmp_path / "out.ipynb", profile="small")
    monkeypatch.setattr(builtins, "open", counting_open)
    monkeypatch.setattr(io, "open", counting_open)
    reads.clear()
    ChapterRun.prepare("theory", parameters={"results_dir": str(tmp_path / "results")}, output=tmp_path / "out.ipynb", profile="small").execute(progress=False)
    assert reads == [run.notebook.name] * 2, "once for the parameters, once by papermill; the executed copy is never read back"
    assert (tmp_path / "out.ipynb").exists()


@pytest.mark.parametrize("key,word,accepted", [("clustering", "causal", "'encoders'"), ("pruning", "encoders", "'causal'"),
                                               ("measurement", "suite", "'defaults'")])
def test_a_group_word_a_chapter_does_not_measure_is_refused_in_one_line(key, word, accepted):
    with pytest.raises(ChapterError, match=f"chapter '{key}' does not measure the group '{word}'; pass {accepted}, or one model"):
        ChapterRun.prepare(key, model=word)
    with pytest.raises(ChapterError, match="takes one model at a time"):
        ChapterRun.prepare("pruning", model="preset:paper")
