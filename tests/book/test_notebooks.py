"""Every chapter notebook: committed clean, parameterized, and executing end to end on the small profile."""

import json
import re
from pathlib import Path

import nbformat
import pytest
import yaml

from attncoda.base.errors import ChapterError
from attncoda.face.chapter_run import run_chapter
from attncoda.face.chapters import CHAPTERS, find_chapter, toc_from_registry

ROOT = Path(__file__).parents[2]
NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_committed_without_outputs_and_has_parameters(path):
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not any(c.get("outputs") for c in code), "strip outputs: the build executes notebooks itself"
    tagged = [c for c in code if "parameters" in c.metadata.get("tags", [])]
    assert len(tagged) == 1, "exactly one cell tagged 'parameters'"
    assert "model" in tagged[0].source and "results_dir" in tagged[0].source


def test_every_notebook_is_a_chapter_and_the_toc_is_the_registry():
    assert {p.stem for p in NOTEBOOKS} == {c.notebook for c in CHAPTERS.values()}
    assert yaml.safe_load((ROOT / "_toc.yml").read_text()) == toc_from_registry(), "write _toc.yml from the registry: attncoda.face.chapters.toc_from_registry()"


@pytest.mark.slow
@pytest.mark.parametrize("key", list(CHAPTERS))
def test_chapter_executes_on_small_profile(key, tmp_path, monkeypatch):
    chapter = CHAPTERS[key]
    model = None
    if chapter.series:  # a checkpoint series the chapter has never seen: tiny "checkpoints" saved to folders
        from tiny_models import save_tiny_series

        monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
        model = ",".join(str(f) for f in save_tiny_series(chapter.test_family, tmp_path / f"tiny-{chapter.test_family}"))
    elif chapter.per_model:  # a model the chapter has never seen: a tiny one, saved to a folder
        from tiny_models import save_tiny

        monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
        model = str(save_tiny(chapter.test_family, tmp_path / f"tiny-{chapter.test_family}"))
    out = run_chapter(key, model=model, parameters={"results_dir": str(tmp_path / "results")}, output=tmp_path / f"{key}.ipynb", profile="small", progress=False)
    nb = nbformat.read(out, as_version=4)
    outputs = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
    glued = {o["metadata"]["scrapbook"]["name"] for o in outputs if "scrapbook" in o.get("metadata", {})}
    prose = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    referenced = set(re.findall(r"\{glue(?::\w+)?\}`([^`:]+)", prose)) | set(re.findall(r"\{glue:figure\} (\S+)", prose))
    assert referenced <= glued, f"prose refers to numbers no cell glued: {referenced - glued}"
    assert not re.search(r"(?<!`)`\{glue", prose), "a glue role inside a code literal is not rendered"
    if chapter.writes_results:  # the summary pages (scorecard, reproducibility) only read results
        from attncoda.base.paths import slug

        from attncoda.engine.checkpoints import series_name

        name = series_name(model) if chapter.series else (model or "synthetic")
        result = json.loads((tmp_path / "results" / key / f"{slug(name)}.json").read_text())
        prov = result["provenance"]
        assert {"code", "parameters", "seed"} <= set(prov) and "wall_time_s" not in prov, "run times go to the timings file"
        from attncoda.face.parameters import notebook_parameters

        cell = notebook_parameters(ROOT / "notebooks" / f"{chapter.notebook}.ipynb")
        assert set(prov["parameters"]) - {"eps"} == set(cell) - {"results_dir"}, "every parameter, and no folder of this machine"
        assert prov["parameters"]["model"] == (model or chapter.default_model) and prov["parameters"]["length" if "length" in cell else "seed"] is not None
        timings = json.loads((tmp_path / "results" / key / "timings" / f"{slug(name)}.json").read_text())
        assert timings["provenance"]["wall_time_s"] > 0


def test_unknown_chapter_is_one_clear_line():
    with pytest.raises(ChapterError, match="unknown chapter 'nope'; known: theory"):
        find_chapter("nope")
    assert find_chapter("1").key == "theory" and find_chapter("02_reversal_calibration").key == "calibration"


def test_every_name_of_a_chapter_finds_it():
    """The page's number in the book (3.1), the file's (3b, 03b), the key and the notebook all name one chapter, and each
    page's title starts with the number it is found by."""
    from attncoda.face.chapters import page_number

    for c in CHAPTERS.values():
        number = page_number(c.notebook)
        names = {c.key, c.notebook, number, c.notebook.split("_", 1)[0], c.notebook.split("_", 1)[0].lstrip("0")}
        assert {find_chapter(n).key for n in names} == {c.key}, names
        title = nbformat.read(ROOT / "notebooks" / f"{c.notebook}.ipynb", as_version=4).cells[0].source.splitlines()[0]
        if c.writes_results:  # the summary pages carry no number
            assert re.match(rf"# {re.escape(number)}[. ]", title), (c.key, title)
    assert find_chapter("3.1").key == "measurement-layers" and find_chapter("3b").key == "measurement-layers"


def test_synthetic_chapters_refuse_a_model():
    with pytest.raises(ChapterError, match="does not take a model"):
        run_chapter("theory", model="gpt2")


@pytest.mark.slow
def test_collapse_chapter_trains_and_measures_its_suite_on_the_small_profile(tmp_path, monkeypatch):
    """The default path (no --model): the suite trained for a few steps, walked, and one default model's endpoint."""
    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    out = run_chapter("collapse", parameters={"results_dir": str(tmp_path / "results")}, output=tmp_path / "collapse.ipynb", profile="small", progress=False)
    nb = nbformat.read(out, as_version=4)
    assert not [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.get("output_type") == "error"]
    result = json.loads((tmp_path / "results" / "collapse" / "suite.json").read_text())["results"]
    kinds = [s["kind"] for s in result["series"]]
    assert result["mode"] == "suite" and set(result["endpoints"]) == {"minilm-l6"}
    assert kinds == ["ladder"] * 6 + ["control"] * 2
    assert all([p["step"] for p in s["points"]] == [0, 1, 2, 4] for s in result["series"])
    assert all(set(s["rows"]) == {"trigger", "other"} and "sink_heads" in s["points"][-1] for s in result["series"])
    assert all([r["step"] for r in s["monitor"]] == [0, 1, 2, 4] and {r["origin"] for r in s["monitor"]} == {"training"}
               for s in result["series"]), "each run's monitor watched it train: Figure 5b's analogue is drawn from its log"
    assert [z["kind"] for z in result["sizes"]] == ["ladder"] * 3 + ["control"]
    assert len(result["endpoints"]["minilm-l6"]["spread"]["samples"]) == 5 and result["endpoints"]["minilm-l6"]["terms"]["fractions"]
    timings = json.loads((tmp_path / "results" / "collapse" / "timings" / "suite.json").read_text())["results"]["series"]
    assert len(timings) == len(kinds) and all(t["training"]["training_seconds"] > 0 for t in timings)
