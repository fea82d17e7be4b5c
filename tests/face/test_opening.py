"""A chapter opens in one call: the run's setting in effect, Colab's model swapped in, the parameters read once."""

import nbformat
import pytest

from attncoda.base import run_setting
from attncoda.face.chapters import CHAPTERS
from attncoda.face.opening import open_chapter

ROOT = __import__("pathlib").Path(__file__).parents[2]


@pytest.fixture(autouse=True)
def fresh_setting(monkeypatch):
    monkeypatch.setattr(run_setting, "_CURRENT", run_setting.RunSetting())


def test_every_chapter_opens_in_one_cell_of_two_lines():
    for chapter in CHAPTERS.values():
        nb = nbformat.read(ROOT / "notebooks" / f"{chapter.notebook}.ipynb", as_version=4)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert "parameters" in code[0].metadata.get("tags", []), chapter.notebook
        opening = code[1].source.strip().splitlines()
        assert len(opening) <= 2 and f'open_chapter("{chapter.key}", globals())' in code[1].source, f"{chapter.notebook}: {opening}"


def test_model_chapters_take_the_load_options_as_parameters():
    from attncoda.face.parameters import notebook_parameters

    for chapter in CHAPTERS.values():
        names = notebook_parameters(ROOT / "notebooks" / f"{chapter.notebook}.ipynb")
        has = {"load_dtype", "device_map"} <= set(names)
        assert has == chapter.per_model, f"{chapter.key}: a model chapter, and only one, says how its models load"
        if has:
            assert (names["load_dtype"], names["device_map"]) == ("float32", ""), "the default loads float32 on the CPU"


def test_the_opening_puts_the_kernel_s_setting_in_effect(tmp_path):
    namespace = {"model": "defaults", "seeds": [0], "n": 4, "length": 24, "n_triples": 2000, "batch_size": 2, "load_dtype": "bfloat16",
                 "device_map": "", "results_dir": "", run_setting.PARAMETER: {"record": True, "progress": str(tmp_path / "p.log"),
                                                                             "cache_only": False, "parameter_names": ["model", "seeds"]}}
    chapter = open_chapter("measurement", namespace)
    setting = run_setting.current()
    assert (setting.load_dtype, setting.device_map, setting.record, setting.progress) == ("bfloat16", None, True, str(tmp_path / "p.log"))
    assert chapter.parameters == {"model": "defaults", "seeds": [0]}, "the names the runner read, with this kernel's values"
    assert chapter.paper and chapter.elapsed() >= 0


def test_a_notebook_opened_by_hand_runs_with_the_defaults():
    from attncoda.face.parameters import notebook_parameters

    namespace = dict(notebook_parameters(ROOT / "notebooks" / "06_pruning.ipynb"))
    chapter = open_chapter("pruning", namespace)
    assert run_setting.current() == run_setting.RunSetting(), "float32 on the CPU, no progress, not the record"
    assert set(chapter.parameters) == set(namespace) - {"results_dir"}


@pytest.mark.parametrize("bad, message", [({"load_dtype": "float8"}, "load_dtype 'float8' is not a dtype"),
                                          ({run_setting.PARAMETER: {"record": True, "evil": 1}}, "leave it out of -p")])
def test_a_bad_setting_is_one_line(bad, message):
    with pytest.raises(ValueError, match=message):
        open_chapter("pruning", {"model": "causal", **bad})


@pytest.mark.parametrize("argv, message", [(["run", "theory", "--dtype", "bfloat16"], "chapter 'theory' loads none"),
                                           (["run", "pruning", "--dtype", "bfloat16", "-p", "load_dtype", "float16"], "--dtype and -p load_dtype set the same thing")])
def test_load_flags_become_a_model_chapter_s_parameters(argv, message, capsys):
    from attncoda.face.cli import main

    assert main(argv) == 1
    assert message in capsys.readouterr().err


def test_the_load_flags_reach_a_model_chapter_s_parameters_and_its_plan():
    from attncoda.face.chapter_run import ChapterRun

    run = ChapterRun.prepare("pruning", model="smollm2-135m", parameters={"load_dtype": "bfloat16"}, profile="small")
    assert run.parameters["load_dtype"] == "bfloat16"
    assert all(dict(lookup.options)["load_dtype"] == "bfloat16" for lookup in run.plan()), "a precomputed lookup loads as the kernel will"
    plain = ChapterRun.prepare("pruning", model="smollm2-135m", profile="small")
    assert all("load_dtype" not in dict(lookup.options) for lookup in plain.plan()), "a default run's plan is as before"


def test_a_bad_load_option_is_refused_before_a_kernel_starts():
    from attncoda.base.errors import ChapterError
    from attncoda.face.chapter_run import ChapterRun

    with pytest.raises(ChapterError, match="chapter 'pruning': load_dtype 'float8' is not a dtype"):
        ChapterRun.prepare("pruning", model="smollm2-135m", parameters={"load_dtype": "float8"}, profile="small")
    with pytest.raises(ChapterError, match="chapter 'pruning': .*meta"):
        ChapterRun.prepare("pruning", model="smollm2-135m", parameters={"device_map": "meta"}, profile="small")


def test_the_default_load_options_given_by_flag_are_the_default_run():
    import argparse

    from attncoda.face.cli import load_parameters

    assert load_parameters(argparse.Namespace(dtype="float32", device_map=None)) == {}
    assert load_parameters(argparse.Namespace(dtype="bfloat16", device_map="")) == {"load_dtype": "bfloat16"}


def test_a_scoped_setting_belongs_to_its_thread():
    """A Dask worker runs lookups in threads: one lookup's setting never reaches another's, nor outlives its block."""
    import threading

    seen, entered, release = {}, threading.Event(), threading.Event()

    def first():
        with run_setting.using(run_setting.RunSetting(load_dtype="bfloat16")):
            entered.set()
            release.wait(5)
            seen["first"] = run_setting.current().load_dtype

    def second():
        entered.wait(5)
        with run_setting.using(run_setting.RunSetting(device_map="auto")):
            seen["second"] = (run_setting.current().load_dtype, run_setting.current().device_map)
        release.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == {"first": "bfloat16", "second": ("float32", "auto")} and run_setting.current() == run_setting.RunSetting()
