"""Long steps inside a chapter report to the reader's terminal: which model, which seed, how far, how long still."""

import pytest

from attncoda.base.progress import Steps, report
from attncoda.face.chapter_run import run_chapter


def test_report_is_silent_without_a_progress_file(tmp_path):
    from attncoda.base.run_setting import using

    report("nothing happens")
    target = tmp_path / "p.log"
    with using(progress=str(target)):
        report("one\nline")
    assert target.read_text() == "one\\nline\n", "a report is one line, its control characters shown escaped"
    assert Steps("x", 2).line(2, now=Steps("x", 2).started + 3).startswith("x: 2/2, done in")


@pytest.mark.slow
def test_a_chapter_run_echoes_its_progress(tmp_path, monkeypatch, capsys):
    from tiny_models import save_tiny

    monkeypatch.setenv("ATTNCODA_CACHE", str(tmp_path / "cache"))
    model = str(save_tiny("llama", tmp_path / "tiny-llama"))
    run_chapter("measurement", model=model, parameters={"results_dir": str(tmp_path / "results")}, output=tmp_path / "m.ipynb", profile="small", progress=True)
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("  [measurement]")]
    assert any("seed 0: signatures" in line and "1/2" in line for line in lines), lines
    assert any("done in" in line for line in lines)
